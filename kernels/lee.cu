// Lee wave (BFS distances in moves) on a grid with per-cell direction masks, four ways:
//   lee_sweep_global   the seed's global-memory model: one thread per cell, sweeps in place
//   lee_sweep_texture  the same sweep, masks fetched through a texture object
//   lee_tiles_shared   the seed's shared model: tile + halo in shared memory, iterated to local
//                      convergence, all tiles per launch, launches until nothing changes
//   lee_worklist       default: one persistent launch; blocks pull tiles from a device queue,
//                      relax them to convergence in shared memory and queue only the neighbour
//                      tiles whose shared border improved
// All updates are label = min(label, min over allowed neighbours + 1), which only decreases
// labels and has the BFS distances as its unique fixed point, so every model is exact.

typedef unsigned int u32;
typedef unsigned char u8;
typedef unsigned long long u64;

#define UNREACHED 0xffffffffu
#define NO_TILE 0xffffffffu

// Direction k: same order as src/lee/mod.rs DIRECTIONS.
__constant__ int DX[8] = {-1, 0, 1, 0, -1, 1, 1, -1};
__constant__ int DY[8] = {0, -1, 0, 1, -1, -1, 1, 1};

__device__ __forceinline__ u32 plus_one(u32 best) { return best == UNREACHED ? UNREACHED : best + 1; }

extern "C" __global__ void lee_fill_labels(u32 *labels, u64 n, u64 goal) {
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
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
// Tiles in shared memory (shared and worklist).
// ---------------------------------------------------------------------------------------------

// Relaxes tile (tx, ty) (blockDim.x x blockDim.y cells, one per thread) to convergence against
// the halo it loaded, writes improved labels back, and returns bit k set when a cell on the
// side (or corner) facing direction k improved, plus bit 8 for any improvement.
// `s` holds (blockDim.x + 2) * (blockDim.y + 2) labels.
__device__ u32 relax_tile(const u8 *__restrict__ masks, u32 *labels, u32 w, u32 h, u32 ndirs,
                          u32 tx, u32 ty, u32 *s, u32 *s_flags) {
    const u32 bx = blockDim.x, by = blockDim.y, sw = bx + 2;
    const u32 tid = threadIdx.y * bx + threadIdx.x, nthreads = bx * by;
    const long long x0 = (long long)tx * bx, y0 = (long long)ty * by;
    if (tid == 0) *s_flags = 0;
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
    int changed;
    do {
        changed = 0;
        if (m) {
            u32 best = UNREACHED;
            for (u32 k = 0; k < ndirs; ++k)
                if (m & (1u << k)) best = min(best, s[(int)si + DY[k] * (int)sw + DX[k]]);
            best = plus_one(best);
            if (best < cur) {
                cur = best;
                s[si] = cur;
                changed = 1;
            }
        }
    } while (__syncthreads_or(changed));
    // atomicMin: in the worklist model a tile queued again while a block still relaxes it can
    // be relaxed by two blocks at once; a plain store could then replace a smaller label with
    // a larger one. Neighbours are told only about real improvements.
    if (cur < orig && cur < atomicMin(&labels[gy * w + gx], cur)) {
        const bool l = threadIdx.x == 0, r = threadIdx.x == bx - 1;
        const bool u = threadIdx.y == 0, d = threadIdx.y == by - 1;
        u32 f = 1u << 8;
        if (l) f |= 1u << 0;
        if (u) f |= 1u << 1;
        if (r) f |= 1u << 2;
        if (d) f |= 1u << 3;
        if (u && l) f |= 1u << 4;
        if (u && r) f |= 1u << 5;
        if (d && r) f |= 1u << 6;
        if (d && l) f |= 1u << 7;
        atomicOr(s_flags, f);
        // Every writer fences before the barrier, so once any thread of the block queues a
        // neighbour, all of the block's label writes are visible to whoever relaxes it.
        __threadfence();
    }
    __syncthreads();
    return *s_flags;
}

extern "C" __global__ void lee_tiles_shared(const u8 *__restrict__ masks, u32 *labels, u32 w,
                                            u32 h, u32 ndirs, u32 *changed) {
    extern __shared__ u32 s[];
    __shared__ u32 s_flags;
    u32 f = relax_tile(masks, labels, w, h, ndirs, blockIdx.x, blockIdx.y, s, &s_flags);
    if (threadIdx.x == 0 && threadIdx.y == 0 && (f & (1u << 8))) *changed = 1;
}

// Worklist state: ctr[0] = head, ctr[1] = tail, ctr[2] = tiles queued or being relaxed.
// queue is a ring of `cap` slots holding tile + 1 (0 = empty). Each tile has a state, so that
// no two blocks ever relax the same tile at once: a push to a busy tile marks it dirty, and the
// block relaxing it queues it again when done.
#define T_IDLE 0u
#define T_QUEUED 1u
#define T_BUSY 2u
#define T_BUSY_DIRTY 3u

__device__ void enqueue(u32 t, u32 *queue, u32 cap, u32 *ctr) {
    atomicAdd(&ctr[2], 1u);
    u32 pos = atomicAdd(&ctr[1], 1u);
    // The slot may still be held by a consumer of the previous lap: wait for it.
    while (atomicCAS(&queue[pos % cap], 0u, t + 1) != 0) __nanosleep(32);
}

__device__ void push_tile(u32 t, u32 *queue, u32 cap, u32 *state, u32 *ctr) {
    while (true) {
        u32 st = atomicAdd(&state[t], 0u);
        if (st == T_QUEUED || st == T_BUSY_DIRTY) return;
        if (st == T_IDLE) {
            if (atomicCAS(&state[t], T_IDLE, T_QUEUED) == T_IDLE) {
                enqueue(t, queue, cap, ctr);
                return;
            }
        } else if (atomicCAS(&state[t], T_BUSY, T_BUSY_DIRTY) == T_BUSY) {
            return;
        }
    }
}

extern "C" __global__ void lee_worklist_init(u32 *queue, u32 cap, u32 *state, u32 ntiles,
                                             u32 *ctr, u32 goal_tile) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < cap; i += gridDim.x * blockDim.x) {
        queue[i] = i == 0 ? goal_tile + 1 : 0;
        if (i < ntiles) state[i] = i == goal_tile ? T_QUEUED : T_IDLE;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        ctr[0] = 0;
        ctr[1] = 1;
        ctr[2] = 1;
    }
}

