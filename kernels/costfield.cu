// Least-cost fields on a grid with per-cell step costs (src/lee/costmap/gpu.rs drives these;
// src/lee/costmap/cpu.rs's Dijkstra is the reference they equal):
//   cf_init    every cost UNREACHED, the goal's 0; the goal's tile and its neighbours on
//              round 1's list
//   cf_rounds  rounds of tiles behind a grid barrier, in one launch (all blocks resident): in
//              a round each block takes tiles from the round's list, loads a 32 x 32 tile and
//              its halo into shared memory, relaxes cost = min over allowed neighbours n of
//              cost(n) + step(into n) (passes in 32-bit offsets, each warp stepping its
//              patch of the tile between the block's barriers; where those do not settle
//              it, min-plus scans along the tile's lines and 64-bit passes) until the tile
//              is locally stable, writes back what improved and queues for the next round
//              each neighbouring tile with a cell that an improved cell now lowers. Costs
//              only decrease and each is the cost of a real path, so a round that queues
//              nothing leaves the unique fixed point: Dijkstra's costs.
//   cf_descend the path from the start down the field, in one block (common.cuh's windows,
//              CF_DW wide), so that only the path leaves the device
// Moves in the order of src/lee/grid.rs's DIRECTIONS; a diagonal step costs enter * 141 / 100.

// Set by the host (src/lee/costmap/gpu.rs, NVRTC -D): the descent's state slots and statuses,
// and bar's CF_BAR_WORDS words: arrivals and generation (the barrier), then CF_NEXT_ROUND and
// CF_DECISION (CF_GO_ON, CF_SETTLED or CF_START_FINAL); CF_NO_START: a field with no start;
// CF_DESCEND_THREADS: cf_descend's block, a compile-time stride for its loops over a window (so
// that a thread's loads of a window are in flight together); CF_DW: its window's width.
#if !defined(CF_STATUS) || !defined(CF_PENDING) || !defined(CF_DECISION) || !defined(CF_NO_START) || \
    !defined(CF_FRONT_WORDS) || !defined(CF_DESCEND_THREADS) || !defined(CF_SLOTS) || \
    !defined(CF_DW) || !defined(CF_PW) || !defined(CF_INNER)
#error "costfield.cu is compiled with the constants src/lee/costmap/gpu.rs defines"
#endif

#define TILE 32 /* a warp's width: the lanes are a tile's columns or rows */

#define UNREACHED_COST 0xffffffffffffffffull

__constant__ int DX[8] = {-1, 0, 1, 0, -1, 1, 1, -1};
__constant__ int DY[8] = {0, -1, 0, 1, -1, -1, 1, 1};

// In 32 bits: the host uploads no `enter` above u32::MAX / 141, where enter * 141 still fits
// (DeviceCosts::upload, src/lee/costmap/gpu.rs; CostParams' bounds keep it below 2^19). On
// the H200 the 64-bit division made depot x10's plans 5 % slower.
__device__ __forceinline__ u64 step_cost(u32 k, u32 enter) {
    return k < 4 ? (u64)enter : (u64)(enter * 141u / 100u);
}

// lists: three of ntiles entries (round r reads list r % 3), counts their lengths, queued the
// last round each tile was queued for, bar the barrier and state words (CF_BAR_WORDS), front
// per round (r % 3) the least cost a border cell that queued a tile took in it, and at 3 + r % 3
// the least such cost plus the cell's bound to the start (cf_bound). Round 1
// runs the goal's tile and its neighbours: the goal's cost is set here, not improved by a tile,
// so no tile would queue a neighbour for a goal on its border.
extern "C" __global__ void cf_init(u64 *cost, u64 n, u64 goal, u32 *lists, u32 *counts,
                                   u32 *queued, u32 tiles_x, u32 tiles_y, u32 goal_tile,
                                   u32 *bar, u64 *front) {
    const u32 ntiles = tiles_x * tiles_y;
    const int gx = (int)(goal_tile % tiles_x), gy = (int)(goal_tile / tiles_x);
    auto near_goal = [&](u32 t) {
        return abs((int)(t % tiles_x) - gx) <= 1 && abs((int)(t / tiles_x) - gy) <= 1;
    };
    GRID_STRIDE(i, n) cost[i] = i == goal ? 0ull : UNREACHED_COST;
    GRID_STRIDE(t, ntiles) queued[t] = near_goal((u32)t) ? 1u : 0u;
    if (grid_first() == 0) {
        u32 k = 0;
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
                const int x = gx + dx, y = gy + dy;
                if (x >= 0 && y >= 0 && x < (int)tiles_x && y < (int)tiles_y)
                    lists[(u64)1 * ntiles + k++] = (u32)y * tiles_x + (u32)x;
            }
        counts[0] = 0;
        counts[1] = k;
        counts[2] = 0;
        for (int j = 0; j < CF_BAR_WORDS; ++j) bar[j] = 0;
        bar[CF_NEXT_ROUND] = 1;
        for (int j = 0; j < CF_FRONT_WORDS; ++j) front[j] = UNREACHED_COST;
    }
}

