// Floyd–Warshall all-pairs shortest paths with successors (src/apsp/gpu.rs drives these).
//
// Compile-time options (NVRTC -D):
//   APSP_FLOAT  1: weights are float; 0: int with the operand rules below.
//   TILE        k-block of the blocked models (phase tiles are TILE x TILE).
//   TT          cells per thread along each axis in phase 3 (1 = the seed's one thread per cell).
//   P12_THREADS threads of phases 1 and 2 (the seed's 1024: one per cell of a 32 x 32 tile).
//
// Matrices are np x np, row-major, np a multiple of TILE (padding vertices are isolated).
// d[i][j] is the best distance so far, h[i][j] the first vertex after i on that path
// (0xffffffff: none). Every update is `cand < d` (strict), so each variant reproduces the CPU
// reference that relaxes cells in the same order (src/apsp/cpu.rs).
//
// Integer operands: stored values >= REACH_LIMIT mean "unreached" and are read as INF_OP; values
// below LOW_OP (only possible with a negative cycle) are read as LOW_OP. With every finite path
// length inside (-2^29, 2^29) (checked on the host) a + b never wraps, an unreached operand
// never makes a reached-looking candidate, and the host maps everything >= REACH_LIMIT back to
// "unreached" at the end.
//
// Kernels:
//   apsp_unpack_ids                            edge ids sent two to a word, unpacked
//   apsp_check_edges, apsp_reach_sums          the edge list's checks (src/apsp/graph.rs validate)
//   apsp_init, apsp_edges                      the start matrices from the edge list (the host's
//                                              src/apsp/graph.rs dense, on the device)
//   apsp_zero_cycle, apsp_finish,              after the solve: whether an edge closes a cycle of
//   apsp_finish16                              weight <= 0 (src/apsp/paths.rs), and the answer as
//                                              the host reports it (src/apsp/mod.rs finish)
//   apsp_linear, apsp_coalesced, apsp_shared   one launch per k (the per-k memory models)
//   apsp_phase1, apsp_phase2, apsp_phase3      the blocked models' three phases per k-block
//   apsp_pack_bound                            whether every value of a solve packs (integers)

#ifndef APSP_FLOAT
#define APSP_FLOAT 0
#endif
#ifndef TILE
#define TILE 32
#endif
#ifndef TT
#define TT 1
#endif

#if APSP_FLOAT
typedef float W;
__device__ __forceinline__ W op(W x) { return x; }
#else
typedef int W;
#define INF_OP 0x3fffffff
#define REACH_LIMIT 0x20000000
#define LOW_OP (-0x40000000)
__device__ __forceinline__ W op(W x) { return x >= REACH_LIMIT ? INF_OP : max(x, LOW_OP); }
#endif

// d = min(d, a + b), the successor following the distance; strict, branch-free.
__device__ __forceinline__ void relax(W &d, u32 &h, W a, W b, u32 ha) {
#if APSP_FLOAT
    W c = a + b;
    bool lt = c < d;
    d = lt ? c : d;
    h = lt ? ha : h;
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // Hopper DPX: add and min in one instruction.
    W m = __viaddmin_s32(a, b, d);
    h = (m != d) ? ha : h;
    d = m;
#else
    W c = a + b;
    bool lt = c < d;
    d = lt ? c : d;
    h = lt ? ha : h;
#endif
}

// ---- The start matrices: the edge list's cells on an unreached matrix. ----------------------

#if APSP_FLOAT
#define UNREACHED_W __int_as_float(0x7f800000)
#else
#define UNREACHED_W INF_OP
#endif

// Edge ids sent packed (src/apsp/gpu.rs upload_ids): the tail in a word's low half, the head
// in its high half.
extern "C" __global__ void apsp_unpack_ids(const u32 *__restrict__ ids, u64 m, u32 *__restrict__ from,
                                           u32 *__restrict__ to) {
    GRID_STRIDE(e, m) {
        const u32 p = ids[e];
        from[e] = p & 0xffffu;
        to[e] = p >> 16;
    }
}

