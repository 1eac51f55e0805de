//! The grid on the device and the four memory models (see kernels/lee/).

use std::sync::{Arc, Mutex};

use cudarc::driver::{LaunchConfig, PushKernelArg};

use crate::compute::cuda::{gpu_err, launch_err, CudaRuntime};
use crate::compute::kernels::LEE;
use crate::compute::readback::Readback;
use crate::compute::warmup::Module;
use crate::error::{Error, Result};
use crate::lee::config::{Config, MemoryModel};
use crate::lee::grid::Grid;
use crate::sync::lock;

mod bitwave;
mod descent;
mod device;
mod portal_block;
mod portals;
mod schedule;

use descent::DescentHeader;
use device::{
    kernel_defines, Kernels, Scratch, BWQ_SLOTS, BW_TILE_H, BW_TILE_W, PATH_CAP_START, SHORT_PATH,
    STATE_SLOTS,
};
use schedule::narrow_from_env;

pub use descent::{long_path_from, LongDescent, CELLS_PER_LONG_MOVE, LONG_PATH_FROM};
pub use device::DeviceGrid;
pub use schedule::Schedule;

/// Sweeps between two reads of the changed flag (each read is a host round trip; extra sweeps
/// after convergence change nothing).
const SWEEPS_PER_CHECK: u32 = 16;

/// The kernel module every Lee query uses, for a node's start-up warm-up.
pub fn modules() -> Vec<Module> {
    vec![Module::new(LEE, &kernel_defines())]
}

impl DeviceGrid {
    /// Uploads `grid`'s move masks on `rt`'s stream.
    pub fn upload(rt: &Arc<CudaRuntime>, grid: &Grid) -> Result<DeviceGrid> {
        let defines = kernel_defines();
        let f = |name: &str| rt.function_with(&LEE, &defines, name);
        let kernels = Kernels {
            fill: f("lee_fill_labels")?,
            sweep_global: f("lee_sweep_global")?,
            sweep_texture: f("lee_sweep_texture")?,
            tiles_shared: f("lee_tiles_shared")?,
            pack_planes: f("lee_pack_planes")?,
            bitwave_init: f("lee_bitwave_init")?,
            bitwave_rounds: f("lee_bitwave_rounds")?,
            bitwave_rounds_to_queue: f("lee_bitwave_rounds_to_queue")?,
            bitwave_queue: f("lee_bitwave_queue")?,
            portal_count: f("lee_portal_count")?,
            portal_list: f("lee_portal_list")?,
            portal_dist: f("lee_portal_dist")?,
            portal_queue_all: f("lee_portal_queue_all")?,
            portal_queue: f("lee_portal_queue")?,
            portal_fill: f("lee_portal_fill")?,
            portal_links: f("lee_portal_links")?,
            portal_block: f("lee_portal_block")?,
            descend: f("lee_descend")?,
            next: f("lee_next")?,
            jump: f("lee_jump")?,
            checkpoints: f("lee_checkpoints")?,
            walk_segments: f("lee_walk_segments")?,
            tile_exits: f("lee_tile_exits")?,
            hop_checkpoints: f("lee_hop_checkpoints")?,
            hop_segments: f("lee_hop_segments")?,
            tile_fill: f("lee_tile_fill")?,
        };
        let n = grid.len();
        let ndirs = grid.connectivity.directions() as u32;
        let (w, h) = (grid.width, grid.height);
        let wwords = w.div_ceil(BW_TILE_W);
        let ntiles = wwords as usize * h.div_ceil(BW_TILE_H) as usize;
        let masks = rt.upload(&grid.masks)?;
        // SAFETY: lee_pack_planes writes every word of every plane below.
        let mut planes =
            unsafe { rt.alloc::<u64>((ndirs as usize * h as usize * wwords as usize).max(1)) }?;
        let words = h as u64 * wwords as u64;
        if words > 0 {
            let stream = rt.stream().clone();
            let mut b = stream.launch_builder(&kernels.pack_planes);
            b.arg(&masks)
                .arg(&mut planes)
                .arg(&w)
                .arg(&h)
                .arg(&wwords)
                .arg(&ndirs);
            let blocks = (words.div_ceil(256) as u32).min(65_535 * 4);
            // SAFETY: lee_pack_planes: as declared; writes the planes (ndirs x h x wwords words, allocated so)
            unsafe {
                b.launch(LaunchConfig {
                    grid_dim: (blocks, 1, 1),
                    block_dim: (256, 1, 1),
                    shared_mem_bytes: 0,
                })
            }
            .map_err(launch_err("lee_pack_planes"))?;
        }
        Ok(DeviceGrid {
            rt: rt.clone(),
            width: w,
            height: h,
            ndirs,
            masks,
            planes,
            texture: Mutex::new(None),
            kernels,
            scratch: Mutex::new(Scratch {
                // SAFETY: every query fills the labels first.
                labels: unsafe { rt.alloc::<u32>(n) }?,
                changed: rt.alloc_zeros::<u32>(1)?,
                lists: rt.alloc_zeros::<u32>(3 * ntiles.max(1))?,
                counts: rt.alloc_zeros::<u32>(3)?,
                queued: rt.alloc_zeros::<u32>(ntiles.max(1))?,
                ring: rt.alloc_zeros::<u64>(ntiles.max(1))?,
                ctl: rt.alloc_zeros::<u32>(BWQ_SLOTS)?,
                state: rt.alloc_zeros::<u32>(STATE_SLOTS)?,
                path: rt.alloc_zeros::<u32>(PATH_CAP_START.min(n).max(1))?,
                path_cap: PATH_CAP_START.min(n).max(1),
                header: Readback::take(rt.context(), STATE_SLOTS + SHORT_PATH)?,
                portals: None,
                tiles: None,
            }),
            rounds: std::sync::atomic::AtomicU32::new(0),
            tile_runs: std::sync::atomic::AtomicU32::new(0),
            portals_used: std::sync::atomic::AtomicBool::new(false),
            portal_block_used: std::sync::atomic::AtomicBool::new(false),
            portal_build_us: std::sync::atomic::AtomicU64::new(0),
            portal_cap: std::sync::atomic::AtomicU64::new(portals::portal_cap_from_env(
                rt.info().total_memory as u64,
            )),
            schedule: Mutex::new(Schedule::from_env()),
            narrow: narrow_from_env(),
            long_path_from: std::sync::atomic::AtomicU32::new(long_path_from(n as u64)),
            jump_cells: std::sync::atomic::AtomicBool::new(false),
            goal: Mutex::new(None),
        })
    }