// The neighbouring tile that holds halo cell (hx, hy) of a tile (one coordinate -1 or TILE), as
// a bit k: the tile in direction k (DX[k], DY[k]).
__device__ __forceinline__ u32 cf_side(int hx, int hy) {
    const bool w = hx < 0, e = hx >= TILE, n = hy < 0, s = hy >= TILE;
    if (n) return w ? 16u : e ? 32u : 2u;
    if (s) return w ? 128u : e ? 64u : 8u;
    return w ? 1u : 4u;
}

#define SW (TILE + 3) /* shared row stride of the tile and its halo */

__device__ __forceinline__ u64 min_u64(u64 a, u64 b) { return a < b ? a : b; }

// The scans work on 32-bit costs above the tile's base (the least cost in the tile and its
// halo when it was loaded, which no cost of the tile goes below): an offset or a sum of steps
// of SCAN_BIG or more counts as unreached there (the pass after them still relaxes such a
// cell), and two of them add without overflow.
#define SCAN_BIG (1u << 30)

// One line of cells per warp, lane i holding offset x of cell p_i, where p_{i+1} = p_i + d:
// lowers x to the least offset over the line's cells before it (each cell taking the step from
// the one before, `from_prev`: that step's cost, SCAN_BIG where it is not allowed or p_{i-1}
// is not in the tile), then over the cells after it (`from_next`). A min-plus scan each way,
// five shuffles deep (Kogge-Stone): `acc` is the cost of the steps over the window the lane's
// value covers, so that x + acc is a path's cost; a sum clamped to SCAN_BIG is only ever
// dearer than the path, so a result below SCAN_BIG is a real path's.
__device__ __forceinline__ u32 cf_scan_line(u32 x, u32 from_prev, u32 from_next, u32 lane) {
    u32 acc = from_prev;
    for (u32 d = 1; d < TILE; d <<= 1) {
        const u32 xu = __shfl_up_sync(0xffffffffu, x, d);
        const u32 au = __shfl_up_sync(0xffffffffu, acc, d);
        if (lane >= d) {
            x = min(x, xu + acc);
            acc = min(acc + au, SCAN_BIG);
        }
    }
    acc = from_next;
    for (u32 d = 1; d < TILE; d <<= 1) {
        const u32 xd = __shfl_down_sync(0xffffffffu, x, d);
        const u32 ad = __shfl_down_sync(0xffffffffu, acc, d);
        if (lane + d < TILE) {
            x = min(x, xd + acc);
            acc = min(acc + ad, SCAN_BIG);
        }
    }
    return x;
}

// The tile's lines of one kind, a warp each: rows (d = (1, 0)), columns (0, 1), diagonals
// (1, 1) and anti-diagonals (1, -1), the diagonal kinds wrapped so that warp w's lane i holds
// (i, (i + w) mod TILE) or (i, (w - i) mod TILE): a wrap is a tile's edge, where a line's
// neighbour is not in the tile. KPREV / KNEXT: the move from p_i to p_{i-1} / p_{i+1}, in
// DIRECTIONS' order.
__constant__ int LDX[4] = {1, 0, 1, 1};
__constant__ int LDY[4] = {0, 1, 1, -1};
__constant__ u32 KPREV[4] = {0, 1, 4, 7};
__constant__ u32 KNEXT[4] = {2, 3, 6, 5};

// Which lines need a scan: bit w of dirty[kind] is warp w's line of that kind, set when a cell
// of it was lowered after the line was last scanned (a scanned line is at its own fixed point).
// Called by every lane of a warp, `lowered` its cell (cx, cy), the warp's lanes a line of
// `kind` (4: a row, as the pass's warps are); the lines of `kind` itself are not marked (the
// scan that lowered the cell was theirs), nor the diagonal kinds with 4 moves.
__device__ __forceinline__ void cf_mark(u32 *dirty, bool lowered, int cx, int cy, u32 kind,
                                        u32 kinds) {
    const u32 all = 0xffffffffu;
    const u32 b = __ballot_sync(all, lowered);
    if (b == 0) return;
    const u32 w = threadIdx.x / TILE;
    u32 bits[4];
    if (kind == 1) {
        // A column (w, lane): the lanes are rows; (y - w) and (w + y) rotate them.
        bits[0] = b;
        bits[1] = 0;
        bits[2] = __funnelshift_r(b, b, w);
        bits[3] = __funnelshift_l(b, b, w);
    } else if (kind == 2 || kind == 3) {
        bits[0] = __reduce_or_sync(all, lowered ? 1u << cy : 0u);
        bits[1] = b;
        bits[2] = __reduce_or_sync(all, lowered ? 1u << ((cy - cx) & (TILE - 1)) : 0u);
        bits[3] = __reduce_or_sync(all, lowered ? 1u << ((cx + cy) & (TILE - 1)) : 0u);
    } else {
        // A row (lane, w): the lanes are columns; (w - x) and (x + w) rotate them.
        const u32 r = __brev(b);
        bits[0] = 1u << w;
        bits[1] = b;
        bits[2] = __funnelshift_l(r, r, w + 1u);
        bits[3] = __funnelshift_l(b, b, w);
    }
    if (threadIdx.x % TILE == 0)
        for (u32 k = 0; k < kinds; ++k)
            if (k != kind) atomicOr(&dirty[k], bits[k]);
}

