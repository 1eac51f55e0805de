// Least-cost fields on a grid with per-cell step costs (src/lee/costmap/gpu.rs drives these;
// src/lee/costmap/cpu.rs's Dijkstra is the reference they equal):
//   cf_init    every cost UNREACHED, the goal's 0; every tile's epoch 0, the goal tile's 1
//   cf_tiles   one warp per 32 x 32 tile: loads the tile and its halo into shared memory,
//              relaxes cost = min over allowed neighbours n of cost(n) + step(into n) by
//              sweeps until the tile is locally stable, writes back what improved; a tile runs only when it or a
//              neighbouring tile improved in the previous launch (epochs), so launches follow
//              the front. Costs only decrease and each is the cost of a real path, so a launch
//              in which nothing improves leaves the unique fixed point: Dijkstra's costs.
//   cf_descend the path from the start down the field, in one block (common.cuh's windows),
//              so that only the path leaves the device
// Moves in the order of src/lee/grid.rs's DIRECTIONS; a diagonal step costs enter * 141 / 100.

// Set by the host (src/lee/costmap/gpu.rs, NVRTC -D): the descent's state slots and statuses.
#if !defined(CF_STATUS) || !defined(CF_TOO_LONG)
#error "costfield.cu is compiled with the constants src/lee/costmap/gpu.rs defines"
#endif

#define TILE 32 /* a warp's width: the lanes are a tile's columns or rows */
#define UNREACHED_COST 0xffffffffffffffffull

__constant__ int DX[8] = {-1, 0, 1, 0, -1, 1, 1, -1};
__constant__ int DY[8] = {0, -1, 0, 1, -1, -1, 1, 1};

__device__ __forceinline__ u64 step_cost(u32 k, u32 enter) {
    return k < 4 ? (u64)enter : (u64)enter * 141ull / 100ull;
}

extern "C" __global__ void cf_init(u64 *cost, u64 n, u64 goal, u32 *epoch, u32 ntiles,
                                   u32 goal_tile) {
    GRID_STRIDE(i, n) cost[i] = i == goal ? 0ull : UNREACHED_COST;
    GRID_STRIDE(t, ntiles) epoch[t] = t == goal_tile ? 1u : 0u;
}

// One warp per tile. The tile relaxes by sweeps, each in lockstep across the warp: down (the
// lanes are the columns, row after row, moves up: k = 1, 4, 5), up (moves down: 3, 6, 7), right
// (the lanes are the rows, column after column, moves left: 0, 4, 7) and left (moves right: 2,
// 5, 6). A sweep carries an improvement across the whole tile in one pass, where a round of
// every cell at once carries it one cell; sweeps repeat until a set of four improves nothing,
// when no allowed move into the tile or its halo can improve a cell: the same local fixed
// point. The halo is read, never written.
#define SW (TILE + 3) /* shared row strides: a column's cells fall in different banks */
#define MS (TILE + 4)

__device__ __forceinline__ void relax_from(u64 &best, u32 m, u32 k, const u64 *sc, const u32 *se,
                                           int ni) {
    if (!(m & (1u << k))) return;
    const u64 c = sc[ni];
    if (c == UNREACHED_COST) return;
    const u64 cand = c + step_cost(k, se[ni]);
    if (cand < best) best = cand;
}