    /// Computes the distance field from `goal` on the device (kept there for descend/download).
    pub fn compute(&self, goal: (u32, u32), config: &Config) -> Result<()> {
        self.compute_with(goal, config, None).map(|_| ())
    }

    /// The field from `goal` and, with `start`, the descent from it queued right behind on the
    /// stream; returns what the descent left when it ran.
    fn compute_with(
        &self,
        goal: (u32, u32),
        config: &Config,
        start: Option<u64>,
    ) -> Result<Option<DescentHeader>> {
        // Until this field is complete, no goal's field is on the device.
        *lock(&self.goal) = None;
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
        // Bitwave seeds the goal itself (a seed must beat the label it lands on).
        let fill_goal = if config.memory_model == MemoryModel::Bitwave {
            n
        } else {
            goal_idx
        };
        let mut b = stream.launch_builder(&self.kernels.fill);
        b.arg(&mut scratch.labels).arg(&n).arg(&fill_goal);
        // SAFETY: lee_fill_labels: (labels, n, goal) as declared; writes labels[0..n), n = width x height cells
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
                                let mut b = self.field_launch(&self.kernels.sweep_global, labels);
                                b.arg(changed);
                                // SAFETY: lee_sweep_global: as declared; reads and writes labels[0..w x h) only, one thread per cell in the grid
                                unsafe { b.launch(cfg2(0)) }
                                    .map_err(launch_err("lee_sweep_global"))?;
                            }
                            MemoryModel::Texture => {
                                let t = tex.unwrap_or_default();
                                let mut b = stream.launch_builder(&self.kernels.sweep_texture);
                                b.arg(&t).arg(labels).arg(&w).arg(&h).arg(&nd).arg(changed);
                                // SAFETY: lee_sweep_texture: as declared; reads and writes labels[0..w x h) only, one thread per cell in the grid
                                unsafe { b.launch(cfg2(0)) }
                                    .map_err(launch_err("lee_sweep_texture"))?;
                            }
                            _ => {
                                let mut b = self.field_launch(&self.kernels.tiles_shared, labels);
                                b.arg(changed);
                                // SAFETY: lee_tiles_shared: as declared; reads and writes labels[0..w x h) only, shared tiles sized by the launch
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
                    // A cancelled plan stops between batches (no goal's field is kept).
                    crate::cancel::checkpoint()?;
                    if passes > cap {
                        return Err(Error::Gpu(format!(
                            "lee {:?}: no convergence after {passes} passes",
                            config.memory_model
                        )));
                    }
                }
            }
            MemoryModel::Bitwave => {
                let header = self.bitwave(&mut scratch, goal_idx, config, start)?;
                // A wave that ran to its end in the launches between two checkpoints is still
                // not taken once its plan is cancelled, as on the CPU.
                crate::cancel::checkpoint()?;
                *lock(&self.goal) = Some(goal);
                return Ok(header);
            }
        }
        crate::cancel::checkpoint()?;
        *lock(&self.goal) = Some(goal);
        self.queue_descent(&mut scratch, start, goal_idx)?;
        self.descent_header(&mut scratch, start)
    }

    /// Bitwave's field from `goal_idx` on the grid's schedule, with the descent from `start`
    /// queued behind it; returns the descent's (status, length) when it ran.
    fn bitwave(
        &self,
        scratch: &mut Scratch,
        goal_idx: u64,
        config: &Config,
        start: Option<u64>,
    ) -> Result<Option<DescentHeader>> {
        let schedule = *lock(&self.schedule);
        self.rounds.store(0, std::sync::atomic::Ordering::Relaxed);
        self.tile_runs
            .store(0, std::sync::atomic::Ordering::Relaxed);
        self.portals_used
            .store(false, std::sync::atomic::Ordering::Relaxed);
        self.portal_block_used
            .store(false, std::sync::atomic::Ordering::Relaxed);
        // The portals' tables are built here when no query (nor the planner) has yet.
        let portals = match schedule {
            Schedule::Adaptive | Schedule::Portals | Schedule::PortalQueue => {
                self.portals_fit(scratch)?
            }
            Schedule::Rounds | Schedule::Queue => false,
        };
        self.bitwave_init(scratch, goal_idx)?;
        if portals {
            let in_block = schedule != Schedule::PortalQueue;
            return self.portal_field(scratch, goal_idx, config, start, in_block);
        }
        match schedule {
            // Round 1's list holds the goal's tile: the queue starts from it (the portal
            // schedule too where the tables do not fit).
            Schedule::Queue | Schedule::Portals | Schedule::PortalQueue => {
                self.bitwave_queue(scratch, goal_idx, config, start, 1)
            }
            Schedule::Adaptive | Schedule::Rounds => {
                self.bitwave_rounds(scratch, goal_idx, config, start, schedule)
            }
        }
    }

    /// Treats the field on the device as gone: the next query computes its own.
    pub fn forget_field(&self) {
        *lock(&self.goal) = None;
    }

    /// The goal of the field on the device, when one is complete there.
    pub fn field_goal(&self) -> Option<(u32, u32)> {
        *lock(&self.goal)
    }

    /// Field from `goal`, then the path from `start` descended on the device; only the path
    /// comes back (None: start unreached).
    pub fn plan_path(
        &self,
        goal: (u32, u32),
        start: (u32, u32),
        config: &Config,
    ) -> Result<Option<Vec<(u32, u32)>>> {
        let s = start.1 as u64 * self.width as u64 + start.0 as u64;
        let header = self
            .compute_with(goal, config, Some(s))?
            .ok_or_else(|| Error::Gpu("lee: the descent did not run".into()))?;
        self.finish_descent(goal, start, header)
    }

    /// The path from `start` down the field already on the device for `goal` (see
    /// [`DeviceGrid::field_goal`]): one descent, no wave.
    pub fn descend(&self, goal: (u32, u32), start: (u32, u32)) -> Result<Option<Vec<(u32, u32)>>> {
        if self.field_goal() != Some(goal) {
            return Err(Error::Gpu(format!(
                "lee: no field for goal {goal:?} on the device to descend"
            )));
        }
        let w = self.width as u64;
        let (s, g) = (
            start.1 as u64 * w + start.0 as u64,
            goal.1 as u64 * w + goal.0 as u64,
        );
        let header = {
            let mut scratch = lock(&self.scratch);
            self.launch_descend(&mut scratch, s, g)?;
            self.descent_header(&mut scratch, Some(s))?
        }
        .ok_or_else(|| Error::Gpu("lee: the descent did not run".into()))?;
        self.finish_descent(goal, start, header)
    }

    /// How paths longer than [`long_path_from`] moves are descended from now on (default
    /// [`LongDescent::Tiles`]; tests and benchmarks run either).
    pub fn set_long_descent(&self, how: LongDescent) {
        self.jump_cells.store(
            how == LongDescent::Jumps,
            std::sync::atomic::Ordering::Relaxed,
        );
    }

    /// Paths longer than `moves` are descended as [`DeviceGrid::set_long_descent`] says from
    /// now on, shorter ones by the window walk (default [`long_path_from`] of the grid's
    /// cells; tests and benchmarks move it to run each descent).
    pub fn set_long_path_from(&self, moves: u32) {
        self.long_path_from
            .store(moves, std::sync::atomic::Ordering::Relaxed);
    }

    /// Bitwave's schedule from now on (default: [`Schedule::from_env`]).
    pub fn set_schedule(&self, schedule: Schedule) {
        *lock(&self.schedule) = schedule;
    }

    /// Builds the portal tables now where bitwave's schedule would use them, so that no query
    /// waits for them (a planner calls it when it takes a map); returns whether they fit.
    pub fn prepare_portals(&self) -> Result<bool> {
        match *lock(&self.schedule) {
            Schedule::Adaptive | Schedule::Portals | Schedule::PortalQueue => {
                self.portals_fit(&mut lock(&self.scratch))
            }
            Schedule::Rounds | Schedule::Queue => Ok(false),
        }
    }

    /// The memory this grid's portal tables may take from now on (MiB; default
    /// `GPU_PLANNING_LEE_PORTAL_MIB`, else 1024 or a sixteenth of the device): tables built
    /// under another cap are dropped, and the next query (or
    /// [`DeviceGrid::prepare_portals`]) builds them again where they fit.
    pub fn set_portal_table_mib(&self, mib: u64) {
        self.portal_cap.store(
            portals::table_entries(mib),
            std::sync::atomic::Ordering::Relaxed,
        );
        lock(&self.scratch).portals = None;
        self.portal_build_us
            .store(0, std::sync::atomic::Ordering::Relaxed);
    }

    /// Bitwave rounds the last query ran.
    pub fn last_rounds(&self) -> u32 {
        self.rounds.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Tiles the last query ran on the work queue (its own tiles or the portals').
    pub fn last_tile_runs(&self) -> u32 {
        self.tile_runs.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether the last query's wave went over the portals.
    pub fn last_used_portals(&self) -> bool {
        self.portals_used.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether the last query's wave went over the portals in one block.
    pub fn last_used_portal_block(&self) -> bool {
        self.portal_block_used
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How long building the portals' tables took (µs; 0: not built), once per grid.
    pub fn portal_build_us(&self) -> u64 {
        self.portal_build_us
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Waits for every launch on the grid's stream.
    pub fn synchronize(&self) -> Result<()> {
        self.rt.synchronize()
    }

    /// The last computed field.
    pub fn download_labels(&self) -> Result<Vec<u32>> {
        let scratch = lock(&self.scratch);
        self.rt.download(&scratch.labels, self.cells())
    }
}