extern "C" __global__ void lee_worklist(const u8 *__restrict__ masks, u32 *labels, u32 w, u32 h,
                                        u32 ndirs, u32 tiles_x, u32 tiles_y, u32 *queue, u32 cap,
                                        u32 *state, u32 *ctr) {
    extern __shared__ u32 s[];
    __shared__ u32 s_flags, s_tile;
    const u32 tid = threadIdx.y * blockDim.x + threadIdx.x;
    volatile u32 *vctr = ctr;
    while (true) {
        if (tid == 0) {
            u32 tile = NO_TILE;
            while (true) {
                u32 hd = vctr[0], tl = vctr[1];
                if (hd < tl) {
                    if (atomicCAS(&ctr[0], hd, hd + 1) == hd) {
                        volatile u32 *slot = &queue[hd % cap];
                        u32 v;
                        while ((v = *slot) == 0) __nanosleep(32);
                        *slot = 0;
                        tile = v - 1;
                        break;
                    }
                } else if (vctr[2] == 0) {
                    break;
                } else {
                    __nanosleep(64);
                }
            }
            if (tile != NO_TILE) {
                // Queued -> busy: from here on a push only marks the tile dirty.
                atomicExch(&state[tile], T_BUSY);
                __threadfence();
            }
            s_tile = tile;
        }
        __syncthreads();
        const u32 tile = s_tile;
        if (tile == NO_TILE) return;
        const u32 tx = tile % tiles_x, ty = tile / tiles_x;
        const u32 f = relax_tile(masks, labels, w, h, ndirs, tx, ty, s, &s_flags);
        if (tid < 8 && (f & (1u << tid))) {
            long long nx = (long long)tx + DX[tid], ny = (long long)ty + DY[tid];
            if (nx >= 0 && ny >= 0 && nx < tiles_x && ny < tiles_y)
                push_tile((u32)(ny * tiles_x + nx), queue, cap, state, ctr);
        }
        __syncthreads();
        if (tid == 0) {
            __threadfence();
            // Busy -> idle, unless a neighbour improved our halo meanwhile: then go again.
            if (atomicCAS(&state[tile], T_BUSY, T_IDLE) != T_BUSY) {
                atomicExch(&state[tile], T_QUEUED);
                enqueue(tile, queue, cap, ctr);
            }
            atomicSub(&ctr[2], 1u);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Path: one thread descends the labels from the start with the fixed neighbour priority.
// ---------------------------------------------------------------------------------------------
extern "C" __global__ void lee_descend(const u8 *__restrict__ masks, const u32 *__restrict__ labels,
                                       u32 w, u32 ndirs, u64 start, u32 *path /* label+1 */,
                                       u32 *status /* 0 ok, 1 broken */) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    u64 c = start;
    u32 len = labels[c];
    *status = 0;
    if (len == UNREACHED) return;
    path[0] = (u32)c;
    for (u32 step = 1; step <= len; ++step) {
        u32 x = (u32)(c % w), y = (u32)(c / w), m = masks[c], want = len - step;
        u64 next = ~0ull;
        for (u32 k = 0; k < ndirs; ++k) {
            if (!(m & (1u << k))) continue;
            u64 n = (u64)(y + DY[k]) * w + (x + DX[k]);
            if (labels[n] == want) {
                next = n;
                break;
            }
        }
        if (next == ~0ull) {
            *status = 1;
            return;
        }
        c = next;
        path[step] = (u32)c;
    }
}
