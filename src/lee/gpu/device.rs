//! What a Lee grid keeps on the device: its masks and bit planes, the kernels, the per-query
//! scratch (labels, bitwave's lists and queue, the portals' tables, the descent's buffers),
//! and the constants the kernels share with the host (kernels/lee/, NVRTC -D). The schedules
//! (bitwave.rs, portals.rs, portal_block.rs) and the descent (descent.rs) work on it; the
//! grid's face (lee/gpu.rs) makes it and answers queries.

use std::sync::{Arc, Mutex};

use cudarc::driver::sys;
use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, LaunchArgs, PushKernelArg};

use crate::compute::cuda::{gpu_err, CudaRuntime};
use crate::compute::readback::Readback;
use crate::error::{Error, Result};
use crate::lee::gpu::schedule::Schedule;
use crate::sync::lock;

/// Bitwave tiles are one warp each: 64 columns (one u64 per row and direction) x 32 rows.
pub(super) const BW_TILE_W: u32 = 64;
pub(super) const BW_TILE_H: u32 = 32;
/// Shared row stride of a bitwave tile's labels: 64 + 1, so lanes on different rows of one
/// column hit different banks.
pub(super) const BW_ROW: u32 = 65;
/// Shared bytes per bitwave warp: its tile's 32 rows of BW_ROW labels.
pub(super) const BW_SMEM_PER_WARP: u32 = BW_TILE_H * BW_ROW * 4;
/// Portal slots per tile: a 64 x 32 tile has at most 2 x 64 + 2 x 30 = 188 portals, and the
/// kernels take a tile's slots 32 at a time.
pub(super) const PT_MAX: u32 = 192;
const _: () = assert!(PT_MAX.is_multiple_of(32) && PT_MAX >= 2 * BW_TILE_W + 2 * (BW_TILE_H - 2));
/// Threads of lee_portal_dist's blocks (a warp per portal; its shared rows sized by it).
pub(super) const PT_DIST_THREADS: u32 = 256;
/// Shared bytes per warp of the portal queue: three words for each of a tile's portal slots
/// (label, slot, list of those that fell).
pub(super) const PT_WARP_SMEM: u32 = 3 * PT_MAX * 4;
/// Threads of lee_portal_block's one block (gpu/portal_block.rs): on the H100 (docs/bench-history,
/// fifteenth part, runs 2 and 4) the 1000² maze's field took 35-50 % longer with 128 or 1024
/// (registers capped at 64), 8-10 % longer with 192, and no less with 384 or 512.
pub(super) const PB_THREADS: u32 = 256;
/// Path cells the descent buffer holds before it must grow.
pub(super) const PATH_CAP_START: usize = 1 << 16;
/// Path cells that come back in one copy with the descent's status and length (16 KiB): a
/// path of fewer moves costs its query one wait for the device, not two.
pub(super) const SHORT_PATH: usize = 1 << 12;
/// Slots of the per-query state buffer: [0..2] the grid barrier (arrivals, generation), then
/// the next bitwave round, the descent status and the path length, and whether the rounds
/// handed over to the work queue, so one download answers "converged?" and "how long?".
pub(super) const STATE_ROUND: usize = 2;
pub(super) const STATE_STATUS: usize = 3;
pub(super) const STATE_LENGTH: usize = 4;
/// Set by lee_bitwave_rounds when it stopped for the work queue (rounds ran narrow).
pub(super) const STATE_SWITCH: usize = 5;
/// The tile descent (lee_tile_exits and after): the node after the start, the checkpoints on
/// the nodes' chain, and the tile visits.
pub(super) const STATE_HOP_FIRST: usize = 6;
pub(super) const STATE_CHECKPOINTS: usize = 7;
pub(super) const STATE_HOPS: usize = 8;
/// Set by lee_bitwave_rounds when it stopped because its launch ran past [`LAUNCH_NS`].
pub(super) const STATE_STOP: usize = 9;
pub(super) const STATE_SLOTS: usize = 10;
/// Nanoseconds (the device's %globaltimer) after which a launch of the bitwave rounds or of a
/// work queue stops taking work, so that the host looks at the cancel flag at least that
/// often: one launch ran a 4001 x 4001 maze's whole 85 ms field, and a cancel waited for it.
/// A relaunch costs more than its round trip (the portal wave seeds its queue again): on the
/// H200, 2 ms made the 4000 x 4000 maze's field 21 % slower and the 1000 x 1000 one's 49 %.
pub(super) const LAUNCH_NS: u64 = 5_000_000;
/// Control words of the bitwave work queue (lee_bitwave_queue): tickets taken, tile runs so
/// far, tiles queued or running, tickets issued.
pub(super) const BWQ_HEAD: usize = 0;
pub(super) const BWQ_VISITS: usize = 1;
/// Pending and tail are the low and high halves of one 64-bit word (kernels/lee/bitwave.cu).
pub(super) const BWQ_PENDING: usize = 2;
pub(super) const BWQ_TAIL: usize = 3;
pub(super) const BWQ_SLOTS: usize = 4;
/// Descent status (lee_descend).
pub(super) const DESCENT_OK: u32 = 0;
pub(super) const DESCENT_BROKEN: u32 = 1;
pub(super) const DESCENT_UNREACHED: u32 = 2;
pub(super) const DESCENT_TOO_LONG: u32 = 3;
pub(super) const DESCENT_LONG: u32 = 4;
/// The tile descent's tiles are DESCENT_TILE cells square; a path enters one only by its
/// DESCENT_BORDER border cells, the nodes of the graph its pointer jumps run on.
pub(super) const DESCENT_TILE: u32 = 64;
pub(super) const DESCENT_BORDER: u32 = 4 * DESCENT_TILE - 4;
/// Threads of the tile descent's blocks (lee_tile_exits, lee_tile_fill).
pub(super) const DESCENT_TILE_THREADS: u32 = 512;

