//! The least-cost field on the device (kernels/costfield.cu): the grid's masks and the cells'
//! step costs uploaded once per map; per goal, tile launches that follow the front until one
//! improves nothing.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use crate::compute::cuda::{gpu_err, launch_err, CudaRuntime};
use crate::compute::kernels::COSTFIELD;
use crate::error::{Error, Result};
use crate::lee::grid::Grid;

/// Tiles are TILE x TILE cells, ROWS rows of threads (kernels/costfield.cu).
const TILE: u32 = 32;
const ROWS: u32 = 8;
/// Launches between two reads of the "improved" flag (each read is a host round trip; a launch
/// with no front left returns at once).
const LAUNCHES_PER_CHECK: u32 = 8;

pub struct DeviceCosts {
    rt: Arc<CudaRuntime>,
    width: u32,
    height: u32,
    ndirs: u32,
    masks: CudaSlice<u8>,
    enter: CudaSlice<u32>,
    init: CudaFunction,
    tiles: CudaFunction,
}

/// Device buffers free themselves on the dropping thread, where cudarc does not make the
/// context current.
impl Drop for DeviceCosts {
    fn drop(&mut self) {
        let _ = self.rt.context().bind_to_thread();
    }
}

impl DeviceCosts {
    /// Uploads the grid's masks and the cells' straight step costs.
    pub fn upload(rt: &Arc<CudaRuntime>, grid: &Grid, enter: &[u32]) -> Result<DeviceCosts> {
        Ok(DeviceCosts {
            rt: rt.clone(),
            width: grid.width,
            height: grid.height,
            ndirs: grid.connectivity.directions() as u32,
            masks: rt.upload(&grid.masks)?,
            enter: rt.upload(enter)?,
            init: rt.function(&COSTFIELD, "cf_init")?,
            tiles: rt.function(&COSTFIELD, "cf_tiles")?,
        })
    }

    /// The least total cost from every cell to `goal` (u64::MAX where unreached), row-major.
    pub fn field(&self, goal: (u32, u32)) -> Result<Vec<u64>> {
        let rt = &self.rt;
        let (w, h) = (self.width, self.height);
        let n = w as usize * h as usize;
        let (tiles_x, tiles_y) = (w.div_ceil(TILE), h.div_ceil(TILE));
        let ntiles = tiles_x * tiles_y;
        // SAFETY: cf_init writes every cost and every epoch before cf_tiles reads them.
        let mut cost = unsafe { rt.alloc::<u64>(n) }?;
        // SAFETY: as cost.
        let mut epoch = unsafe { rt.alloc::<u32>(ntiles as usize) }?;
        let mut changed = rt.alloc_zeros::<u32>(1)?;
        let stream = rt.stream();
        let n64 = n as u64;
        let goal_idx = goal.1 as u64 * w as u64 + goal.0 as u64;
        let goal_tile = (goal.1 / TILE) * tiles_x + goal.0 / TILE;
        let mut b = stream.launch_builder(&self.init);
        b.arg(&mut cost)
            .arg(&n64)
            .arg(&goal_idx)
            .arg(&mut epoch)
            .arg(&ntiles)
            .arg(&goal_tile);
        // SAFETY: cf_init(cost, n, goal, epoch, ntiles, goal_tile): writes cost[0..n) and
        // epoch[0..ntiles).
        unsafe { b.launch(rt.grid_stride(n.max(ntiles as usize), 256)) }
            .map_err(launch_err("cf_init"))?;
        let cfg = LaunchConfig {
            grid_dim: (tiles_x, tiles_y, 1),
            block_dim: (TILE, ROWS, 1),
            shared_mem_bytes: 0,
        };
        // Each launch moves the front at least one tile, so the tiles' count bounds the
        // launches a fixed point can need (times the checks' batching).
        let max_launches = (ntiles as u64 + 2) * 4 * LAUNCHES_PER_CHECK as u64;
        let mut launch: u32 = 1;
        loop {
            stream.memset_zeros(&mut changed).map_err(gpu_err)?;
            for _ in 0..LAUNCHES_PER_CHECK {
                let mut b = stream.launch_builder(&self.tiles);
                b.arg(&self.masks)
                    .arg(&self.enter)
                    .arg(&mut cost)
                    .arg(&w)
                    .arg(&h)
                    .arg(&self.ndirs)
                    .arg(&mut epoch)
                    .arg(&tiles_x)
                    .arg(&tiles_y)
                    .arg(&launch)
                    .arg(&mut changed);
                // SAFETY: cf_tiles(masks, enter, cost, w, h, ndirs, epoch, tiles_x, tiles_y,
                // launch, changed): one block per tile; reads masks/enter/cost within w x h,
                // writes cost cells of its own tile, epoch[its tile] and changed[0].
                unsafe { b.launch(cfg) }.map_err(launch_err("cf_tiles"))?;
                launch += 1;
            }
            if rt.download(&changed, 1)?.first().copied().unwrap_or(0) == 0 {
                break;
            }
            if launch as u64 > max_launches {
                return Err(Error::Gpu(format!(
                    "cost field did not settle within {max_launches} launches"
                )));
            }
        }
        rt.download(&cost, n)
    }
}