// The cell (cx, cy) that lane `lane` of warp w holds in a line of KIND.
template <u32 KIND> __device__ __forceinline__ int line_x(int w, int lane) {
    return KIND == 1 ? w : lane;
}
template <u32 KIND> __device__ __forceinline__ int line_y(int w, int lane) {
    return KIND == 0   ? w
           : KIND == 1 ? lane
           : KIND == 2 ? (lane + w) % TILE
                       : (w - lane + TILE) % TILE;
}

// The steps along a tile's lines, fixed while it relaxes (its masks and step costs are): for
// the cell thread t holds in a line of `kind`, lines[kind][t].x is the step from the cell
// before it (p_{i-1}, see cf_scan_line) and .y from the cell after, SCAN_BIG where that move
// is not allowed or leaves the tile. Taken once per tile, not at every scan.
template <u32 KIND>
__device__ __forceinline__ uint2 cf_line_steps(const u32 *se, const u8 *sm) {
    const int lane = (int)(threadIdx.x % TILE), w = (int)(threadIdx.x / TILE);
    const int cx = line_x<KIND>(w, lane), cy = line_y<KIND>(w, lane);
    const int dx = LDX[KIND], dy = LDY[KIND];
    const int ci = (cy + 1) * SW + cx + 1;
    const u32 m = sm[ci];
    const int px = cx - dx, py = cy - dy, nx = cx + dx, ny = cy + dy;
    const bool prev_in = px >= 0 && py >= 0 && px < TILE && py < TILE;
    const bool next_in = nx >= 0 && ny >= 0 && nx < TILE && ny < TILE;
    const u32 kp = KPREV[KIND], kn = KNEXT[KIND];
    const u64 from_prev = prev_in && (m >> kp) & 1u ? step_cost(kp, se[ci - dy * SW - dx])
                                                    : UNREACHED_COST;
    const u64 from_next = next_in && (m >> kn) & 1u ? step_cost(kn, se[ci + dy * SW + dx])
                                                    : UNREACHED_COST;
    return make_uint2((u32)min_u64(from_prev, SCAN_BIG), (u32)min_u64(from_next, SCAN_BIG));
}

// Scans warp w's line of KIND, if it is marked dirty.
template <u32 KIND>
__device__ __forceinline__ void cf_scan_kind(u32 kinds, u64 *sc, const uint2 *lines, u32 *dirty,
                                             u64 base) {
    const int lane = (int)(threadIdx.x % TILE), w = (int)(threadIdx.x / TILE);
    if (!((dirty[KIND] >> w) & 1u)) return;
    if (lane == 0) atomicAnd(&dirty[KIND], ~(1u << w));
    const int cx = line_x<KIND>(w, lane), cy = line_y<KIND>(w, lane);
    const int ci = (cy + 1) * SW + cx + 1;
    const uint2 steps = lines[KIND * TILE * TILE + threadIdx.x];
    const u64 v = sc[ci];
    const u32 x = v == UNREACHED_COST || v - base >= SCAN_BIG ? SCAN_BIG : (u32)(v - base);
    const u32 lowest = cf_scan_line(x, steps.x, steps.y, (u32)lane);
    const bool lowered = lowest < x;
    if (lowered) sc[ci] = base + lowest;
    cf_mark(dirty, lowered, cx, cy, KIND, kinds);
}

// A lower bound on the cost of any path between cells (x, y) and (sx, sy): the octile (8 moves)
// or Manhattan (4) distance in the map's cheapest straight and diagonal steps
// (src/lee/costmap/search.rs, Heuristic::between).
__device__ __forceinline__ u64 cf_bound(long long x, long long y, u64 start, u32 w, u32 ndirs,
                                        u64 straight, u64 diagonal) {
    const long long sx = (long long)(start % w), sy = (long long)(start / w);
    const u64 dx = (u64)(x > sx ? x - sx : sx - x), dy = (u64)(y > sy ? y - sy : sy - y);
    if (ndirs == 4) return (dx + dy) * straight;
    const u64 lo = dx < dy ? dx : dy, hi = dx < dy ? dy : dx;
    return lo * diagonal + (hi - lo) * straight;
}

// cf_passes' passes at most (block barriers, each up to CF_INNER steps of a warp's patch): a
// cap chosen when a pass was one step (on the H200, docs/bench-history 52: 64 and 128 alike on
// nav2's maps, 32 slower).
#define CF_PASSES 64

