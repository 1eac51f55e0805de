// Lee wave (BFS distances in moves) on a grid with per-cell direction masks (src/lee/gpu.rs
// and src/lee/gpu/bitwave.rs drive these). The four memory models:
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
//   STATE_HOPS       slots of the per-query state buffer
//   DT, DT_THREADS   the tile descent's tile side and its blocks' threads
//   DESCENT_OK, DESCENT_BROKEN, DESCENT_UNREACHED, DESCENT_TOO_LONG, DESCENT_LONG
//                    lee_descend's status
//   BWQ_HEAD, BWQ_TAIL, BWQ_PENDING, BWQ_VISITS   slots of the work queue's control words
//   PT_MAX           portal slots per tile (a multiple of 32)
//   PT_DIST_THREADS  threads of lee_portal_dist's blocks
//   PT_WARP_SMEM     shared bytes per warp of the portal queue
//   PB_THREADS       threads of lee_portal_block's one block
#if !defined(BW_ROW) || !defined(STATE_SWITCH) || !defined(DESCENT_LONG) || !defined(BWQ_VISITS) || \
    !defined(PT_MAX) || !defined(PT_DIST_THREADS) || !defined(PT_WARP_SMEM) || !defined(PB_THREADS)
#error "lee.cu is compiled with the constants src/lee/gpu.rs defines"
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

// ---------------------------------------------------------------------------------------------
// Sweeps (global and texture).
// ---------------------------------------------------------------------------------------------
__device__ __forceinline__ void sweep_cell(u32 m, u32 x, u32 y, u32 w, u32 ndirs, u32 *labels,
                                           u32 *changed) {
    u64 i = (u64)y * w + x;
    u32 best = UNREACHED;
    for (u32 k = 0; k < ndirs; ++k)
        if (m & (1u << k)) best = min(best, labels[(u64)(y + DY[k]) * w + (x + DX[k])]);
    best = plus_one(best);
    if (best < labels[i]) {
        labels[i] = best;
        *changed = 1;
    }
}

extern "C" __global__ void lee_sweep_global(const u8 *__restrict__ masks, u32 *labels, u32 w,
                                            u32 h, u32 ndirs, u32 *changed) {
    u32 x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    u32 m = masks[(u64)y * w + x];
    if (m) sweep_cell(m, x, y, w, ndirs, labels, changed);
}

// One u8 texel of a linear texture object (read-as-integer), by PTX: NVRTC has no texture
// headers.
__device__ __forceinline__ u32 tex_u8(u64 tex, int i) {
    u32 r0, r1, r2, r3;
    asm volatile("tex.1d.v4.u32.s32 {%0, %1, %2, %3}, [%4, {%5}];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "l"(tex), "r"(i));
    return r0 & 0xff;
}

extern "C" __global__ void lee_sweep_texture(u64 masks_tex, u32 *labels, u32 w, u32 h, u32 ndirs,
                                             u32 *changed) {
    u32 x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    u32 m = tex_u8(masks_tex, (int)(y * w + x));
    if (m) sweep_cell(m, x, y, w, ndirs, labels, changed);
}

// ---------------------------------------------------------------------------------------------
// Tiles in shared memory (the seed's shared model).
// ---------------------------------------------------------------------------------------------

// One block relaxes tile (blockIdx.x, blockIdx.y) (blockDim.x x blockDim.y cells, one per
// thread) to convergence against the halo it loaded and writes improved labels back; any
// improvement sets *changed. `s` holds (blockDim.x + 2) * (blockDim.y + 2) labels.
extern "C" __global__ void lee_tiles_shared(const u8 *__restrict__ masks, u32 *labels, u32 w,
                                            u32 h, u32 ndirs, u32 *changed) {
    extern __shared__ u32 s[];
    const u32 bx = blockDim.x, by = blockDim.y, sw = bx + 2;
    const u32 tid = threadIdx.y * bx + threadIdx.x, nthreads = bx * by;
    const long long x0 = (long long)blockIdx.x * bx, y0 = (long long)blockIdx.y * by;
    for (u32 i = tid; i < sw * (by + 2); i += nthreads) {
        long long gx = x0 + (long long)(i % sw) - 1, gy = y0 + (long long)(i / sw) - 1;
        // L2 loads: other blocks of this launch write these labels.
        s[i] = (gx >= 0 && gy >= 0 && gx < w && gy < h) ? __ldcg(&labels[(u64)gy * w + gx])
                                                         : UNREACHED;
    }
    const u64 gx = x0 + threadIdx.x, gy = y0 + threadIdx.y;
    const bool inside = gx < w && gy < h;
    const u32 m = inside ? masks[gy * w + gx] : 0;
    const u32 si = (threadIdx.y + 1) * sw + threadIdx.x + 1;
    __syncthreads();
    const u32 orig = s[si];
    u32 cur = orig;
    int local;
    do {
        local = 0;
        if (m) {
            u32 best = UNREACHED;
            for (u32 k = 0; k < ndirs; ++k)
                if (m & (1u << k)) best = min(best, s[(int)si + DY[k] * (int)sw + DX[k]]);
            best = plus_one(best);
            if (best < cur) {
                cur = best;
                s[si] = cur;
                local = 1;
            }
        }
    } while (__syncthreads_or(local));
    // Each tile has one block per launch, so a plain store cannot lose a smaller label.
    if (cur < orig) {
        labels[gy * w + gx] = cur;
        *changed = 1;
    }
}

// ---------------------------------------------------------------------------------------------
// Bit-parallel tile waves (bitwave, the default).
//
// The grid is cut into tiles of 64 columns x 32 rows; one warp owns a tile, lane r its row r,
// and a row's 64 cells are one u64 per move direction (bit j = column x0 + j may move in
// direction k). A wave step inside a tile is then a handful of shifts, shuffles and ANDs.
// Rounds: every tile on the round's list runs a multi-source BFS seeded by the labels just
// outside it (plus the goal), keeps the labels it improves, and queues the neighbouring tiles
// on whose side a border cell improved for the next round. Labels only decrease and every
// kept label is the length of a real path, so when a round queues nothing all cells satisfy
// label = 1 + min(allowed neighbours): the BFS fixed point.
// ---------------------------------------------------------------------------------------------

extern "C" __global__ void lee_pack_planes(const u8 *__restrict__ masks, u64 *planes, u32 w,
                                           u32 h, u32 wwords, u32 ndirs) {
    const u64 total = (u64)h * wwords;
    GRID_STRIDE(i, total) {
        const u32 y = (u32)(i / wwords), wx = (u32)(i % wwords), x0 = wx * 64;
        const u32 n = min(64u, w - x0);
        const u8 *row = masks + (u64)y * w + x0;
        u64 acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (u32 j = 0; j < n; ++j) {
            const u32 m = row[j];
#pragma unroll
            for (u32 k = 0; k < 8; ++k) acc[k] |= (u64)((m >> k) & 1u) << j;
        }
#pragma unroll
        for (u32 k = 0; k < 8; ++k)
            if (k < ndirs) planes[((u64)k * h + y) * wwords + wx] = acc[k];
    }
}

// lists: 3 rotating lists of ntiles tile ids; counts: their lengths; queued[t]: the last round
// t was queued for (so a tile is on a round's list at most once).
extern "C" __global__ void lee_bitwave_init(u32 *lists, u32 *counts, u32 *queued, u32 ntiles,
                                            u32 goal_tile) {
    GRID_STRIDE(i, ntiles)
        queued[i] = i == goal_tile ? 1u : 0u;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        counts[0] = 0;
        counts[1] = 1;
        counts[2] = 0;
        lists[ntiles + 0] = goal_tile;
    }
}

// The best label a border cell (cx, cy) of the tile at (x0, y0), whose moves are `m`, is
// offered by its allowed neighbours outside the tile (UNREACHED: none). The moves come from
// the tile's bit planes, so these loads need wait for nothing but the planes.
__device__ __forceinline__ u32 bw_offer(u32 m, const u32 *labels, u32 w, u32 cx, u32 cy, u32 x0,
                                        u32 y0) {
    u32 best = UNREACHED;
#pragma unroll
    for (u32 k = 0; k < 8; ++k) {
        if (!(m & (1u << k))) continue;
        const u32 nx = cx + DX[k], ny = cy + DY[k];
        // Unsigned wrap makes x0 - 1 and y0 - 1 compare as outside too.
        if (nx - x0 < 64u && ny - y0 < 32u) continue;
        // L2 load: the neighbour tile may be written by another warp in this very round.
        best = min(best, plus_one(__ldcg(&labels[(u64)ny * w + nx])));
    }
    return best;
}

// The moves of column j in the row whose planes are P (bit k: direction k).
__device__ __forceinline__ u32 bw_moves(const u64 *P, u32 j) {
    u32 m = 0;
#pragma unroll
    for (u32 k = 0; k < 8; ++k) m |= (u32)((P[k] >> j) & 1ull) << k;
    return m;
}

// This lane's row of tile column tx (row y of the grid) as bit planes (0 off the grid).
__device__ __forceinline__ void bw_planes(const u64 *__restrict__ planes, u32 h, u32 wwords,
                                          u32 ndirs, u32 tx, u32 y, u64 (&P)[8]) {
#pragma unroll
    for (u32 k = 0; k < 8; ++k)
        P[k] = (k < ndirs && y < h) ? planes[((u64)k * h + y) * wwords + tx] : 0ull;
}

// One step of a wave on a tile's bit planes: the cells the frontier F (this lane's row) moves
// to, before removing those already visited.
__device__ __forceinline__ u64 bw_step(const u64 (&P)[8], u64 F, u32 lane, u32 ndirs) {
    u64 up = __shfl_up_sync(FULL_MASK, F, 1), down = __shfl_down_sync(FULL_MASK, F, 1);
    if (lane == 0) up = 0;
    if (lane == 31) down = 0;
    // Bit j of (F << 1) is column j - 1: the neighbour a move left (k = 0) reaches.
    u64 c = (P[0] & (F << 1)) | (P[1] & up) | (P[2] & (F >> 1)) | (P[3] & down);
    if (ndirs == 8)
        c |= (P[4] & (up << 1)) | (P[5] & (up >> 1)) | (P[6] & (down >> 1)) | (P[7] & (down << 1));
    return c;
}

__device__ __forceinline__ u32 warp_min(u32 v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = min(v, __shfl_xor_sync(FULL_MASK, v, o));
    return v;
}

__device__ __forceinline__ u32 finite_or_0(u32 v) { return v == UNREACHED ? 0u : v; }
__device__ __forceinline__ u32 above(u32 v, u32 l) { return v > l ? v : UNREACHED; }

__device__ __forceinline__ void bw_push(u32 t, u32 *lists, u32 *counts, u32 *queued, u32 ntiles,
                                        u32 round) {
    const u32 next = round + 1;
    if (atomicMax(&queued[t], next) < next) {
        const u32 l = next % 3;
        lists[(u64)l * ntiles + atomicAdd(&counts[l], 1u)] = t;
    }
}

#define BW_SLICES 16 /* bits of a level offset held per cell while a tile runs */
#define BW_LOW 3     /* of which set every level; the rest once per 2^BW_LOW levels */

// Adds the cells C of level run `run` (levels run * 2^BW_LOW ..) to the high slices.
__device__ __forceinline__ void bw_close_run(u64 *S, u64 C, u32 run) {
#pragma unroll
    for (u32 b = BW_LOW; b < BW_SLICES; ++b)
        if ((run >> (b - BW_LOW)) & 1u) S[b] |= C;
}

// Transposes the 8 x 8 bit matrix held as bytes (bit 8 i + j = row i, column j).
__device__ __forceinline__ u64 transpose8(u64 x) {
    u64 t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAull;
    x = x ^ t ^ (t << 7);
    t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCull;
    x = x ^ t ^ (t << 14);
    t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ull;
    return x ^ t ^ (t << 28);
}

// The level offsets of 8 columns (8 g ..) from slices lo..lo+7: byte i = column 8 g + i.
__device__ __forceinline__ u64 bw_offsets8(const u64 *S, u32 lo, u32 g) {
    u64 x = 0;
#pragma unroll
    for (u32 b = 0; b < 8; ++b) x |= ((S[lo + b] >> (8 * g)) & 0xffull) << (8 * b);
    return transpose8(x);
}

