//! The grid on the device and the four memory models (see kernels/lee/).

use std::sync::{Arc, Mutex};

use cudarc::driver::sys;
use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, LaunchArgs, LaunchConfig, PushKernelArg};

use super::config::{Config, MemoryModel};
use super::grid::Grid;
use crate::compute::cuda::{gpu_err, launch_err, one_per_item, CudaRuntime};
use crate::compute::kernels::LEE;
use crate::compute::readback::Readback;
use crate::compute::warmup::Module;
use crate::error::{Error, Result};
use crate::sync::lock;

mod bitwave;
mod portal_block;
mod portals;

use bitwave::narrow_from_env;

pub use bitwave::Schedule;

/// Sweeps between two reads of the changed flag (each read is a host round trip; extra sweeps
/// after convergence change nothing).
const SWEEPS_PER_CHECK: u32 = 16;

/// Bitwave tiles are one warp each: 64 columns (one u64 per row and direction) x 32 rows.
const BW_TILE_W: u32 = 64;
const BW_TILE_H: u32 = 32;
/// Shared row stride of a bitwave tile's labels: 64 + 1, so lanes on different rows of one
/// column hit different banks.
const BW_ROW: u32 = 65;
/// Shared bytes per bitwave warp: its tile's 32 rows of BW_ROW labels.
const BW_SMEM_PER_WARP: u32 = BW_TILE_H * BW_ROW * 4;
/// Portal slots per tile: a 64 x 32 tile has at most 2 x 64 + 2 x 30 = 188 portals, and the
/// kernels take a tile's slots 32 at a time.
const PT_MAX: u32 = 192;
const _: () = assert!(PT_MAX.is_multiple_of(32) && PT_MAX >= 2 * BW_TILE_W + 2 * (BW_TILE_H - 2));
/// Threads of lee_portal_dist's blocks (a warp per portal; its shared rows sized by it).
const PT_DIST_THREADS: u32 = 256;
/// Shared bytes per warp of the portal queue: three words for each of a tile's portal slots
/// (label, slot, list of those that fell).
const PT_WARP_SMEM: u32 = 3 * PT_MAX * 4;
/// Threads of lee_portal_block's one block (gpu/portal_block.rs): on the H100 (BENCHMARKS.md,
/// fifteenth part, runs 2 and 4) the 1000² maze's field took 35-50 % longer with 128 or 1024
/// (registers capped at 64), 8-10 % longer with 192, and no less with 384 or 512.
const PB_THREADS: u32 = 256;
/// Path cells the descent buffer holds before it must grow.
const PATH_CAP_START: usize = 1 << 16;
/// Path cells that come back in one copy with the descent's status and length (16 KiB): a
/// path of fewer moves costs its query one wait for the device, not two.
const SHORT_PATH: usize = 1 << 12;
/// Slots of the per-query state buffer: [0..2] the grid barrier (arrivals, generation), then
/// the next bitwave round, the descent status and the path length, and whether the rounds
/// handed over to the work queue, so one download answers "converged?" and "how long?".
const STATE_ROUND: usize = 2;
const STATE_STATUS: usize = 3;
const STATE_LENGTH: usize = 4;
/// Set by lee_bitwave_rounds when it stopped for the work queue (rounds ran narrow).
const STATE_SWITCH: usize = 5;
/// The tile descent (lee_tile_exits and after): the node after the start, the checkpoints on
/// the nodes' chain, and the tile visits.
const STATE_HOP_FIRST: usize = 6;
const STATE_CHECKPOINTS: usize = 7;
const STATE_HOPS: usize = 8;
const STATE_SLOTS: usize = 9;
/// Control words of the bitwave work queue (lee_bitwave_queue): tickets taken, tile runs so
/// far, tiles queued or running, tickets issued.
const BWQ_HEAD: usize = 0;
const BWQ_VISITS: usize = 1;
/// Pending and tail are the low and high halves of one 64-bit word (kernels/lee/bitwave.cu).
const BWQ_PENDING: usize = 2;
const BWQ_TAIL: usize = 3;
const BWQ_SLOTS: usize = 4;
/// Descent status (lee_descend).
const DESCENT_OK: u32 = 0;
const DESCENT_BROKEN: u32 = 1;
const DESCENT_UNREACHED: u32 = 2;
const DESCENT_TOO_LONG: u32 = 3;
const DESCENT_LONG: u32 = 4;
/// The tile descent's tiles are DESCENT_TILE cells square; a path enters one only by its
/// DESCENT_BORDER border cells, the nodes of the graph its pointer jumps run on.
const DESCENT_TILE: u32 = 64;
const DESCENT_BORDER: u32 = 4 * DESCENT_TILE - 4;
/// Threads of the tile descent's blocks (lee_tile_exits, lee_tile_fill).
const DESCENT_TILE_THREADS: u32 = 512;
/// Moves a tile visit is taken to have when the descent cuts the visits' chain, before it
/// knows how many there are (2^k visits a jump, k from len / this). On open terrain a path
/// crosses a tile in about DESCENT_TILE moves; on a maze its visits are shorter, but a guess
/// 4x off makes the two chains only 2x longer than they could be.
const MOVES_PER_VISIT_GUESS: u32 = DESCENT_TILE;