// Passes over the tile in 32-bit offsets above its base (as the scans take them), a thread per
// cell, each cell's steps into its allowed neighbours held in registers, until a pass lowers
// nothing or CF_PASSES have run; then each lowered cell is written back to sc. A step lowers a
// cell to its least neighbour's offset plus the step into it, in place (a neighbour read
// mid-step is an older or a newer offset, both real paths' costs). A warp holds a CF_PW x
// (32 / CF_PW) patch and steps it up to CF_INNER times between two of the block's barriers
// while it still lowers: a wave crosses a patch inside one pass, and the tile in a few passes
// where a warp per row and one step a pass took about 32 (docs/bench-history 54: 8 x 4 patches
// of up to 8 steps made a tb3_sandbox plan about 14 % faster; 16 x 2 and 16 steps were slower).
// Returns (the same in every thread) whether the tile is at its local fixed point: the passes
// stopped on a pass that lowered nothing, and no cost was out of the offsets' reach (a loaded
// cost SCAN_BIG or more above the base, or a cell left unreached here whose neighbour's offset
// plus the step reaches that far), where every edge's test in 32 bits is the test in 64.
// Otherwise (a maze's long paths inside a tile, or the dearest steps) cf_tile's passes and
// sweeps go on from here. `so`: shared room for the tile's and its halo's offsets (cf_tile's
// line tables, taken only after this).
__device__ __forceinline__ bool cf_passes(u64 *sc, const u32 *se, const u8 *sm, u32 ndirs,
                                          u64 tile_base, u32 *so) {
    // The passes' own cells: warp w holds a CF_PW x (32 / CF_PW) patch of the tile, lane i its
    // cell (i % CF_PW, i / CF_PW), in offsets of stride PS: a patch's rows fall in disjoint banks.
    constexpr int PH = TILE / CF_PW, PS = CF_PW >= TILE ? SW : TILE + CF_PW;
    constexpr int NOFF[8] = {-1, -PS, 1, PS, -PS - 1, -PS + 1, PS + 1, PS - 1};
    constexpr int SOFF[8] = {-1, -SW, 1, SW, -SW - 1, -SW + 1, SW + 1, SW - 1};
    const int lane = (int)(threadIdx.x % TILE), w = (int)(threadIdx.x / TILE);
    const int px = (w % (TILE / CF_PW)) * CF_PW + lane % CF_PW,
              py = (w / (TILE / CF_PW)) * PH + lane / CF_PW;
    const int si = (py + 1) * SW + px + 1, pi = (py + 1) * PS + px + 1;
    bool far = false;
    for (int i = threadIdx.x; i < (TILE + 2) * (TILE + 2); i += TILE * TILE) {
        const int lx = i % (TILE + 2), ly = i / (TILE + 2);
        const u64 c = sc[ly * SW + lx];
        const bool big = c != UNREACHED_COST && c - tile_base >= SCAN_BIG;
        far |= big;
        so[ly * PS + lx] = c == UNREACHED_COST || big ? SCAN_BIG : (u32)(c - tile_base);
    }
    const u32 m = sm[si];
    u32 st[8];
#pragma unroll
    for (int k = 0; k < 8; ++k)
        st[k] = (u32)k < ndirs && (m >> k) & 1u
                    ? (u32)min_u64(step_cost((u32)k, se[si + SOFF[k]]), SCAN_BIG)
                    : SCAN_BIG;
    __syncthreads();
    // Read live: a neighbour's offset that another lane or warp lowers mid-pass is taken as
    // soon as it lands (an older or a newer offset, both real paths' costs).
    volatile u32 *vo = so;
    u32 mine = so[pi];
    const u32 first = mine;
    bool settled = false;
    for (int p = 0; p < CF_PASSES; ++p) {
        // Up to CF_INNER steps inside the warp, with no block barrier, while the patch still
        // lowers: a wave crosses the patch in one block pass, not one cell per pass.
        bool any = false;
        for (int q = 0; q < CF_INNER; ++q) {
            // Both terms are at most SCAN_BIG: no sum overflows, and one below SCAN_BIG is a
            // path.
            u32 best = mine;
#pragma unroll
            for (int k = 0; k < 8; ++k) best = min(best, vo[pi + NOFF[k]] + st[k]);
            const bool lowered = best < mine;
            if (lowered) {
                vo[pi] = best;
                mine = best;
            }
            if (!__any_sync(0xffffffffu, lowered)) break;
            any = true;
            __syncwarp();
        }
        if (!__syncthreads_or(any)) {
            settled = true;
            break;
        }
    }
    if (settled && mine == SCAN_BIG) {
#pragma unroll
        for (int k = 0; k < 8; ++k) far |= so[pi + NOFF[k]] < SCAN_BIG && st[k] < SCAN_BIG;
    }
    if (mine < first) sc[si] = tile_base + mine;
    // Always a barrier: cf_tile's threads read the cells of other threads' patches next.
    const bool any_far = __syncthreads_or(far);
    return settled && !any_far;
}

