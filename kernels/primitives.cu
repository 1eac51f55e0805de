// Parallel primitives: exclusive prefix sum (u32, wrapping), stream compaction with keep flags,
// and a stable LSD radix sort of (u64 key, u32 value) pairs with 8-bit digits.
//
// Compiled by NVRTC at run time (see src/compute/cuda.rs), after kernels/common.cuh.
//
// Kernels:
//   scan_reduce_tiles, scan_tiles, scan_tiles_inplace   exclusive scan, recursive over tiles
//   iota_u32, fill_u32                                  fills
//   flags_to_u32, compact_scatter                       stream compaction
//   radix_global_hist                                   digit counts (passes to skip)
//   radix_digit_bases                                   where each digit starts, on the device
//   radix_upsweep, radix_downsweep                      three-kernel radix pass
//   radix_onesweep                                      one-sweep radix pass (decoupled look-back)

// ---------------------------------------------------------------------------------------------
// Exclusive scan. A tile is SCAN_THREADS * SCAN_ITEMS consecutive elements; the host recurses
// over tile sums, so any n is handled with three launches per level.
// ---------------------------------------------------------------------------------------------
#define SCAN_THREADS 256
#define SCAN_ITEMS 8
#define SCAN_TILE (SCAN_THREADS * SCAN_ITEMS)

__device__ __forceinline__ u32 warp_inclusive_scan(u32 x) {
    const u32 lane = threadIdx.x & 31;
#pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
        u32 y = __shfl_up_sync(FULL_MASK, x, d);
        if (lane >= d) x += y;
    }
    return x;
}

// Exclusive scan of one value per thread over the block (blockDim.x == 256); returns the
// block total through *total. `warp_sums` holds 8 entries of shared memory.
__device__ __forceinline__ u32 block_exclusive_scan(u32 x, u32 *warp_sums, u32 *total) {
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const u32 nwarps = blockDim.x >> 5;
    u32 inc = warp_inclusive_scan(x);
    if (lane == 31) warp_sums[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        u32 w = lane < nwarps ? warp_sums[lane] : 0;
        u32 winc = warp_inclusive_scan(w);
        if (lane < nwarps) warp_sums[lane] = winc - w;
        if (lane == nwarps - 1) warp_sums[31] = winc;
    }
    __syncthreads();
    u32 result = inc - x + warp_sums[warp];
    *total = warp_sums[31];
    __syncthreads();
    return result;
}

extern "C" __global__ void scan_reduce_tiles(const u32 *__restrict__ in, u32 n,
                                             u32 *__restrict__ tile_sums) {
    __shared__ u32 warp_sums[32];
    const u64 base = (u64)blockIdx.x * SCAN_TILE;
    u32 s = 0;
#pragma unroll
    for (u32 i = 0; i < SCAN_ITEMS; ++i) {
        u64 idx = base + (u64)i * SCAN_THREADS + threadIdx.x;
        if (idx < n) s += in[idx];
    }
    u32 total;
    block_exclusive_scan(s, warp_sums, &total);
    if (threadIdx.x == 0) tile_sums[blockIdx.x] = total;
}

// In-place safe: a block reads its whole tile before it writes.
__device__ __forceinline__ void scan_tile(const u32 *in, u32 *out, u32 n,
                                          const u32 *__restrict__ tile_offsets) {
    __shared__ u32 tile[SCAN_TILE + SCAN_TILE / 32];  // padded against bank conflicts
    __shared__ u32 warp_sums[32];
    const u64 base = (u64)blockIdx.x * SCAN_TILE;
#define PAD(i) ((i) + ((i) >> 5))
#pragma unroll
    for (u32 i = 0; i < SCAN_ITEMS; ++i) {
        u32 local = i * SCAN_THREADS + threadIdx.x;
        u64 idx = base + local;
        tile[PAD(local)] = idx < n ? in[idx] : 0;
    }
    __syncthreads();
    u32 items[SCAN_ITEMS];
    u32 s = 0;
#pragma unroll
    for (u32 i = 0; i < SCAN_ITEMS; ++i) {
        items[i] = tile[PAD(threadIdx.x * SCAN_ITEMS + i)];
        s += items[i];
    }
    u32 total;
    u32 prefix = block_exclusive_scan(s, warp_sums, &total);
    if (tile_offsets) prefix += tile_offsets[blockIdx.x];
#pragma unroll
    for (u32 i = 0; i < SCAN_ITEMS; ++i) {
        tile[PAD(threadIdx.x * SCAN_ITEMS + i)] = prefix;
        prefix += items[i];
    }
    __syncthreads();
#pragma unroll
    for (u32 i = 0; i < SCAN_ITEMS; ++i) {
        u32 local = i * SCAN_THREADS + threadIdx.x;
        u64 idx = base + local;
        if (idx < n) out[idx] = tile[PAD(local)];
    }
#undef PAD
}

