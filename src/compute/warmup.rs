//! Kernels compiled when a node starts, so that no request pays for NVRTC: each node names
//! the modules its parameters can use (the algorithms' `gpu::modules`), and a thread of their
//! own compiles them (or loads them from the disk cache) while the node already serves.
//! A request that needs a module still compiling waits for it, never compiles it twice. The
//! same thread makes the node's pinned copy chunks, which the first large copy made before.

use std::time::Instant;

use super::cuda::{CudaRuntime, KernelSource};
use super::Backend;

/// One kernel module: a source and the NVRTC definitions it is compiled with (the same pair
/// the algorithm's launch code passes to `CudaRuntime::function_with`).
#[derive(Debug, Clone)]
pub struct Module {
    /// The source file.
    pub source: KernelSource,
    /// `-D` definitions it is compiled with.
    pub defines: Vec<(&'static str, String)>,
}

impl Module {
    /// A module of `source` compiled with `defines`.
    pub fn new(source: KernelSource, defines: &[(&'static str, String)]) -> Module {
        Module {
            source,
            defines: defines.to_vec(),
        }
    }
}

/// On CUDA, compiles `modules` on a thread and logs one line when they are ready (`node`
/// names the node in it); on the CPU does nothing. A module that fails to compile is logged
/// and left to the request that needs it, which then reports the compile error itself.
pub fn spawn(backend: &Backend, node: &str, modules: Vec<Module>) {
    let Backend::Cuda(rt) = backend else {
        return;
    };
    let (rt, node) = (rt.clone(), node.to_string());
    let spawned = std::thread::Builder::new()
        .name(format!("{node}-kernels"))
        .spawn(move || {
            prepare_all(&rt, &node, &modules);
        });
    if let Err(e) = spawned {
        tracing::warn!("kernels are compiled on first use: no thread to prepare them ({e})");
    }
}

/// Compiles (or loads from the caches) every module, here and now, and logs the line
/// [`spawn`] logs; returns how many NVRTC compiled.
pub fn prepare_all(rt: &CudaRuntime, node: &str, modules: &[Module]) -> usize {
    let started = Instant::now();
    let (mut compiled, mut failed) = (0usize, 0usize);
    // The stream's pinned chunks too: the first large copy made them, 5-15 ms of page-locking
    // inside a request.
    if let Err(e) = rt.prepare_staging() {
        tracing::warn!("{node}: pinned copy chunks not prepared: {e}");
    }
    for m in modules {
        match rt.prepare(&m.source, &m.defines) {
            Ok(true) => compiled += 1,
            Ok(false) => {}
            Err(e) => {
                failed += 1;
                tracing::warn!("{node}: kernels/{}.cu not prepared: {e}", m.source.name);
            }
        }
    }
    tracing::info!(
        "{node}: {} CUDA kernel modules ready in {:.0} ms ({compiled} compiled by NVRTC, the \
         rest from the caches{})",
        modules.len() - failed,
        started.elapsed().as_secs_f64() * 1e3,
        if failed > 0 {
            format!("; {failed} failed")
        } else {
            String::new()
        }
    );
    compiled
}