// Relaxes tile (tx, ty) to its local fixed point and writes back what improved; returns the
// neighbouring tiles (cf_side's bits) holding a halo cell that an improved border cell now
// lowers, and lowers *front_least to the least cost such a border cell took, *front_bounded to
// the least such cost plus its cf_bound to `start` (with one).
// One block of TILE x TILE threads. cf_passes first: on nav2's maps it settles nearly every
// tile, at a tenth of a sweep a pass, where sweeps alone took a tile's 32 x 32 cells from one
// cell in 10-11 (the H200: tb3_sandbox x3's plans 0.36 -> 0.23 ms, docs/bench-history). What
// it leaves (paths inside the tile longer than its passes, costs beyond its offsets) the passes
// and sweeps below settle, as they settled every tile before it. A pass: thread (x, y) lowers
// cell (x, y) to the least cost(n) + step(into n) over its allowed neighbours n in the tile and
// its halo, in place (a neighbour read mid-pass is an older or a newer cost, both costs of real
// paths). After a pass that lowered a cell, sweeps scan the tile's lines both ways (rows,
// columns, and with 8 moves both diagonals: cf_scan_kind), those holding a cell lowered since
// their last scan (cf_mark), until no line is marked: every edge inside the tile lies on one
// line, so a least-cost path inside the tile that changes direction k times is found in about
// k sweeps, and then a pass again. A pass that lowers nothing ends the relaxation: every cell is then at most each
// allowed neighbour's cost plus the step, the local fixed point (the pass checks that in 64
// bits, where the scans skip offsets of SCAN_BIG or more). The halo is read, never written.
// The first 64-bit pass marks every line that needs a scan; the lines' steps are taken into
// shared memory (over cf_passes' offsets) only when a sweep is to run.
// Not inlined into cf_rounds: there, the two together spilled registers (the block's 1,024
// threads leave 64 a thread).
__device__ __noinline__ u32 cf_tile(const u8 *__restrict__ masks, const u32 *__restrict__ enter,
                                    u64 *cost, u32 w, u32 h, u32 ndirs, int tx, int ty,
                                    u64 *front_least, u64 *front_bounded, u64 start,
                                    u64 straight, u64 diagonal) {
    __shared__ u64 sc[(TILE + 2) * SW];
    __shared__ u32 se[(TILE + 2) * SW];
    __shared__ u8 sm[(TILE + 2) * SW];
    __shared__ uint2 lines[4 * TILE * TILE];
    __shared__ u32 dirty[4];
    __shared__ u64 base_word, least, least_h;
    __shared__ u32 sides;
    u64 *base = &base_word;
    const int x = threadIdx.x % TILE, y = threadIdx.x / TILE;
    const long long x0 = (long long)tx * TILE, y0 = (long long)ty * TILE;
    if (threadIdx.x == 0) {
        sides = 0;
        least = UNREACHED_COST;
        least_h = UNREACHED_COST;
        *base = UNREACHED_COST;
    }
    if (threadIdx.x < 4) dirty[threadIdx.x] = 0;
    u64 loaded_min = UNREACHED_COST;
#pragma unroll
    for (int i = threadIdx.x; i < (TILE + 2) * (TILE + 2); i += TILE * TILE) {
        const int lx = i % (TILE + 2), ly = i / (TILE + 2);
        const long long gx = x0 + lx - 1, gy = y0 + ly - 1;
        const bool in = gx >= 0 && gy >= 0 && gx < w && gy < h;
        const u64 g = in ? (u64)gy * w + gx : 0;
        // L2 loads: other blocks of this round write these costs.
        const u64 c = in ? __ldcg(&cost[g]) : UNREACHED_COST;
        sc[ly * SW + lx] = c;
        loaded_min = min_u64(loaded_min, c);
        se[ly * SW + lx] = in ? enter[g] : 0u;
        sm[ly * SW + lx] = in ? masks[g] : 0u;
    }
    for (int o = TILE / 2; o > 0; o >>= 1)
        loaded_min = min_u64(loaded_min, __shfl_xor_sync(0xffffffffu, loaded_min, o));
    const int si = (y + 1) * SW + x + 1;
    const u32 kinds = ndirs == 8 ? 4u : 2u;
    __syncthreads();
    const u32 m = sm[si];
    const u64 before = sc[si];
    if (x == 0) atomicMin(base, loaded_min);
    __syncthreads();
    const u64 tile_base = *base;
    const bool exact = cf_passes(sc, se, sm, ndirs, tile_base, reinterpret_cast<u32 *>(lines));
    bool tables = false;
    while (!exact) {
        int lowered = 0;
        if (m) {
            u64 best = sc[si];
            for (u32 k = 0; k < ndirs; ++k) {
                if (!(m & (1u << k))) continue;
                const int ni = si + DY[k] * SW + DX[k];
                const u64 c = sc[ni];
                if (c == UNREACHED_COST) continue;
                const u64 cand = c + step_cost(k, se[ni]);
                if (cand < best) best = cand;
            }
            if (best < sc[si]) {
                sc[si] = best;
                lowered = 1;
            }
        }
        cf_mark(dirty, lowered, x, y, 4u, kinds);
        if (!__syncthreads_or(lowered)) break;
        if (!tables) {
            // Only now: a tile cf_passes settled runs no sweep.
            lines[threadIdx.x] = cf_line_steps<0>(se, sm);
            lines[TILE * TILE + threadIdx.x] = cf_line_steps<1>(se, sm);
            if (kinds == 4) {
                lines[2 * TILE * TILE + threadIdx.x] = cf_line_steps<2>(se, sm);
                lines[3 * TILE * TILE + threadIdx.x] = cf_line_steps<3>(se, sm);
            }
            __syncthreads();
            tables = true;
        }
        do {
            cf_scan_kind<0>(kinds, sc, lines, dirty, tile_base);
            __syncthreads();
            cf_scan_kind<1>(kinds, sc, lines, dirty, tile_base);
            __syncthreads();
            if (kinds == 4) {
                cf_scan_kind<2>(kinds, sc, lines, dirty, tile_base);
                __syncthreads();
                cf_scan_kind<3>(kinds, sc, lines, dirty, tile_base);
                __syncthreads();
            }
        } while (__syncthreads_or(threadIdx.x == 0 && (dirty[0] | dirty[1] | dirty[2] | dirty[3])));
    }
    const u64 after = sc[si];
    if (after < before) {
        const long long gx = x0 + x, gy = y0 + y;
        // One block per tile per round: a plain store cannot lose a smaller cost.
        cost[(u64)gy * w + gx] = after;
        // The neighbouring tiles this cell now lowers a halo cell n of: n's move into it
        // allowed (its opposite, k ^ 2 in DIRECTIONS' order) and after + the step below n's
        // cost as loaded (n's cost now is at most that: a test that passes on the loaded cost
        // is needed, one that fails on it is not).
        u32 f = 0;
        if (x == 0 || y == 0 || x == TILE - 1 || y == TILE - 1) {
            const u32 into = se[si];
            for (u32 k = 0; k < ndirs; ++k) {
                const int hx = x + DX[k], hy = y + DY[k];
                if (hx >= 0 && hy >= 0 && hx < TILE && hy < TILE) continue;
                const int ni = si + DY[k] * SW + DX[k];
                if ((sm[ni] >> (k ^ 2u)) & 1u && after + step_cost(k, into) < sc[ni])
                    f |= cf_side(hx, hy);
            }
        }
        if (f) {
            atomicOr(&sides, f);
            atomicMin(&least, after);
            if (start != CF_NO_START)
                atomicMin(&least_h, after + cf_bound(gx, gy, start, w, ndirs, straight, diagonal));
        }
    }
    __syncthreads();
    const u32 out = sides;
    if (threadIdx.x == 0 && out) {
        atomicMin(front_least, least);
        atomicMin(front_bounded, least_h);
    }
    __syncthreads();
    return out;
}