// Bit k set when a cell of `imp` (lane's row of the tile, moves P) may move into the tile
// in direction k (the side or corner tile there): moves are symmetric (src/lee/grid.rs), so
// those are the outside cells whose offers changed. A border cell beside a wall tells nobody.
__device__ __forceinline__ u32 bw_sides(u64 imp, u32 lane, const u64 *P) {
    constexpr u64 FIRST = 1ull, LAST = 1ull << 63;
    // Diagonal moves from the first and last row leave through a corner; from other rows, a side.
    const u64 up_diag = lane > 0 ? ~0ull : 0ull, down_diag = lane < 31 ? ~0ull : 0ull;
    const u64 top = lane == 0 ? imp : 0ull, bottom = lane == 31 ? imp : 0ull;
    u32 f = 0;
    if (imp & FIRST & (P[0] | (P[4] & up_diag) | (P[7] & down_diag))) f |= 1u << 0;
    if (imp & LAST & (P[2] | (P[5] & up_diag) | (P[6] & down_diag))) f |= 1u << 2;
    if (top & (P[1] | (P[4] & ~FIRST) | (P[5] & ~LAST))) f |= 1u << 1;
    if (bottom & (P[3] | (P[7] & ~FIRST) | (P[6] & ~LAST))) f |= 1u << 3;
    if (top & P[4] & FIRST) f |= 1u << 4;
    if (top & P[5] & LAST) f |= 1u << 5;
    if (bottom & P[6] & LAST) f |= 1u << 6;
    if (bottom & P[7] & FIRST) f |= 1u << 7;
    return f;
}

// Writes the labels a tile's BFS found (base + the level offset bit-sliced in S, for the
// cells in R) where they beat the current ones (`old`, the tile's labels in shared memory,
// kept current), and returns bit k set when an improved cell may move into the tile in
// direction k (bw_sides). Each lane decodes its own row (8 columns per bit transpose); the
// global stores then go row by row, coalesced.
__device__ __forceinline__ u32 bw_flush(u32 *labels, u32 *old, u32 w, u32 x0, u32 y0, u64 R,
                                        const u64 *S, u32 nbits, u32 base, const u64 *P) {
    const u32 lane = threadIdx.x & 31;
    u32 *mine = old + lane * BW_ROW;
    u64 imp = 0;
#pragma unroll
    for (u32 g = 0; g < 8; ++g) {
        const u32 rg = (u32)(R >> (8 * g)) & 0xffu;
        if (!rg) continue;
        const u64 lo8 = bw_offsets8(S, 0, g);
        const u64 hi8 = nbits > 8 ? bw_offsets8(S, 8, g) : 0ull;
#pragma unroll
        for (u32 i = 0; i < 8; ++i) {
            if (!((rg >> i) & 1u)) continue;
            const u32 cand =
                base + (u32)((lo8 >> (8 * i)) & 0xffull) + ((u32)((hi8 >> (8 * i)) & 0xffull) << 8);
            const u32 j = 8 * g + i;
            if (cand < mine[j]) {
                mine[j] = cand;
                imp |= 1ull << j;
            }
        }
    }
    __syncwarp();
    for (u32 r = 0; r < 32; ++r) {
        const u64 m = __shfl_sync(FULL_MASK, imp, r);
        if (!m) continue;
#pragma unroll
        for (u32 half = 0; half < 2; ++half) {
            const u32 j = lane + 32 * half;
            if ((m >> j) & 1ull) labels[(u64)(y0 + r) * w + x0 + j] = old[r * BW_ROW + j];
        }
    }
    return bw_sides(imp, lane, P);
}

// A tile's labels into the warp's shared rows, coalesced; cells outside the grid read 0 (never
// seeded, always blocked). The barriers: lanes may still be reading the previous tile's labels,
// and every lane reads every row after.
__device__ __forceinline__ void bw_load_labels(const u32 *labels, u32 w, u32 h, u32 x0, u32 y0,
                                               u32 *old) {
    const u32 lane = threadIdx.x & 31;
    __syncwarp();
#pragma unroll 16
    for (u32 r = 0; r < 32; ++r) {
        const u32 yy = y0 + r;
#pragma unroll
        for (u32 half = 0; half < 2; ++half) {
            const u32 j = lane + 32 * half;
            old[r * BW_ROW + j] = (yy < h && x0 + j < w) ? __ldcg(&labels[(u64)yy * w + x0 + j]) : 0u;
        }
    }
    __syncwarp();
}

// One warp runs tile t: a multi-source BFS from the seeds (outside labels + 1 that beat a
// border cell's label, and the goal), level by level on bit planes, without touching labels
// until the end; then writes the labels it improved and returns bit k set when the tile in
// direction k must run again (bw_sides). `old` is this warp's 32 x BW_ROW labels of shared
// memory.
//
// FILL (lee_portal_fill): the border cells' own labels are the seeds instead of the outside
// offers, and the goal seeds whatever its label: the portals' labels are final there (see the
// portal schedule below), and the run fills the tile's inside from them.
template <bool FILL>
__device__ u32 bw_tile(const u64 *__restrict__ planes, u32 *labels, u32 w, u32 h, u32 wwords,
                       u32 ndirs, u32 tiles_x, u32 t, u64 goal, u32 *old) {
    const u32 lane = threadIdx.x & 31;
    const u32 tx = t % tiles_x, ty = t / tiles_x, x0 = tx * 64, y0 = ty * 32, y = y0 + lane;
    const bool row_in = y < h;
    u64 P[8];
    bw_planes(planes, h, wwords, ndirs, tx, y, P);
    // Seeds: the left and right cell of this lane's row, top and bottom cells at columns
    // lane and lane + 32, and the goal. The outside neighbours' offers are loaded first, beside
    // the tile's labels, and kept below only where they beat the cell's label. The top and
    // bottom rows' moves are lane 0's and lane rlast's planes.
    const u32 ylast = min(y0 + 31, h - 1), rlast = ylast - y0;
    u32 mt0 = 0, mt1 = 0, mb0 = 0, mb1 = 0;
#pragma unroll
    for (u32 k = 0; k < 8; ++k) {
        const u64 t = __shfl_sync(FULL_MASK, P[k], 0), b = __shfl_sync(FULL_MASK, P[k], rlast);
        mt0 |= (u32)((t >> lane) & 1ull) << k;
        mt1 |= (u32)((t >> (lane + 32)) & 1ull) << k;
        mb0 |= (u32)((b >> lane) & 1ull) << k;
        mb1 |= (u32)((b >> (lane + 32)) & 1ull) << k;
    }
    u32 sl = UNREACHED, sr = UNREACHED, st0 = UNREACHED, st1 = UNREACHED, sb0 = UNREACHED,
        sb1 = UNREACHED, sg = UNREACHED;
    u64 gbit = 0;
    if (FILL) {
        // Own labels (below, once loaded); only cells on the grid may seed.
    } else if (row_in) {
        sl = bw_offer(bw_moves(P, 0), labels, w, x0, y, x0, y0);
        if (x0 + 63 < w) sr = bw_offer(bw_moves(P, 63), labels, w, x0 + 63, y, x0, y0);
    }
    if (!FILL && x0 + lane < w) {
        st0 = bw_offer(mt0, labels, w, x0 + lane, y0, x0, y0);
        // A tile cut by the grid's bottom edge has no cell below it: its last row only has
        // outside neighbours to the sides, which the left/right seeds cover.
        if (rlast == 31) sb0 = bw_offer(mb0, labels, w, x0 + lane, ylast, x0, y0);
    }
    if (!FILL && x0 + lane + 32 < w) {
        st1 = bw_offer(mt1, labels, w, x0 + lane + 32, y0, x0, y0);
        if (rlast == 31) sb1 = bw_offer(mb1, labels, w, x0 + lane + 32, ylast, x0, y0);
    }
    // The tile's labels: all loads are issued before any is used.
    bw_load_labels(labels, w, h, x0, y0, old);
    if (FILL) {
        const bool in0 = x0 + lane < w, in1 = x0 + lane + 32 < w;
        if (row_in) sl = old[lane * BW_ROW];
        if (row_in && x0 + 63 < w) sr = old[lane * BW_ROW + 63];
        if (in0) st0 = old[lane];
        if (in1) st1 = old[lane + 32];
        if (rlast == 31 && in0) sb0 = old[31 * BW_ROW + lane];
        if (rlast == 31 && in1) sb1 = old[31 * BW_ROW + lane + 32];
    } else {
        const auto beats = [](u32 offer, u32 label) { return offer < label ? offer : UNREACHED; };
        sl = beats(sl, old[lane * BW_ROW]);
        sr = beats(sr, old[lane * BW_ROW + 63]);
        st0 = beats(st0, old[lane]);
        st1 = beats(st1, old[lane + 32]);
        sb0 = beats(sb0, old[31 * BW_ROW + lane]);
        sb1 = beats(sb1, old[31 * BW_ROW + lane + 32]);
    }
    if (row_in && goal / w == y && goal % w - x0 < 64u &&
        (FILL || old[lane * BW_ROW + (goal % w - x0)] > 0)) {
        sg = 0;
        gbit = 1ull << (goal % w - x0);
    }
    const u32 lo = warp_min(min(min(min(sl, sr), min(st0, st1)), min(min(sb0, sb1), sg)));
    if (lo == UNREACHED) return 0; // nothing outside offers an improvement
    // Largest finite seed: after it, levels only follow the frontier.
    u32 hi = max(max(max(finite_or_0(sl), finite_or_0(sr)), max(finite_or_0(st0), finite_or_0(st1))),
                 max(max(finite_or_0(sb0), finite_or_0(sb1)), finite_or_0(sg)));
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) hi = max(hi, __shfl_xor_sync(FULL_MASK, hi, o));

    // Cells already at or below the smallest seed cannot improve: the wave treats them as
    // visited (cells outside the grid hold 0). A FILL run's seeds hold their own labels, so
    // there only cells below the smallest seed are.
    u64 V = 0;
    const u32 settled = FILL ? lo : lo + 1;
#pragma unroll 8
    for (u32 r = 0; r < 32; ++r) {
        const u64 blk = (u64)__ballot_sync(FULL_MASK, old[r * BW_ROW + lane] < settled) |
                        ((u64)__ballot_sync(FULL_MASK, old[r * BW_ROW + lane + 32] < settled) << 32);
        if (lane == r) V = blk;
    }

    // Level offsets rel = L - base are bit-sliced: S[b] holds the cells whose rel has bit b.
    // The low BW_LOW bits are set every level; the high bits once per run of 2^BW_LOW levels,
    // from the union of that run's cells (C), which keeps a level to a few instructions.
    u64 F = 0, R = 0, C = 0, S[BW_SLICES];