// The edge list's checks, as src/apsp/graph.rs `Graph::validate` makes them on the host: the
// first edge whose from id (bad[0]) or to id (bad[1]) is not below n, the first weight that is not
// finite (bad[2], float weights); for integer weights each vertex's largest positive and smallest
// negative out-weight (hi, lo: zero where it has none), which the host sums for the range check.
// bad[] starts at ~0 (none), hi and lo at 0. The lanes of a warp on one vertex (a sorted edge
// list's common case) merge their values before one atomic.
extern "C" __global__ void apsp_check_edges(const u32 *__restrict__ from, const u32 *__restrict__ to,
                                            const W *__restrict__ w, u64 m, u32 n, u64 *bad,
                                            int *hi, int *lo) {
    // Whole warps step together (the block is whole warps), so every lane takes part in the
    // warp's merge; a lane past the end holds no edge.
    u32 lane = threadIdx.x & 31;
    for (u64 base = grid_first() - lane; base < m; base += grid_step()) {
        u64 e = base + lane;
        bool in = e < m;
        u32 u = in ? from[e] : 0xffffffffu, v = in ? to[e] : 0;
        W x = in ? w[e] : (W)0;
        if (in && u >= n) atomicMin(&bad[0], e);
        if (in && v >= n) atomicMin(&bad[1], e);
#if APSP_FLOAT
        if (in && !isfinite(x)) atomicMin(&bad[2], e);
#else
        int up = x > 0 ? x : 0, down = x < 0 ? x : 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        u32 peers = __match_any_sync(0xffffffffu, u);
        up = __reduce_max_sync(peers, up);
        down = __reduce_min_sync(peers, down);
        bool leader = lane == (u32)(__ffs(peers) - 1);
#else
        bool leader = true;
#endif
        if (in && leader && u < n) {
            if (up > 0) atomicMax(&hi[u], up);
            if (down < 0) atomicMin(&lo[u], down);
        }
#endif
    }
}

// The range check's two sums over vertices (src/apsp/graph.rs check_reach): sum[0] of the hi
// values, sum[1] of the lo values, as two's-complement 64-bit words (both start at 0), so that the
// host reads the checks' whole verdict in one copy.
extern "C" __global__ void apsp_reach_sums(const int *__restrict__ hi, const int *__restrict__ lo,
                                           u32 n, u64 *sum) {
    long long p = 0, q = 0;
    GRID_STRIDE(i, n) {
        p += hi[i];
        q += lo[i];
    }
    for (int o = 16; o > 0; o >>= 1) {
        p += __shfl_down_sync(FULL_MASK, p, o);
        q += __shfl_down_sync(FULL_MASK, q, o);
    }
    if ((threadIdx.x & 31) == 0) {
        if (p != 0) atomicAdd(&sum[0], (u64)p);
        if (q != 0) atomicAdd(&sum[1], (u64)q);
    }
}

// Every cell unreached with no successor, but the diagonal: 0, itself (padding vertices too).
extern "C" __global__ void apsp_init(W *d, u32 *h, int np) {
    GRID_STRIDE(c, (u64)np * np) {
        bool diagonal = c / (u64)np == c % (u64)np;
        d[c] = diagonal ? (W)0 : UNREACHED_W;
        h[c] = diagonal ? (u32)(c % (u64)np) : 0xffffffffu;
    }
}

// d = min(d, x) by one atomic: as the host's `x < d` decides (strict, so a -0 weight is stored
// as 0, which the host never replaces 0 with). A float's bits order as a signed int when it is
// not negative and as an unsigned int in reverse when it is, so one integer atomic does it.
__device__ __forceinline__ void lower(W *d, W x) {
#if APSP_FLOAT
    if (x == 0.0f) x = 0.0f;
    if (x >= 0.0f) atomicMin((int *)d, __float_as_int(x));
    else atomicMax((unsigned int *)d, __float_as_uint(x));
#else
    atomicMin(d, x);
#endif
}

// Edge e lowers d[from][to] to its weight: parallel edges keep the lightest. Every edge u -> v
// (u != v) has successor v, so the successor is v whichever of them lands; a self loop keeps
// the diagonal's successor (it matters only when negative, and then it is a negative cycle).
// The checks' verdict is read after the solve, so an edge with an id not below np (a graph
// that is then refused) is skipped here: nothing is written outside the matrices.
extern "C" __global__ void apsp_edges(const u32 *__restrict__ from, const u32 *__restrict__ to,
                                      const W *__restrict__ w, u64 m, W *d, u32 *h, int np) {
    GRID_STRIDE(e, m) {
        u32 u = from[e], v = to[e];
        if (u >= (u32)np || v >= (u32)np) continue;
        u64 c = (u64)u * np + v;
        lower(&d[c], w[e]);
        if (u != v) h[c] = v;
    }
}