extern "C" __global__ void cf_tiles(const u8 *__restrict__ masks, const u32 *__restrict__ enter,
                                    u64 *cost, u32 w, u32 h, u32 ndirs, u32 *epoch, u32 tiles_x,
                                    u32 tiles_y, u32 launch, u32 *changed) {
    __shared__ u64 sc[(TILE + 2) * SW];
    __shared__ u32 se[(TILE + 2) * SW];
    __shared__ u8 sm[TILE * MS];
    __shared__ u8 dirty[TILE * MS];
    const int tx = blockIdx.x, ty = blockIdx.y;
    const int lane = threadIdx.x;
    // Run only where the front is: this tile or a neighbour improved in the last launch.
    u32 newest = 0;
    if (lane < 9) {
        const int nx = tx + lane % 3 - 1, ny = ty + lane / 3 - 1;
        if (nx >= 0 && ny >= 0 && nx < (int)tiles_x && ny < (int)tiles_y)
            newest = __ldcg(&epoch[(u64)ny * tiles_x + nx]);
    }
    for (int o = 16; o > 0; o >>= 1) newest = max(newest, __shfl_xor_sync(FULL_MASK, newest, o));
    if (newest < launch) return;  // uniform across the warp
    const long long x0 = (long long)tx * TILE, y0 = (long long)ty * TILE;
    for (int i = lane; i < (TILE + 2) * (TILE + 2); i += TILE) {
        const int lx = i % (TILE + 2), ly = i / (TILE + 2);
        const long long gx = x0 + lx - 1, gy = y0 + ly - 1;
        const bool in = gx >= 0 && gy >= 0 && gx < w && gy < h;
        const u64 g = in ? (u64)gy * w + gx : 0;
        // L2 loads: other blocks of this launch write these costs.
        sc[ly * SW + lx] = in ? __ldcg(&cost[g]) : UNREACHED_COST;
        se[ly * SW + lx] = in ? enter[g] : 0u;
    }
    for (int i = lane; i < TILE * TILE; i += TILE) {
        const long long gx = x0 + i % TILE, gy = y0 + i / TILE;
        sm[i / TILE * MS + i % TILE] = (gx < w && gy < h) ? masks[(u64)gy * w + gx] : 0;
        dirty[i / TILE * MS + i % TILE] = 0;
    }
    __syncwarp();
    const bool diag = ndirs == 8;
    // Lowers cell (x, y)'s cost to `best` where that improves it, marked for the write-back.
    auto settle = [&](int x, int y, u64 best, int &any) {
        const int si = (y + 1) * SW + x + 1;
        if (best < sc[si]) {
            sc[si] = best;
            dirty[y * MS + x] = 1;
            any = 1;
        }
    };
    int any;
    do {
        any = 0;
        for (int y = 0; y < TILE; ++y) {  // down: from the row above
            const int x = lane, si = (y + 1) * SW + x + 1;
            const u32 m = sm[y * MS + x];
            u64 best = sc[si];
            if (m) {
                relax_from(best, m, 1, sc, se, si - SW);
                if (diag) {
                    relax_from(best, m, 4, sc, se, si - SW - 1);
                    relax_from(best, m, 5, sc, se, si - SW + 1);
                }
                settle(x, y, best, any);
            }
            __syncwarp();
        }
        for (int y = TILE - 1; y >= 0; --y) {  // up: from the row below
            const int x = lane, si = (y + 1) * SW + x + 1;
            const u32 m = sm[y * MS + x];
            u64 best = sc[si];
            if (m) {
                relax_from(best, m, 3, sc, se, si + SW);
                if (diag) {
                    relax_from(best, m, 6, sc, se, si + SW + 1);
                    relax_from(best, m, 7, sc, se, si + SW - 1);
                }
                settle(x, y, best, any);
            }
            __syncwarp();
        }
        for (int x = 0; x < TILE; ++x) {  // right: from the column to the left
            const int y = lane, si = (y + 1) * SW + x + 1;
            const u32 m = sm[y * MS + x];
            u64 best = sc[si];
            if (m) {
                relax_from(best, m, 0, sc, se, si - 1);
                if (diag) {
                    relax_from(best, m, 4, sc, se, si - SW - 1);
                    relax_from(best, m, 7, sc, se, si + SW - 1);
                }
                settle(x, y, best, any);
            }
            __syncwarp();
        }
        for (int x = TILE - 1; x >= 0; --x) {  // left: from the column to the right
            const int y = lane, si = (y + 1) * SW + x + 1;
            const u32 m = sm[y * MS + x];
            u64 best = sc[si];
            if (m) {
                relax_from(best, m, 2, sc, se, si + 1);
                if (diag) {
                    relax_from(best, m, 5, sc, se, si - SW + 1);
                    relax_from(best, m, 6, sc, se, si + SW + 1);
                }
                settle(x, y, best, any);
            }
            __syncwarp();
        }
    } while (__any_sync(FULL_MASK, any));
    int improved = 0;
    for (int i = lane; i < TILE * TILE; i += TILE) {
        if (!dirty[i / TILE * MS + i % TILE]) continue;
        const long long gx = x0 + i % TILE, gy = y0 + i / TILE;
        // One block per tile per launch: a plain store cannot lose a smaller cost.
        cost[(u64)gy * w + gx] = sc[(i / TILE + 1) * SW + i % TILE + 1];
        improved = 1;
    }
    if (__any_sync(FULL_MASK, improved) && lane == 0) {
        epoch[(u64)ty * tiles_x + tx] = launch + 1;
        *changed = 1;
    }
}