#pragma unroll
    for (u32 b = 0; b < BW_SLICES; ++b) S[b] = 0;
    u32 L = lo, base = lo, run = 0, top_rel = 0, flags = 0;
    // One level: expand the frontier, add the level's seeds, record the new cells.
    auto level = [&]() {
        u64 c = bw_step(P, F, lane, ndirs);
        if (L <= hi) {
            u64 sb = 0;
            if (sl == L) sb |= 1ull;
            if (sr == L) sb |= 1ull << 63;
            const u64 t_lo = __ballot_sync(FULL_MASK, st0 == L),
                      t_hi = __ballot_sync(FULL_MASK, st1 == L);
            const u64 b_lo = __ballot_sync(FULL_MASK, sb0 == L),
                      b_hi = __ballot_sync(FULL_MASK, sb1 == L);
            if (lane == 0) sb |= t_lo | (t_hi << 32);
            if (lane == rlast) sb |= b_lo | (b_hi << 32);
            if (sg == L) sb |= gbit;
            c |= sb;
        }
        c &= ~V;
        V |= c;
        F = c;
        u32 rel = L - base;
        if ((rel >> BW_LOW) != run) {
            bw_close_run(S, C, run);
            C = 0;
            if (rel >> BW_SLICES) {
                // Offsets no longer fit the slices: write this stretch out and start another.
                flags |= bw_flush(labels, old, w, x0, y0, R, S, BW_SLICES, base, P);
                R = 0;
#pragma unroll
                for (u32 b = 0; b < BW_SLICES; ++b) S[b] = 0;
                base = L;
                rel = 0;
                top_rel = 0;
            }
            run = rel >> BW_LOW;
        }
#pragma unroll
        for (u32 b = 0; b < BW_LOW; ++b)
            if ((rel >> b) & 1u) S[b] |= c;
        C |= c;
        R |= c;
        if (c) top_rel = rel; // offsets only grow within a stretch
        ++L;
    };
    while (true) {
        // Two levels per vote: a level after the frontier died adds nothing.
        level();
        level();
        if (__any_sync(FULL_MASK, F != 0)) continue;
        const u32 last = L - 1;
        if (last >= hi) break;
        // The frontier died out: jump to the next seed level.
        u32 nx = min(min(min(above(sl, last), above(sr, last)), min(above(st0, last), above(st1, last))),
                     min(min(above(sb0, last), above(sb1, last)), above(sg, last)));
        nx = warp_min(nx);
        if (nx == UNREACHED) break;
        L = nx;
    }
    bw_close_run(S, C, run);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) top_rel = max(top_rel, __shfl_xor_sync(FULL_MASK, top_rel, o));
    flags |= bw_flush(labels, old, w, x0, y0, R, S, 32 - __clz(top_rel), base, P);
    return __reduce_or_sync(FULL_MASK, flags);
}

// The neighbour of tile t in direction k (lane k asks for direction k), or UNREACHED when the
// tile must not be told: direction k not set in `flags`, or off the grid.
__device__ __forceinline__ u32 bw_neighbour(u32 t, u32 flags, u32 k, u32 ndirs, u32 tiles_x,
                                            u32 tiles_y) {
    if (k >= ndirs || !((flags >> k) & 1u)) return UNREACHED;
    const long long nx = (long long)(t % tiles_x) + DX[k], ny = (long long)(t / tiles_x) + DY[k];
    if (nx < 0 || ny < 0 || nx >= tiles_x || ny >= tiles_y) return UNREACHED;
    return (u32)(ny * tiles_x + nx);
}

// Rounds in one launch: each warp takes tiles from the round's list, then the grid waits at a
// barrier. Needs a cooperative launch (all blocks resident). blockDim.x is a multiple of 32;
// dynamic shared memory holds 32 x BW_ROW labels per warp. Runs rounds first_round.. until
// a round queues nothing or max_rounds ran; bar[2] = the next round to run.
// bar[0]: arrivals, bar[1]: barrier generation (both 0 at the first launch of a query).
__device__ __forceinline__ void grid_barrier(u32 *bar) {
    __syncthreads();
    if (threadIdx.x == 0) {
        volatile u32 *gen = &bar[1];
        const u32 g = *gen;
        __threadfence();
        if (atomicAdd(&bar[0], 1u) == gridDim.x - 1) {
            atomicExch(&bar[0], 0u);
            __threadfence();
            atomicAdd(&bar[1], 1u);
        } else {
            while (*gen == g) {
            }
        }
        __threadfence();
    }
    __syncthreads();
}

// The round kernel's arguments in one struct (src/lee/gpu/bitwave.rs's BitwaveArgs, #[repr(C)],
// the same fields in the same order): the grid's bit planes, labels and shape, its tile lists,
// the round range of this launch, the goal and the barrier / state slots; narrow_rounds (0: never):
// stop with state[STATE_SWITCH] = 1 once that many rounds in a row queued at most
// narrow_tiles tiles.
struct BitwaveArgs {
    const u64 *planes;
    u32 *labels;
    u32 w, h, wwords, ndirs, tiles_x, tiles_y;
    u32 *lists, *counts, *queued;
    u32 first_round, max_rounds;
    u64 goal;
    u32 *bar;
    u32 narrow_tiles, narrow_rounds;
};

extern "C" __global__ void lee_bitwave_rounds(const BitwaveArgs a) {
    const u64 *__restrict__ planes = a.planes;
    u32 *labels = a.labels, *lists = a.lists, *counts = a.counts, *queued = a.queued, *bar = a.bar;
    const u32 w = a.w, h = a.h, wwords = a.wwords, ndirs = a.ndirs, tiles_x = a.tiles_x,
              tiles_y = a.tiles_y, first_round = a.first_round, max_rounds = a.max_rounds;
    const u64 goal = a.goal;
    extern __shared__ u32 smem[];
    const u32 warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    // Consecutive rounds that queued at most narrow_tiles tiles: every block reads the same
    // counts after the barrier, so all stop at the same round.
    u32 narrow = 0;
    u32 *old = smem + warp * 32 * BW_ROW;
    const u32 ntiles = tiles_x * tiles_y;
    u32 round = first_round;
    for (; round - first_round < max_rounds; ++round) {
        // The list two rounds ahead was consumed by the previous round: empty it for reuse.
        if (blockIdx.x == 0 && threadIdx.x == 0) counts[(round + 2) % 3] = 0;
        const u32 cur = round % 3;
        // L2 loads throughout: other blocks wrote the list in the previous round.
        const u32 count = __ldcg(&counts[cur]);
        // Entry e goes to block e % gridDim.x: a round with few tiles spreads over all SMs.
        for (u32 e = warp * gridDim.x + blockIdx.x; e < count; e += gridDim.x * warps) {
            const u32 t = __ldcg(&lists[(u64)cur * ntiles + e]);
            const u32 flags = bw_tile<false>(planes, labels, w, h, wwords, ndirs, tiles_x, t, goal, old);
            // Tell the neighbours on whose side a border cell improved (next round).
            const u32 nb = bw_neighbour(t, flags, threadIdx.x & 31, ndirs, tiles_x, tiles_y);
            if (nb != UNREACHED) bw_push(nb, lists, counts, queued, ntiles, round);
        }
        grid_barrier(bar);
        const u32 next = __ldcg(&counts[(round + 1) % 3]);
        if (next == 0) {
            ++round;
            break;
        }
        narrow = next <= a.narrow_tiles ? narrow + 1 : 0;
        if (a.narrow_rounds && narrow >= a.narrow_rounds) {
            // A corridor wave: hand the queued tiles to the work queue (the host does).
            ++round;
            if (blockIdx.x == 0 && threadIdx.x == 0) bar[STATE_SWITCH] = 1;
            break;
        }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) bar[STATE_ROUND] = round;
}

// ---------------------------------------------------------------------------------------------
// Bitwave on a work queue (where the adaptive default goes once rounds run narrow, and the
// queue-only schedule throughout). Rounds make every tile of a round wait at the
// grid barrier for the round's slowest tile; on corridor maps a round holds one or two tiles
// and the wave crosses a tile border every few dozen moves, so the barrier and the wait set the
// pace. Here every warp takes the next queued tile as soon as it is free, and a tile is queued
// again as soon as a neighbour improves a cell beside it.
//
// A tile's state: BWQ_QUEUED (on the ring, or to go back on it after its current run) and
// BWQ_RUNNING (one warp runs it; no other may, so its labels have one writer). A neighbour's
// improvement sets QUEUED; only the push that finds the tile idle puts it on the ring, and a
// run that ends with QUEUED set puts it back. The ring holds each tile at most once, so
// ntiles entries suffice: entry (ticket + 1) << 32 | tile, ticket the enqueue's position,
// emptied (0) by the warp that takes it.
// ctl[BWQ_PENDING] counts tiles queued or running: the field is complete when it reaches 0,
// since only a running tile can queue another. Exactness is as for rounds: labels only
// decrease, each is a real path's length, and every tile's last run started after the last
// improvement beside it, so at the end every cell is 1 + min over its allowed neighbours.
// ---------------------------------------------------------------------------------------------

#define BWQ_QUEUED 1u
#define BWQ_RUNNING 2u
#define BWQ_EXIT 0xffffffffu
#ifndef BWQ_NAP_MAX
#define BWQ_NAP_MAX 1024 /* ns: the longest nap between two polls of a waiting warp */
#endif

// lee_bitwave_queue's arguments (src/lee/gpu/bitwave.rs's BitwaveQueueArgs, #[repr(C)], the
// same fields in the same order). ctl: BWQ_HEAD (tickets taken), BWQ_TAIL (tickets issued),
// BWQ_PENDING, BWQ_VISITS (tile runs so far). A launch stops taking tiles once BWQ_HEAD
// reaches visit_limit; what is queued stays for the next launch.
struct BitwaveQueueArgs {
    const u64 *planes;
    u32 *labels;
    u32 w, h, wwords, ndirs, tiles_x, tiles_y;
    u64 *ring;
    u32 *tile_state, *ctl;
    u32 visit_limit;
    u64 goal;
};

// The rounds' list for round `next` (count tiles, list next % 3) as the work queue: a tile is
// on that list exactly when it was last queued for that round. The queue-only schedule starts
// from round 1's list, on which lee_bitwave_init puts the goal's tile.
extern "C" __global__ void lee_bitwave_rounds_to_queue(const u32 *lists, const u32 *counts,
                                                       u32 *queued, u64 *ring, u32 *ctl,
                                                       u32 ntiles, u32 next) {
    const u32 count = counts[next % 3];
    GRID_STRIDE(i, ntiles) {
        ring[i] = i < count ? ((u64)(i + 1) << 32) | lists[(u64)(next % 3) * ntiles + i] : 0ull;
        queued[i] = queued[i] == next ? BWQ_QUEUED : 0u;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        ctl[BWQ_HEAD] = 0;
        ctl[BWQ_TAIL] = count;
        ctl[BWQ_PENDING] = count;
        ctl[BWQ_VISITS] = 0;
    }
}

// Tiles queued or running (low half) and tickets issued (high half) are one word, so an
// enqueue counts both in one atomic: the field cannot look complete while an entry is on its
// way, and the entry's place costs no second round trip.
#if BWQ_TAIL != BWQ_PENDING + 1 || BWQ_PENDING % 2 != 0
#error "BWQ_PENDING and BWQ_TAIL are the halves of one aligned 64-bit word"
#endif
__device__ __forceinline__ unsigned long long *bwq_counts(u32 *ctl) {
    return reinterpret_cast<unsigned long long *>(ctl + BWQ_PENDING);
}
__device__ __forceinline__ u32 bwq_pending(u32 *ctl) {
    return (u32) * (volatile unsigned long long *)bwq_counts(ctl);
}

__device__ __forceinline__ void bwq_enqueue(u64 *ring, u32 *ctl, u32 ntiles, u32 t) {
    const u32 ticket = (u32)(atomicAdd(bwq_counts(ctl), (1ull << 32) | 1ull) >> 32);
    volatile u64 *slot = (volatile u64 *)&ring[ticket % ntiles];
    // The slot's previous entry (ticket - ntiles) may not have been read yet: its ticket is
    // taken (else ntiles + 1 entries would be unread, more than there are tiles), so its
    // holder is about to; wait for it to empty the slot.
    while (*slot != 0ull) __nanosleep(32);
    *slot = ((u64)(ticket + 1u) << 32) | t;
}

// Lane 0: the next tile (BWQ_EXIT when the field is complete or the launch's budget is spent).
// A ticket is a place in line; its entry may still be on its way, or never come when the field
// completes first.
__device__ __forceinline__ u32 bwq_take(const BitwaveQueueArgs &a, u32 ntiles) {
    volatile u32 *ctl = a.ctl;
    if ((int)(ctl[BWQ_HEAD] - a.visit_limit) >= 0) return BWQ_EXIT;
    const u32 ticket = atomicAdd(&a.ctl[BWQ_HEAD], 1u);
    volatile u64 *slot = (volatile u64 *)&a.ring[ticket % ntiles];
    // Waits back off: on a narrow wave most warps wait, and their polls of the control word
    // slowed every atomic the working warps made on it.
    u32 nap = 64;
    while (true) {
        const u64 e = *slot;
        if ((u32)(e >> 32) == ticket + 1u) {
            *slot = 0ull;
            return (u32)e;
        }
        if (bwq_pending(a.ctl) == 0) return BWQ_EXIT;
        __nanosleep(nap);
        nap = min(2u * nap, (u32)BWQ_NAP_MAX);
    }
}

