//! The CUDA runtime: one context per process and a stream per node (see
//! [`CudaRuntime::with_priority`]); kernels compiled by NVRTC for the device's own compute
//! capability (nodes compile theirs when they start, see [`crate::compute::warmup`]), cached for the
//! life of the process and on disk (keyed by source hash, options, arch and NVRTC version; see
//! [`kernel_cache_dir`]).
//!
//! One file per job: `runtime.rs` (context, streams, device facts), `nvrtc.rs` (compiling
//! and caching kernels), `memory.rs` (allocations and copies), `launch.rs` (launch shapes).

mod launch;
mod memory;
mod nvrtc;
mod runtime;

pub use super::driver_error::gpu_err;
pub use launch::{launch_err, one_per_item};
pub(crate) use memory::bytes_of_mut;
pub use nvrtc::{kernel_cache_dir, KERNEL_CACHE_ENV, PRELUDE};
pub use runtime::{CudaRuntime, DeviceInfo, KernelSource};
