//! `gpu_planning info`: what this machine offers the nodes.

use super::{Backend, BackendKind, CudaRuntime};

/// Prints the backend, device, compute capability, memory, driver and NVRTC versions.
pub fn print(kind: BackendKind) {
    println!("gpu_planning {}", env!("CARGO_PKG_VERSION"));
    println!("backend requested: {kind}");
    match CudaRuntime::shared() {
        Ok(rt) => {
            let i = rt.info();
            let (free, total) = rt.memory().unwrap_or((0, i.total_memory));
            println!("cuda: available");
            println!("device: {}", i.name);
            println!(
                "compute capability: {}.{} ({})",
                i.compute_capability.0,
                i.compute_capability.1,
                i.arch()
            );
            println!("multiprocessors: {}", i.multiprocessors);
            println!(
                "memory model: {}",
                if i.integrated {
                    "integrated (CPU and GPU share one memory)"
                } else {
                    "discrete"
                }
            );
            println!("host copies: {}", rt.host_copies().name());
            println!(
                "shared memory per block: {} KiB with opt-in",
                i.max_shared_per_block_optin / 1024
            );
            println!(
                "memory: {:.1} GiB free of {:.1} GiB",
                free as f64 / 1073741824.0,
                total as f64 / 1073741824.0
            );
            println!(
                "memory pool: keeps up to {:.1} GiB of freed memory between requests, holds {:.1} MiB now",
                super::memory_pool::kept_bytes(i.total_memory) as f64 / 1073741824.0,
                rt.pool_reserved().unwrap_or(0) as f64 / 1048576.0
            );
            println!(
                "driver: {}.{}",
                i.driver_version / 1000,
                (i.driver_version % 1000) / 10
            );
            println!("nvrtc: {}.{}", i.nvrtc_version.0, i.nvrtc_version.1);
        }
        Err(e) => println!("cuda: unavailable ({e})"),
    }
    match Backend::select(kind) {
        Ok(b) => println!("backend selected: {}", b.name()),
        Err(e) => println!("backend selected: none ({e})"),
    }
}
