//! The grid on the device and the four memory models (see kernels/lee.cu).

use std::sync::{Arc, Mutex};

use cudarc::driver::sys;
use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, LaunchConfig, PushKernelArg};

use super::planner::{MemoryModel, PlannerConfig};
use super::{Grid, UNREACHED};
use crate::compute::cuda::{gpu_err, launch_err, CudaRuntime};
use crate::compute::kernels::LEE;
use crate::error::{Error, Result};

/// Sweeps between two reads of the changed flag (each read is a host round trip; extra sweeps
/// after convergence change nothing).
const SWEEPS_PER_CHECK: u32 = 16;

struct Kernels {
    fill: CudaFunction,
    sweep_global: CudaFunction,
    sweep_texture: CudaFunction,
    tiles_shared: CudaFunction,
    worklist_init: CudaFunction,
    worklist: CudaFunction,
    descend: CudaFunction,
}

/// Tile shape the buffers were made for, the ring of queued tiles, and the queued flags.
type WorklistBuffers = ((u32, u32), CudaSlice<u32>, CudaSlice<u32>);

/// Per-query device state; one query at a time per grid.
struct Scratch {
    labels: CudaSlice<u32>,
    changed: CudaSlice<u32>,
    counters: CudaSlice<u32>,
    /// Worklist buffers, sized for the tile shape they were made for.
    worklist: Option<WorklistBuffers>,
}

pub struct DeviceGrid {
    rt: Arc<CudaRuntime>,
    width: u32,
    height: u32,
    ndirs: u32,
    masks: CudaSlice<u8>,
    texture: Mutex<Option<Texture>>,
    kernels: Kernels,
    scratch: Mutex<Scratch>,
    goal: Mutex<Option<(u32, u32)>>,
}

/// A linear u8 texture over the masks, destroyed with the grid.
struct Texture(sys::CUtexObject);

impl Drop for Texture {
    fn drop(&mut self) {
        // SAFETY: created by cuTexObjectCreate and destroyed once.
        unsafe { sys::cuTexObjectDestroy(self.0) };
    }
}

/// Device buffers free themselves on the dropping thread, where cudarc does not make the
/// context current; without this the free fails and poisons the next CUDA call.
impl Drop for DeviceGrid {
    fn drop(&mut self) {
        let _ = self.rt.context().bind_to_thread();
    }
}

impl DeviceGrid {
    pub fn upload(rt: &Arc<CudaRuntime>, grid: &Grid) -> Result<DeviceGrid> {
        let f = |name: &str| rt.function(&LEE, name);
        let kernels = Kernels {
            fill: f("lee_fill_labels")?,
            sweep_global: f("lee_sweep_global")?,
            sweep_texture: f("lee_sweep_texture")?,
            tiles_shared: f("lee_tiles_shared")?,
            worklist_init: f("lee_worklist_init")?,
            worklist: f("lee_worklist")?,
            descend: f("lee_descend")?,
        };
        let n = grid.len();
        Ok(DeviceGrid {
            rt: rt.clone(),
            width: grid.width,
            height: grid.height,
            ndirs: grid.connectivity.directions() as u32,
            masks: rt.upload(&grid.masks)?,
            texture: Mutex::new(None),
            kernels,
            scratch: Mutex::new(Scratch {
                // SAFETY: every query fills the labels first.
                labels: unsafe { rt.alloc::<u32>(n) }?,
                changed: rt.alloc_zeros::<u32>(1)?,
                counters: rt.alloc_zeros::<u32>(4)?,
                worklist: None,
            }),
            goal: Mutex::new(None),
        })
    }

    fn cells(&self) -> usize {
        self.width as usize * self.height as usize
    }