/// The constants above, for kernels/lee/ (NVRTC -D): one definition for both sides.
pub(super) fn kernel_defines() -> [(&'static str, String); 25] {
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
        ("STATE_STOP", STATE_STOP.to_string()),
        ("LEE_LAUNCH_NS", format!("{LAUNCH_NS}ull")),
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

pub(super) struct Kernels {
    pub(super) fill: CudaFunction,
    pub(super) sweep_global: CudaFunction,
    pub(super) sweep_texture: CudaFunction,
    pub(super) tiles_shared: CudaFunction,
    pub(super) pack_planes: CudaFunction,
    pub(super) bitwave_init: CudaFunction,
    pub(super) bitwave_rounds: CudaFunction,
    pub(super) bitwave_rounds_to_queue: CudaFunction,
    pub(super) bitwave_queue: CudaFunction,
    pub(super) portal_count: CudaFunction,
    pub(super) portal_list: CudaFunction,
    pub(super) portal_dist: CudaFunction,
    pub(super) portal_queue_all: CudaFunction,
    pub(super) portal_queue: CudaFunction,
    pub(super) portal_fill: CudaFunction,
    pub(super) portal_links: CudaFunction,
    pub(super) portal_block: CudaFunction,
    pub(super) descend: CudaFunction,
    pub(super) next: CudaFunction,
    pub(super) jump: CudaFunction,
    pub(super) checkpoints: CudaFunction,
    pub(super) walk_segments: CudaFunction,
    pub(super) tile_exits: CudaFunction,
    pub(super) hop_checkpoints: CudaFunction,
    pub(super) hop_segments: CudaFunction,
    pub(super) tile_fill: CudaFunction,
}

/// Per-query device state; one query at a time per grid.
pub(super) struct Scratch {
    pub(super) labels: CudaSlice<u32>,
    pub(super) changed: CudaSlice<u32>,
    /// Bitwave rounds: three rotating lists of tile ids, their lengths, and per tile the last
    /// round it was queued for (the queue: per tile its state).
    pub(super) lists: CudaSlice<u32>,
    pub(super) counts: CudaSlice<u32>,
    pub(super) queued: CudaSlice<u32>,
    /// Bitwave queue: its ring (one entry per tile) and control words (BWQ_SLOTS).
    pub(super) ring: CudaSlice<u64>,
    pub(super) ctl: CudaSlice<u32>,
    /// STATE_SLOTS values: the grid barrier, the next round, the descent's status and length.
    pub(super) state: CudaSlice<u32>,
    /// Path cells of the last descent; grown when a path does not fit.
    pub(super) path: CudaSlice<u32>,
    pub(super) path_cap: usize,
    /// Page-locked: the state slots, then up to [`SHORT_PATH`] path cells, copied back
    /// together after a descent ([`DeviceGrid::descent_header`]).
    pub(super) header: Readback,
    /// Bitwave's portals and their tables, built once per grid: Some(None) when they do not
    /// fit (src/lee/gpu/portals.rs).
    pub(super) portals: Option<Option<Portals>>,
    /// The tile descent's buffers, made by the first long path and kept.
    pub(super) tiles: Option<TileBuffers>,
}

/// The tile descent's device buffers: the border cells' exits and two jump tables over them
/// (a grid's worth of nodes each), the checkpoints and the tile visits (grown when a longer
/// path needs more).
pub(super) struct TileBuffers {
    pub(super) exits: CudaSlice<u32>,
    pub(super) tables: [CudaSlice<u32>; 2],
    pub(super) checkpoints: CudaSlice<u32>,
    pub(super) checkpoint_cap: usize,
    pub(super) hops: CudaSlice<u32>,
    pub(super) hop_cap: usize,
}

/// A grid on the device with its scratch: the wave's labels, the field's goal, bitwave's tiles
/// and portal tables, and the descent's buffers. One query at a time ([`crate::lee::Planner`] takes
/// turns).
pub struct DeviceGrid {
    pub(super) rt: Arc<CudaRuntime>,
    pub(super) width: u32,
    pub(super) height: u32,
    pub(super) ndirs: u32,
    pub(super) masks: CudaSlice<u8>,
    /// Bitwave bit planes: plane k, row y, word x holds bit j = move k allowed from cell
    /// (64 x + j, y).
    pub(super) planes: CudaSlice<u64>,
    pub(super) texture: Mutex<Option<Texture>>,
    pub(super) kernels: Kernels,
    pub(super) scratch: Mutex<Scratch>,
    pub(super) goal: Mutex<Option<(u32, u32)>>,
    /// Bitwave rounds and work-queue tile runs of the last query, for benchmarks.
    pub(super) rounds: std::sync::atomic::AtomicU32,
    pub(super) tile_runs: std::sync::atomic::AtomicU32,
    /// Whether the last query's wave went over the portals, and how long (µs) building their
    /// tables took, for benchmarks.
    pub(super) portals_used: std::sync::atomic::AtomicBool,
    /// Whether it went over them in one block (portal_block.rs).
    pub(super) portal_block_used: std::sync::atomic::AtomicBool,
    pub(super) portal_build_us: std::sync::atomic::AtomicU64,
    /// Table entries this grid's portals may take (portals::portal_cap_from_env).
    pub(super) portal_cap: std::sync::atomic::AtomicU64,
    /// Bitwave's schedule, and the adaptive one's hand-over (tiles, rounds).
    pub(super) schedule: Mutex<Schedule>,
    pub(super) narrow: (u32, u32),
    /// Paths longer than this (moves) are descended over the tiles (or the cells' jumps).
    pub(super) long_path_from: std::sync::atomic::AtomicU32,
    /// How: over the tiles (false) or over every cell (true).
    pub(super) jump_cells: std::sync::atomic::AtomicBool,
}

/// A linear u8 texture over the masks, destroyed with the grid.
pub(super) struct Texture(sys::CUtexObject);

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
    pub(super) fn cells(&self) -> usize {
        self.width as usize * self.height as usize
    }

    /// A launch of `f` on this stream with the arguments every field kernel takes first: the
    /// masks, the labels, and the grid's width, height and directions.
    pub(super) fn field_launch<'a>(
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

    /// The masks as a linear u8 texture (the texture memory model), made by its first query.
    pub(super) fn texture(&self) -> Result<u64> {
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

/// One grid's portals and their tables (kernels/lee/portals.cu describes each buffer).
pub(super) struct Portals {
    pub(super) pcount: CudaSlice<u32>,
    pub(super) doff: CudaSlice<u64>,
    pub(super) pinfo: CudaSlice<u32>,
    pub(super) dist: CudaSlice<u16>,
    /// Per query: the label each portal had when a run last applied it.
    pub(super) mark: CudaSlice<u32>,
    /// The one-block wave's links, where its labels fit one block (portal_block.rs).
    pub(super) block: Option<PortalBlock>,
}

/// The links of one grid's portals for the one-block wave (kernels/lee/portals.cu describes each).
pub(super) struct PortalBlock {
    pub(super) poff: CudaSlice<u32>,
    pub(super) plink: CudaSlice<u32>,
    pub(super) pcell: CudaSlice<u64>,
    pub(super) total: u32,
    pub(super) smem_bytes: u32,
}