// atomicCAS with acquire semantics (PTX atom.acquire): what was written before the release
// whose value it reads (a fence, then the relaxed atomic that wrote it) is visible to the
// loads after it, and, after a __syncwarp, to the other lanes' loads.
__device__ __forceinline__ u32 cas_acquire(u32 *p, u32 compare, u32 value) {
    u32 old;
    asm volatile("atom.acquire.gpu.global.cas.b32 %0, [%1], %2, %3;"
                 : "=r"(old)
                 : "l"(p), "r"(compare), "r"(value)
                 : "memory");
    return old;
}

// atomicExch with acquire semantics: the loads after it see what was written before the
// release whose value it replaced (as cas_acquire).
__device__ __forceinline__ u32 exch_acquire(u32 *p, u32 value) {
    u32 old;
    asm volatile("atom.acquire.gpu.global.exch.b32 %0, [%1], %2;"
                 : "=r"(old)
                 : "l"(p), "r"(value)
                 : "memory");
    return old;
}

// Tiles one warp may run in a row without the ring (see bwq_loop).
#define BWQ_CHAIN 1024u

// The queue's loop, whatever a tile run is: `head(t)` loads what a run of tile t can read
// before the tile is this warp's (what no run writes, or what is safe to read stale), and
// `run(t, h)` runs tile t on this warp from that head and returns bit k set when the tile in
// direction k must run again. A tile's head is loaded while the claim or the fence that makes
// the tile this warp's is on its way, so a run starts one round trip later than it.
//
// A warp that tells an idle neighbour runs that tile next itself instead of putting it on the
// ring (the other neighbours go on the ring): on a corridor the wave is a chain of tiles, and
// the ring's round trips (a ticket, the entry, another warp's wait for it) were most of each
// link. The claimed tile goes straight to RUNNING and inherits the finished tile's place in
// the pending count, so the count never reaches 0 between the two.
template <typename Head, typename Run>
__device__ __forceinline__ void bwq_loop(const BitwaveQueueArgs &a, Head head, Run run) {
    const u32 ntiles = a.tiles_x * a.tiles_y, lane = threadIdx.x & 31;
    u32 visits = 0, chain = 0, kept = BWQ_EXIT;
    decltype(head(0u)) h;
    while (true) {
        u32 t = kept;
        if (t == BWQ_EXIT) {
            chain = 0;
            t = lane == 0 ? bwq_take(a, ntiles) : 0u;
            t = __shfl_sync(FULL_MASK, t, 0);
            if (t == BWQ_EXIT) break;
            h = head(t);
            if (lane == 0) atomicExch(&a.tile_state[t], BWQ_RUNNING);
            // The neighbours' labels are read after the tile is marked running: an
            // improvement this run misses sets QUEUED, and the tile runs again.
            __threadfence();
        }
        // A tile claimed or run again was marked running by an acquiring atomic below, which
        // also makes visible what the tile's last runner and the neighbour that queued it
        // wrote before their fences: no fence here.
        __syncwarp();
        const u32 flags = run(t, h);
        // The labels reach L2 before any neighbour can be told of them.
        __threadfence();
        __syncwarp();
        // t goes idle unless a neighbour queued it meanwhile; issued here so that its round
        // trip overlaps the neighbours'.
        u32 end = BWQ_RUNNING;
        if (lane == 0) end = cas_acquire(&a.tile_state[t], BWQ_RUNNING, 0u);
        // Lane k tells the neighbour in direction k; the first told lane tries to claim its
        // tile for this warp, whose head is loaded meanwhile.
        const u32 nb = bw_neighbour(t, flags, lane, a.ndirs, a.tiles_x, a.tiles_y);
        const u32 told = __ballot_sync(FULL_MASK, nb != UNREACHED);
        const u32 first = told ? __ffs(told) - 1 : 0u;
        const bool try_claim = told != 0u && chain < BWQ_CHAIN;
        const u32 cand = __shfl_sync(FULL_MASK, nb, first);
        // Issued before the claim, whose answer the claiming lane waits for below.
        decltype(head(0u)) hc = h;
        if (try_claim) hc = head(cand);
        bool claimed = false;
        if (nb != UNREACHED) {
            if (try_claim && lane == first)
                claimed = cas_acquire(&a.tile_state[nb], 0u, BWQ_RUNNING) == 0u;
            if (!claimed && atomicOr(&a.tile_state[nb], BWQ_QUEUED) == 0u)
                bwq_enqueue(a.ring, a.ctl, ntiles, nb);
        }
        const u32 claim = __ballot_sync(FULL_MASK, claimed);
        kept = claim ? cand : BWQ_EXIT;
        if (claim) h = hc;
        // A neighbour queued t while it ran: with no neighbour claimed, this warp runs t again
        // at once (it stays RUNNING and keeps its place in the count), else t goes on the ring.
        const bool again = __shfl_sync(FULL_MASK, end, 0) != BWQ_RUNNING;
        if (again && kept == BWQ_EXIT && chain < BWQ_CHAIN) {
            // Acquiring: the run's loads must not go out before the exchange that clears
            // QUEUED, or an improvement queued just before it would be missed and not rerun.
            if (lane == 0) exch_acquire(&a.tile_state[t], BWQ_RUNNING);
            kept = t;
            h = head(t);
        } else if (lane == 0) {
            if (again) {
                atomicExch(&a.tile_state[t], BWQ_QUEUED);
                bwq_enqueue(a.ring, a.ctl, ntiles, t);
            }
            // pending - 1 for t, after its neighbours' + 1 (so the count cannot reach 0
            // between), unless the claimed tile takes its place.
            if (kept == BWQ_EXIT) atomicAdd(bwq_counts(a.ctl), ~0ull);
        }
        ++visits;
        ++chain;
    }
    if (lane == 0 && visits) atomicAdd(&a.ctl[BWQ_VISITS], visits);
}

// A tile run of the queue that needs nothing loaded ahead.
struct NoHead {};

extern "C" __global__ void lee_bitwave_queue(const BitwaveQueueArgs a) {
    extern __shared__ u32 smem[];
    u32 *old = smem + (threadIdx.x >> 5) * 32 * BW_ROW;
    bwq_loop(
        a, [](u32) { return NoHead{}; },
        [&](u32 t, NoHead) {
            return bw_tile<false>(a.planes, a.labels, a.w, a.h, a.wwords, a.ndirs, a.tiles_x, t,
                                  a.goal, old);
        });
}

// ---------------------------------------------------------------------------------------------
// Portals (where the adaptive default goes once rounds run narrow, and the portals-only
// schedule throughout). On a maze the queue's tile runs step through every level of the wave
// inside each tile, one dependent step per level, and the wave needs dozens of levels to cross
// a tile. Here a tile is crossed in one step. A portal is a cell with an allowed move out of
// its tile; for every tile the distances inside it between its portals are found once per map
// (lee_portal_dist: a BFS from each portal, all tiles at once). The wave then runs over the
// portals alone, on the work queue above: a tile run takes the portals whose labels fell since
// the tile last applied them, lowers the tile's other portals through its table, and lowers
// the cells those portals move to in other tiles (atomicMin; such a cell is a portal too, as
// moves are symmetric), queueing their tiles. When nothing is queued every portal holds its
// distance: a shortest path is a chain of stretches inside tiles between portals and moves
// between tiles, and each link was applied by a run that started after its first end's label
// was final. lee_portal_fill then fills every tile from its border labels (bw_tile<true>).
//
// Per map: pcount[t] tile t's portals and poff[t] their number in the tiles before it
// (poff[ntiles] = all portals); slot s = t * PT_MAX + j holds tile t's portal j, in row-major
// order: pinfo[s] = its cell in the tile (row * 64 + column) | its moves out of the tile << 16;
// doff[t] where tile t's k x k table starts in dist (PT_FAR: not connected inside the tile).
// Per query: mark[s] = the label portal s had when a run last applied it. Fixed slots let a run
// load a tile's portals in the same round trip as their count.
// ---------------------------------------------------------------------------------------------

#define PT_CHUNKS (PT_MAX / 32)
#define PT_FAR 0xffffu
#define PT_ROWS 4 /* table rows a run loads at once */
// Shared words per warp of lee_portal_queue: its tile's portals' labels and slots, and the
// list of those that fell.
#define PT_WARP_WORDS (3 * PT_MAX)
#if PT_WARP_SMEM != 4 * PT_WARP_WORDS
#error "PT_WARP_SMEM is 3 x PT_MAX words"
#endif

// The cells of this lane's row (planes P, row `lane` of its tile) with a move out of the tile.
__device__ __forceinline__ u64 pt_row(const u64 (&P)[8], u32 lane, u32 ndirs) {
    constexpr u64 FIRST = 1ull, LAST = 1ull << 63;
    u64 m = (P[0] & FIRST) | (P[2] & LAST);
    if (lane == 0) m |= P[1];
    if (lane == 31) m |= P[3];
    if (ndirs == 8) {
        m |= ((P[4] | P[7]) & FIRST) | ((P[5] | P[6]) & LAST);
        if (lane == 0) m |= P[4] | P[5];
        if (lane == 31) m |= P[6] | P[7];
    }
    return m;
}

__device__ __forceinline__ u32 warp_exclusive_sum(u32 v) {
    const u32 lane = threadIdx.x & 31;
    u32 s = v;
#pragma unroll
    for (u32 o = 1; o < 32; o <<= 1) {
        const u32 n = __shfl_up_sync(FULL_MASK, s, o);
        if (lane >= o) s += n;
    }
    return s - v;
}

