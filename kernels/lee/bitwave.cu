// The Lee module's bitwave part: compiled after kernels/lee/wave.cu (whose header says how the
// module is put together), with its definitions in scope.
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
// bar[0]: arrivals, bar[1]: barrier generation (both 0 at the first launch of a query); the
// barrier is common.cuh's grid_barrier.

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
    const u64 t0 = global_ns();
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
            if (nb != UNREACHED) queue_tile(nb, lists, counts, queued, ntiles, round);
        }
        // The last block to arrive decides, for all, whether the launch has run its time.
        grid_barrier_then(bar, [&] { bar[STATE_STOP] = global_ns() - t0 > LEE_LAUNCH_NS; });
        const u32 next = __ldcg(&counts[(round + 1) % 3]);
        if (next == 0) {
            ++round;
            break;
        }
        if (__ldcg(&bar[STATE_STOP])) {
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
// A launch past LEE_LAUNCH_NS since `t0` (its start) takes no more: what is queued stays for
// the next launch, as at visit_limit.
__device__ __forceinline__ u32 bwq_take(const BitwaveQueueArgs &a, u32 ntiles, u64 t0) {
    volatile u32 *ctl = a.ctl;
    if ((int)(ctl[BWQ_HEAD] - a.visit_limit) >= 0) return BWQ_EXIT;
    if (global_ns() - t0 > LEE_LAUNCH_NS) return BWQ_EXIT;
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
    const u64 t0 = global_ns();
    u32 visits = 0, chain = 0, kept = BWQ_EXIT;
    decltype(head(0u)) h;
    while (true) {
        u32 t = kept;
        if (t == BWQ_EXIT) {
            chain = 0;
            t = lane == 0 ? bwq_take(a, ntiles, t0) : 0u;
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