    /// Computes the distance field from `goal` on the device (kept there for descend/download).
    pub fn compute(&self, goal: (u32, u32), config: &PlannerConfig) -> Result<()> {
        let mut scratch = lock(&self.scratch);
        let stream = self.rt.stream().clone();
        let n = self.cells() as u64;
        let goal_idx = goal.1 as u64 * self.width as u64 + goal.0 as u64;
        let grid1 = (self.cells().div_ceil(256) as u32).min(65_535 * 4);
        let cfg1 = LaunchConfig {
            grid_dim: (grid1.max(1), 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut b = stream.launch_builder(&self.kernels.fill);
        b.arg(&mut scratch.labels).arg(&n).arg(&goal_idx);
        unsafe { b.launch(cfg1) }.map_err(launch_err("lee_fill_labels"))?;

        let (bx, by) = (config.block_x, config.block_y);
        let tiles = (self.width.div_ceil(bx), self.height.div_ceil(by));
        let cfg2 = |smem: u32| LaunchConfig {
            grid_dim: (tiles.0, tiles.1, 1),
            block_dim: (bx, by, 1),
            shared_mem_bytes: smem,
        };
        let tile_smem = (bx + 2) * (by + 2) * 4;
        let (w, h, nd) = (self.width, self.height, self.ndirs);
        match config.memory_model {
            MemoryModel::Global | MemoryModel::Texture | MemoryModel::Shared => {
                let tex = if config.memory_model == MemoryModel::Texture {
                    Some(self.texture()?)
                } else {
                    None
                };
                // A wave needs at most one pass per label value; the cap only guards against a
                // kernel that never converges.
                let cap = n + 2 * SWEEPS_PER_CHECK as u64 + 2;
                let mut passes = 0u64;
                loop {
                    self.rt
                        .stream()
                        .memset_zeros(&mut scratch.changed)
                        .map_err(gpu_err)?;
                    let batch = if config.memory_model == MemoryModel::Shared {
                        4
                    } else {
                        SWEEPS_PER_CHECK
                    };
                    for _ in 0..batch {
                        let Scratch {
                            labels, changed, ..
                        } = &mut *scratch;
                        match config.memory_model {
                            MemoryModel::Global => {
                                let mut b = stream.launch_builder(&self.kernels.sweep_global);
                                b.arg(&self.masks)
                                    .arg(labels)
                                    .arg(&w)
                                    .arg(&h)
                                    .arg(&nd)
                                    .arg(changed);
                                unsafe { b.launch(cfg2(0)) }
                                    .map_err(launch_err("lee_sweep_global"))?;
                            }
                            MemoryModel::Texture => {
                                let t = tex.unwrap_or_default();
                                let mut b = stream.launch_builder(&self.kernels.sweep_texture);
                                b.arg(&t).arg(labels).arg(&w).arg(&h).arg(&nd).arg(changed);
                                unsafe { b.launch(cfg2(0)) }
                                    .map_err(launch_err("lee_sweep_texture"))?;
                            }
                            _ => {
                                let mut b = stream.launch_builder(&self.kernels.tiles_shared);
                                b.arg(&self.masks)
                                    .arg(labels)
                                    .arg(&w)
                                    .arg(&h)
                                    .arg(&nd)
                                    .arg(changed);
                                unsafe { b.launch(cfg2(tile_smem)) }
                                    .map_err(launch_err("lee_tiles_shared"))?;
                            }
                        }
                    }
                    passes += batch as u64;
                    let changed = self.rt.download(&scratch.changed, 1)?[0];
                    if changed == 0 {
                        break;
                    }
                    if passes > cap {
                        return Err(Error::Gpu(format!(
                            "lee {:?}: no convergence after {passes} passes",
                            config.memory_model
                        )));
                    }
                }
            }
            MemoryModel::Worklist => {
                let ntiles = tiles.0 * tiles.1;
                let cap = 2 * ntiles;
                let fresh = !matches!(&scratch.worklist, Some((shape, _, _)) if *shape == (bx, by));
                if fresh {
                    let queue = self.rt.alloc_zeros::<u32>(cap as usize)?;
                    let queued = self.rt.alloc_zeros::<u32>(ntiles as usize)?;
                    scratch.worklist = Some(((bx, by), queue, queued));
                }
                let Scratch {
                    labels,
                    counters,
                    worklist,
                    ..
                } = &mut *scratch;
                let Some((_, queue, queued)) = worklist.as_mut() else {
                    return Err(Error::Gpu("worklist buffers missing".into()));
                };
                let goal_tile = (goal.1 / by) * tiles.0 + goal.0 / bx;
                let mut b = stream.launch_builder(&self.kernels.worklist_init);
                b.arg(&mut *queue)
                    .arg(&cap)
                    .arg(&mut *queued)
                    .arg(&ntiles)
                    .arg(&mut *counters)
                    .arg(&goal_tile);
                let g = cap.div_ceil(256).min(4096);
                unsafe {
                    b.launch(LaunchConfig {
                        grid_dim: (g, 1, 1),
                        block_dim: (256, 1, 1),
                        shared_mem_bytes: 0,
                    })
                }
                .map_err(launch_err("lee_worklist_init"))?;
                let per_sm = self
                    .kernels
                    .worklist
                    .occupancy_max_active_blocks_per_multiprocessor(
                        bx * by,
                        tile_smem as usize,
                        None,
                    )
                    .map_err(gpu_err)?
                    .max(1);
                let blocks = (per_sm * self.rt.info().multiprocessors.max(1) as u32).min(ntiles);
                let mut b = stream.launch_builder(&self.kernels.worklist);
                b.arg(&self.masks)
                    .arg(labels)
                    .arg(&w)
                    .arg(&h)
                    .arg(&nd)
                    .arg(&tiles.0)
                    .arg(&tiles.1)
                    .arg(&mut *queue)
                    .arg(&cap)
                    .arg(&mut *queued)
                    .arg(&mut *counters);
                let launch = LaunchConfig {
                    grid_dim: (blocks, 1, 1),
                    block_dim: (bx, by, 1),
                    shared_mem_bytes: tile_smem,
                };
                unsafe { b.launch(launch) }.map_err(launch_err("lee_worklist"))?;
            }
        }
        *lock(&self.goal) = Some(goal);
        Ok(())
    }

    pub fn synchronize(&self) -> Result<()> {
        self.rt.synchronize()
    }

    /// The last computed field.
    pub fn download_labels(&self) -> Result<Vec<u32>> {
        let scratch = lock(&self.scratch);
        self.rt.download(&scratch.labels, self.cells())
    }

    /// Path from `start` by descent on the device; only the path comes back.
    pub fn descend(&self, start: (u32, u32)) -> Result<Option<Vec<(u32, u32)>>> {
        let mut scratch = lock(&self.scratch);
        let s = start.1 as u64 * self.width as u64 + start.0 as u64;
        let len = self
            .rt
            .download_range(&scratch.labels, s as usize..s as usize + 1)?[0];
        if len == UNREACHED {
            return Ok(None);
        }
        // SAFETY: lee_descend writes path[0..=len] when status is 0.
        let mut path = unsafe { self.rt.alloc::<u32>(len as usize + 1) }?;
        let stream = self.rt.stream().clone();
        let Scratch {
            labels, changed, ..
        } = &mut *scratch;
        let mut b = stream.launch_builder(&self.kernels.descend);
        b.arg(&self.masks)
            .arg(&*labels)
            .arg(&self.width)
            .arg(&self.ndirs)
            .arg(&s)
            .arg(&mut path)
            .arg(&mut *changed);
        unsafe {
            b.launch(LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (1, 1, 1),
                shared_mem_bytes: 0,
            })
        }
        .map_err(launch_err("lee_descend"))?;
        if self.rt.download(changed, 1)?[0] != 0 {
            return Err(Error::Gpu("lee_descend: labels have no descent".into()));
        }
        let cells = self.rt.download(&path, len as usize + 1)?;
        let w = self.width;
        Ok(Some(cells.into_iter().map(|c| (c % w, c / w)).collect()))
    }

    fn texture(&self) -> Result<u64> {
        let mut tex = lock(&self.texture);
        if let Some(t) = tex.as_ref() {
            return Ok(t.0);
        }
        let limit = self
            .rt
            .context()
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH)
            .map_err(gpu_err)? as usize;
        if self.cells() > limit {
            return Err(Error::invalid(
                "memory_model",
                format!(
                    "texture: {} cells exceed the device's linear texture limit of {limit}",
                    self.cells()
                ),
            ));
        }
        let (ptr, _sync) = self.masks.device_ptr(self.rt.stream());
        // SAFETY: plain descriptors of a linear u8 buffer that outlives the texture object.
        let obj = unsafe {
            let mut res: sys::CUDA_RESOURCE_DESC = std::mem::zeroed();
            res.resType = sys::CUresourcetype::CU_RESOURCE_TYPE_LINEAR;
            res.res.linear.devPtr = ptr;
            res.res.linear.format = sys::CUarray_format::CU_AD_FORMAT_UNSIGNED_INT8;
            res.res.linear.numChannels = 1;
            res.res.linear.sizeInBytes = self.cells().max(1);
            let mut desc: sys::CUDA_TEXTURE_DESC = std::mem::zeroed();
            desc.flags = sys::CU_TRSF_READ_AS_INTEGER;
            let mut obj: sys::CUtexObject = 0;
            let r = sys::cuTexObjectCreate(&mut obj, &res, &desc, std::ptr::null());
            if r != sys::CUresult::CUDA_SUCCESS {
                return Err(Error::Gpu(format!("cuTexObjectCreate: {r:?}")));
            }
            obj
        };
        *tex = Some(Texture(obj));
        Ok(obj)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
