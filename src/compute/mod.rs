//! Compute backends: the plain CPU path (the reference, and the fallback on robots without a
//! GPU) and CUDA through `cudarc` with the driver and NVRTC loaded at run time, so one binary
//! runs on machines with and without CUDA.

#![warn(missing_docs)]

mod backend;
pub mod cuda;
pub mod driver_error;
pub mod fallback;
pub mod host_copies;
pub mod info;
pub mod kernels;
pub mod memory_pool;
pub mod primitives;
pub mod readback;
pub mod staging;
#[doc(hidden)]
pub mod testing;
pub mod warmup;

pub use backend::{Backend, BackendKind};
pub use cuda::{CudaRuntime, DeviceInfo};