/// How the device descends paths longer than [`long_path_from`] moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LongDescent {
    /// The tiles the path crosses, by pointer jumping over their border cells; then each
    /// visit walked in its tile (the default).
    Tiles,
    /// Pointer jumping over every cell of the grid, a pass per doubling.
    Jumps,
}

/// Paths longer than this many moves, and than [`CELLS_PER_LONG_MOVE`] of the grid's cells,
/// are descended over the tiles they cross ([`LongDescent::Tiles`]: lee_tile_exits and after)
/// instead of by the one-block window walk. On the H100 (BENCHMARKS.md, twentieth part) the
/// walk costs about 0.12-0.14 µs a move on open terrain and 0.7 µs on a maze (its windows lean
/// towards the goal, a maze path does not); the tiles about 75 µs plus 9 µs per million
/// cells, whatever the path: 1,000 moves on 1000² took 0.143 ms walked and 0.080 over the
/// tiles, 500 moves on 500² 0.082 and 0.070; the two meet at about 400 moves on small grids.
pub const LONG_PATH_FROM: u32 = 400;
/// See [`LONG_PATH_FROM`]: on 10000² the tiles cost about 1 ms, which the walk matches at
/// about 8,000 moves of open terrain (10,000 moves: 1.18 ms walked, 1.05 over the tiles); the
/// bound sits below that, as a maze's path of the same length costs five times as much walked.
pub const CELLS_PER_LONG_MOVE: u64 = 16_000;

/// The path length above which a grid of `cells` descends over the tiles.
pub fn long_path_from(cells: u64) -> u32 {
    (cells / CELLS_PER_LONG_MOVE).clamp(LONG_PATH_FROM as u64, u32::MAX as u64) as u32
}

/// Rounds of pointer jumping for a chain of `steps`: 2^k steps a jump, k = ceil(log2(steps) /
/// 2), so the checkpoints' chain and each segment's walk are both about sqrt(steps) long.
fn jumps_for(steps: u32) -> u32 {
    (32 - steps.max(1).leading_zeros()).div_ceil(2)
}