// common.cuh's grid barrier, whose last block to arrive also decides, once and before any block
// goes on (grid_barrier_then), how the rounds go on (bar[CF_DECISION]): CF_GO_ON, CF_SETTLED
// when the round queued no tile (the fixed point), or CF_START_FINAL when the start's cost C is
// final for the start and for every cell on a least-cost path from it. Every edge into a cell is
// satisfied (cost <= neighbour's + step) but those from the round's improved border cells that
// queued a tile (cf_tile queues for each edge it cannot rule out), so a cell v not yet final
// has a least-cost path whose last step leaves such a cell c, final:
// true(v) = cost(c) + dist(c, v). Two tests each rule every such v out:
// - C <= the least cost of those cells (front[r % 3]): steps cost more than 0, so v costs more
//   than C, and the descent visits cells that cost less (the whole field is final below C);
// - C < the least of cost(c) + cf_bound(c, start) (front[3 + r % 3]): were v on a least-cost path
//   from the start, C = true(v) + dist(v, start) >= cost(c) + dist(c, start) >= that least, so
//   no cell of such a path (the start included) is still to fall. The descent then takes the
//   reference's steps: a neighbour n matches cost(n) + step = cost(cell) exactly when n is on
//   such a path (its cost final), never otherwise (a cost is never below the true one). Like
//   A*'s goal test, this stops rounds that only widen the front away from the start.
__device__ __forceinline__ void cf_barrier(u32 *bar, const u64 *cost, u64 start, const u64 *front,
                                           const u32 *counts, u32 round) {
    grid_barrier_then(bar, [&] {
        u32 d = CF_GO_ON;
        if (__ldcg(&counts[(round + 1) % 3]) == 0) {
            d = CF_SETTLED;
        } else if (start != CF_NO_START) {
            const u64 c = __ldcg(&cost[start]);
            if (c != UNREACHED_COST &&
                (c <= __ldcg(&front[round % 3]) || c < __ldcg(&front[3 + round % 3])))
                d = CF_START_FINAL;
        }
        bar[CF_DECISION] = d;
    });
}