// ---- After the solve. ------------------------------------------------------------------------

__device__ __forceinline__ bool reached(W x) {
#if APSP_FLOAT
    return x < __int_as_float(0x7f800000);
#else
    return x < REACH_LIMIT;
#endif
}

// found = 1 when an edge u -> v (u != v) and the path v -> u make a cycle of weight <= 0 (a float
// sum within 1e-5 of it): src/apsp/paths.rs `has_zero_weight_cycle`, on the solved matrix, whose
// reached values are those the host reads. Ids not below np (a graph the checks refuse) are
// skipped, as in apsp_edges.
extern "C" __global__ void apsp_zero_cycle(const u32 *__restrict__ from, const u32 *__restrict__ to,
                                           const W *__restrict__ w, u64 m, const W *__restrict__ d,
                                           int np, u64 *found) {
    GRID_STRIDE(e, m) {
        u32 u = from[e], v = to[e];
        if (u == v || u >= (u32)np || v >= (u32)np) continue;
        W back = d[(u64)v * np + u];
        if (!reached(back)) continue;
#if APSP_FLOAT
        // One rounded f32 add, as the host's, then compared in double.
        if ((double)__fadd_rn(w[e], back) <= 1e-5) *found = 1;
#else
        // The host's wrapping i32 add.
        if ((int)((u32)w[e] + (u32)back) <= 0) *found = 1;
#endif
    }
}

// The answer as the host reports it (src/apsp/mod.rs `finish`): the n x n corner of the np x np
// matrices, every unreached cell INF with no successor. In place when np == n (each cell is read
// and written by one thread), else into other buffers. apsp_finish16 writes 16-bit successors
// (n <= 0xffff, so no vertex is 0xffff: it stands for none), a quarter less to copy back,
// widened on the host as the bytes leave the pinned chunks.
template <typename H>
__device__ __forceinline__ void finish(const W *d, const u32 *h, int np, W *od, H *oh, int n) {
    GRID_STRIDE(c, (u64)n * n) {
        u64 s = c / (u64)n * np + c % (u64)n;
        W x = d[s];
        u32 y = h[s];
        bool r = reached(x);
        od[c] = r ? x : UNREACHED_W;
        oh[c] = r ? (H)y : (H)0xffffffffu;
    }
}

extern "C" __global__ void apsp_finish(const W *d, const u32 *h, int np, W *od, u32 *oh, int n) {
    finish(d, h, np, od, oh, n);
}

extern "C" __global__ void apsp_finish16(const W *d, const u32 *h, int np, W *od,
                                         unsigned short *oh, int n) {
    finish(d, h, np, od, oh, n);
}

// ---- The seed's per-k models: one launch per k, one thread per cell. ----------------------

// `linear`: a 1-D grid walking the matrix down columns (consecutive threads touch cells one row
// apart), the seed's uncoalesced starting point.
extern "C" __global__ void apsp_linear(W *d, u32 *h, int np, int k) {
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long)np * np) return;
    int i = (int)(idx % np), j = (int)(idx / np);
    W a = op(d[(long long)i * np + k]);
    W b = op(d[(long long)k * np + j]);
    long long c = (long long)i * np + j;
    W dc = d[c];
    u32 hc = h[c];
    relax(dc, hc, a, b, h[(long long)i * np + k]);
    d[c] = dc;
    h[c] = hc;
}

// `coalesced`: 2-D blocks, threadIdx.x along a row.
extern "C" __global__ void apsp_coalesced(W *d, u32 *h, int np, int k) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= np || j >= np) return;
    long long c = (long long)i * np + j;
    W dc = d[c];
    u32 hc = h[c];
    relax(dc, hc, op(d[(long long)i * np + k]), op(d[(long long)k * np + j]),
          h[(long long)i * np + k]);
    d[c] = dc;
    h[c] = hc;
}

