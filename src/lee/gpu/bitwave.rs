//! Bitwave's tile schedules (kernels/lee/bitwave.cu): rounds behind a grid barrier and the work
//! queue, and the launches the portals (portals.rs) share with them. Which schedule a query
//! runs is chosen by the grid's face (lee/gpu.rs, `DeviceGrid::bitwave`; schedule.rs).

use cudarc::driver::sys;
use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, LaunchConfig,
    PushKernelArg, SyncOnDrop,
};

use super::descent::DescentHeader;
use super::device::{
    DeviceGrid, Scratch, BWQ_HEAD, BWQ_PENDING, BWQ_SLOTS, BWQ_VISITS, BW_SMEM_PER_WARP, BW_TILE_H,
    BW_TILE_W, STATE_ROUND, STATE_STOP, STATE_SWITCH,
};
use super::schedule::Schedule;
use crate::compute::cuda::{gpu_err, launch_err};
use crate::error::{Error, Result};
use crate::lee::config::Config;

/// Most warps (tiles at once) of a bitwave block.
const BW_MAX_WARPS: u32 = 4;
/// Rounds one launch may run before the host looks (a launch ends early when a round queues
/// nothing, or once it has run device::LAUNCH_NS, which bounds its time).
const BW_ROUNDS_PER_LAUNCH: u32 = 1 << 16;
/// The same bound for the work queue: tiles one launch may take.
const BWQ_VISITS_PER_LAUNCH: u32 = 1 << 20;

/// The fields both bitwave kernels' arguments start with: the grid's bit planes and labels
/// and its shape. Nested here, flat in kernels/lee/bitwave.cu: a #[repr(C)] struct of two pointers and
/// six u32 is 40 bytes aligned to 8, so the fields after it sit where the flat C ones do.
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct BitwaveGrid {
    planes: sys::CUdeviceptr,
    labels: sys::CUdeviceptr,
    w: u32,
    h: u32,
    wwords: u32,
    ndirs: u32,
    tiles_x: u32,
    tiles_y: u32,
}

/// lee_bitwave_rounds' one argument (kernels/lee/bitwave.cu's BitwaveArgs: the same fields, in the
/// same order, so the C layout matches): device pointers as CUdeviceptr.
#[repr(C)]
#[derive(Clone, Copy)]
struct BitwaveArgs {
    grid: BitwaveGrid,
    lists: sys::CUdeviceptr,
    counts: sys::CUdeviceptr,
    queued: sys::CUdeviceptr,
    first_round: u32,
    max_rounds: u32,
    goal: u64,
    bar: sys::CUdeviceptr,
    narrow_tiles: u32,
    narrow_rounds: u32,
}

// SAFETY: plain old data of the C layout the kernel declares; the pointers stay valid for the
// launch (their buffers live in the grid and its scratch, guarded above the launch).
unsafe impl DeviceRepr for BitwaveArgs {}

/// lee_bitwave_queue's one argument (kernels/lee/bitwave.cu's BitwaveQueueArgs, the same fields in the
/// same order).
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct BitwaveQueueArgs {
    pub(super) grid: BitwaveGrid,
    pub(super) ring: sys::CUdeviceptr,
    pub(super) tile_state: sys::CUdeviceptr,
    pub(super) ctl: sys::CUdeviceptr,
    pub(super) visit_limit: u32,
    pub(super) goal: u64,
}

// SAFETY: as for BitwaveArgs.
unsafe impl DeviceRepr for BitwaveQueueArgs {}

/// The scratch buffers a work-queue launch writes: labels, ring, tile states, control words.
pub(super) type QueueBuffers<'a> = (
    &'a mut CudaSlice<u32>,
    &'a mut CudaSlice<u64>,
    &'a mut CudaSlice<u32>,
    &'a mut CudaSlice<u32>,
);