// Rounds first_round.. (at most max_rounds) in one launch of TILE x TILE-thread blocks, all
// resident, until the fixed point (bar[CF_DECISION] = CF_SETTLED) or, with a start
// (CF_NO_START: none), until the start's cost is final (CF_START_FINAL; also before the first
// round of a later launch, which a plan to the same goal from another start makes); leaves the
// next round to run in bar[CF_NEXT_ROUND].
extern "C" __global__ void __launch_bounds__(TILE * TILE) cf_rounds(const u8 *__restrict__ masks, const u32 *__restrict__ enter,
                                     u64 *cost, u32 w, u32 h, u32 ndirs, u32 tiles_x,
                                     u32 tiles_y, u32 *lists, u32 *counts, u32 *queued,
                                     u32 *bar, u64 *front, u64 start, u64 bounded,
                                     u64 straight, u64 diagonal, u32 first_round,
                                     u32 max_rounds) {
    const u32 ntiles = tiles_x * tiles_y;
    u32 round = first_round;
    if (round > 1 && start != CF_NO_START) {
        // Nothing writes before this: every block reads the same and does the same. The last
        // round's bounded front holds the bounds to `bounded` (the start of the launch that
        // ran it, or none); cf_bound is a norm's distance (a sum of the max and the sum norms
        // with non-negative weights, as the diagonal step is at most two straight ones), so
        // cf_bound(c, start) >= cf_bound(c, bounded) - cf_bound(start, bounded), and that
        // front less the last term bounds this start's as cf_barrier's second test needs.
        const u64 c = __ldcg(&cost[start]);
        bool final_here = c != UNREACHED_COST && c <= __ldcg(&front[(round - 1) % 3]);
        if (!final_here && c != UNREACHED_COST && bounded != CF_NO_START) {
            const u64 f = __ldcg(&front[3 + (round - 1) % 3]);
            const u64 apart = cf_bound((long long)(start % w), (long long)(start / w), bounded, w,
                                       ndirs, straight, diagonal);
            final_here = f != UNREACHED_COST && f > apart && c < f - apart;
        }
        if (final_here) {
            if (blockIdx.x == 0 && threadIdx.x == 0) {
                bar[CF_DECISION] = CF_START_FINAL;
                bar[CF_NEXT_ROUND] = round;
            }
            return;
        }
    }
    for (; round - first_round < max_rounds; ++round) {
        // The list two rounds ahead was consumed by the previous round, and the front slot
        // one round ahead was last read by the barrier two rounds back: both reused.
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            counts[(round + 2) % 3] = 0;
            front[(round + 1) % 3] = UNREACHED_COST;
            front[3 + (round + 1) % 3] = UNREACHED_COST;
        }
        const u32 cur = round % 3;
        const u32 count = __ldcg(&counts[cur]);
        for (u32 e = blockIdx.x; e < count; e += gridDim.x) {
            const u32 t = __ldcg(&lists[(u64)cur * ntiles + e]);
            const int tx = (int)(t % tiles_x), ty = (int)(t / tiles_x);
            const u32 f = cf_tile(masks, enter, cost, w, h, ndirs, tx, ty, &front[cur],
                                  &front[3 + cur], start, straight, diagonal);
            // Thread k queues the neighbour in direction k whose halo holds an improved cell.
            if (threadIdx.x < 8 && (f >> threadIdx.x) & 1u) {
                const int nx = tx + DX[threadIdx.x], ny = ty + DY[threadIdx.x];
                if (nx >= 0 && ny >= 0 && nx < (int)tiles_x && ny < (int)tiles_y)
                    queue_tile((u32)ny * tiles_x + (u32)nx, lists, counts, queued, ntiles, round);
            }
        }
        cf_barrier(bar, cost, start, front, counts, round);
        if (__ldcg(&bar[CF_DECISION]) != CF_GO_ON) {
            ++round;
            break;
        }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) bar[CF_NEXT_ROUND] = round;
}

// The descent's readback header (src/lee/costmap/gpu.rs, fetch's layout): the bar's words,
// then the state's slots (status, length, cost) as two words each, low first.
__device__ __forceinline__ void cf_header(u32 *out, const u32 *bar, u64 status, u64 length,
                                          u64 total) {
    for (int j = 0; j < CF_BAR_WORDS; ++j) out[j] = __ldcg(&bar[j]);
    u64 slot[CF_SLOTS];
    slot[CF_STATUS] = status;
    slot[CF_LENGTH] = length;
    slot[CF_COST] = total;
    for (int i = 0; i < CF_SLOTS; ++i) {
        out[CF_BAR_WORDS + 2 * i] = (u32)slot[i];
        out[CF_BAR_WORDS + 2 * i + 1] = (u32)(slot[i] >> 32);
    }
}