// `shared`: as coalesced, with the block's slice of row k and column k staged in shared memory
// (blocks have at most 1024 threads, so 1024 entries cover any block shape).
extern "C" __global__ void apsp_shared(W *d, u32 *h, int np, int k) {
    __shared__ W row_k[1024];
    __shared__ W col_k[1024];
    __shared__ u32 col_h[1024];
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (threadIdx.y == 0 && j < np) row_k[threadIdx.x] = op(d[(long long)k * np + j]);
    if (threadIdx.x == 0 && i < np) {
        col_k[threadIdx.y] = op(d[(long long)i * np + k]);
        col_h[threadIdx.y] = h[(long long)i * np + k];
    }
    __syncthreads();
    if (i >= np || j >= np) return;
    long long c = (long long)i * np + j;
    W dc = d[c];
    u32 hc = h[c];
    relax(dc, hc, col_k[threadIdx.y], row_k[threadIdx.x], col_h[threadIdx.y]);
    d[c] = dc;
    h[c] = hc;
}

// ---- Blocked (Venkataraman): per k-block, phase 1 the diagonal tile, phase 2 its row and
// column tiles (the k-block's line), phase 3 the rest. Phases 1 and 2 run TILE x P12_Y
// threads, each owning TILE / P12_Y cells of one column: P12_THREADS threads in all, at most
// one per cell (the seed's 1,024 for `blocked`; 256 for `tiled`, whose phases 1 and 2 run
// beside phase 3 and so take a block's room no larger than phase 3's). -----------------------

#ifndef P12_THREADS
#define P12_THREADS 1024
#endif
#define P12_Y ((TILE * TILE > P12_THREADS) ? (P12_THREADS / TILE) : TILE)
#define P12_ROWS (TILE / P12_Y)

