// The prelude every kernel file is compiled with (src/compute/cuda.rs puts it in front of each
// source: NVRTC has no host headers, so the fixed-width types are spelled out here once).

typedef unsigned char u8;
typedef unsigned int u32;
typedef unsigned long long u64;

#define FULL_MASK 0xffffffffu

// Grid-stride loop over [0, n): every thread of the grid takes every (gridDim.x * blockDim.x)th
// index, so any grid covers any n. The index is 64-bit, so it never wraps near 2^32.
__device__ __forceinline__ u64 grid_first() { return (u64)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ u64 grid_step() { return (u64)gridDim.x * blockDim.x; }
#define GRID_STRIDE(i, n) for (u64 i = grid_first(); i < (u64)(n); i += grid_step())

// Descent windows (lee/descent.cu, costfield.cu): a path is followed from the start down a field by one
// block that stages a DW x DW window of the field in shared memory, finds every window cell's
// successor at once, and walks them with one shared load per step; the window then moves.
// costfield.cu's windows are CF_DW wide (its host sets it), lee/descent.cu's DW.
#define DW 64

// The window's first row or column along one axis: centred on the current cell c, then shifted
// most of the way towards the goal g, clamped into [0, n - dw] (dw: the window's width).
__device__ __forceinline__ long long window_origin(long long c, long long g, long long n,
                                                   long long dw = DW) {
    long long o = c - dw / 2;
    if (g > c) o += dw / 2 - 2;
    if (g < c) o -= dw / 2 - 2;
    return max(0ll, min(o, n - dw));
}

#define SUCC_OUT 0xffffu    /* a neighbour the priority needs lies outside the window */
#define SUCC_NONE 0xfffeu   /* no neighbour on a shortest path: the field is broken */
#define SUCC_GOAL 0xfffdu   /* the goal, or unreached: no step */

// The device's nanosecond clock (%globaltimer), for launches that bound their own time.
__device__ __forceinline__ u64 global_ns() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// A barrier of the whole grid for kernels whose blocks are all resident (a cooperative launch):
// bar[0] counts arrivals, bar[1] is the barrier's generation (both 0 before the first use). The
// last block to arrive runs `last()` before any block goes on (every block's writes before the
// barrier are visible to it, and none is written meanwhile).
template <typename F> __device__ __forceinline__ void grid_barrier_then(u32 *bar, F last) {
    __syncthreads();
    if (threadIdx.x == 0) {
        volatile u32 *gen = &bar[1];
        const u32 g = *gen;
        __threadfence();
        if (atomicAdd(&bar[0], 1u) == gridDim.x - 1) {
            last();
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

__device__ __forceinline__ void grid_barrier(u32 *bar) {
    grid_barrier_then(bar, [] {});
}

// Rounds of tiles behind a grid barrier (lee/bitwave.cu, costfield.cu): queues tile t on the
// list of the round after `round` (three lists of ntiles entries, round r reading list r % 3;
// counts their lengths), once: queued[t] holds the last round it was queued for.
__device__ __forceinline__ void queue_tile(u32 t, u32 *lists, u32 *counts, u32 *queued, u32 ntiles,
                                           u32 round) {
    const u32 next = round + 1;
    if (atomicMax(&queued[t], next) < next) {
        const u32 l = next % 3;
        lists[(u64)l * ntiles + atomicAdd(&counts[l], 1u)] = t;
    }
}