// Warps stride over the tiles (the loop is warp-uniform).
#define PT_FOR_EACH_TILE(t, ntiles)                                                                \
    for (u32 t = (u32)(((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5); t < (ntiles);         \
         t += (u32)(((u64)gridDim.x * blockDim.x) >> 5))

extern "C" __global__ void lee_portal_count(const u64 *__restrict__ planes, u32 h, u32 wwords,
                                            u32 ndirs, u32 tiles_x, u32 tiles_y, u32 *pcount) {
    const u32 lane = threadIdx.x & 31;
    PT_FOR_EACH_TILE(t, tiles_x * tiles_y) {
        u64 P[8];
        bw_planes(planes, h, wwords, ndirs, t % tiles_x, (t / tiles_x) * 32 + lane, P);
        const u32 c = __reduce_add_sync(FULL_MASK, (u32)__popcll(pt_row(P, lane, ndirs)));
        if (lane == 0) pcount[t] = c;
    }
}

extern "C" __global__ void lee_portal_list(const u64 *__restrict__ planes, u32 h, u32 wwords,
                                           u32 ndirs, u32 tiles_x, u32 tiles_y,
                                           u32 *pinfo) {
    const u32 lane = threadIdx.x & 31;
    PT_FOR_EACH_TILE(t, tiles_x * tiles_y) {
        u64 P[8];
        bw_planes(planes, h, wwords, ndirs, t % tiles_x, (t / tiles_x) * 32 + lane, P);
        u64 m = pt_row(P, lane, ndirs);
        u64 at = (u64)t * PT_MAX + warp_exclusive_sum((u32)__popcll(m));
        while (m) {
            const u32 j = __ffsll((long long)m) - 1;
            m &= m - 1;
            u32 out = 0;
            for (u32 k = 0; k < ndirs; ++k) {
                const int cx = (int)j + DX[k], cy = (int)lane + DY[k];
                if (((P[k] >> j) & 1ull) && (cx < 0 || cx >= 64 || cy < 0 || cy >= 32))
                    out |= 1u << k;
            }
            pinfo[at++] = (lane * 64 + j) | (out << 16);
        }
    }
}

// One warp per portal: a BFS inside its tile from it, on the tile's bit planes; row i of the
// tile's table holds the level at which each portal was reached.
extern "C" __global__ void __launch_bounds__(PT_DIST_THREADS)
lee_portal_dist(const u64 *__restrict__ planes, u32 h, u32 wwords, u32 ndirs, u32 tiles_x,
                u32 tiles_y, const u32 *__restrict__ poff, const u32 *__restrict__ pinfo,
                const u64 *__restrict__ doff, unsigned short *dist, u32 total) {
    __shared__ unsigned short found_all[PT_DIST_THREADS / 32][PT_MAX];
    const u32 lane = threadIdx.x & 31, ntiles = tiles_x * tiles_y;
    unsigned short *found = found_all[threadIdx.x >> 5];
    PT_FOR_EACH_TILE(g, total) {
        // The tile of portal g: the last t with poff[t] <= g (tiles without portals share
        // their successor's start).
        u32 lo = 0, hi = ntiles;
        while (hi - lo > 1) {
            const u32 mid = (lo + hi) / 2;
            if (poff[mid] <= g) lo = mid; else hi = mid;
        }
        const u32 t = lo, base = poff[t], k = poff[t + 1] - base, i = g - base;
        u64 P[8];
        bw_planes(planes, h, wwords, ndirs, t % tiles_x, (t / tiles_x) * 32 + lane, P);
        const u64 m = pt_row(P, lane, ndirs);
        const u32 before = warp_exclusive_sum((u32)__popcll(m));
        for (u32 j = lane; j < k; j += 32) found[j] = PT_FAR;
        __syncwarp();
        const u32 src = pinfo[(u64)t * PT_MAX + i] & 0xffffu;
        u64 F = lane == src / 64 ? 1ull << (src % 64) : 0ull, V = F;
        if (F) found[i] = 0;
        for (u32 L = 1;; ++L) {
            const u64 c = bw_step(P, F, lane, ndirs) & ~V;
            V |= c;
            F = c;
            for (u64 hit = c & m; hit; hit &= hit - 1) {
                const u32 j = __ffsll((long long)hit) - 1;
                found[before + __popcll(m & ((1ull << j) - 1))] = (unsigned short)L;
            }
            if (!__any_sync(FULL_MASK, F != 0)) break;
        }
        __syncwarp();
        unsigned short *row = dist + doff[t] + (u64)i * k;
        for (u32 j = lane; j < k; j += 32) row[j] = found[j];
        __syncwarp();
    }
}

// Every tile queued (each applies its portals once: labels the rounds or the goal's tile
// already set), every mark cleared.
extern "C" __global__ void lee_portal_queue_all(u64 *ring, u32 *tile_state, u32 *ctl, u32 *mark,
                                                u32 ntiles) {
    GRID_STRIDE(i, (u64)ntiles * PT_MAX) {
        if (i < ntiles) {
            ring[i] = ((u64)(i + 1) << 32) | i;
            tile_state[i] = BWQ_QUEUED;
        }
        mark[i] = UNREACHED;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        ctl[BWQ_HEAD] = 0;
        ctl[BWQ_TAIL] = ntiles;
        ctl[BWQ_PENDING] = ntiles;
        ctl[BWQ_VISITS] = 0;
    }
}

// lee_portal_queue's arguments (src/lee/gpu/portals.rs's PortalArgs, #[repr(C)], the same
// fields in the same order).
struct PortalArgs {
    BitwaveQueueArgs q;
    const u32 *pcount, *pinfo;
    const u64 *doff;
    const unsigned short *dist;
    u32 *mark;
};

// Direction index (DX, DY order) of the neighbouring tile at offset (dx, dy).
__device__ __forceinline__ u32 pt_dir(int dx, int dy) {
    if (dy == 0) return dx < 0 ? 0u : 2u;
    if (dx == 0) return dy < 0 ? 1u : 3u;
    if (dy < 0) return dx < 0 ? 4u : 5u;
    return dx > 0 ? 6u : 7u;
}

// Through a tile's k x k table: each fallen portal's row (fallen[0..nfallen), their labels
// lab[i]) offers its label plus the distance inside to this lane's portals' best. Rows go ROWS
// at a time, every load of a batch issued before any is used (past the list, the batch's first
// row again: the min is unchanged by a repeat). Plain loads: through the read-only data path
// (__ldg) both runs were slower (H100, BENCHMARKS.md fifteenth part: the queue's on random
// terrain 1000² 0.66 against 0.51 ms, the block's on the 1000² maze 3.81 against 3.75).
template <u32 ROWS>
__device__ __forceinline__ void pt_through_table(const unsigned short *table, u32 k,
                                                 const u32 *fallen, u32 nfallen, const u32 *lab,
                                                 u32 (&best)[PT_CHUNKS]) {
    const u32 lane = threadIdx.x & 31;
    for (u32 b = 0; b < nfallen; b += ROWS) {
        u32 li[ROWS], d[ROWS][PT_CHUNKS];
#pragma unroll
        for (u32 r = 0; r < ROWS; ++r) {
            const u32 i = fallen[b + r < nfallen ? b + r : b];
            li[r] = lab[i];
#pragma unroll
            for (u32 c = 0; c < PT_CHUNKS; ++c) {
                d[r][c] = PT_FAR;
                if (c * 32 >= k) break;
                if (c * 32 + lane < k) d[r][c] = table[(u64)i * k + c * 32 + lane];
            }
        }
#pragma unroll
        for (u32 r = 0; r < ROWS; ++r)
#pragma unroll
            for (u32 c = 0; c < PT_CHUNKS; ++c)
                if (d[r][c] != PT_FAR) best[c] = min(best[c], li[r] + d[r][c]);
    }
}

// What a run of a tile reads before the tile is its warp's (bwq_loop): its portals' count,
// table offset and slots, which no run writes, and their marks, which only its runs lower: a
// mark read before the last run's are visible is higher, and lists a portal as fallen that
// was applied already, which applying again leaves unchanged. One round trip (slots past the
// count are loaded and not used: they go out before the count arrives).
struct PtHead {
    u32 k;
    u64 dbase;
    u32 in_c[PT_CHUNKS], mark_c[PT_CHUNKS];
};

__device__ __forceinline__ PtHead pt_head(const PortalArgs &p, u32 t) {
    const u32 lane = threadIdx.x & 31;
    const u64 base = (u64)t * PT_MAX;
    PtHead h;
    h.k = p.pcount[t];
    h.dbase = p.doff[t];
#pragma unroll
    for (u32 c = 0; c < PT_CHUNKS; ++c) {
        h.in_c[c] = p.pinfo[base + c * 32 + lane];
        h.mark_c[c] = __ldcg(&p.mark[base + c * 32 + lane]);
    }
    return h;
}

// One run of tile t over its portals from its head h (lab, info, fallen: this warp's PT_MAX
// words each of shared memory); returns bit k set when the tile in direction k had a cell
// lowered.
__device__ u32 pt_run(const PortalArgs &p, u32 t, const PtHead &h, u32 *lab, u32 *info,
                      u32 *fallen) {
    const BitwaveQueueArgs &a = p.q;
    const u32 lane = threadIdx.x & 31;
    const u64 base = (u64)t * PT_MAX;
    const u32 k = h.k;
    const u64 dbase = h.dbase;
    const u32(&in_c)[PT_CHUNKS] = h.in_c;
    const u32(&mark_c)[PT_CHUNKS] = h.mark_c;
    if (k == 0) return 0;
    const u32 x0 = (t % a.tiles_x) * 64, y0 = (t / a.tiles_x) * 32;
    // One round trip for the portals' labels, and beside them the labels of the cells they
    // move to in other tiles (target[c][d]: portal c * 32 + lane, direction d), so that offers
    // below need not wait for an answer. Every chunk's loads go out before any is used. The per-chunk
    // arrays are set whole first: the loops stop at the count (uniform: a maze tile's portals
    // fill one or two chunks).
    u32 l_c[PT_CHUNKS], target[PT_CHUNKS][8], changed[PT_CHUNKS], any = 0;
#pragma unroll
    for (u32 c = 0; c < PT_CHUNKS; ++c) {
        l_c[c] = UNREACHED;
        changed[c] = 0;
    }
#pragma unroll
    for (u32 c = 0; c < PT_CHUNKS; ++c) {
        if (c * 32 >= k) break;
        if (c * 32 + lane < k) {
            const u32 in = in_c[c], cell = in & 0xffffu, out = in >> 16;
            const u32 cx = x0 + cell % 64, cy = y0 + cell / 64;
            l_c[c] = __ldcg(&a.labels[(u64)cy * a.w + cx]);
#pragma unroll
            for (u32 d = 0; d < 8; ++d)
                target[c][d] = (out >> d) & 1u
                                   ? __ldcg(&a.labels[(u64)(cy + DY[d]) * a.w + cx + DX[d]])
                                   : 0u;
        }
    }
    // Which labels fell since this tile last applied them: listed in `fallen` (in order).
    u32 nfallen = 0;
#pragma unroll
    for (u32 c = 0; c < PT_CHUNKS; ++c) {
        if (c * 32 >= k) break;
        const u32 j = c * 32 + lane;
        const bool fell = j < k && l_c[c] < mark_c[c];
        if (j < k) {
            info[j] = in_c[c];
            lab[j] = l_c[c];
        }
        changed[c] = __ballot_sync(FULL_MASK, fell);
        if (fell) fallen[nfallen + __popc(changed[c] & ((1u << lane) - 1))] = j;
        nfallen += __popc(changed[c]);
    }
    if (nfallen == 0) return 0;
    __syncwarp();
    u32 best[PT_CHUNKS];
#pragma unroll
    for (u32 c = 0; c < PT_CHUNKS; ++c) best[c] = l_c[c];
    pt_through_table<PT_ROWS>(p.dist + dbase, k, fallen, nfallen, lab, best);
    // Lower what the table improved; then every portal that fell or was lowered offers its
    // label + 1 to the cells it moves to in other tiles, where that beats what they held when
    // loaded above. Labels only fall, so a cell that held as little needs nothing; one that
    // fell since, below the offer, leaves the atomicMin without effect and its tile runs once
    // for nothing. Neither atomic's answer is awaited.
    u32 flags = 0;
#pragma unroll
    for (u32 c = 0; c < PT_CHUNKS; ++c) {
        const u32 j = c * 32 + lane;
        if (c * 32 >= k) break;
        if (j >= k) continue;
        const u32 in = info[j], cell = in & 0xffffu;
        const u32 cx = x0 + cell % 64, cy = y0 + cell / 64;
        u32 l = lab[j];
        bool offer = (changed[c] >> lane) & 1u;
        if (best[c] < l) {
            atomicMin(&a.labels[(u64)cy * a.w + cx], best[c]);
            l = best[c];
            offer = true;
        }
        if (!offer) continue;
        p.mark[base + j] = l;
        const u32 out = in >> 16;
#pragma unroll
        for (u32 d = 0; d < 8; ++d) {
            if (!((out >> d) & 1u) || target[c][d] <= l + 1) continue;
            const u32 nx = cx + DX[d], ny = cy + DY[d];
            atomicMin(&a.labels[(u64)ny * a.w + nx], l + 1);
            const int dx = nx < x0 ? -1 : (nx >= x0 + 64 ? 1 : 0);
            const int dy = ny < y0 ? -1 : (ny >= y0 + 32 ? 1 : 0);
            flags |= 1u << pt_dir(dx, dy);
        }
    }
    return __reduce_or_sync(FULL_MASK, flags);
}

extern "C" __global__ void lee_portal_queue(const PortalArgs p) {
    extern __shared__ u32 smem[];
    u32 *lab = smem + (threadIdx.x >> 5) * PT_WARP_WORDS, *info = lab + PT_MAX,
        *fallen = info + PT_MAX;
    bwq_loop(
        p.q, [&](u32 t) { return pt_head(p, t); },
        [&](u32 t, const PtHead &h) { return pt_run(p, t, h, lab, info, fallen); });
}

// Every tile filled from its border cells' labels (final at the portals) and the goal.
extern "C" __global__ void lee_portal_fill(const BitwaveQueueArgs a) {
    extern __shared__ u32 smem[];
    u32 *old = smem + (threadIdx.x >> 5) * 32 * BW_ROW;
    PT_FOR_EACH_TILE(t, a.tiles_x * a.tiles_y)
        bw_tile<true>(a.planes, a.labels, a.w, a.h, a.wwords, a.ndirs, a.tiles_x, t, a.goal, old);
}

// ---------------------------------------------------------------------------------------------
// Portals in one block. On a maze the wave is a handful of corridors, and the portal queue's
// critical path is one tile run per tile crossed, each a chain of round trips to L2 (the
// claim, the labels, the rows, the offers, the fences around the run). Where every portal's
// label fits one SM's shared memory, one block runs the same wave with the labels, the tile
// states and the ring in shared memory: claims, labels, offers and fences stay inside the SM,
// and only the read-only slots, links and table rows come from L2 (or L1).
//
// A portal's shared word is label << 1 | dirty: the offer that lowers a label marks it with
// the same atomicMin, and the run that applies it clears the mark and reads the label with one
// atomicAnd, so a lowering is either seen by that run or queues the tile again (the offer's
// tile is told after it). Labels lowered through a tile's own table are applied by the run
// that lowers them and stay unmarked. PB_FAR: unreached, unmarked.
// Per map (lee_portal_links): plink[i * 8 + d], the portal (numbered across tiles by poff) that
// portal i's move d reaches, PB_NONE where i has no move d; pcell[i], portal i's cell.
// ---------------------------------------------------------------------------------------------

#define PB_FAR 0xfffffffeu
#define PB_EMPTY 0xffffffffu
#define PB_NONE 0xffffffffu
#define PB_DIR_SHIFT 29
// Shared control words of lee_portal_block: tickets taken and issued, tiles queued or
// running, tile runs.
#define PBQ_HEAD 0
#define PBQ_TAIL 1
#define PBQ_PENDING 2
#define PBQ_RUNS 3
#define PBQ_WORDS 4
// Table rows a run loads at once: a run here usually has one fallen portal, and each row of a
// batch costs instructions on the critical path (H100, 1000² maze: 1 row 3.79 ms, 2 rows 3.84,
// 4 rows 4.21). Waiting warps poll every 32 ns: longer naps (up to 1 µs) did not help.
#define PB_ROWS 1

// Every portal's cell and links; bad[0] set when a move reaches a cell that is not a portal
// of its tile (moves not symmetric: the wave stays on the device-wide queue). A link is the
// portal reached | the direction of its tile (pt_dir) << PB_DIR_SHIFT, so a run needs neither
// the slot nor the cell to offer and tell (total < 2^PB_DIR_SHIFT: the host checks).
extern "C" __global__ void lee_portal_links(const u32 *__restrict__ pcount,
                                            const u32 *__restrict__ poff,
                                            const u32 *__restrict__ pinfo, u32 w, u32 tiles_x,
                                            u32 ntiles, u32 total, u32 *plink, u64 *pcell,
                                            u32 *bad) {
    GRID_STRIDE(g, total) {
        u32 lo = 0, hi = ntiles;
        while (hi - lo > 1) {
            const u32 mid = (lo + hi) / 2;
            if (poff[mid] <= g) lo = mid; else hi = mid;
        }
        const u32 t = lo, in = pinfo[(u64)t * PT_MAX + (g - poff[t])];
        const u32 cell = in & 0xffffu, out = in >> 16;
        const u32 cx = (t % tiles_x) * 64 + cell % 64, cy = (t / tiles_x) * 32 + cell / 64;
        pcell[g] = (u64)cy * w + cx;
        for (u32 d = 0; d < 8; ++d) {
            u32 link = PB_NONE;
            if ((out >> d) & 1u) {
                const u32 nx = cx + DX[d], ny = cy + DY[d];
                const u32 u = (ny / 32) * tiles_x + nx / 64, want = (ny % 32) * 64 + nx % 64;
                // A tile's slots are in row-major order of their cells.
                const u32 *s = pinfo + (u64)u * PT_MAX;
                u32 a = 0, b = pcount[u];
                while (a < b) {
                    const u32 m = (a + b) / 2;
                    if ((s[m] & 0xffffu) < want) a = m + 1; else b = m;
                }
                const u32 lx = cell % 64 + DX[d], ly = cell / 64 + DY[d];
                const u32 dir = pt_dir((int)lx < 0 ? -1 : (lx >= 64 ? 1 : 0),
                                       (int)ly < 0 ? -1 : (ly >= 32 ? 1 : 0));
                if (a < pcount[u] && (s[a] & 0xffffu) == want)
                    link = (poff[u] + a) | (dir << PB_DIR_SHIFT);
                else atomicOr(bad, 1u);
            }
            plink[(u64)g * 8 + d] = link;
        }
    }
}

// lee_portal_block's arguments (src/lee/gpu/portals.rs's PortalBlockArgs, #[repr(C)], the same
// fields in the same order). ctl: the work queue's words (BWQ_*), set at the end: the tiles
// still queued when the launch stopped at visit_limit runs (0: the field is complete), and the
// runs added to BWQ_VISITS.
struct PortalBlockArgs {
    u32 *labels;
    const u32 *pcount, *poff, *plink;
    const u64 *doff, *pcell;
    const unsigned short *dist;
    u32 *ctl;
    u32 ntiles, total, tiles_x, tiles_y, ndirs, visit_limit;
};

__device__ __forceinline__ void pb_push(u32 *q, u32 *ring, u32 ntiles, u32 t) {
    atomicAdd(&q[PBQ_PENDING], 1u);
    volatile u32 *slot = &ring[atomicAdd(&q[PBQ_TAIL], 1u) % ntiles];
    // The ring holds each tile at most once; a slot's last entry may still be on its way out.
    while (*slot != PB_EMPTY) {
    }
    *slot = t;
}

// Lane 0: the next tile, or BWQ_EXIT when nothing is queued or running, or the launch ran its
// runs.
__device__ __forceinline__ u32 pb_take(u32 *q, u32 *ring, u32 ntiles, u32 visit_limit) {
    volatile u32 *vq = q;
    while (true) {
        if (vq[PBQ_RUNS] >= visit_limit) return BWQ_EXIT;
        const u32 h = vq[PBQ_HEAD];
        if ((int)(vq[PBQ_TAIL] - h) > 0) {
            if (atomicCAS(&q[PBQ_HEAD], h, h + 1) != h) continue;
            volatile u32 *slot = &ring[h % ntiles];
            u32 t;
            while ((t = *slot) == PB_EMPTY) {
            }
            *slot = PB_EMPTY;
            return t;
        }
        if (vq[PBQ_PENDING] == 0) return BWQ_EXIT;
        __nanosleep(32);
    }
}

// One run of tile t (pt_run's steps on shared labels; head: the tiles' portal counts, first
// portals and table offsets; fallen and flab: this warp's PT_MAX words each); returns bit k
// set when the tile in direction k had a portal lowered. Its only global loads, the links and
// the table rows, go out together: one round trip to L2 per run.
__device__ u32 pb_run(const PortalBlockArgs &p, u32 t, const u32 *head, u32 *lab, u32 *fallen,
                      u32 *flab) {
    const u32 lane = threadIdx.x & 31, ntiles = p.ntiles;
    const u32 k = head[t];
    if (k == 0) return 0;
    const u32 base = head[ntiles + t], dbase = head[2 * ntiles + t];
    u32 link[PT_CHUNKS][8];
#pragma unroll
    for (u32 c = 0; c < PT_CHUNKS; ++c) {
#pragma unroll
        for (u32 d = 0; d < 8; ++d) link[c][d] = PB_NONE;
        if (c * 32 >= k) continue;
        if (c * 32 + lane < k) {
            const uint4 *l4 = reinterpret_cast<const uint4 *>(p.plink + (u64)(base + c * 32 + lane) * 8);
            const uint4 a = l4[0], b = l4[1];
            link[c][0] = a.x; link[c][1] = a.y; link[c][2] = a.z; link[c][3] = a.w;
            link[c][4] = b.x; link[c][5] = b.y; link[c][6] = b.z; link[c][7] = b.w;
        }
    }
    // Claim the marks: the portals that fell since this tile last applied them.
    u32 l_c[PT_CHUNKS], changed[PT_CHUNKS], best[PT_CHUNKS];
    u32 nfallen = 0;
#pragma unroll
    for (u32 c = 0; c < PT_CHUNKS; ++c) {
        l_c[c] = PB_FAR >> 1;
        changed[c] = 0;
        if (c * 32 >= k) continue;
        const u32 j = c * 32 + lane;
        bool fell = false;
        if (j < k) {
            const u32 e = atomicAnd(&lab[base + j], ~1u);
            l_c[c] = e >> 1;
            flab[j] = e >> 1;
            fell = e & 1u;
        }
        changed[c] = __ballot_sync(FULL_MASK, fell);
        if (fell) fallen[nfallen + __popc(changed[c] & ((1u << lane) - 1))] = j;
        nfallen += __popc(changed[c]);
    }
    if (nfallen == 0) return 0;
    __syncwarp();
#pragma unroll
    for (u32 c = 0; c < PT_CHUNKS; ++c) best[c] = l_c[c];
    pt_through_table<PB_ROWS>(p.dist + dbase, k, fallen, nfallen, flab, best);
    // Lower what the table improved; every portal that fell or was lowered offers its label
    // + 1 to the portals it moves to in other tiles.
    volatile u32 *vlab = lab;
    u32 flags = 0;
#pragma unroll
    for (u32 c = 0; c < PT_CHUNKS; ++c) {
        if (c * 32 >= k) break;
        const u32 j = c * 32 + lane;
        if (j >= k) continue;
        u32 l = l_c[c];
        bool offer = (changed[c] >> lane) & 1u;
        if (best[c] < l) {
            atomicMin(&lab[base + j], best[c] << 1);
            l = best[c];
            offer = true;
        }
        if (!offer) continue;
        const u32 e = ((l + 1) << 1) | 1u;
#pragma unroll
        for (u32 d = 0; d < 8; ++d) {
            if (link[c][d] == PB_NONE) continue;
            const u32 g = link[c][d] & ((1u << PB_DIR_SHIFT) - 1);
            // Not awaited: where the label fell below the offer since it was read, the
            // tile runs once for nothing.
            if (vlab[g] >> 1 <= l + 1) continue;
            atomicMin(&lab[g], e);
            flags |= 1u << (link[c][d] >> PB_DIR_SHIFT);
        }
    }
    return __reduce_or_sync(FULL_MASK, flags);
}

// The portal wave of one grid in one block (blockDim.x = PB_THREADS), from the labels the
// goal's round left at the portals, which it lowers in place; dynamic shared memory: the
// control words, a word per portal, the tile states, the ring and the tiles' heads (portal
// counts, first portals, table offsets: ntiles words each), then 2 x PT_MAX words per warp. A tile's state and the pending count work as on the device-wide queue.
extern "C" __global__ void __launch_bounds__(PB_THREADS) lee_portal_block(const PortalBlockArgs p) {
    extern __shared__ u32 smem[];
    u32 *q = smem, *lab = q + PBQ_WORDS, *state = lab + p.total, *ring = state + p.ntiles;
    u32 *head = ring + p.ntiles;
    u32 *fallen = head + 3 * p.ntiles + (threadIdx.x >> 5) * 2 * PT_MAX, *flab = fallen + PT_MAX;
    const u32 lane = threadIdx.x & 31, ntiles = p.ntiles;
    if (threadIdx.x < PBQ_WORDS) q[threadIdx.x] = 0;
    for (u32 i = threadIdx.x; i < p.total; i += blockDim.x) {
        const u32 l = __ldcg(&p.labels[p.pcell[i]]);
        lab[i] = l == UNREACHED ? PB_FAR : (l << 1) | 1u;
    }
    for (u32 t = threadIdx.x; t < ntiles; t += blockDim.x) {
        state[t] = 0;
        ring[t] = PB_EMPTY;
        head[t] = p.pcount[t];
        head[ntiles + t] = p.poff[t];
        head[2 * ntiles + t] = (u32)p.doff[t];
    }
    __syncthreads();
    // The tiles with a reached portal go first: the goal's (or, after a launch stopped at its
    // budget, every tile its wave reached, all of whose labels count as fallen again).
    for (u32 t = threadIdx.x; t < ntiles; t += blockDim.x) {
        const u32 base = head[ntiles + t], end = base + head[t];
        bool reached = false;
        for (u32 i = base; i < end && !reached; ++i) reached = lab[i] != PB_FAR;
        if (reached) {
            state[t] = BWQ_QUEUED;
            pb_push(q, ring, ntiles, t);
        }
    }
    __syncthreads();
    // As bwq_loop: a warp that tells an idle neighbour runs it next itself (the others go on
    // the ring), and runs its tile again when a neighbour queued it meanwhile.
    u32 kept = BWQ_EXIT;
    while (true) {
        u32 t = kept;
        if (t == BWQ_EXIT) {
            t = lane == 0 ? pb_take(q, ring, ntiles, p.visit_limit) : 0u;
            t = __shfl_sync(FULL_MASK, t, 0);
            if (t == BWQ_EXIT) break;
            if (lane == 0) atomicExch(&state[t], BWQ_RUNNING);
        }
        // The labels are claimed after the tile is marked running: an offer the run misses
        // sets QUEUED, and the tile runs again.
        __threadfence_block();
        __syncwarp();
        const u32 flags = pb_run(p, t, head, lab, fallen, flab);
        // The offers land before any neighbour is told of them.
        __threadfence_block();
        __syncwarp();
        u32 end = BWQ_RUNNING;
        if (lane == 0) {
            atomicAdd(&q[PBQ_RUNS], 1u);
            end = atomicCAS(&state[t], BWQ_RUNNING, 0u);
        }
        const u32 nb = bw_neighbour(t, flags, lane, p.ndirs, p.tiles_x, p.tiles_y);
        const u32 told = __ballot_sync(FULL_MASK, nb != UNREACHED);
        const u32 first = told ? __ffs(told) - 1 : 0u;
        bool claimed = false;
        if (nb != UNREACHED) {
            if (lane == first) claimed = atomicCAS(&state[nb], 0u, BWQ_RUNNING) == 0u;
            if (!claimed && atomicOr(&state[nb], BWQ_QUEUED) == 0u) pb_push(q, ring, ntiles, nb);
        }
        const u32 claim = __ballot_sync(FULL_MASK, claimed);
        kept = claim ? __shfl_sync(FULL_MASK, nb, first) : BWQ_EXIT;
        const bool again = __shfl_sync(FULL_MASK, end, 0) != BWQ_RUNNING;
        if (again && kept == BWQ_EXIT) {
            // Queued while it ran: run again, in the same place in the count.
            if (lane == 0) atomicExch(&state[t], BWQ_RUNNING);
            kept = t;
        } else if (lane == 0) {
            if (again) {
                atomicExch(&state[t], BWQ_QUEUED);
                pb_push(q, ring, ntiles, t);
            }
            // Pending - 1 for t after its neighbours' + 1, so the count cannot reach 0
            // between, unless the claimed tile takes its place.
            if (kept == BWQ_EXIT) atomicSub(&q[PBQ_PENDING], 1u);
        }
        __syncwarp();
    }
    __syncthreads();
    for (u32 i = threadIdx.x; i < p.total; i += blockDim.x) {
        const u32 e = lab[i];
        if (e != PB_FAR) p.labels[p.pcell[i]] = e >> 1;
    }
    if (threadIdx.x == 0) {
        p.ctl[BWQ_HEAD] = 0;
        p.ctl[BWQ_PENDING] = q[PBQ_PENDING];
        p.ctl[BWQ_TAIL] = 0;
        p.ctl[BWQ_VISITS] += q[PBQ_RUNS];
    }
}

// ---------------------------------------------------------------------------------------------
// Path: the block stages a DW x DW window of labels and masks in shared memory, placed ahead
// of the current cell towards the goal; all threads find each cell's next cell (the fixed
// neighbour priority), and one thread follows them until a step needs a neighbour outside the
// window; then the window moves. A dependent global load per step would cost a memory latency
// each; this costs one per window. state[STATE_STATUS]: DESCENT_OK, DESCENT_BROKEN (the labels
// have no descent), DESCENT_UNREACHED (start unreached), DESCENT_LONG (longer than `long_from`
// moves: left to the jumps below) or DESCENT_TOO_LONG (the path does not fit `cap` cells);
// state[STATE_LENGTH]: the path's length in moves. path[i]: its i-th cell.
// ---------------------------------------------------------------------------------------------

extern "C" __global__ void lee_descend(const u8 *__restrict__ masks, const u32 *__restrict__ labels,
                                       u32 w, u32 h, u32 ndirs, u64 start, u64 goal, u32 *path,
                                       u32 cap, u32 long_from, u32 *state) {
    __shared__ u32 sl[DW * DW];
    __shared__ u8 sm[DW * DW];
    // Each window cell's next cell on the descent, found by all threads at once, so that the
    // walk itself is one shared load per step.
    __shared__ unsigned short succ[DW * DW];
    __shared__ u64 s_cell;
    __shared__ u32 s_step, s_done;
    const u32 tid = threadIdx.x;
    const u32 len = labels[start];
    const long long gx = (long long)(goal % w), gy = (long long)(goal / w);
    if (tid == 0) {
        s_cell = start;
        s_step = 0;
        const u32 status = len == UNREACHED  ? DESCENT_UNREACHED
                           : len > long_from ? DESCENT_LONG
                           : len >= cap      ? DESCENT_TOO_LONG
                                             : DESCENT_OK;
        s_done = status != DESCENT_OK;
        state[STATE_STATUS] = status;
        state[STATE_LENGTH] = len;
        if (status == DESCENT_OK) path[0] = (u32)start;
    }
    __syncthreads();
    while (!s_done) {
        const u64 c = s_cell;
        const long long cx = (long long)(c % w), cy = (long long)(c / w);
        const long long ox = window_origin(cx, gx, w), oy = window_origin(cy, gy, h);
        for (u32 i = tid; i < DW * DW; i += blockDim.x) {
            const long long x = ox + i % DW, y = oy + i / DW;
            const bool in = x < w && y < h;
            sl[i] = in ? labels[(u64)y * w + x] : UNREACHED;
            sm[i] = in ? masks[(u64)y * w + x] : 0;
        }
        __syncthreads();
        for (u32 i = tid; i < DW * DW; i += blockDim.x) {
            const u32 l = sl[i], m = sm[i];
            const int lx = (int)(i % DW), ly = (int)(i / DW);
            u32 next = SUCC_GOAL;
            if (l != 0 && l != UNREACHED) {
                next = SUCC_NONE;
                for (u32 k = 0; k < ndirs; ++k) {
                    if (!(m & (1u << k))) continue;
                    const int nx = lx + DX[k], ny = ly + DY[k];
                    // Off-grid neighbours are never allowed, so at the grid's edge a cell on
                    // the window's border still has its successor here.
                    if (nx < 0 || ny < 0 || nx >= DW || ny >= DW) {
                        next = SUCC_OUT;
                        break;
                    }
                    if (sl[ny * DW + nx] == l - 1) {
                        next = (u32)(ny * DW + nx);
                        break;
                    }
                }
            }
            succ[i] = (unsigned short)next;
        }
        __syncthreads();
        if (tid == 0) {
            u32 at = (u32)((cy - oy) * DW + (cx - ox)), step = s_step;
            bool broken = false;
            while (step < len) {
                const u32 next = succ[at];
                if (next == SUCC_OUT) break; // move the window
                if (next >= SUCC_GOAL) {
                    broken = true;
                    break;
                }
                at = next;
                ++step;
                path[step] = (u32)((u64)(oy + at / DW) * w + (u64)(ox + at % DW));
            }
            s_step = step;
            s_cell = (u64)(oy + at / DW) * w + (u64)(ox + at % DW);
            if (broken) state[STATE_STATUS] = DESCENT_BROKEN;
            s_done = broken || step >= len;
        }
        __syncthreads();
    }
}

// ---------------------------------------------------------------------------------------------
// Long paths (a maze's path is millions of moves, and the window descent above walks them one
// dependent step at a time): every cell's next cell (lee_next, the same neighbour priority),
// that map squared K times (lee_jump: 2^K moves at once), one thread hopping from the start in
// jumps of 2^K to place a checkpoint every 2^K path cells (lee_checkpoints), then one thread
// per checkpoint walking its 2^K cells (lee_walk_segments). With 2^K about sqrt(length), both
// sequential chains are about sqrt(length) loads long instead of length.
// NEXT_NONE: no next cell (unreached, or labels that have no descent); the goal is its own.
// ---------------------------------------------------------------------------------------------

#define NEXT_NONE 0xffffffffu

extern "C" __global__ void lee_next(const u8 *__restrict__ masks, const u32 *__restrict__ labels,
                                    u32 w, u32 h, u32 ndirs, u32 *next) {
    const u64 n = (u64)w * h;
    GRID_STRIDE(i, n) {
        const u32 l = labels[i];
        u32 to = NEXT_NONE;
        if (l == 0) {
            to = (u32)i;
        } else if (l != UNREACHED) {
            const u32 m = masks[i];
            const long long x = (long long)(i % w), y = (long long)(i / w);
            for (u32 k = 0; k < ndirs; ++k) {
                if (!(m & (1u << k))) continue;
                // Masks never allow a move off the grid, so the neighbour is inside it.
                const u64 j = (u64)(y + DY[k]) * w + (u64)(x + DX[k]);
                if (labels[j] == l - 1) {
                    to = (u32)j;
                    break;
                }
            }
        }
        next[i] = to;
    }
}

extern "C" __global__ void lee_jump(const u32 *__restrict__ from, u32 *to, u64 n) {
    GRID_STRIDE(i, n) {
        const u32 a = from[i];
        to[i] = a == NEXT_NONE ? NEXT_NONE : from[a];
    }
}

// One thread: path[i * stride] for every checkpoint i, from `start` by `jump` (next^stride).
extern "C" __global__ void lee_checkpoints(const u32 *__restrict__ jump, u64 start, u32 len,
                                           u32 stride, u32 *path, u32 *state) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    state[STATE_STATUS] = DESCENT_OK;
    u32 c = (u32)start;
    for (u32 s = 0; s <= len; s += stride) {
        if (c == NEXT_NONE) {
            state[STATE_STATUS] = DESCENT_BROKEN;
            return;
        }
        path[s] = c;
        if (len - s < stride) break;
        c = jump[c];
    }
}

// Thread i: the path cells after checkpoint i, up to the next checkpoint or the path's end.
extern "C" __global__ void lee_walk_segments(const u32 *__restrict__ next, u32 len, u32 stride,
                                             u32 *path, u32 *state) {
    const u64 first = ((u64)blockIdx.x * blockDim.x + threadIdx.x) * stride;
    // A broken chain left the checkpoints unwritten.
    if (first > len || state[STATE_STATUS] != DESCENT_OK) return;
    u32 c = path[first];
    const u64 last = min((u64)len, first + stride - 1);
    for (u64 s = first + 1; s <= last; ++s) {
        c = c == NEXT_NONE ? NEXT_NONE : next[c];
        if (c == NEXT_NONE) {
            state[STATE_STATUS] = DESCENT_BROKEN;
            return;
        }
        path[s] = c;
    }
}

// ---------------------------------------------------------------------------------------------
// Long paths over tiles. The path's cell i has label len - i, so where a cell lies on the path
// follows from its label; only which cells are on it needs the walk. The grid is cut into
// DT x DT tiles (frames at multiples of DT). lee_tile_exits: one block a tile finds every
// cell's successor (the neighbour priority of lee_next) from the tile's labels and a one-cell
// halo in shared memory, and follows them from each of the tile's DT_BORDER border cells (a
// path enters a tile by no other) to the border cell by which that path enters the next tile:
// the node of a graph 252/4096 the grid's size. The goal is one more node, its own successor.
// That graph's chain from the start is cut as the cells' chain is above (lee_jump over nodes,
// then lee_hop_checkpoints, lee_hop_segments: the tile entries in order), and lee_tile_fill
// walks each entry's tile in shared memory, a block a visit, writing each cell at its label's
// index. The grid is read once, not once per doubling, and the dependent loads are hops
// between tiles, not moves.
// state[STATE_HOP_FIRST]: the node after the start; state[STATE_CHECKPOINTS]: how many;
// state[STATE_HOPS]: the tile visits (entries, the start's first).
// ---------------------------------------------------------------------------------------------

#define DT_HALO (DT + 2)
#define DT_BORDER (4 * DT - 4)
// tile_successors' answer for a move into another tile: DT_OUT | its direction (below
// SUCC_GOAL and SUCC_NONE, above every local index).
#define DT_OUT 0xfff0u
#if !defined(DT) || !defined(DT_THREADS) || !defined(STATE_HOPS)
#error "lee.cu is compiled with the constants src/lee/gpu.rs defines"
#endif
#if DT * DT > DT_OUT
#error "a tile's local indices lie below DT_OUT"
#endif

// Items a thread stages: every load is issued before the first store, so a block waits out one
// memory round trip per stage, not one per item.
#define DT_LABEL_ITEMS ((DT_HALO * DT_HALO + DT_THREADS - 1) / DT_THREADS)
#define DT_MASK_ITEMS (DT * DT / DT_THREADS)
#if DT * DT % DT_THREADS != 0 || DT_MASK_ITEMS > 32
#error "a tile's cells are DT_THREADS x (at most 32) items"
#endif

// The labels of the tile at (ox, oy) and a one-cell halo (UNREACHED off the grid), and the
// tile's masks (0 off the grid); blockDim.x = DT_THREADS.
__device__ void tile_stage(const u32 *__restrict__ labels, const u8 *__restrict__ masks, u32 w,
                           u32 h, u32 ox, u32 oy, u32 *hl, u8 *hm) {
    u32 l[DT_LABEL_ITEMS];
    u8 m[DT_MASK_ITEMS];
#pragma unroll
    for (u32 r = 0; r < DT_LABEL_ITEMS; ++r) {
        const u32 i = threadIdx.x + r * DT_THREADS;
        const long long x = (long long)ox + (long long)(i % DT_HALO) - 1;
        const long long y = (long long)oy + (long long)(i / DT_HALO) - 1;
        l[r] = i < DT_HALO * DT_HALO && x >= 0 && y >= 0 && x < w && y < h
                   ? labels[(u64)y * w + x]
                   : UNREACHED;
    }
#pragma unroll
    for (u32 r = 0; r < DT_MASK_ITEMS; ++r) {
        const u32 i = threadIdx.x + r * DT_THREADS;
        const u32 x = ox + i % DT, y = oy + i / DT;
        m[r] = i < DT * DT && x < w && y < h ? masks[(u64)y * w + x] : 0;
    }
#pragma unroll
    for (u32 r = 0; r < DT_LABEL_ITEMS; ++r) {
        const u32 i = threadIdx.x + r * DT_THREADS;
        if (i < DT_HALO * DT_HALO) hl[i] = l[r];
    }
#pragma unroll
    for (u32 r = 0; r < DT_MASK_ITEMS; ++r) {
        const u32 i = threadIdx.x + r * DT_THREADS;
        if (i < DT * DT) hm[i] = m[r];
    }
}

// Every cell's successor in the staged tile (the neighbour priority of lee_next): a local index,
// DT_OUT | the direction of a move into another tile, SUCC_GOAL, or SUCC_NONE (unreached, off
// the grid, no allowed neighbour one label lower). A cell's neighbours are read at once and
// the first in the priority taken, so its answer waits for one round trip to shared memory.
__device__ void tile_successors(const u32 *hl, const u8 *hm, u32 w, u32 h, u32 ndirs, u32 ox,
                                u32 oy, unsigned short *succ) {
    const u32 allowed = (1u << ndirs) - 1;
#pragma unroll
    for (u32 r = 0; r < DT_MASK_ITEMS; ++r) {
        const u32 i = threadIdx.x + r * DT_THREADS;
        const int lx = (int)(i % DT), ly = (int)(i / DT);
        const u32 c = (ly + 1) * DT_HALO + lx + 1;
        const u32 l = hl[c];
        u32 lower = 0;
#pragma unroll
        for (u32 k = 0; k < 8; ++k)
            if (k < ndirs) lower |= (u32)(hl[(int)c + DY[k] * DT_HALO + DX[k]] == l - 1) << k;
        // Masks never allow a move off the grid, so an allowed neighbour is in the halo.
        lower &= hm[i] & allowed;
        unsigned short s = SUCC_NONE;
        if (ox + lx >= w || oy + ly >= h || l == UNREACHED) {
            s = SUCC_NONE;
        } else if (l == 0) {
            s = SUCC_GOAL;
        } else if (lower) {
            const u32 k = __ffs(lower) - 1;
            const int nx = lx + DX[k], ny = ly + DY[k];
            s = nx < 0 || ny < 0 || nx >= DT || ny >= DT ? (unsigned short)(DT_OUT | k)
                                                         : (unsigned short)(ny * DT + nx);
        }
        succ[i] = s;
    }
}

// Border slot of frame cell (lx, ly): the top row, the bottom row, then the left and right
// columns without their corners.
__device__ __forceinline__ u32 border_slot(u32 lx, u32 ly) {
    return ly == 0        ? lx
           : ly == DT - 1 ? DT + lx
           : lx == 0      ? 2 * DT + ly - 1
                          : 3 * DT - 2 + ly - 1;
}

__device__ __forceinline__ void slot_cell(u32 b, u32 &lx, u32 &ly) {
    if (b < DT) {
        lx = b; ly = 0;
    } else if (b < 2 * DT) {
        lx = b - DT; ly = DT - 1;
    } else if (b < 3 * DT - 2) {
        lx = 0; ly = b - 2 * DT + 1;
    } else {
        lx = DT - 1; ly = b - (3 * DT - 2) + 1;
    }
}

__device__ __forceinline__ u32 cell_node(u64 x, u64 y, u32 tiles_x) {
    return (u32)(((y / DT) * tiles_x + x / DT) * DT_BORDER + border_slot(x % DT, y % DT));
}

__device__ __forceinline__ u64 node_cell(u32 node, u32 w, u32 tiles_x) {
    const u32 t = node / DT_BORDER;
    u32 lx, ly;
    slot_cell(node % DT_BORDER, lx, ly);
    return ((u64)(t / tiles_x) * DT + ly) * w + (u64)(t % tiles_x) * DT + lx;
}

// Grid (tiles_x, tiles_y), DT_THREADS threads: exits[node] for every border cell of the tile
// (NEXT_NONE where no path leaves it), exits[goal node] = the goal node, and the start's. Each
// border cell (and the start) follows its successors to where its path leaves the tile: a
// tile's chains are tens of moves on open ground, and no cell but these needs an answer.
extern "C" __global__ void __launch_bounds__(DT_THREADS)
    lee_tile_exits(const u8 *__restrict__ masks, const u32 *__restrict__ labels, u32 w, u32 h,
                   u32 ndirs, u64 start, u32 *exits, u32 *state) {
    __shared__ u32 hl[DT_HALO * DT_HALO];
    __shared__ unsigned short succ[DT * DT];
    __shared__ u8 hm[DT * DT];
    const u32 tiles_x = gridDim.x, tile = blockIdx.y * tiles_x + blockIdx.x;
    const u32 goal_node = tiles_x * gridDim.y * DT_BORDER;
    const u32 ox = blockIdx.x * DT, oy = blockIdx.y * DT;
    tile_stage(labels, masks, w, h, ox, oy, hl, hm);
    __syncthreads();
    tile_successors(hl, hm, w, h, ndirs, ox, oy, succ);
    __syncthreads();
    const u64 sx = start % w, sy = start / w;
    const bool has_start = sx / DT == blockIdx.x && sy / DT == blockIdx.y;
    for (u32 b = threadIdx.x; b <= DT_BORDER; b += blockDim.x) {
        u32 at;
        if (b < DT_BORDER) {
            u32 lx, ly;
            slot_cell(b, lx, ly);
            at = ly * DT + lx;
        } else if (has_start) {
            at = (u32)((sy % DT) * DT + sx % DT);
        } else {
            continue;
        }
        // Labels fall along successors, so the chain ends.
        u32 s = succ[at];
        while (s < DT * DT) {
            at = s;
            s = succ[at];
        }
        const u32 v = s == SUCC_GOAL   ? goal_node
                      : s == SUCC_NONE ? NEXT_NONE
                                       : cell_node(ox + at % DT + DX[s & 7u], oy + at / DT + DY[s & 7u], tiles_x);
        if (b < DT_BORDER) {
            exits[tile * DT_BORDER + b] = v;
        } else {
            state[STATE_HOP_FIRST] = v;
        }
    }
    if (tile == 0 && threadIdx.x == 0) exits[goal_node] = goal_node;
}

// One thread: the node chain from the start's first node hopping `jump` (exits^stride), at most
// `cap` checkpoints; lowers nothing else, so the segments find the visits' count.
extern "C" __global__ void lee_hop_checkpoints(const u32 *__restrict__ jump, u32 goal_node, u32 cap,
                                               u32 *checkpoints, u32 *state) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    state[STATE_STATUS] = DESCENT_OK;
    state[STATE_HOPS] = UNREACHED;
    u32 x = state[STATE_HOP_FIRST], i = 0;
    while (true) {
        // Labels fall along every hop, so a chain ends; only a broken field breaks it.
        if (x == NEXT_NONE || i == cap) {
            state[STATE_STATUS] = DESCENT_BROKEN;
            return;
        }
        checkpoints[i++] = x;
        if (x == goal_node) break;
        x = jump[x];
    }
    state[STATE_CHECKPOINTS] = i;
}