// state[CF_STATUS]: CF_OK, CF_BROKEN (a cell has no neighbour on a least-cost path),
// CF_UNREACHED (start unreached) or CF_TOO_LONG (more than `cap` cells); state[CF_LENGTH]: the
// path's moves so far; state[CF_COST]: the start's total cost. path[i]: the i-th cell. The
// successor rule is the reference's (src/lee/costmap/cpu.rs descend): the first direction whose
// neighbour n has cost(n) + step(into n) = cost(cell).
extern "C" __global__ void cf_descend(const u8 *__restrict__ masks, const u32 *__restrict__ enter,
                                      const u64 *__restrict__ cost, u32 w, u32 h, u32 ndirs,
                                      u64 start, u64 goal, u32 *path, u32 cap, u64 *state) {
    __shared__ u64 sc[DW * DW];
    __shared__ u8 sm[DW * DW];
    __shared__ unsigned short succ[DW * DW];
    __shared__ u64 s_cell;
    __shared__ u32 s_step, s_done;
    const u32 tid = threadIdx.x;
    const long long gx = (long long)(goal % w), gy = (long long)(goal / w);
    if (tid == 0) {
        const u64 total = cost[start];
        s_cell = start;
        s_step = 0;
        const bool reached = total != UNREACHED_COST;
        state[CF_STATUS] = reached ? CF_OK : CF_UNREACHED;
        state[CF_LENGTH] = 0;
        state[CF_COST] = total;
        s_done = !reached || total == 0;
        path[0] = (u32)start;
    }
    __syncthreads();
    while (!s_done) {
        const u64 c = s_cell;
        const long long cx = (long long)(c % w), cy = (long long)(c / w);
        const long long ox = window_origin(cx, gx, w), oy = window_origin(cy, gy, h);
        for (u32 i = tid; i < DW * DW; i += blockDim.x) {
            const long long x = ox + i % DW, y = oy + i / DW;
            const bool in = x < w && y < h;
            sc[i] = in ? cost[(u64)y * w + x] : UNREACHED_COST;
            sm[i] = in ? masks[(u64)y * w + x] : 0;
        }
        __syncthreads();
        for (u32 i = tid; i < DW * DW; i += blockDim.x) {
            const u64 l = sc[i];
            const u32 m = sm[i];
            const int lx = (int)(i % DW), ly = (int)(i / DW);
            u32 next = SUCC_GOAL;
            if (l != 0 && l != UNREACHED_COST) {
                next = SUCC_NONE;
                for (u32 k = 0; k < ndirs; ++k) {
                    if (!(m & (1u << k))) continue;
                    const int nx = lx + DX[k], ny = ly + DY[k];
                    // Off-grid moves are never allowed: a border cell of the window at the
                    // grid's edge still finds its successor here.
                    if (nx < 0 || ny < 0 || nx >= DW || ny >= DW) {
                        next = SUCC_OUT;
                        break;
                    }
                    const u64 cn = sc[ny * DW + nx];
                    if (cn == UNREACHED_COST) continue;
                    const u64 e = enter[(u64)(oy + ny) * w + (u64)(ox + nx)];
                    if (cn + step_cost(k, (u32)e) == l) {
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
                path[step] = (u32)((u64)(oy + at / DW) * w + (u64)(ox + at % DW));
            }
            s_step = step;
            s_cell = (u64)(oy + at / DW) * w + (u64)(ox + at % DW);
            state[CF_STATUS] = status;
            state[CF_LENGTH] = step;
            s_done = status != CF_OK || sc[at] == 0;
        }
        __syncthreads();
    }
}