extern "C" __global__ void apsp_phase1(W *d, u32 *h, int np, int kb) {
    __shared__ W sd[TILE][TILE];
    __shared__ u32 sh[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long long base = (long long)kb * TILE;
    for (int r = ty; r < TILE; r += P12_Y) {
        long long g = (base + r) * np + base + tx;
        sd[r][tx] = d[g];
        sh[r][tx] = h[g];
    }
    __syncthreads();
    for (int k = 0; k < TILE; ++k) {
        W b = op(sd[k][tx]);
#pragma unroll
        for (int q = 0; q < P12_ROWS; ++q) {
            int r = ty + q * P12_Y;
            W dc = sd[r][tx];
            u32 hc = sh[r][tx];
            relax(dc, hc, op(sd[r][k]), b, sh[r][k]);
            sd[r][tx] = dc;
            sh[r][tx] = hc;
        }
        __syncthreads();
    }
    for (int r = ty; r < TILE; r += P12_Y) {
        long long g = (base + r) * np + base + tx;
        d[g] = sd[r][tx];
        h[g] = sh[r][tx];
    }
}

// blockIdx.y == 0: tile (kb, blockIdx.x) of the k-block's rows; == 1: tile (blockIdx.x, kb).
extern "C" __global__ void apsp_phase2(W *d, u32 *h, int np, int kb) {
    __shared__ W diag[TILE][TILE];
    __shared__ W own[TILE][TILE];
    __shared__ u32 aux[TILE][TILE];  // row tiles: the diagonal's successors; columns: own
    const int t = blockIdx.x;
    if (t == kb) return;
    const bool row = blockIdx.y == 0;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long long kbase = (long long)kb * TILE, tbase = (long long)t * TILE;
    const long long r0 = row ? kbase : tbase, c0 = row ? tbase : kbase;
    u32 hown[P12_ROWS];
#pragma unroll
    for (int q = 0; q < P12_ROWS; ++q) {
        int r = ty + q * P12_Y;
        long long gd = (kbase + r) * np + kbase + tx;
        long long go = (r0 + r) * np + c0 + tx;
        diag[r][tx] = op(d[gd]);
        own[r][tx] = d[go];
        hown[q] = h[go];
        aux[r][tx] = row ? h[gd] : hown[q];
    }
    __syncthreads();
    // Within step k the operands (row k, column k) never change, so the threads need no
    // ordering inside a step; column tiles keep their successors in `aux`, where column k is
    // read by the others.
    for (int k = 0; k < TILE; ++k) {
#pragma unroll
        for (int q = 0; q < P12_ROWS; ++q) {
            int r = ty + q * P12_Y;
            W dc = own[r][tx];
            if (row) {
                u32 hc = hown[q];
                relax(dc, hc, diag[r][k], op(own[k][tx]), aux[r][k]);
                hown[q] = hc;
            } else {
                u32 hc = aux[r][tx];
                relax(dc, hc, op(own[r][k]), diag[k][tx], aux[r][k]);
                aux[r][tx] = hc;
            }
            own[r][tx] = dc;
        }
        __syncthreads();
    }
#pragma unroll
    for (int q = 0; q < P12_ROWS; ++q) {
        int r = ty + q * P12_Y;
        long long go = (r0 + r) * np + c0 + tx;
        d[go] = own[r][tx];
        h[go] = row ? hown[q] : aux[r][tx];
    }
}

// Phase 3: the tiles outside the k-block's line (row and column kb), each with the column
// tile (I, kb) and row tile (kb, J) in shared memory. With `next` >= 0 (src/apsp/gpu.rs's
// lookahead) the tiles of the next k-block's line come first, in a launch of their own, so
// that its phases 1 and 2 run beside the rest: `part` 0 takes tile (blockIdx.y, blockIdx.x)
// unless it lies on either line, `part` 1 the next line's, its row (blockIdx.y 0, tile
// (next, blockIdx.x)) and then its column (blockIdx.y 1, tile (blockIdx.x, next)).
//
// Block (TILE/TT)^2 threads, thread (tx, ty) owning the TT x TT cells from row ty * TT,
// column tx * TT. Each step k reads the thread's TT entries of column k of the column tile and
// TT entries of row k of the row tile as 16-byte vectors at offsets fixed when the loop is
// unrolled: the column tile is stored transposed, its rows padded by four entries so the
// transposing stores spread over the banks.
// A strided layout needed one load per row and per column, two-way conflicted; a swizzle in
// place of the padding cost its index arithmetic on every step, in the pipe the add-mins use.
// The tiles take dynamic shared memory (P3_SMEM_BYTES, above the 48 KiB of static memory at
// TILE 64; the host opts in).
//
// Integer tiles whose values all lie in [0, PACK_FINITE) or are unreached (every tile of a graph
// without negative weights and with paths shorter than 2^22) run packed: each value shifted
// left by PACK_SHIFT, the row tile's entries tagged with k + 1 in the low bits, the cell's own
// value with 0. One add-min per relaxation then yields distance and winner together: the
// smallest (value, tag) is the cell's old value on a tie, else the first k reaching the
// minimum, which is exactly what the strict `<` in k order keeps. Successors are read only for
// the cells that improved, and only those are written back. Any other tile (negative weights,
// long paths) runs the generic loop; the choice is the block's, by vote, unless the host's
// bound (apsp_pack_bound) proves every value of the solve packable (p3_tile's PROVEN).
#define P3_S (TILE / TT)

#if APSP_FLOAT
typedef float4 W4;
typedef float2 W2;
#else
typedef int4 W4;
typedef int2 W2;
#endif

// The transposed column tile's row pitch, and the three tiles' bytes (src/apsp/gpu.rs
// computes the same bytes for the launch).
#define P3_PITCH (TILE + 4)
#define P3_SMEM_BYTES ((TILE * P3_PITCH + 2 * TILE * TILE) * 4)

// v = row[at .. at + TT); `at` a multiple of TT and `row` 16-byte aligned.
__device__ __forceinline__ void p3_run(W (&v)[TT], const W *row, int at) {
#if TT >= 4
#pragma unroll
    for (int g = 0; g < TT; g += 4) {
        W4 q = *reinterpret_cast<const W4 *>(row + at + g);
        v[g] = q.x;
        v[g + 1] = q.y;
        v[g + 2] = q.z;
        v[g + 3] = q.w;
    }
#elif TT == 2
    W2 q = *reinterpret_cast<const W2 *>(row + at);
    v[0] = q.x;
    v[1] = q.y;
#else
    v[0] = row[at];
#endif
}

#if !APSP_FLOAT
#define PACK_SHIFT 7  // tags 1..TILE <= 64 fit below bit 7
#define PACK_FINITE (1 << 22)
#define PACK_UNREACHED ((1 << 23) - 1)  // > any finite sum; two of them still fit when shifted
__device__ __forceinline__ bool packable(W x) {
    return x >= REACH_LIMIT || (x >= 0 && x < PACK_FINITE);
}
// Shifted as unsigned: a value that is not packable (the block then votes `wide`) may be
// negative.
__device__ __forceinline__ W pack(W x) {
    return (W)((u32)(x >= REACH_LIMIT ? PACK_UNREACHED : x) << PACK_SHIFT);
}
// pack() for a value known to be unreached or in [0, PACK_FINITE): the unsigned min sends
// every unreached value (>= REACH_LIMIT) to PACK_UNREACHED.
__device__ __forceinline__ W pack_proven(W x) {
    return (W)(min((u32)x, (u32)PACK_UNREACHED) << PACK_SHIFT);
}
__device__ __forceinline__ W add_min(W a, W b, W c) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    return __viaddmin_s32(a, b, c);
#else
    return min(a + b, c);
#endif
}
#endif