/// The constants above, for kernels/lee/ (NVRTC -D): one definition for both sides.
fn kernel_defines() -> [(&'static str, String); 23] {
    [
        ("DT", DESCENT_TILE.to_string()),
        ("DT_THREADS", DESCENT_TILE_THREADS.to_string()),
        ("STATE_HOP_FIRST", STATE_HOP_FIRST.to_string()),
        ("STATE_CHECKPOINTS", STATE_CHECKPOINTS.to_string()),
        ("STATE_HOPS", STATE_HOPS.to_string()),
        ("PT_MAX", PT_MAX.to_string()),
        ("PT_DIST_THREADS", PT_DIST_THREADS.to_string()),
        ("PT_WARP_SMEM", PT_WARP_SMEM.to_string()),
        ("PB_THREADS", PB_THREADS.to_string()),
        ("STATE_SWITCH", STATE_SWITCH.to_string()),
        ("BWQ_HEAD", BWQ_HEAD.to_string()),
        ("BWQ_TAIL", BWQ_TAIL.to_string()),
        ("BWQ_PENDING", BWQ_PENDING.to_string()),
        ("BWQ_VISITS", BWQ_VISITS.to_string()),
        ("BW_ROW", BW_ROW.to_string()),
        ("STATE_ROUND", STATE_ROUND.to_string()),
        ("STATE_STATUS", STATE_STATUS.to_string()),
        ("STATE_LENGTH", STATE_LENGTH.to_string()),
        ("DESCENT_OK", format!("{DESCENT_OK}u")),
        ("DESCENT_BROKEN", format!("{DESCENT_BROKEN}u")),
        ("DESCENT_UNREACHED", format!("{DESCENT_UNREACHED}u")),
        ("DESCENT_TOO_LONG", format!("{DESCENT_TOO_LONG}u")),
        ("DESCENT_LONG", format!("{DESCENT_LONG}u")),
    ]
}
/// The kernel module every Lee query uses, for a node's start-up warm-up.
pub fn modules() -> Vec<Module> {
    vec![Module::new(LEE, &kernel_defines())]
}

struct Kernels {
    fill: CudaFunction,
    sweep_global: CudaFunction,
    sweep_texture: CudaFunction,
    tiles_shared: CudaFunction,
    pack_planes: CudaFunction,
    bitwave_init: CudaFunction,
    bitwave_rounds: CudaFunction,
    bitwave_rounds_to_queue: CudaFunction,
    bitwave_queue: CudaFunction,
    portal_count: CudaFunction,
    portal_list: CudaFunction,
    portal_dist: CudaFunction,
    portal_queue_all: CudaFunction,
    portal_queue: CudaFunction,
    portal_fill: CudaFunction,
    portal_links: CudaFunction,
    portal_block: CudaFunction,
    descend: CudaFunction,
    next: CudaFunction,
    jump: CudaFunction,
    checkpoints: CudaFunction,
    walk_segments: CudaFunction,
    tile_exits: CudaFunction,
    hop_checkpoints: CudaFunction,
    hop_segments: CudaFunction,
    tile_fill: CudaFunction,
}

/// What a descent on the device left: its status (`DESCENT_*`), its length in moves, and the
/// path's cells when the status is `DESCENT_OK` and they came back with it (up to
/// [`SHORT_PATH`] cells).
pub(super) struct DescentHeader {
    status: u32,
    len: u32,
    cells: Option<Vec<u32>>,
}

impl DescentHeader {
    /// From the state slots and the cells [`DeviceGrid::fetch_state`] brought with them.
    fn from_state(st: &[u32; STATE_SLOTS], cells: Option<Vec<u32>>) -> DescentHeader {
        DescentHeader {
            status: st[STATE_STATUS],
            len: st[STATE_LENGTH],
            cells,
        }
    }
}

/// Per-query device state; one query at a time per grid.
struct Scratch {
    labels: CudaSlice<u32>,
    changed: CudaSlice<u32>,
    /// Bitwave rounds: three rotating lists of tile ids, their lengths, and per tile the last
    /// round it was queued for (the queue: per tile its state).
    lists: CudaSlice<u32>,
    counts: CudaSlice<u32>,
    queued: CudaSlice<u32>,
    /// Bitwave queue: its ring (one entry per tile) and control words (BWQ_SLOTS).
    ring: CudaSlice<u64>,
    ctl: CudaSlice<u32>,
    /// STATE_SLOTS values: the grid barrier, the next round, the descent's status and length.
    state: CudaSlice<u32>,
    /// Path cells of the last descent; grown when a path does not fit.
    path: CudaSlice<u32>,
    path_cap: usize,
    /// Page-locked: the state slots, then up to [`SHORT_PATH`] path cells, copied back
    /// together after a descent ([`DeviceGrid::descent_header`]).
    header: Readback,
    /// Bitwave's portals and their tables, built once per grid: Some(None) when they do not
    /// fit (src/lee/gpu/portals.rs).
    portals: Option<Option<portals::Portals>>,
    /// The tile descent's buffers, made by the first long path and kept.
    tiles: Option<TileBuffers>,
}

/// The tile descent's device buffers: the border cells' exits and two jump tables over them
/// (a grid's worth of nodes each), the checkpoints and the tile visits (grown when a longer
/// path needs more).
struct TileBuffers {
    exits: CudaSlice<u32>,
    tables: [CudaSlice<u32>; 2],
    checkpoints: CudaSlice<u32>,
    checkpoint_cap: usize,
    hops: CudaSlice<u32>,
    hop_cap: usize,
}

/// A grid on the device with its scratch: the wave's labels, the field's goal, bitwave's tiles
/// and portal tables, and the descent's buffers. One query at a time ([`super::Planner`] takes
/// turns).
pub struct DeviceGrid {
    rt: Arc<CudaRuntime>,
    width: u32,
    height: u32,
    ndirs: u32,
    masks: CudaSlice<u8>,
    /// Bitwave bit planes: plane k, row y, word x holds bit j = move k allowed from cell
    /// (64 x + j, y).
    planes: CudaSlice<u64>,
    texture: Mutex<Option<Texture>>,
    kernels: Kernels,
    scratch: Mutex<Scratch>,
    goal: Mutex<Option<(u32, u32)>>,
    /// Bitwave rounds and work-queue tile runs of the last query, for benchmarks.
    rounds: std::sync::atomic::AtomicU32,
    tile_runs: std::sync::atomic::AtomicU32,
    /// Whether the last query's wave went over the portals, and how long (µs) building their
    /// tables took, for benchmarks.
    portals_used: std::sync::atomic::AtomicBool,
    /// Whether it went over them in one block (portal_block.rs).
    portal_block_used: std::sync::atomic::AtomicBool,
    portal_build_us: std::sync::atomic::AtomicU64,
    /// Table entries this grid's portals may take (portals::portal_cap_from_env).
    portal_cap: std::sync::atomic::AtomicU64,
    /// Bitwave's schedule, and the adaptive one's hand-over (tiles, rounds).
    schedule: Mutex<Schedule>,
    narrow: (u32, u32),
    /// Paths longer than this (moves) are descended over the tiles (or the cells' jumps).
    long_path_from: std::sync::atomic::AtomicU32,
    /// How: over the tiles (false) or over every cell (true).
    jump_cells: std::sync::atomic::AtomicBool,
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

    fn cells(&self) -> usize {
        self.width as usize * self.height as usize
    }

    /// A launch of `f` on this stream with the arguments every field kernel takes first: the
    /// masks, the labels, and the grid's width, height and directions.
    fn field_launch<'a>(
        &'a self,
        f: &'a CudaFunction,
        labels: &'a CudaSlice<u32>,
    ) -> LaunchArgs<'a> {
        let mut b = self.rt.stream().launch_builder(f);
        b.arg(&self.masks)
            .arg(labels)
            .arg(&self.width)
            .arg(&self.height)
            .arg(&self.ndirs);
        b
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

    /// The descent from `start` queued on the stream (nothing without a start).
    fn queue_descent(&self, scratch: &mut Scratch, start: Option<u64>, goal: u64) -> Result<()> {
        match start {
            Some(s) => self.launch_descend(scratch, s, goal),
            None => Ok(()),
        }
    }

    /// What the descent queued last left, when there was a start: its status and length and,
    /// for a path of fewer than [`SHORT_PATH`] cells, the cells too, all in one wait for the
    /// stream ([`Self::fetch_state`]).
    fn descent_header(
        &self,
        scratch: &mut Scratch,
        start: Option<u64>,
    ) -> Result<Option<DescentHeader>> {
        if start.is_none() {
            return Ok(None);
        }
        let (st, cells) = self.fetch_state(scratch, true)?;
        Ok(Some(DescentHeader::from_state(&st, cells)))
    }

    /// The state slots once the stream has run, and, after a descent (`descended`) that ended
    /// `DESCENT_OK` in fewer than [`SHORT_PATH`] cells, its path: two copies into page-locked
    /// memory queued back to back, one wait (a path downloaded after its length was known cost
    /// a second).
    fn fetch_state(
        &self,
        scratch: &mut Scratch,
        descended: bool,
    ) -> Result<([u32; STATE_SLOTS], Option<Vec<u32>>)> {
        let Scratch {
            state,
            path,
            path_cap,
            header,
            ..
        } = scratch;
        let short = if descended {
            (*path_cap).min(SHORT_PATH)
        } else {
            0
        };
        let stream = self.rt.stream();
        let (slots, cells) = header.as_mut_slice()?.split_at_mut(STATE_SLOTS);
        let queued = {
            let (sp, _read_state) = state.device_ptr(stream);
            let (pp, _read_path) = path.device_ptr(stream);
            // SAFETY: `state` holds STATE_SLOTS values and `path` path_cap >= short, as do
            // `slots` and `cells`; the stream is synchronised below, whether or not both
            // copies were queued, before the host reads them or the buffer goes back to the
            // spares, and the scratch (borrowed here) is not freed meanwhile.
            unsafe {
                cudarc::driver::result::memcpy_dtoh_async(slots, sp, stream.cu_stream()).and_then(
                    |()| match short {
                        0 => Ok(()),
                        _ => cudarc::driver::result::memcpy_dtoh_async(
                            &mut cells[..short],
                            pp,
                            stream.cu_stream(),
                        ),
                    },
                )
            }
        };
        self.rt.synchronize()?;
        queued.map_err(gpu_err)?;
        let mut st = [0u32; STATE_SLOTS];
        st.copy_from_slice(slots);
        let len = st[STATE_LENGTH] as usize;
        let cells = (short > 0 && st[STATE_STATUS] == DESCENT_OK && len < short)
            .then(|| cells[..=len].to_vec());
        Ok((st, cells))
    }

    fn launch_descend(&self, scratch: &mut Scratch, start: u64, goal: u64) -> Result<()> {
        let cap = scratch.path_cap as u32;
        let long_from = self
            .long_path_from
            .load(std::sync::atomic::Ordering::Relaxed);
        let Scratch {
            labels,
            state,
            path,
            ..
        } = scratch;
        let mut b = self.field_launch(&self.kernels.descend, labels);
        b.arg(&start)
            .arg(&goal)
            .arg(&mut *path)
            .arg(&cap)
            .arg(&long_from)
            .arg(&mut *state);
        // SAFETY: lee_descend: as declared; writes path[0..cap) only (checked against cap) and the state slots
        unsafe {
            b.launch(LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (1024, 1, 1),
                shared_mem_bytes: 0,
            })
        }
        .map_err(launch_err("lee_descend"))?;
        Ok(())
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

    /// A descent's header into its path: the cells that came with it, or downloaded, or the
    /// descent relaunched with room for the whole path when the first path buffer was too short.
    fn finish_descent(
        &self,
        goal: (u32, u32),
        start: (u32, u32),
        DescentHeader {
            mut status,
            len,
            mut cells,
        }: DescentHeader,
    ) -> Result<Option<Vec<(u32, u32)>>> {
        let w = self.width as u64;
        let (s, g) = (
            start.1 as u64 * w + start.0 as u64,
            goal.1 as u64 * w + goal.0 as u64,
        );
        let mut scratch = lock(&self.scratch);
        if status == DESCENT_TOO_LONG || status == DESCENT_LONG {
            // Room for the path and its status after it: one download brings both.
            let room = len as usize + 2;
            if scratch.path_cap < room {
                let cap = room.next_power_of_two().min(self.cells() + 1);
                // SAFETY: the descent writes path[0..=len] before it reports success, and
                // the status is copied to path[len + 1] below.
                scratch.path = unsafe { self.rt.alloc::<u32>(cap) }?;
                scratch.path_cap = cap;
            }
            if status == DESCENT_LONG {
                if self.jump_cells.load(std::sync::atomic::Ordering::Relaxed) {
                    self.jump_descent(&mut scratch, s, len)?;
                } else {
                    self.tile_descent(&mut scratch, s, len)?;
                }
            } else {
                self.launch_descend(&mut scratch, s, g)?;
            }
            let Scratch { state, path, .. } = &mut *scratch;
            self.rt
                .stream()
                .memcpy_dtod(
                    &state.slice(STATE_STATUS..STATE_STATUS + 1),
                    &mut path.slice_mut(room - 1..room),
                )
                .map_err(gpu_err)?;
            let mut got = self.rt.download(&scratch.path, room)?;
            status = got.pop().unwrap_or(DESCENT_BROKEN);
            cells = Some(got);
        }
        match status {
            DESCENT_OK => {
                let cells = match cells {
                    Some(c) => c,
                    None => self.rt.download(&scratch.path, len as usize + 1)?,
                };
                Ok(Some(
                    cells
                        .into_iter()
                        .map(|c| (c % self.width, c / self.width))
                        .collect(),
                ))
            }
            DESCENT_UNREACHED => Ok(None),
            DESCENT_BROKEN => Err(Error::Gpu("lee_descend: labels have no descent".into())),
            other => Err(Error::Gpu(format!("lee_descend: status {other}"))),
        }
    }

    /// The path of `len` moves from `start` by pointer jumping (kernels/lee/descent.cu, "Long
    /// paths"): leaves path[0..=len] and the status in the scratch. Needs three grids of u32
    /// for the moment it runs (the next cells and two jump tables).
    fn jump_descent(&self, scratch: &mut Scratch, start: u64, len: u32) -> Result<()> {
        let stream = self.rt.stream().clone();
        let n = self.cells() as u64;
        let k = jumps_for(len);
        let stride = 1u32 << k;
        // SAFETY: lee_next writes every cell of `next`, each lee_jump every cell of the table
        // it writes, before anything reads them.
        let (mut next, mut tables) = unsafe {
            (
                self.rt.alloc::<u32>(n as usize)?,
                [
                    self.rt.alloc::<u32>(n as usize)?,
                    self.rt.alloc::<u32>(n as usize)?,
                ],
            )
        };
        let pass = self.rt.grid_stride(n as usize, 256);
        let mut b = self.field_launch(&self.kernels.next, &scratch.labels);
        b.arg(&mut next);
        // SAFETY: lee_next: as declared; reads masks and labels, writes next[0..n), n = w x h
        unsafe { b.launch(pass) }.map_err(launch_err("lee_next"))?;
        let jump = self.jump_passes(&next, &mut tables, k)?;
        let Scratch { path, state, .. } = scratch;
        let mut b = stream.launch_builder(&self.kernels.checkpoints);
        b.arg(jump)
            .arg(&start)
            .arg(&len)
            .arg(&stride)
            .arg(&mut *path)
            .arg(&mut *state);
        // SAFETY: lee_checkpoints: as declared; one thread writes path[i * stride] for i * stride <= len < path's capacity
        unsafe { b.launch(LaunchConfig::for_num_elems(1)) }
            .map_err(launch_err("lee_checkpoints"))?;
        let segments = len / stride + 1;
        let mut b = stream.launch_builder(&self.kernels.walk_segments);
        b.arg(&next)
            .arg(&len)
            .arg(&stride)
            .arg(&mut *path)
            .arg(&mut *state);
        // SAFETY: lee_walk_segments: as declared; thread i writes path[i * stride + 1 ..= min(len, (i + 1) * stride - 1)]
        unsafe { b.launch(one_per_item(segments as usize, 128, "path length")?) }
            .map_err(launch_err("lee_walk_segments"))?;
        Ok(())
    }

    /// `k` rounds of lee_jump over `first`'s entries (each a cell or a node, or NEXT_NONE),
    /// each round squaring the one before, between the two `tables`: the table whose entries
    /// move 2^k steps (`first` itself for k = 0). The tables are `first`'s length.
    fn jump_passes<'a>(
        &self,
        first: &'a CudaSlice<u32>,
        tables: &'a mut [CudaSlice<u32>; 2],
        k: u32,
    ) -> Result<&'a CudaSlice<u32>> {
        let n = first.len();
        let pass = self.rt.grid_stride(n, 256);
        let n = n as u64;
        for r in 0..k {
            let [a, t] = &mut *tables;
            let (from, to) = match r {
                0 => (first, a),
                _ if r % 2 == 1 => (&*a, t),
                _ => (&*t, a),
            };
            let mut b = self.rt.stream().launch_builder(&self.kernels.jump);
            b.arg(from).arg(to).arg(&n);
            // SAFETY: lee_jump: as declared; reads from[0..n) (values below n or NEXT_NONE), writes to[0..n), every table at least n long
            unsafe { b.launch(pass) }.map_err(launch_err("lee_jump"))?;
        }
        Ok(match k {
            0 => first,
            _ if k % 2 == 1 => &tables[0],
            _ => &tables[1],
        })
    }

    /// The path of `len` moves from `start` over the tiles it crosses (kernels/lee/descent.cu, "Long
    /// paths over tiles"): leaves path[0..=len] and the status in the scratch. Keeps the
    /// border cells' exits and two jump tables over them (each 252/4096 of the grid's cells),
    /// and the visits and their checkpoints (at most len + 1 each), for the next long path.
    fn tile_descent(&self, scratch: &mut Scratch, start: u64, len: u32) -> Result<()> {
        let stream = self.rt.stream().clone();
        let (tiles_x, tiles_y) = (
            self.width.div_ceil(DESCENT_TILE),
            self.height.div_ceil(DESCENT_TILE),
        );
        let goal_node = tiles_x as u64 * tiles_y as u64 * DESCENT_BORDER as u64;
        if goal_node >= (1 << 31) - 1 || tiles_y > 65_535 {
            // The kernels tag a node with bit 31 and take the tile rows as grid rows.
            return Err(Error::Gpu(format!(
                "lee: a {}x{} grid has too many tiles for the tile descent",
                self.width, self.height
            )));
        }
        let goal_node = goal_node as u32;
        let nodes = goal_node as usize + 1;
        let k = jumps_for(len / MOVES_PER_VISIT_GUESS + 1);
        let stride = 1u32 << k;
        // The chain has at most len + 1 visits, so at most len / stride + 2 checkpoints, and
        // the segments write visits below (cap - 1) x stride + 1.
        let cap = len / stride + 2;
        let hop_cap = (cap as usize - 1) * stride as usize + 1;
        let fits = |t: &TileBuffers| t.checkpoint_cap >= cap as usize && t.hop_cap >= hop_cap;
        if !scratch.tiles.as_ref().is_some_and(fits) {
            let (checkpoint_cap, hop_cap) = (
                (cap as usize).next_power_of_two(),
                hop_cap.next_power_of_two(),
            );
            // SAFETY: lee_tile_exits writes every node of `exits` (each tile its border's,
            // the first the goal node); lee_jump every node of the table it writes; the
            // checkpoints and visits are read only below the counts their writers set.
            scratch.tiles = Some(unsafe {
                TileBuffers {
                    exits: self.rt.alloc::<u32>(nodes)?,
                    tables: [self.rt.alloc::<u32>(nodes)?, self.rt.alloc::<u32>(nodes)?],
                    checkpoints: self.rt.alloc::<u32>(checkpoint_cap)?,
                    checkpoint_cap,
                    hops: self.rt.alloc::<u32>(hop_cap)?,
                    hop_cap,
                }
            });
        }
        let Scratch {
            labels,
            path,
            state,
            tiles,
            ..
        } = scratch;
        let TileBuffers {
            exits,
            tables,
            checkpoints,
            hops,
            ..
        } = tiles
            .as_mut()
            .ok_or_else(|| Error::Gpu("lee: the tile descent's buffers are missing".into()))?;
        let mut b = self.field_launch(&self.kernels.tile_exits, labels);
        b.arg(&start).arg(&mut *exits).arg(&mut *state);
        // SAFETY: lee_tile_exits: as declared; a block per tile (the grid's dimensions are
        // the tiles'), writes exits[0..=goal_node] and the start's slot of the state
        unsafe {
            b.launch(LaunchConfig {
                grid_dim: (tiles_x, tiles_y, 1),
                block_dim: (DESCENT_TILE_THREADS, 1, 1),
                shared_mem_bytes: 0,
            })
        }
        .map_err(launch_err("lee_tile_exits"))?;
        let jump = self.jump_passes(exits, tables, k)?;
        let mut b = stream.launch_builder(&self.kernels.hop_checkpoints);
        b.arg(jump)
            .arg(&goal_node)
            .arg(&cap)
            .arg(&mut *checkpoints)
            .arg(&mut *state);
        // SAFETY: lee_hop_checkpoints: as declared; one thread writes checkpoints[0..cap) and the state
        unsafe { b.launch(LaunchConfig::for_num_elems(1)) }
            .map_err(launch_err("lee_hop_checkpoints"))?;
        let mut b = stream.launch_builder(&self.kernels.hop_segments);
        b.arg(&*exits)
            .arg(&*checkpoints)
            .arg(&stride)
            .arg(&goal_node)
            .arg(&self.width)
            .arg(&tiles_x)
            .arg(&start)
            .arg(&mut *hops)
            .arg(&mut *state);
        // SAFETY: lee_hop_segments: as declared; thread i < the checkpoints' count (<= cap) writes hops[1 + i * stride ..][..stride] (< hop_cap) and thread 0 hops[0]
        unsafe { b.launch(one_per_item(cap as usize, 128, "path length")?) }
            .map_err(launch_err("lee_hop_segments"))?;
        let mut b = self.field_launch(&self.kernels.tile_fill, labels);
        b.arg(&*hops).arg(&len).arg(&mut *path).arg(&mut *state);
        let blocks = (self.rt.info().multiprocessors.max(1) as u32) * 2;
        // SAFETY: lee_tile_fill: as declared; writes path[len - label] for labels <= len (path holds len + 1 cells) and the status
        unsafe {
            b.launch(LaunchConfig {
                grid_dim: (blocks, 1, 1),
                block_dim: (DESCENT_TILE_THREADS, 1, 1),
                shared_mem_bytes: 0,
            })
        }
        .map_err(launch_err("lee_tile_fill"))?;
        Ok(())
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