/// The launch of a grid-stride kernel over the tiles (the lists' and the queue's set-up).
pub(super) fn per_tile_launch(ntiles: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (ntiles.div_ceil(256).clamp(1, 4096), 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

impl DeviceGrid {
    /// The kernels' view of the grid (see [`BitwaveGrid`]).
    pub(super) fn bitwave_grid(
        &self,
        planes: sys::CUdeviceptr,
        labels: sys::CUdeviceptr,
        tiles: (u32, u32),
    ) -> BitwaveGrid {
        BitwaveGrid {
            planes,
            labels,
            w: self.width,
            h: self.height,
            wwords: tiles.0,
            ndirs: self.ndirs,
            tiles_x: tiles.0,
            tiles_y: tiles.1,
        }
    }

    /// The goal's tile and the tile grid's shape.
    pub(super) fn bitwave_tiles(&self, goal_idx: u64) -> (u32, (u32, u32)) {
        let w = self.width;
        let tiles = (w.div_ceil(BW_TILE_W), self.height.div_ceil(BW_TILE_H));
        let goal_tile = (goal_idx / w as u64) as u32 / BW_TILE_H * tiles.0
            + (goal_idx % w as u64) as u32 / BW_TILE_W;
        (goal_tile, tiles)
    }

    /// The launch of a bitwave kernel (`f`, rounds or queue): block_x * block_y threads in
    /// whole warps, one tile per warp, at most BW_MAX_WARPS (small blocks spread a few tiles
    /// over more SMs), halved while a block would not fit an SM's registers; never more blocks
    /// than can be resident at once, which the grid barrier and the queue's waits need, and
    /// at most `per_sm_cap` blocks per SM; `smem_per_warp` shared bytes per warp.
    pub(super) fn bitwave_launch(
        &self,
        f: &CudaFunction,
        config: &Config,
        ntiles: u32,
        per_sm_cap: u32,
        smem_per_warp: u32,
    ) -> Result<LaunchConfig> {
        let mut warps = (config.block_x * config.block_y)
            .div_ceil(32)
            .clamp(1, BW_MAX_WARPS);
        let per_sm = loop {
            let per_sm = f
                .occupancy_max_active_blocks_per_multiprocessor(
                    warps * 32,
                    (warps * smem_per_warp) as usize,
                    None,
                )
                .map_err(gpu_err)?;
            if per_sm > 0 || warps == 1 {
                break per_sm;
            }
            warps /= 2;
        };
        let resident = per_sm.min(per_sm_cap) * self.rt.info().multiprocessors.max(1) as u32;
        if resident == 0 {
            return Err(Error::Gpu(
                "lee bitwave: the tile kernel cannot be resident on this device".into(),
            ));
        }
        Ok(LaunchConfig {
            grid_dim: (resident.min(ntiles.div_ceil(warps)).max(1), 1, 1),
            block_dim: (warps * 32, 1, 1),
            shared_mem_bytes: warps * smem_per_warp,
        })
    }

    /// Empties the rounds' lists and puts the goal's tile on round 1's.
    pub(super) fn bitwave_init(&self, scratch: &mut Scratch, goal_idx: u64) -> Result<()> {
        let (goal_tile, tiles) = self.bitwave_tiles(goal_idx);
        let ntiles = tiles.0 * tiles.1;
        let stream = self.rt.stream().clone();
        let mut b = stream.launch_builder(&self.kernels.bitwave_init);
        b.arg(&mut scratch.lists)
            .arg(&mut scratch.counts)
            .arg(&mut scratch.queued)
            .arg(&ntiles)
            .arg(&goal_tile);
        // SAFETY: lee_bitwave_init: as declared; writes the three lists' counts, queued[0..ntiles) and the goal tile's entry
        unsafe { b.launch(per_tile_launch(ntiles)) }.map_err(launch_err("lee_bitwave_init"))?;
        Ok(())
    }

    /// Bitwave on the work queue until no tile is queued or running (kernels/lee/bitwave.cu), from
    /// the tiles on the rounds' list for round `next`.
    pub(super) fn bitwave_queue(
        &self,
        scratch: &mut Scratch,
        goal_idx: u64,
        config: &Config,
        start: Option<u64>,
        next: u32,
    ) -> Result<Option<DescentHeader>> {
        let stream = self.rt.stream().clone();
        let (_, tiles) = self.bitwave_tiles(goal_idx);
        let ntiles = tiles.0 * tiles.1;
        {
            let Scratch {
                lists,
                counts,
                queued,
                ring,
                ctl,
                ..
            } = &mut *scratch;
            let mut b = stream.launch_builder(&self.kernels.bitwave_rounds_to_queue);
            b.arg(&*lists)
                .arg(&*counts)
                .arg(queued)
                .arg(ring)
                .arg(ctl)
                .arg(&ntiles)
                .arg(&next);
            // SAFETY: lee_bitwave_rounds_to_queue: as declared; reads the lists (3 x ntiles) and counts, writes the tile states and ring (ntiles each) and the control words
            unsafe { b.launch(per_tile_launch(ntiles)) }
                .map_err(launch_err("lee_bitwave_rounds_to_queue"))?;
        }
        let launch = self.bitwave_launch(
            &self.kernels.bitwave_queue,
            config,
            ntiles,
            u32::MAX,
            BW_SMEM_PER_WARP,
        )?;
        self.drain_queue(scratch, |scratch, visit_limit| {
            {
                let Scratch {
                    labels,
                    queued,
                    ring,
                    ctl,
                    ..
                } = &mut *scratch;
                let (args, _guards) = self.queue_args(
                    &stream,
                    (labels, ring, queued, ctl),
                    tiles,
                    visit_limit,
                    goal_idx,
                );
                let mut b = stream.launch_builder(&self.kernels.bitwave_queue);
                b.arg(&args);
                // SAFETY: lee_bitwave_queue(BitwaveQueueArgs): writes labels (w x h), the ring
                // and tile states (ntiles each) and the control words; blocks <= the occupancy
                // bound, as its waits on other warps require (a cooperative launch checks it).
                unsafe { b.launch_cooperative(launch) }.map_err(launch_err("lee_bitwave_queue"))?;
            }
            // Queued right behind: when the queue is drained, one download answers both.
            self.queue_descent(scratch, start, goal_idx)
        })?;
        self.descent_header(scratch, start)
    }

    /// The work queue's arguments over the grid's planes and the scratch's (labels, ring, tile
    /// states, control words), with the guards that keep each buffer's stream order (cudarc's
    /// events) until the launch.
    pub(super) fn queue_args<'a>(
        &'a self,
        stream: &'a CudaStream,
        buffers: QueueBuffers<'a>,
        tiles: (u32, u32),
        visit_limit: u32,
        goal: u64,
    ) -> (BitwaveQueueArgs, [SyncOnDrop<'a>; 5]) {
        let (labels, ring, queued, ctl) = buffers;
        let (planes, g1) = self.planes.device_ptr(stream);
        let (labels, g2) = labels.device_ptr_mut(stream);
        let (ring, g3) = ring.device_ptr_mut(stream);
        let (tile_state, g4) = queued.device_ptr_mut(stream);
        let (ctl, g5) = ctl.device_ptr_mut(stream);
        let args = BitwaveQueueArgs {
            grid: self.bitwave_grid(planes, labels, tiles),
            ring,
            tile_state,
            ctl,
            visit_limit,
            goal,
        };
        (args, [g1, g2, g3, g4, g5])
    }

    /// Launches a work-queue kernel (`launch(scratch, visit_limit)`: one launch takes tiles
    /// until its tickets reach visit_limit) until no tile is queued or running, keeping the
    /// tile runs for benchmarks.
    pub(super) fn drain_queue(
        &self,
        scratch: &mut Scratch,
        mut launch: impl FnMut(&mut Scratch, u32) -> Result<()>,
    ) -> Result<()> {
        // Every run that queues a tile lowered a label, and labels are bounded by the cells;
        // this cap only turns a hang into an error.
        let (_, tiles) = self.bitwave_tiles(0);
        let cap = 8 * self.cells() as u64 + 64 + tiles.0 as u64 * tiles.1 as u64;
        let mut taken = 0u32;
        loop {
            launch(scratch, taken.wrapping_add(BWQ_VISITS_PER_LAUNCH))?;
            let ctl = self.rt.download(&scratch.ctl, BWQ_SLOTS)?;
            let visits = ctl[BWQ_VISITS];
            if ctl[BWQ_PENDING] == 0 {
                self.tile_runs
                    .store(visits, std::sync::atomic::Ordering::Relaxed);
                return Ok(());
            }
            if visits as u64 > cap {
                return Err(Error::Gpu(format!(
                    "lee bitwave: still {} tiles queued after {visits} tile runs",
                    ctl[BWQ_PENDING]
                )));
            }
            taken = ctl[BWQ_HEAD];
            // A cancelled plan stops between launches (no goal's field is kept).
            crate::cancel::checkpoint()?;
        }
    }

    /// The cooperative launch of lee_bitwave_rounds over a grid of `tiles`.
    pub(super) fn rounds_launch(&self, config: &Config, tiles: (u32, u32)) -> Result<LaunchConfig> {
        self.bitwave_launch(
            &self.kernels.bitwave_rounds,
            config,
            tiles.0 * tiles.1,
            u32::MAX,
            BW_SMEM_PER_WARP,
        )
    }

    /// One launch of lee_bitwave_rounds: `rounds` = (the first round, how many at most),
    /// handing over once `narrow_rounds` rounds in a row ran narrow (0: never).
    pub(super) fn launch_rounds(
        &self,
        scratch: &mut Scratch,
        goal_idx: u64,
        tiles: (u32, u32),
        launch: LaunchConfig,
        rounds: (u32, u32),
        narrow_rounds: u32,
    ) -> Result<()> {
        let stream = self.rt.stream().clone();
        let Scratch {
            labels,
            lists,
            counts,
            queued,
            state,
            ..
        } = &mut *scratch;
        // The guards keep each buffer's stream order (cudarc's events) until the launch.
        let (planes, _g1) = self.planes.device_ptr(&stream);
        let (labels, _g2) = labels.device_ptr_mut(&stream);
        let (lists, _g3) = lists.device_ptr_mut(&stream);
        let (counts, _g4) = counts.device_ptr_mut(&stream);
        let (queued, _g5) = queued.device_ptr_mut(&stream);
        let (bar, _g6) = state.device_ptr_mut(&stream);
        let args = BitwaveArgs {
            grid: self.bitwave_grid(planes, labels, tiles),
            lists,
            counts,
            queued,
            first_round: rounds.0,
            max_rounds: rounds.1,
            goal: goal_idx,
            bar,
            narrow_tiles: self.narrow.0,
            narrow_rounds,
        };
        let mut b = stream.launch_builder(&self.kernels.bitwave_rounds);
        b.arg(&args);
        // SAFETY: lee_bitwave_rounds(BitwaveArgs): writes labels (w x h), the tile lists,
        // counts and queued flags (sized for every tile) and the state slots; blocks <= the
        // occupancy bound, as a cooperative launch requires.
        unsafe { b.launch_cooperative(launch) }.map_err(launch_err("lee_bitwave_rounds"))?;
        Ok(())
    }

    /// Bitwave rounds until a round queues no tile (kernels/lee/bitwave.cu); the adaptive schedule
    /// (on a grid whose portal tables do not fit) goes on with the work queue once rounds
    /// run narrow.
    pub(super) fn bitwave_rounds(
        &self,
        scratch: &mut Scratch,
        goal_idx: u64,
        config: &Config,
        start: Option<u64>,
        schedule: Schedule,
    ) -> Result<Option<DescentHeader>> {
        let (_, tiles) = self.bitwave_tiles(goal_idx);
        let launch = self.rounds_launch(config, tiles)?;
        self.rt
            .stream()
            .memset_zeros(&mut scratch.state)
            .map_err(gpu_err)?;
        // Every round that runs a tile lowers a label, and labels are bounded by the cells, so
        // this cap is never reached by a correct kernel; it only turns a hang into an error.
        let cap = 4 * self.cells() as u64 + 64;
        let narrow_rounds = if schedule == Schedule::Adaptive {
            self.narrow.1
        } else {
            0
        };
        let mut round = 1u32;
        loop {
            let rounds = (round, BW_ROUNDS_PER_LAUNCH);
            self.launch_rounds(scratch, goal_idx, tiles, launch, rounds, narrow_rounds)?;
            // Queued right behind: when the rounds converged, one download below answers both.
            if let Some(s) = start {
                self.launch_descend(scratch, s, goal_idx)?;
            }
            let (st, cells) = self.fetch_state(scratch, start.is_some())?;
            let next = st[STATE_ROUND];
            self.rounds
                .store(next - 1, std::sync::atomic::Ordering::Relaxed);
            if st[STATE_SWITCH] != 0 {
                // Rounds ran narrow: the queue goes on from here (the descent queued above ran
                // on an unfinished field; the queue runs it again).
                return self.bitwave_queue(scratch, goal_idx, config, start, next);
            }
            // A launch that stops before its round budget, and not for its time, stopped on
            // an empty list.
            let pending = if next - round < BW_ROUNDS_PER_LAUNCH && st[STATE_STOP] == 0 {
                0
            } else {
                self.rt.download(&scratch.counts, 3)?[(next % 3) as usize]
            };
            if pending == 0 {
                return Ok(start.map(|_| DescentHeader::from_state(&st, cells)));
            }
            if next as u64 > cap {
                return Err(Error::Gpu(format!(
                    "lee bitwave: still {pending} tiles queued after {next} rounds"
                )));
            }
            round = next;
            crate::cancel::checkpoint()?;
        }
    }
}