// Thread i: the tile entries after checkpoint i, up to the next checkpoint or the goal node;
// hops[0] is the start. The first thread to meet the goal node sets the count.
extern "C" __global__ void lee_hop_segments(const u32 *__restrict__ exits,
                                            const u32 *__restrict__ checkpoints, u32 stride,
                                            u32 goal_node, u32 w, u32 tiles_x, u64 start,
                                            u32 *hops, u32 *state) {
    const u64 i = grid_first();
    if (state[STATE_STATUS] != DESCENT_OK || i >= state[STATE_CHECKPOINTS]) return;
    if (i == 0) hops[0] = (u32)start;
    u32 x = checkpoints[i];
    const u64 first = 1 + i * stride;
    for (u32 j = 0; j < stride; ++j) {
        if (x == goal_node) {
            atomicMin(&state[STATE_HOPS], (u32)(first + j));
            return;
        }
        if (x == NEXT_NONE) {
            state[STATE_STATUS] = DESCENT_BROKEN;
            return;
        }
        hops[first + j] = (u32)node_cell(x, w, tiles_x);
        x = exits[x];
    }
}

// A block a tile visit (grid-stride over the count): the visit's cells from its entry to where
// the path leaves the tile (or ends), each at path[len - its label].
extern "C" __global__ void __launch_bounds__(DT_THREADS)
    lee_tile_fill(const u8 *__restrict__ masks, const u32 *__restrict__ labels, u32 w, u32 h,
                  u32 ndirs, const u32 *__restrict__ hops, u32 len, u32 *path, u32 *state) {
    __shared__ u32 hl[DT_HALO * DT_HALO];
    __shared__ unsigned short succ[DT * DT];
    __shared__ u8 hm[DT * DT];
    __shared__ u32 s_count;
    // Read once for the block: another block may mark the descent broken meanwhile.
    if (threadIdx.x == 0) s_count = state[STATE_STATUS] == DESCENT_OK ? state[STATE_HOPS] : 0;
    __syncthreads();
    const u32 count = s_count;
    for (u32 q = blockIdx.x; q < count; q += gridDim.x) {
        const u32 c = hops[q];
        const u32 cx = c % w, cy = c / w, ox = cx / DT * DT, oy = cy / DT * DT;
        tile_stage(labels, masks, w, h, ox, oy, hl, hm);
        __syncthreads();
        tile_successors(hl, hm, w, h, ndirs, ox, oy, succ);
        __syncthreads();
        if (threadIdx.x == 0) {
            u32 at = (cy - oy) * DT + (cx - ox);
            u32 l = hl[(at / DT + 1) * DT_HALO + at % DT + 1];
            while (true) {
                if (l > len) {
                    state[STATE_STATUS] = DESCENT_BROKEN;
                    break;
                }
                path[len - l] = (u32)((u64)(oy + at / DT) * w + ox + at % DT);
                const u32 next = succ[at];
                if (next >= DT * DT) {
                    if (next == SUCC_NONE) state[STATE_STATUS] = DESCENT_BROKEN;
                    break; // left the tile, or the goal
                }
                at = next;
                --l;
            }
        }
        __syncthreads();
    }
}