// tile_offsets may be null (single-tile scans).
extern "C" __global__ void scan_tiles(const u32 *in, u32 *out, u32 n, const u32 *tile_offsets) {
    scan_tile(in, out, n, tile_offsets);
}

extern "C" __global__ void scan_tiles_inplace(u32 *data, u32 n, const u32 *tile_offsets) {
    scan_tile(data, data, n, tile_offsets);
}

// ---------------------------------------------------------------------------------------------
// Fills: out[i] = i, and out[i] = v.
// ---------------------------------------------------------------------------------------------
extern "C" __global__ void iota_u32(u32 *out, u32 n) {
    GRID_STRIDE(i, n) out[i] = (u32)i;
}

extern "C" __global__ void fill_u32(u32 *out, u32 n, u32 v) {
    GRID_STRIDE(i, n) out[i] = v;
}

// ---------------------------------------------------------------------------------------------
// The stream held for `ns` nanoseconds of the device's global timer (one thread): a benchmark
// queues the launches it times behind it, so the device runs them back to back and the host's
// time to issue them is not counted as device time (nvbench's blocking kernel does this).
// ---------------------------------------------------------------------------------------------
extern "C" __global__ void hold_ns(u64 ns) {
    u64 start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

// ---------------------------------------------------------------------------------------------
// Stream compaction: keep values[i] where flags[i] != 0, in order.
// ---------------------------------------------------------------------------------------------
extern "C" __global__ void flags_to_u32(const u8 *__restrict__ flags, u32 *__restrict__ out,
                                        u32 n) {
    GRID_STRIDE(i, n)
        out[i] = flags[i] != 0;
}

extern "C" __global__ void compact_scatter(const u32 *__restrict__ values,
                                           const u8 *__restrict__ flags,
                                           const u32 *__restrict__ positions,
                                           u32 *__restrict__ out, u32 n) {
    GRID_STRIDE(i, n)
        if (flags[i]) out[positions[i]] = values[i];
}

// ---------------------------------------------------------------------------------------------
// LSD radix sort, 8-bit digits. Per pass: upsweep (per-tile digit counts, digit-major), an
// exclusive scan of those counts (global offsets ordered by digit, then tile), and a downsweep
// that ranks each tile stably with warp match masks, reorders it in shared memory and writes
// runs of equal digits contiguously.
// ---------------------------------------------------------------------------------------------
// SORT_ITEMS (keys per thread) and SORT_MIN_BLOCKS (blocks per SM the register budget is
// sized for) may be set by the host with -D; these are the tuned defaults for sm_90.
#ifndef SORT_ITEMS
#define SORT_ITEMS 16
#endif
#ifndef SORT_MIN_BLOCKS
#define SORT_MIN_BLOCKS 2
#endif
#define SORT_THREADS 256
#define SORT_WARPS (SORT_THREADS / 32)
#define SORT_TILE (SORT_THREADS * SORT_ITEMS)
#define RADIX 256
#define WARP_CHUNK (32 * SORT_ITEMS)

// Counts of every one of the 8 digits over all keys, so the host can skip passes in which all
// keys share one digit value. Each thread loads HIST_ITEMS keys before counting any: with one
// load per iteration of a grid-stride loop, eight shared atomics apart, a thread waits out a
// DRAM round trip per key, and an SM's resident warps keep too few loads in flight to hide it.
#define HIST_ITEMS 8
extern "C" __global__ void radix_global_hist(const u64 *__restrict__ keys, u32 n,
                                             u32 *__restrict__ hist /* 8 * 256 */) {
    __shared__ u32 h[8 * RADIX];
    for (u32 i = threadIdx.x; i < 8 * RADIX; i += blockDim.x) h[i] = 0;
    __syncthreads();
    const u64 span = (u64)blockDim.x * HIST_ITEMS;
    for (u64 first = (u64)blockIdx.x * span + threadIdx.x; first < n;
         first += (u64)gridDim.x * span) {
        u64 k[HIST_ITEMS];
#pragma unroll
        for (u32 j = 0; j < HIST_ITEMS; ++j) {
            const u64 i = first + (u64)j * blockDim.x;
            k[j] = i < n ? keys[i] : 0;
        }
#pragma unroll
        for (u32 j = 0; j < HIST_ITEMS; ++j) {
            if (first + (u64)j * blockDim.x >= n) break;
#pragma unroll
            for (u32 d = 0; d < 8; ++d)
                atomicAdd(&h[d * RADIX + ((k[j] >> (8 * d)) & 0xff)], 1u);
        }
    }
    __syncthreads();
    for (u32 i = threadIdx.x; i < 8 * RADIX; i += blockDim.x)
        if (h[i]) atomicAdd(&hist[i], h[i]);
}

// Where each digit value starts in the sorted output, for each of the 8 digit positions: an
// exclusive scan of radix_global_hist's counts, one block of RADIX threads per position. With
// it a sort reads nothing back, so the host never waits for it.
extern "C" __global__ void radix_digit_bases(const u32 *__restrict__ hist, u32 *__restrict__ bases) {
    __shared__ u32 warp_sums[32];
    u32 total;
    const u32 at = blockIdx.x * RADIX + threadIdx.x;
    bases[at] = block_exclusive_scan(hist[at], warp_sums, &total);
}

extern "C" __global__ void radix_upsweep(const u64 *__restrict__ keys, u32 n, u32 shift,
                                         u32 *__restrict__ tile_hist, u32 num_tiles) {
    __shared__ u32 h[SORT_WARPS][RADIX];  // warp-private counters cut atomic contention
    const u32 warp = threadIdx.x >> 5;
    for (u32 i = threadIdx.x; i < SORT_WARPS * RADIX; i += SORT_THREADS) (&h[0][0])[i] = 0;
    __syncthreads();
    const u64 base = (u64)blockIdx.x * SORT_TILE;
#pragma unroll
    for (u32 i = 0; i < SORT_ITEMS; ++i) {
        u64 idx = base + (u64)i * SORT_THREADS + threadIdx.x;
        if (idx < n) atomicAdd(&h[warp][(keys[idx] >> shift) & 0xff], 1u);
    }
    __syncthreads();
    u32 d = threadIdx.x;  // SORT_THREADS == RADIX
    u32 s = 0;
#pragma unroll
    for (u32 w = 0; w < SORT_WARPS; ++w) s += h[w][d];
    tile_hist[(u64)d * num_tiles + blockIdx.x] = s;
}

// Lanes of the warp whose 8-bit digit equals this lane's: eight ballots, cheaper than
// __match_any_sync on current GPUs.
__device__ __forceinline__ u32 warp_digit_peers(u32 d) {
    u32 peers = FULL_MASK;
#pragma unroll
    for (u32 b = 0; b < 8; ++b) {
        u32 bit = (d >> b) & 1;
        u32 vote = __ballot_sync(FULL_MASK, bit);
        peers &= bit ? vote : ~vote;
    }
    return peers;
}

// Shared memory of one sorting tile.
struct SortTileShared {
    u32 cnt[SORT_WARPS][RADIX];
    u32 digit_start[RADIX];
    u32 global_base[RADIX];
    u32 warp_sums[32];
    u32 early[RADIX];  // the tile's digit counts, known before ranking (one-sweep only)
    u32 tile;
    // Keys first, then values, through the same buffer: half the shared memory, so a tile can
    // be twice as large, which doubles the length of the runs written to global memory.
    u64 buf[SORT_TILE];
};

// Loads a tile and ranks it stably. On return: pos[r] = rank of item r among equal digits of
// its warp (before warp offsets), cnt[w][d] = exclusive prefix of digit d over warps, and the
// return value is this thread's digit total over the tile (thread index = digit).
__device__ __forceinline__ void load_tile(const u64 *__restrict__ keys_in,
                                          const u32 *__restrict__ vals_in, u64 tile_base,
                                          u32 tile_count, u64 (&k)[SORT_ITEMS],
                                          u32 (&v)[SORT_ITEMS]) {
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    // Issue every load before the first ballot so the memory system sees them all at once.
#pragma unroll
    for (u32 r = 0; r < SORT_ITEMS; ++r) {
        u32 local = warp * WARP_CHUNK + r * 32 + lane;
        bool valid = local < tile_count;
        k[r] = valid ? keys_in[tile_base + local] : ~0ull;
        v[r] = valid ? vals_in[tile_base + local] : 0;
    }
}

// Ranks a loaded tile stably. On return: pos[r] = rank of item r among equal digits of its
// warp (before warp offsets), cnt[w][d] = exclusive prefix of digit d over warps,
// digit_start[d] = where digit d's run starts in the tile, and the return value is this
// thread's digit total over the tile (thread index = digit).
__device__ __forceinline__ u32 rank_tile(u32 tile_count, u32 shift, SortTileShared &sh,
                                         const u64 (&k)[SORT_ITEMS], u32 (&pos)[SORT_ITEMS]) {
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const u32 lt_mask = (1u << lane) - 1;
    for (u32 i = threadIdx.x; i < SORT_WARPS * RADIX; i += SORT_THREADS) (&sh.cnt[0][0])[i] = 0;
    __syncthreads();
    // Each warp owns a contiguous chunk and walks it in rounds of 32, so (warp, round, lane)
    // is input order and the ranks are stable.
#pragma unroll
    for (u32 r = 0; r < SORT_ITEMS; ++r) {
        u32 local = warp * WARP_CHUNK + r * 32 + lane;
        bool valid = local < tile_count;
        u32 d = (u32)((k[r] >> shift) & 0xff);
        u32 peers = warp_digit_peers(d) & __ballot_sync(FULL_MASK, valid);
        u32 before = sh.cnt[warp][d];
        pos[r] = before + __popc(peers & lt_mask);  // an invalid lane's value is unused
        __syncwarp();
        if (valid && (peers & lt_mask) == 0) sh.cnt[warp][d] = before + __popc(peers);
        __syncwarp();
    }
    __syncthreads();
    u32 d = threadIdx.x;
    u32 running = 0;
#pragma unroll
    for (u32 w = 0; w < SORT_WARPS; ++w) {
        u32 t = sh.cnt[w][d];
        sh.cnt[w][d] = running;
        running += t;
    }
    u32 total;
    sh.digit_start[d] = block_exclusive_scan(running, sh.warp_sums, &total);
    return running;
}

// Reorders the ranked tile through shared memory and writes runs of equal digits; needs
// sh.global_base[d] = destination of the tile's first digit-d item minus digit_start[d].
__device__ __forceinline__ void scatter_tile(u64 *__restrict__ keys_out,
                                             u32 *__restrict__ vals_out, u32 tile_count,
                                             u32 shift, SortTileShared &sh,
                                             const u64 (&k)[SORT_ITEMS],
                                             const u32 (&v)[SORT_ITEMS], u32 (&pos)[SORT_ITEMS]) {
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (u32 r = 0; r < SORT_ITEMS; ++r) {
        u32 local = warp * WARP_CHUNK + r * 32 + lane;
        u32 d = (u32)((k[r] >> shift) & 0xff);
        pos[r] += sh.digit_start[d] + sh.cnt[warp][d];
        if (local < tile_count) sh.buf[pos[r]] = k[r];
    }
    __syncthreads();
    u32 dig_of[SORT_ITEMS];
#pragma unroll
    for (u32 j = 0; j < SORT_ITEMS; ++j) {
        u32 i = j * SORT_THREADS + threadIdx.x;
        if (i < tile_count) {
            u64 key = sh.buf[i];
            u32 d = (u32)((key >> shift) & 0xff);
            dig_of[j] = d;
            keys_out[sh.global_base[d] + i] = key;
        }
    }
    __syncthreads();
    u32 *s_vals = (u32 *)sh.buf;
#pragma unroll
    for (u32 r = 0; r < SORT_ITEMS; ++r) {
        u32 local = warp * WARP_CHUNK + r * 32 + lane;
        if (local < tile_count) s_vals[pos[r]] = v[r];
    }
    __syncthreads();
#pragma unroll
    for (u32 j = 0; j < SORT_ITEMS; ++j) {
        u32 i = j * SORT_THREADS + threadIdx.x;
        if (i < tile_count) vals_out[sh.global_base[dig_of[j]] + i] = s_vals[i];
    }
}

// Three-kernel pass, downsweep: per-tile offsets come from the scanned upsweep counts.
extern "C" __global__ void __launch_bounds__(SORT_THREADS, SORT_MIN_BLOCKS)
radix_downsweep(const u64 *__restrict__ keys_in, const u32 *__restrict__ vals_in,
                u64 *__restrict__ keys_out, u32 *__restrict__ vals_out, u32 n, u32 shift,
                const u32 *__restrict__ tile_offsets, u32 num_tiles) {
    __shared__ SortTileShared sh;
    const u64 tile_base = (u64)blockIdx.x * SORT_TILE;
    const u32 tile_count = (u32)min((u64)SORT_TILE, (u64)n - tile_base);
    u64 k[SORT_ITEMS];
    u32 v[SORT_ITEMS], pos[SORT_ITEMS];
    load_tile(keys_in, vals_in, tile_base, tile_count, k, v);
    rank_tile(tile_count, shift, sh, k, pos);
    u32 d = threadIdx.x;
    sh.global_base[d] = tile_offsets[(u64)d * num_tiles + blockIdx.x] - sh.digit_start[d];
    __syncthreads();
    scatter_tile(keys_out, vals_out, tile_count, shift, sh, k, v, pos);
}

// One-sweep pass (Adinets & Merrill): tiles take ids in start order from an atomic counter,
// publish their digit counts, and find the counts of all earlier tiles by decoupled look-back,
// so a pass reads and writes the pairs once and needs no upsweep. A status word is
// flag (2 bits) | count (30 bits), hence n < 2^30 on this path.
#define LB_AGGREGATE (1u << 30)
#define LB_INCLUSIVE (2u << 30)
#define LB_VALUE 0x3fffffffu

extern "C" __global__ void __launch_bounds__(SORT_THREADS, SORT_MIN_BLOCKS)
radix_onesweep(const u64 *__restrict__ keys_in, const u32 *__restrict__ vals_in,
               u64 *__restrict__ keys_out, u32 *__restrict__ vals_out, u32 n, u32 shift,
               const u32 *__restrict__ digit_base /* 256: where each digit starts */,
               u32 *status /* num_tiles * 256, zeroed */, u32 *tile_counter /* zeroed */) {
    __shared__ SortTileShared sh;
    if (threadIdx.x == 0) sh.tile = atomicAdd(tile_counter, 1u);
    __syncthreads();
    const u32 tile = sh.tile;
    const u64 tile_base = (u64)tile * SORT_TILE;
    const u32 tile_count = (u32)min((u64)SORT_TILE, (u64)n - tile_base);
    u64 k[SORT_ITEMS];
    u32 v[SORT_ITEMS], pos[SORT_ITEMS];
    const u32 d = threadIdx.x;
    sh.early[d] = 0;
    load_tile(keys_in, vals_in, tile_base, tile_count, k, v);
    __syncthreads();
    // Publish this tile's counts before ranking it, so later tiles stop waiting for us early.
    const u32 warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
#pragma unroll
    for (u32 r = 0; r < SORT_ITEMS; ++r)
        if (warp * WARP_CHUNK + r * 32 + lane < tile_count)
            atomicAdd(&sh.early[(u32)((k[r] >> shift) & 0xff)], 1u);
    __syncthreads();
    const u32 count = sh.early[d];
    volatile u32 *st = status;
    st[(u64)tile * RADIX + d] = (tile == 0 ? LB_INCLUSIVE : LB_AGGREGATE) | count;

    rank_tile(tile_count, shift, sh, k, pos);

    // Look back four predecessors per round trip; stop at the first inclusive count.
    u32 prefix = 0;
    for (long long j = (long long)tile - 1; j >= 0; j -= 4) {
        u32 s4[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) s4[i] = j - i >= 0 ? st[(u64)(j - i) * RADIX + d] : LB_INCLUSIVE;
        bool done = false;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            if (done) break;
            u32 s = s4[i];
            while ((s & ~LB_VALUE) == 0) s = st[(u64)(j - i) * RADIX + d];
            prefix += s & LB_VALUE;
            done = (s & LB_INCLUSIVE) != 0;
        }
        if (done) break;
    }
    if (tile != 0) st[(u64)tile * RADIX + d] = LB_INCLUSIVE | (prefix + count);
    sh.global_base[d] = digit_base[d] + prefix - sh.digit_start[d];
    __syncthreads();
    scatter_tile(keys_out, vals_out, tile_count, shift, sh, k, v, pos);
}
