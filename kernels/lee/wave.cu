// Lee wave (BFS distances in moves) on a grid with per-cell direction masks (src/lee/gpu.rs
// and src/lee/gpu/bitwave.rs drive these). One NVRTC module from kernels/lee/, in this order
// (src/compute/kernels.rs): wave.cu (this file: the definitions all share), sweeps.cu (the
// seed's global, texture and shared models), bitwave.cu (rounds and the work queue),
// portals.cu, descent.cu (the path down the labels). The four memory models:
//   lee_sweep_global    the seed's global-memory model: one thread per cell, sweeps in place
//   lee_sweep_texture   the same sweep, masks fetched through a texture object
//   lee_tiles_shared    the seed's shared model: tile + halo in shared memory, iterated to local
//                       convergence, all tiles per launch, launches until nothing changes
//   lee_bitwave_rounds  default: tiles of 64 x 32 cells as bit planes, one warp each, exact
//                       multi-source BFS inside a tile per round; rounds over a list of the
//                       tiles whose border improved (see below); a cooperative launch; the
//                       default schedule starts here and may go on over the portals below
//                       (or on the queue where their tables do not fit)
// and their helpers:
//   lee_fill_labels     every label UNREACHED, the goal's 0
//   lee_pack_planes     the masks as one bit plane per direction (bitwave's input)
//   lee_bitwave_init    empties the tile lists and queues the goal's tile
//   lee_bitwave_queue   the same tile runs taken from a work queue without rounds (where the
//                       default schedule goes once rounds run narrow, if the portals' tables
//                       do not fit); lee_bitwave_rounds_to_queue sets it up from the rounds' list
//   lee_portal_*        the wave over the tiles' portals (cells with a move out of their tile)
//                       on the same queue, a table of distances inside each tile crossing it
//                       in one step, then every tile filled from its border (see below): where
//                       the adaptive default goes instead of the queue when the tables fit;
//                       lee_portal_block runs that wave in one block where the portals' labels
//                       fit its shared memory
//   lee_descend         the path from the start down the labels, in one block
//   lee_tile_exits, lee_hop_checkpoints, lee_hop_segments, lee_tile_fill   the same path when
//                       it is long: the tiles it crosses found by pointer jumping, then filled
//   lee_next, lee_jump, lee_checkpoints, lee_walk_segments   the same by pointer jumping over
//                       every cell (kept to compare; lee_jump serves both)
// All updates are label = min(label, min over allowed neighbours + 1), which only decreases
// labels and has the BFS distances as its unique fixed point, so every model is exact.
//
// Set by the host (src/lee/gpu.rs, NVRTC -D), so both sides read one definition:
//   BW_ROW           shared row stride of a bitwave tile's labels (64 + 1: lanes on different
//                    rows of one column hit different banks)
//   STATE_ROUND, STATE_STATUS, STATE_LENGTH, STATE_SWITCH, STATE_HOP_FIRST, STATE_CHECKPOINTS,
//   STATE_HOPS, STATE_STOP   slots of the per-query state buffer
//   LEE_LAUNCH_NS    ns (%globaltimer) after which a rounds or work-queue launch stops taking
//                    work, so that the host looks at the cancel flag that often
//   DT, DT_THREADS   the tile descent's tile side and its blocks' threads
//   DESCENT_OK, DESCENT_BROKEN, DESCENT_UNREACHED, DESCENT_TOO_LONG, DESCENT_LONG
//                    lee_descend's status
//   BWQ_HEAD, BWQ_TAIL, BWQ_PENDING, BWQ_VISITS   slots of the work queue's control words
//   PT_MAX           portal slots per tile (a multiple of 32)
//   PT_DIST_THREADS  threads of lee_portal_dist's blocks
//   PT_WARP_SMEM     shared bytes per warp of the portal queue
//   PB_THREADS       threads of lee_portal_block's one block
#if !defined(BW_ROW) || !defined(STATE_STOP) || !defined(DESCENT_LONG) || !defined(BWQ_VISITS) || \
    !defined(PT_MAX) || !defined(PT_DIST_THREADS) || !defined(PT_WARP_SMEM) || !defined(PB_THREADS)
#error "kernels/lee/ is compiled with the constants src/lee/gpu.rs defines"
#endif

#define UNREACHED 0xffffffffu

// Direction k: same order as src/lee/grid.rs DIRECTIONS.
__constant__ int DX[8] = {-1, 0, 1, 0, -1, 1, 1, -1};
__constant__ int DY[8] = {0, -1, 0, 1, -1, -1, 1, 1};

__device__ __forceinline__ u32 plus_one(u32 best) { return best == UNREACHED ? UNREACHED : best + 1; }

extern "C" __global__ void lee_fill_labels(u32 *labels, u64 n, u64 goal) {
    GRID_STRIDE(i, n)
        labels[i] = i == goal ? 0 : UNREACHED;
}

