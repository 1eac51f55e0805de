// Least-cost fields on a grid with per-cell step costs (src/lee/costmap/gpu.rs drives these;
// src/lee/costmap/cpu.rs's Dijkstra is the reference they equal):
//   cf_init    every cost UNREACHED, the goal's 0; every tile's epoch 0, the goal tile's 1
//   cf_tiles   one block per 32 x 32 tile: loads the tile and its halo into shared memory,
//              relaxes cost = min over allowed neighbours n of cost(n) + step(into n) until the
//              tile is locally stable, writes back what improved; a tile runs only when it or a
//              neighbouring tile improved in the previous launch (epochs), so launches follow
//              the front. Costs only decrease and each is the cost of a real path, so a launch
//              in which nothing improves leaves the unique fixed point: Dijkstra's costs.
// Moves in the order of src/lee/grid.rs's DIRECTIONS; a diagonal step costs enter * 141 / 100.

#define TILE 32
#define ROWS 8
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

extern "C" __global__ void cf_tiles(const u8 *__restrict__ masks, const u32 *__restrict__ enter,
                                    u64 *cost, u32 w, u32 h, u32 ndirs, u32 *epoch, u32 tiles_x,
                                    u32 tiles_y, u32 launch, u32 *changed) {
    __shared__ u64 sc[(TILE + 2) * (TILE + 2)];
    __shared__ u32 se[(TILE + 2) * (TILE + 2)];
    const int tx = blockIdx.x, ty = blockIdx.y;
    // Run only where the front is: this tile or a neighbour improved in the last launch.
    u32 newest = 0;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
            int nx = tx + dx, ny = ty + dy;
            if (nx >= 0 && ny >= 0 && nx < (int)tiles_x && ny < (int)tiles_y)
                newest = max(newest, __ldcg(&epoch[(u64)ny * tiles_x + nx]));
        }
    if (newest < launch) return;  // uniform across the block
    const int sw = TILE + 2;
    const long long x0 = (long long)tx * TILE, y0 = (long long)ty * TILE;
    const int tid = threadIdx.y * TILE + threadIdx.x;
    for (int i = tid; i < sw * sw; i += TILE * ROWS) {
        long long gx = x0 + i % sw - 1, gy = y0 + i / sw - 1;
        bool in = gx >= 0 && gy >= 0 && gx < w && gy < h;
        u64 g = in ? (u64)gy * w + gx : 0;
        // L2 loads: other blocks of this launch write these costs.
        sc[i] = in ? __ldcg(&cost[g]) : UNREACHED_COST;
        se[i] = in ? enter[g] : 0u;
    }
    u32 m[TILE / ROWS];
    u64 orig[TILE / ROWS];
    for (int r = 0; r < TILE / ROWS; ++r) {
        long long gx = x0 + threadIdx.x, gy = y0 + threadIdx.y + r * ROWS;
        m[r] = (gx < w && gy < h) ? masks[(u64)gy * w + gx] : 0u;
    }
    __syncthreads();
    for (int r = 0; r < TILE / ROWS; ++r)
        orig[r] = sc[(threadIdx.y + r * ROWS + 1) * sw + threadIdx.x + 1];
    int local;
    do {
        local = 0;
        for (int r = 0; r < TILE / ROWS; ++r) {
            if (!m[r]) continue;
            const int si = (threadIdx.y + r * ROWS + 1) * sw + threadIdx.x + 1;
            u64 best = sc[si];
            for (u32 k = 0; k < ndirs; ++k) {
                if (!(m[r] & (1u << k))) continue;
                const int ni = si + DY[k] * sw + DX[k];
                const u64 c = sc[ni];
                if (c == UNREACHED_COST) continue;
                const u64 cand = c + step_cost(k, se[ni]);
                if (cand < best) best = cand;
            }
            if (best < sc[si]) {
                sc[si] = best;
                local = 1;
            }
        }
    } while (__syncthreads_or(local));
    int improved = 0;
    for (int r = 0; r < TILE / ROWS; ++r) {
        const int si = (threadIdx.y + r * ROWS + 1) * sw + threadIdx.x + 1;
        if (sc[si] < orig[r]) {
            long long gx = x0 + threadIdx.x, gy = y0 + threadIdx.y + r * ROWS;
            // One block per tile per launch: a plain store cannot lose a smaller cost.
            cost[(u64)gy * w + gx] = sc[si];
            improved = 1;
        }
    }
    if (__syncthreads_or(improved) && tid == 0) {
        epoch[(u64)ty * tiles_x + tx] = launch + 1;
        *changed = 1;
    }
}