// Queued behind the rounds' launch before the host has seen how it ended: a launch that leaves
// more rounds to run (bar[CF_DECISION] = CF_GO_ON) leaves no field to descend yet, and the
// descent only reports CF_PENDING. Otherwise its state (cf_header, in `out`): CF_STATUS:
// CF_OK, CF_BROKEN (a cell has no neighbour on a least-cost path), CF_UNREACHED (start
// unreached) or CF_TOO_LONG (more than `cap` cells); CF_LENGTH: the path's moves so far;
// CF_COST: the start's total cost. path[i]: the i-th cell. The
// successor rule is the reference's (src/lee/costmap/cpu.rs descend): the first direction whose
// neighbour n has cost(n) + step(into n) = cost(cell).
extern "C" __global__ void __launch_bounds__(CF_DESCEND_THREADS) cf_descend(const u8 *__restrict__ masks, const u32 *__restrict__ enter,
                                      const u64 *__restrict__ cost, u32 w, u32 h, u32 ndirs,
                                      u64 start, u64 goal, u32 *path, u32 cap, const u32 *bar,
                                      u32 *out, u32 short_cap) {
    __shared__ u64 sc[CF_DW * CF_DW];
    __shared__ u32 se[CF_DW * CF_DW];
    __shared__ u8 sm[CF_DW * CF_DW];
    __shared__ unsigned short succ[CF_DW * CF_DW];
    // The current cell as coordinates: not a 64-bit division by the width in every thread of
    // every window.
    __shared__ u32 s_x, s_y;
    __shared__ u32 s_step, s_done, s_status;
    const u32 tid = threadIdx.x;
    if (bar[CF_DECISION] == CF_GO_ON) {
        if (tid == 0) cf_header(out, bar, CF_PENDING, 0, 0);
        return;
    }
    const long long gx = (long long)(goal % w), gy = (long long)(goal / w);
    if (tid == 0) {
        const u64 total = cost[start];
        s_x = (u32)(start % w);
        s_y = (u32)(start / w);
        s_step = 0;
        const bool reached = total != UNREACHED_COST;
        s_done = !reached || total == 0;
        s_status = reached ? CF_OK : CF_UNREACHED;
        path[0] = (u32)start;
    }
    __syncthreads();
    while (!s_done) {
        const long long cx = s_x, cy = s_y;
        const long long ox = window_origin(cx, gx, w, CF_DW),
                        oy = window_origin(cy, gy, h, CF_DW);
#pragma unroll
        for (u32 i = tid; i < CF_DW * CF_DW; i += CF_DESCEND_THREADS) {
            const long long x = ox + i % CF_DW, y = oy + i / CF_DW;
            const bool in = x < w && y < h;
            sc[i] = in ? cost[(u64)y * w + x] : UNREACHED_COST;
            se[i] = in ? enter[(u64)y * w + x] : 0u;
            sm[i] = in ? masks[(u64)y * w + x] : 0;
        }
        __syncthreads();
#pragma unroll
        for (u32 i = tid; i < CF_DW * CF_DW; i += CF_DESCEND_THREADS) {
            const u64 l = sc[i];
            const u32 m = sm[i];
            const int lx = (int)(i % CF_DW), ly = (int)(i / CF_DW);
            u32 next = SUCC_GOAL;
            if (l != 0 && l != UNREACHED_COST) {
                next = SUCC_NONE;
#pragma unroll
                for (u32 k = 0; k < 8; ++k) {
                    if (k >= ndirs || !(m & (1u << k))) continue;
                    const int nx = lx + DX[k], ny = ly + DY[k];
                    // Off-grid moves are never allowed: a border cell of the window at the
                    // grid's edge still finds its successor here.
                    if (nx < 0 || ny < 0 || nx >= CF_DW || ny >= CF_DW) {
                        next = SUCC_OUT;
                        break;
                    }
                    const u64 cn = sc[ny * CF_DW + nx];
                    if (cn == UNREACHED_COST) continue;
                    // A successor lies in the window: its step cost was staged with it.
                    if (cn + step_cost(k, se[ny * CF_DW + nx]) == l) {
                        next = (u32)(ny * CF_DW + nx);
                        break;
                    }
                }
            }
            succ[i] = (unsigned short)next;
        }
        __syncthreads();
        if (tid == 0) {
            u32 at = (u32)((cy - oy) * CF_DW + (cx - ox)), step = s_step;
            u32 status = CF_OK;
            while (sc[at] != 0) {
                const u32 next = succ[at];
                if (next == SUCC_OUT) break; // move the window
                if (next >= SUCC_GOAL) {
                    status = CF_BROKEN;
                    break;
                }
                if (step + 1 >= cap) {
                    status = CF_TOO_LONG;
                    break;
                }
                at = next;
                ++step;
                path[step] = (u32)((u64)(oy + at / CF_DW) * w + (u64)(ox + at % CF_DW));
            }
            s_step = step;
            s_x = (u32)(ox + at % CF_DW);
            s_y = (u32)(oy + at / CF_DW);
            s_done = status != CF_OK || sc[at] == 0;
            s_status = status;
        }
        __syncthreads();
    }
    // The readback: the bar, the state and a path of fewer than short_cap cells, in the
    // host's mapped buffer by the time the stream's wait returns (no copies queued behind).
    const u32 len = s_step;
    if (tid == 0) cf_header(out, bar, s_status, len, cost[start]);
    if (s_status == CF_OK && len < short_cap)
        for (u32 i = tid; i <= len; i += CF_DESCEND_THREADS)
            out[CF_BAR_WORDS + 2 * CF_SLOTS + i] = __ldcg(&path[i]);
}