// Four blocks a multiprocessor (64 registers at 256 threads; the host asks for the largest
// shared-memory carveout): at the compiler's choice of registers two fitted, and the tile
// loads' latency showed (ncu: no eligible warp 44 % of the cycles; 90 -> 76 ms at n = 8192).
#define P3_MIN_BLOCKS 4

// The shared tiles: sat[k][r] the column tile's (r, k), sb the row tile, sha the column tile's
// successors.
struct P3Shared {
    W (*sat)[P3_PITCH];
    W (*sb)[TILE];
    u32 (*sha)[TILE];
};

// One tile of phase 3: `own` (and its successors `ownh`) relaxed through the column tile `col`
// (`colh`) and the row tile `row`. PROVEN (integer weights only): the host's bound
// (apsp_pack_bound) holds every value the solve can meet packable, so the tile runs packed
// without a vote and without the checks that feed it.
template <bool PROVEN>
__device__ __forceinline__ void p3_tile(const P3Shared s, W *own, u32 *ownh, const W *col,
                                        const u32 *colh, const W *row, int np) {
    const int tx = threadIdx.x, ty = threadIdx.y, r0 = ty * TT, c0 = tx * TT;
    // Integer operands are stored packed as they arrive; a block that votes `wide` stores them
    // again plainly below.
    bool wide = false;  // a value the packed form cannot hold
#pragma unroll
    for (int i = 0; i < TT; ++i)
#pragma unroll
        for (int j = 0; j < TT; ++j) {
            const int r = ty + i * P3_S, c = tx + j * P3_S, o = r * np + c;
            s.sha[r][c] = colh[o];
#if APSP_FLOAT
            s.sat[c][r] = op(col[o]);
            s.sb[r][c] = op(row[o]);
#else
            if (PROVEN) {
                s.sat[c][r] = pack_proven(col[o]);
                s.sb[r][c] = pack_proven(row[o]) | (r + 1);
            } else {
                const W a = op(col[o]), b = op(row[o]);
                wide |= !packable(a) || !packable(b);
                s.sat[c][r] = pack(a);
                s.sb[r][c] = pack(b) | (r + 1);
            }
#endif
        }
    W dd[TT][TT];
#pragma unroll
    for (int r = 0; r < TT; ++r) {
        p3_run(dd[r], own + (r0 + r) * np, c0);
#if !APSP_FLOAT
        if (!PROVEN) {
#pragma unroll
            for (int c = 0; c < TT; ++c) wide |= !packable(dd[r][c]);
        }
#endif
    }
#if !APSP_FLOAT
    if (PROVEN ? (__syncthreads(), true) : !__syncthreads_or(wide)) {
        W pd[TT][TT];
#pragma unroll
        for (int r = 0; r < TT; ++r)
#pragma unroll
            for (int c = 0; c < TT; ++c) pd[r][c] = PROVEN ? pack_proven(dd[r][c]) : pack(dd[r][c]);
#pragma unroll 8
        for (int k = 0; k < TILE; ++k) {
            W a[TT], b[TT];
            p3_run(a, s.sat[k], r0);
            p3_run(b, s.sb[k], c0);
#pragma unroll
            for (int r = 0; r < TT; ++r)
#pragma unroll
                for (int c = 0; c < TT; ++c) pd[r][c] = add_min(a[r], b[c], pd[r][c]);
        }
#pragma unroll
        for (int r = 0; r < TT; ++r)
#pragma unroll
            for (int c = 0; c < TT; ++c) {
                const int tag = pd[r][c] & ((1 << PACK_SHIFT) - 1);
                if (tag != 0) {
                    const int o = (r0 + r) * np + c0 + c;
                    own[o] = pd[r][c] >> PACK_SHIFT;
                    ownh[o] = s.sha[r0 + r][tag - 1];
                }
            }
        return;
    }
    // Each thread stores its own entries again, so the barrier below orders them.
#pragma unroll
    for (int i = 0; i < TT; ++i)
#pragma unroll
        for (int j = 0; j < TT; ++j) {
            const int r = ty + i * P3_S, c = tx + j * P3_S, o = r * np + c;
            s.sat[c][r] = op(col[o]);
            s.sb[r][c] = op(row[o]);
        }
#endif
    __syncthreads();
    u32 hh[TT][TT];
#pragma unroll
    for (int r = 0; r < TT; ++r)
#pragma unroll
        for (int c = 0; c < TT; ++c) hh[r][c] = ownh[(r0 + r) * np + c0 + c];
#pragma unroll 4
    for (int k = 0; k < TILE; ++k) {
        W a[TT], b[TT];
        u32 ha[TT];
        p3_run(a, s.sat[k], r0);
#pragma unroll
        for (int r = 0; r < TT; ++r) ha[r] = s.sha[r0 + r][k];
        p3_run(b, s.sb[k], c0);
#pragma unroll
        for (int r = 0; r < TT; ++r)
#pragma unroll
            for (int c = 0; c < TT; ++c) relax(dd[r][c], hh[r][c], a[r], b[c], ha[r]);
    }
#pragma unroll
    for (int r = 0; r < TT; ++r)
#pragma unroll
        for (int c = 0; c < TT; ++c) {
            const int o = (r0 + r) * np + c0 + c;
            own[o] = dd[r][c];
            ownh[o] = hh[r][c];
        }
}

