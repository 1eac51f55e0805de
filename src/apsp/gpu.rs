//! The matrices on the device and the memory models of kernels/apsp.cu.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

use super::config::{Config, MemoryModel, AUTO_LARGE_FROM};
use super::weight::Weight;
use crate::compute::cuda::{launch_err, CudaRuntime};
use crate::compute::kernels::APSP;
use crate::compute::warmup::Module;
use crate::error::{Error, Result};

/// Device memory kept free beside the matrices (driver, kernels, other nodes' buffers).
const HEADROOM_BYTES: usize = 256 << 20;

/// The distance and successor matrices on the device, padded to the model's tile, and the
/// runtime that owns them.
pub struct DeviceMatrices<T: Weight> {
    rt: Arc<CudaRuntime>,
    d: CudaSlice<T>,
    h: CudaSlice<u32>,
    np: usize,
}

/// The NVRTC definitions of a solve: the weight kind and the blocked shape.
fn kernel_defines<T: Weight>(config: &Config, np: usize) -> [(&'static str, String); 3] {
    let (tile, tt) = config.blocked_shape(np);
    [
        ("APSP_FLOAT", (T::KERNEL_FLOAT as u32).to_string()),
        ("TILE", tile.to_string()),
        ("TT", tt.to_string()),
    ]
}

/// The modules solves with `config` use (integer and float weights, small and large graphs),
/// for a node's start-up warm-up.
pub fn modules(config: &Config) -> Vec<Module> {
    let mut all: Vec<Module> = Vec::new();
    for n in [1, AUTO_LARGE_FROM] {
        for m in [
            Module::new(APSP, &kernel_defines::<i32>(config, n)),
            Module::new(APSP, &kernel_defines::<f32>(config, n)),
        ] {
            if !all.iter().any(|a| a.defines == m.defines) {
                all.push(m);
            }
        }
    }
    all
}

/// Device bytes an np x np solve needs (distances + successors).
pub fn bytes_needed(np: usize) -> usize {
    np * np * (4 + 4)
}

/// Device buffers free themselves on the dropping thread, where cudarc does not make the
/// context current; without this the free fails and poisons the next CUDA call.
impl<T: Weight> Drop for DeviceMatrices<T> {
    fn drop(&mut self) {
        let _ = self.rt.context().bind_to_thread();
    }
}

/// `need` bytes for `what` fit the device beside the headroom; else a clear error with the
/// bytes.
fn ensure_room(rt: &CudaRuntime, need: usize, what: &str) -> Result<()> {
    let (free, total) = rt.memory()?;
    if need + HEADROOM_BYTES > free {
        return Err(Error::OutOfMemory {
            requested_bytes: need,
            detail: format!("{what}; {free} of {total} bytes free on {}", rt.info().name),
        });
    }
    Ok(())
}

impl<T: Weight> DeviceMatrices<T> {
    /// Uploads start matrices; too large for the device is a clear error with the bytes.
    pub fn upload(rt: &Arc<CudaRuntime>, d: &[T], h: &[u32], np: usize) -> Result<Self> {
        ensure_room(
            rt,
            bytes_needed(np),
            &format!("{np} x {np} distances + successors"),
        )?;
        Ok(DeviceMatrices {
            rt: rt.clone(),
            d: rt.upload(d)?,
            h: rt.upload(h)?,
            np,
        })
    }

    /// The start matrices of the graph with `np` vertices (padding included) and edges
    /// `from[e] -> to[e]` of weight `w[e]`, built on the device: only the edges cross the bus,
    /// not the np x np matrices, and no host thread fills or scatters them. Equal to
    /// uploading [`super::graph::dense`]'s matrices. Ids must be below `np` (a validated
    /// graph's are). `config` names the kernels' module (the one its solve loads).
    pub fn from_edges(
        rt: &Arc<CudaRuntime>,
        config: &Config,
        np: usize,
        from: &[u32],
        to: &[u32],
        w: &[T],
    ) -> Result<Self> {
        let m = from.len();
        let edge_bytes = m * (8 + std::mem::size_of::<T>());
        ensure_room(
            rt,
            bytes_needed(np) + edge_bytes,
            &format!("{np} x {np} distances + successors and {m} edges"),
        )?;
        let npi = i32::try_from(np)
            .map_err(|_| Error::invalid("vertices", format!("{np} is too many")))?;
        // SAFETY: apsp_init below writes every one of the np * np cells before anything reads.
        let mut d = unsafe { rt.alloc::<T>(np * np) }?;
        // SAFETY: as `d`.
        let mut h = unsafe { rt.alloc::<u32>(np * np) }?;
        let (df, dt, dw) = (rt.upload(from)?, rt.upload(to)?, rt.upload(w)?);
        let defines = kernel_defines::<T>(config, np);
        let stream = rt.stream().clone();
        if np > 0 {
            let init = rt.function_with(&APSP, &defines, "apsp_init")?;
            let mut b = stream.launch_builder(&init);
            b.arg(&mut d).arg(&mut h).arg(&npi);
            // SAFETY: arguments (d, h, np) as apsp_init declares; it writes cells below np * np of d and h, both allocated np * np
            unsafe { b.launch(rt.grid_stride(np * np, 256)) }.map_err(launch_err("apsp_init"))?;
        }
        if m > 0 {
            let edges = rt.function_with(&APSP, &defines, "apsp_edges")?;
            let m64 = m as u64;
            let mut b = stream.launch_builder(&edges);
            b.arg(&df)
                .arg(&dt)
                .arg(&dw)
                .arg(&m64)
                .arg(&mut d)
                .arg(&mut h)
                .arg(&npi);
            // SAFETY: arguments (from, to, w, m, d, h, np) as apsp_edges declares; from, to and w hold m entries each, every id is below np (the caller's contract), so each cell written lies inside the np * np matrices
            unsafe { b.launch(rt.grid_stride(m, 256)) }.map_err(launch_err("apsp_edges"))?;
        }
        Ok(DeviceMatrices {
            rt: rt.clone(),
            d,
            h,
            np,
        })
    }

    /// The matrices into `d` and `h` (the solve's own start matrices: no fresh vectors).
    pub fn download(&self, d: &mut [T], h: &mut [u32]) -> Result<()> {
        self.rt.download_into(&self.d, 0, d)?;
        self.rt.download_into(&self.h, 0, h)
    }

    /// Runs every k (queued on the stream; [`DeviceMatrices::synchronize`] waits).
    pub fn solve(&mut self, config: &Config) -> Result<()> {
        config.validate()?;
        let np = self.np;
        if np == 0 {
            return Ok(());
        }
        let npi = i32::try_from(np)
            .map_err(|_| Error::invalid("vertices", format!("{np} is too many")))?;
        let (tile, tt) = config.blocked_shape(np);
        let defines = kernel_defines::<T>(config, np);
        let f = |name: &str| self.rt.function_with(&APSP, &defines, name);
        // Under a cancel scope (a node's solve deadline), wait for the device every few
        // launches and stop if cancelled: queued launches cannot be recalled.
        let cancel = crate::cancel::current();
        let rt = self.rt.clone();
        let check = move |i: i32, every: i32| -> Result<()> {
            match &cancel {
                Some(c) if i % every == every - 1 => {
                    rt.synchronize()?;
                    c.check()
                }
                _ => Ok(()),
            }
        };
        let stream = self.rt.stream().clone();
        let (bx, by) = (config.block_x, config.block_y);
        match config.memory_model {
            MemoryModel::Linear | MemoryModel::Coalesced | MemoryModel::Shared => {
                let name = match config.memory_model {
                    MemoryModel::Linear => "apsp_linear",
                    MemoryModel::Coalesced => "apsp_coalesced",
                    _ => "apsp_shared",
                };
                let func = f(name)?;
                let cfg = if config.memory_model == MemoryModel::Linear {
                    let threads = bx * by;
                    LaunchConfig {
                        grid_dim: ((np * np).div_ceil(threads as usize) as u32, 1, 1),
                        block_dim: (threads, 1, 1),
                        shared_mem_bytes: 0,
                    }
                } else {
                    LaunchConfig {
                        grid_dim: (
                            np.div_ceil(bx as usize) as u32,
                            np.div_ceil(by as usize) as u32,
                            1,
                        ),
                        block_dim: (bx, by, 1),
                        shared_mem_bytes: 0,
                    }
                };
                for k in 0..npi {
                    let mut b = stream.launch_builder(&func);
                    b.arg(&mut self.d).arg(&mut self.h).arg(&npi).arg(&k);
                    // SAFETY: arguments (d, h, np, k) as the kernels declare; the per-k kernel reads and writes only cells of the np x np matrices d and h (np = npi, both allocated np * np), one thread per cell inside the grid
                    unsafe { b.launch(cfg) }.map_err(launch_err(name))?;
                    check(k, 64)?;
                }
            }
            MemoryModel::Blocked | MemoryModel::Tiled => {
                let (p1, p2, p3) = (f("apsp_phase1")?, f("apsp_phase2")?, f("apsp_phase3")?);
                let t = tile as usize;
                if !np.is_multiple_of(t) {
                    return Err(Error::invalid(
                        "vertices",
                        format!("matrix side {np} is not padded to the tile {t}"),
                    ));
                }
                let nb = (np / t) as u32;
                let p12_y = if tile * tile > 1024 {
                    1024 / tile
                } else {
                    tile
                };
                let s = tile / tt;
                let cfg = |grid: (u32, u32), block: (u32, u32)| LaunchConfig {
                    grid_dim: (grid.0, grid.1, 1),
                    block_dim: (block.0, block.1, 1),
                    shared_mem_bytes: 0,
                };
                for kb in 0..nb as i32 {
                    for (func, name, c) in [
                        (&p1, "apsp_phase1", cfg((1, 1), (tile, p12_y))),
                        (&p2, "apsp_phase2", cfg((nb, 2), (tile, p12_y))),
                        (&p3, "apsp_phase3", cfg((nb, nb), (s, s))),
                    ] {
                        let mut b = stream.launch_builder(func);
                        b.arg(&mut self.d).arg(&mut self.h).arg(&npi).arg(&kb);
                        // SAFETY: arguments (d, h, np, k) as the kernels declare; each phase reads and writes only TILE x TILE tiles inside the np x np matrices d and h (np a multiple of the tile, both allocated np * np)
                        unsafe { b.launch(c) }.map_err(launch_err(name))?;
                    }
                    check(kb, 4)?;
                }
            }
        }
        Ok(())
    }

    /// Waits for every launch on the matrices' stream.
    pub fn synchronize(&self) -> Result<()> {
        self.rt.synchronize()
    }
}