// `bound` (integer weights): apsp_pack_bound's, read once per block (floats: unused).
extern "C" __global__ void __launch_bounds__(P3_S * P3_S, P3_MIN_BLOCKS)
    apsp_phase3(W *d, u32 *h, int np, int kb, int next, int part, const u64 *bound) {
    extern __shared__ __align__(16) unsigned char p3_smem[];
    const P3Shared s = {
        reinterpret_cast<W(*)[P3_PITCH]>(p3_smem),
        reinterpret_cast<W(*)[TILE]>(p3_smem + TILE * P3_PITCH * 4),
        reinterpret_cast<u32(*)[TILE]>(p3_smem + (TILE * P3_PITCH + TILE * TILE) * 4),
    };
    int I = blockIdx.y, J = blockIdx.x;
    if (part == 0) {
        if (I == next || J == next) return;
    } else {
        if (blockIdx.y == 1 && blockIdx.x == next) return;  // the row's launch has it
        I = blockIdx.y == 0 ? next : blockIdx.x;
        J = blockIdx.y == 0 ? blockIdx.x : next;
    }
    if (I == kb || J == kb) return;
    // The three tiles' first cells; offsets inside a tile (below TILE * np) fit an int.
    W *own = d + ((long long)I * np + J) * TILE;
    u32 *ownh = h + ((long long)I * np + J) * TILE;
    const W *col = d + ((long long)I * np + kb) * TILE;
    const u32 *colh = h + ((long long)I * np + kb) * TILE;
    const W *row = d + ((long long)kb * np + J) * TILE;
#if APSP_FLOAT
    p3_tile<false>(s, own, ownh, col, colh, row, np);
#else
    if (*bound < PACK_FINITE) p3_tile<true>(s, own, ownh, col, colh, row, np);
    else p3_tile<false>(s, own, ownh, col, colh, row, np);
#endif
}

// The bound behind phase 3's PROVEN tiles (integer weights): with no negative value in the
// start matrix, every value a solve meets is unreached or the length of a simple path, at most
// the sum over rows of the row's largest reached value. bound (0 before) gets that sum, plus
// 2^63 for a negative value. One block per row. Float modules compile it empty (every module
// loads every entry point its source names), and no float solve launches it.
extern "C" __global__ void apsp_pack_bound(const W *__restrict__ d, int np, u64 *bound) {
#if !APSP_FLOAT
    __shared__ W part[32];
    const W *rowp = d + (long long)blockIdx.x * np;
    W most = 0;
    bool negative = false;
    for (int c = threadIdx.x; c < np; c += blockDim.x) {
        const W x = rowp[c];
        if (x < REACH_LIMIT) most = max(most, x);
        negative |= x < 0;
    }
    negative = __syncthreads_or(negative);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) most = max(most, __shfl_xor_sync(FULL_MASK, most, o));
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = most;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < (int)(blockDim.x >> 5); ++w) most = max(most, part[w]);
        // The flag by an or (two rows' flags added would carry out); the sum stays below 2^62.
        if (negative) atomicOr(bound, 1ull << 63);
        atomicAdd(bound, (u64)most);
    }
#endif
}
