// Balanced k-d tree (src/kdtree/gpu.rs drives these): sort keys for Brown's presorts and the
// breadth-first levels, dedupe, and exact k-nearest queries. Distances: square roots of f32
// sums of squared differences in dimension order, explicitly rounded, as src/kdtree/cpu.rs
// computes them; neighbours ranked by (distance, input index).
//
// Kernels:
//   kd_pair_keys    sort keys of one LSD pass of a super-key presort
//   kd_flags        where a run of equal tuples starts, in sorted order
//   kd_unique       the distinct points and their first-copy input indices
//   kd_ranks        each point's rank in one dimension's order
//   kd_level_keys   sort keys of one breadth-first level
//   kd_layout       coordinates and indices copied into tree order
//   kd_bounds       each dimension's range over the queries
//   kd_cells        the queries' cells and each cell's count (the order they are answered in)
//   kd_cell_place   the queries in cell order
//   kd_knn          k nearest per query, k <= 64 in registers (KNN_K, KNN_DIMS, KNN_BOXES set by the host)
//   kd_knn_heap     k nearest per query, any k, a max-heap in scratch memory
//   kd_check        the balanced-tree invariant, counted
//   kd_radius       radius search: counts, then (distance, index) pairs
// Iota, scans and sorts come from primitives.cu.

__device__ __forceinline__ u32 sortable(float v) {
    u32 b = __float_as_uint(v);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

// One LSD pass of a super-key sort: keys[j] = coordinate ca of point perm[j] (more
// significant) and, when cb >= 0, coordinate cb (less significant) below it.
extern "C" __global__ void kd_pair_keys(const float *coords, int dims, const u32 *perm, u32 n,
                                        int ca, int cb, u64 *keys) {
    GRID_STRIDE(j, n) {
        const float *p = coords + (size_t)perm[j] * dims;
        u64 k = sortable(p[ca]);
        if (cb >= 0) k = (k << 32) | sortable(p[cb]);
        keys[j] = k;
    }
}

// flags[j] = 1 where sorted position j starts a new distinct tuple.
extern "C" __global__ void kd_flags(const float *coords, int dims, const u32 *perm, u32 n,
                                    u32 *flags) {
    GRID_STRIDE(j, n) {
        u32 f = 1;
        if (j > 0) {
            const float *a = coords + (size_t)perm[j] * dims, *b = coords + (size_t)perm[j - 1] * dims;
            f = 0;
            for (int d = 0; d < dims; ++d) f |= __float_as_uint(a[d]) != __float_as_uint(b[d]);
        }
        flags[j] = f;
    }
}

// Distinct points: coordinates and first-copy input index at each run start.
extern "C" __global__ void kd_unique(const float *coords, int dims, const u32 *perm,
                                     const u32 *flags, const u32 *pos, u32 n, float *ucoords,
                                     u32 *original) {
    GRID_STRIDE(j, n) {
        if (!flags[j]) continue;
        u32 u = pos[j], s = perm[j];
        original[u] = s;
        for (int d = 0; d < dims; ++d) ucoords[(size_t)u * dims + d] = coords[(size_t)s * dims + d];
    }
}

extern "C" __global__ void kd_ranks(const u32 *perm, u32 n, u32 *rank) {
    GRID_STRIDE(j, n)
        rank[perm[j]] = j;
}

// Keys of one breadth-first level: a position inside an open range [lo, hi) gets
// (lo, rank of its point in this level's dimension); a finished node keeps its place.
extern "C" __global__ void kd_level_keys(const u32 *order, u32 n, int level, const u32 *rank,
                                         u64 *keys) {
    GRID_STRIDE(i, n) {
        u32 lo = 0, hi = n;
        bool done = false;
        for (int t = 0; t < level; ++t) {
            u32 m = lo + (hi - lo) / 2;
            if (i == m) { done = true; break; }
            if (i < m) hi = m; else lo = m + 1;
        }
        keys[i] = done ? ((u64)i << 32) : (((u64)lo << 32) | rank[order[i]]);
    }
}

// The query kernels are compiled per (k, dimensions) so the k best and the query live in
// registers: -DKNN_K=k -DKNN_DIMS=d (defaults only keep this file compilable alone).
#ifndef KNN_K
#define KNN_K 1
#endif
#ifndef KNN_DIMS
#define KNN_DIMS 3
#endif
// kd_knn's traversal (src/kdtree/config.rs, Traversal): 0 a far side ruled out by its split
// plane alone, 1 by its bounding box; both in `search`'s one loop.
#ifndef KNN_BOXES
#define KNN_BOXES 0
#endif
#define STACK 64
// Subtrees of at most KNN_LEAF points are scanned whole: every point offered (those beyond
// the limit are refused by their distance), no split tested, nothing pushed. Near the leaves
// a split prunes little and each push and pop costs local-memory traffic and divergence. Set
// per k by the host (src/kdtree/gpu.rs leaf_span: 8 at k = 1 and in the heap's search, where
// the H100 chose it, 5 above, where the home subtree's limit lets a split prune more).
#ifndef KNN_LEAF
#define KNN_LEAF 8
#endif
// The home subtree's bound on its points (`search`; src/kdtree/gpu.rs home_span).
#ifndef KNN_HOME
#define KNN_HOME 32
#endif
#define KNN_ROW (KNN_DIMS == 3 ? 4 : KNN_DIMS) /* tree_row(KNN_DIMS) */

// A tree row's floats: 3-D rows are padded to 16 bytes (one aligned load per node) and carry
// the point's first-copy index in the fourth float's bits (no second load when it is kept).
__device__ __forceinline__ int tree_row(int dims) { return dims == 3 ? 4 : dims; }

// Tree-layout copies: coordinates and first-copy input index of position m, so a query reads
// one row per node (no indirection through order).
extern "C" __global__ void kd_layout(const float *coords, const u32 *order, const u32 *original,
                                     u32 n, int dims, float *tcoords, u32 *toriginal) {
    const int row = tree_row(dims);
    GRID_STRIDE(m, n) {
        u32 id = order[m];
        toriginal[m] = original[id];
        for (int d = 0; d < dims; ++d) tcoords[(size_t)m * row + d] = coords[(size_t)id * dims + d];
        if (row > dims) tcoords[(size_t)m * row + dims] = __uint_as_float(original[id]);
    }
}

// The k best in (d, i) order, in registers. For k > 1 every entry starts as (+inf, ~0),
// after every real point in that order (an index is below the point count, below 2^32 - 1),
// so the list is always full and an offer is one test against the last entry and a
// compare-and-shift with no count to consult: on the H100 this took 8-NN (3-D) from 63
// registers to 40 and from 1.99-2.05 ms to 1.62-1.75, and k = 32 from 12.7 ms to 6.5-6.7
// (docs/bench-history). For k = 1 the form with a count stays, as it was: there both the sentinel
// form and a shorter one-entry offer compiled 4-D to 32 registers instead of 38, which let 16
// blocks share an SM instead of 12, and made 4-D 1-NN on 16.7M points 15-30 % slower (more
// warps over a 268 MB tree).
#if KNN_K > 1
struct Best {
    float d[KNN_K];
    u32 i[KNN_K];
};

__device__ __forceinline__ void best_init(Best &b) {
#pragma unroll
    for (int t = 0; t < KNN_K; ++t) { b.d[t] = __int_as_float(0x7f800000); b.i[t] = 0xffffffffu; }
}

__device__ __forceinline__ float worst(const Best &b) { return b.d[KNN_K - 1]; }
#else
struct Best {
    float d[KNN_K];
    u32 i[KNN_K];
    int len;
};

__device__ __forceinline__ void best_init(Best &b) { b.len = 0; }

__device__ __forceinline__ float worst(const Best &b) {
    return b.len < KNN_K ? __int_as_float(0x7f800000) : b.d[KNN_K - 1];
}
#endif

__device__ __forceinline__ bool before(float d, u32 i, float d2, u32 i2) {
    return d < d2 || (d == d2 && i < i2);
}

// Insert keeping (d, i) order; with `unique`, an index already listed keeps its smaller d.
// Fully unrolled compare-and-shift so the arrays stay in registers.
__device__ __forceinline__ void offer(Best &b, float d, u32 idx, bool unique) {
#if KNN_K > 1
    if (unique) {
        int at = -1;
#pragma unroll
        for (int t = 0; t < KNN_K; ++t)
            if (b.i[t] == idx) at = t;
        if (at >= 0) {
            bool better = false;
#pragma unroll
            for (int t = 0; t < KNN_K; ++t)
                if (t == at) better = d < b.d[t];
            if (!better) return;
            // Drop the entry at `at` (the last becomes empty), then insert below.
#pragma unroll
            for (int t = 0; t + 1 < KNN_K; ++t)
                if (t >= at) { b.d[t] = b.d[t + 1]; b.i[t] = b.i[t + 1]; }
            b.d[KNN_K - 1] = __int_as_float(0x7f800000);
            b.i[KNN_K - 1] = 0xffffffffu;
        }
    }
    if (!before(d, idx, b.d[KNN_K - 1], b.i[KNN_K - 1])) return;
    // Shift larger entries up by one, from the top (the last falls out), and drop (d, idx)
    // into the gap.
    float cd = d;
    u32 ci = idx;
#pragma unroll
    for (int t = 0; t < KNN_K; ++t) {
        if (before(cd, ci, b.d[t], b.i[t])) {
            const float td = b.d[t];
            const u32 ti = b.i[t];
            b.d[t] = cd;
            b.i[t] = ci;
            cd = td;
            ci = ti;
        }
    }
#else
    if (unique) {
        int at = -1;
#pragma unroll
        for (int t = 0; t < KNN_K; ++t)
            if (t < b.len && b.i[t] == idx) at = t;
        if (at >= 0) {
            bool better = false;
#pragma unroll
            for (int t = 0; t < KNN_K; ++t)
                if (t == at) better = d < b.d[t];
            if (!better) return;
            // Drop the entry at `at`, then insert below.
#pragma unroll
            for (int t = 0; t + 1 < KNN_K; ++t)
                if (t >= at && t + 1 < b.len) { b.d[t] = b.d[t + 1]; b.i[t] = b.i[t + 1]; }
            b.len--;
        }
    }
    if (b.len == KNN_K && !before(d, idx, b.d[KNN_K - 1], b.i[KNN_K - 1])) return;
    float cd = d;
    u32 ci = idx;
#pragma unroll
    for (int t = 0; t < KNN_K; ++t) {
        if (t < b.len) {
            if (before(cd, ci, b.d[t], b.i[t])) {
                float td = b.d[t];
                u32 ti = b.i[t];
                b.d[t] = cd;
                b.i[t] = ci;
                cd = td;
                ci = ti;
            }
        } else if (t == b.len) {
            b.d[t] = cd;
            b.i[t] = ci;
        }
    }
    if (b.len < KNN_K) b.len++;
#endif
}

// The k best of a large k: a max-heap of (distance, index) keys in a scratch array of the
// launch, entry x of thread t at h[x * threads + t], so a warp's threads reading the same
// entry (the root, the first levels) read one line, and its root, the worst kept, cached in a
// register; the answer row is written once, heap-sorted, at the end. A key is the distance's
// bits above the index: distances are non-negative (or +inf), whose bits order as the floats
// do, so one 64-bit comparison is `before` and the entries of a heap are distinct.
struct HeapBest {
    u64 *h;
    u64 stride;
    int k;
    int len;
    u64 root;
};

__device__ __forceinline__ u64 heap_key(float d, u32 i) {
    return ((u64)__float_as_uint(d) << 32) | i;
}

__device__ __forceinline__ float key_dist(u64 key) { return __uint_as_float((u32)(key >> 32)); }

__device__ __forceinline__ float worst(const HeapBest &b) {
    return b.len < b.k ? __int_as_float(0x7f800000) : key_dist(b.root);
}

// Puts `key` at entry x or below it within [0, len), moving larger children up into the hole.
__device__ void sift_down(HeapBest &b, int x, int len, u64 key) {
    for (;;) {
        int c = 2 * x + 1;
        if (c >= len) break;
        u64 cv = b.h[c * b.stride];
        if (c + 1 < len) {
            const u64 c2 = b.h[(c + 1) * b.stride];
            if (c2 > cv) { ++c; cv = c2; }
        }
        if (cv <= key) break;
        b.h[x * b.stride] = cv;
        x = c;
    }
    b.h[x * b.stride] = key;
}

__device__ void offer(HeapBest &b, float d, u32 idx, bool unique) {
    const u64 key = heap_key(d, idx);
    if (unique) {
        for (int t = 0; t < b.len; ++t) {
            const u64 e = b.h[t * b.stride];
            if ((u32)e == idx) {
                // A smaller key in a max-heap only moves down.
                if (key < e) { sift_down(b, t, b.len, key); b.root = b.h[0]; }
                return;
            }
        }
    }
    if (b.len == b.k) {
        if (key >= b.root) return;
        sift_down(b, 0, b.len, key);
    } else {
        int x = b.len++;
        while (x > 0) {
            const int parent = (x - 1) / 2;
            const u64 pv = b.h[parent * b.stride];
            if (pv >= key) break;
            b.h[x * b.stride] = pv;
            x = parent;
        }
        b.h[x * b.stride] = key;
    }
    b.root = b.h[0];
}

// A bound on the squared distances that can still be kept while the worst kept distance is w
// (w >= 0): every float s >= 0 with sqrt_rn(s) <= w has s <= sq_limit(w). The search compares
// squared sums and squared plane distances against it and takes a root only for a point it
// offers; the offer itself decides by the rounded root and the index, so a bound a little
// loose costs a rare extra offer, never an answer. Proof of the bound: sqrt_rn(s) <= w means
// sqrt(s) <= w + ulp(w) / 2 <= w (1 + 2^-24) for normal w, so s <= w^2 (1 + 2^-22.9) <= the
// product below, which rounds up twice (for subnormal w the only such s is 0). The tightest
// bound (the largest s whose root rounds to w or below, found by stepping s one ulp at a time
// with a root per step) made 8-NN 10 % slower on the H100 (docs/bench-history): it runs every time
// the worst kept point changes.
__device__ __forceinline__ float sq_limit(float w) {
    const float inf = __int_as_float(0x7f800000);
    if (!(w < inf)) return inf;
    return __fmul_ru(__fmul_ru(w, w), 1.000000476837158203125f);  // 1 + 2^-21, exactly
}

// Tree row m into pv; returns what `kept_index` needs (3-D rows carry the point's index).
__device__ __forceinline__ u32 tree_point(const float *__restrict__ tc, u32 m,
                                          float (&pv)[KNN_DIMS]) {
    const float *p = tc + (size_t)m * KNN_ROW;
#if KNN_ROW == 4
    // One 16-byte load: tree rows of four floats are 16-byte aligned.
    const float4 v = __ldg(reinterpret_cast<const float4 *>(p));
    pv[0] = v.x; pv[1] = v.y; pv[2] = v.z;
#if KNN_DIMS == 4
    pv[3] = v.w;
    return 0;
#else
    return __float_as_uint(v.w);
#endif
#else
#pragma unroll
    for (int d = 0; d < KNN_DIMS; ++d) pv[d] = __ldg(p + d);
    return 0;
#endif
}

// The first-copy index of tree row m, for a point the search keeps: from the row for 3-D,
// else loaded only then.
__device__ __forceinline__ u32 kept_index(const u32 *__restrict__ torig, u32 m, u32 from_row) {
#if KNN_DIMS == 3
    return from_row;
#else
    return __ldg(torig + m);
#endif
}

// The squared distance from q to pv, rounded as every comparison here assumes.
__device__ __forceinline__ float sq_dist(const float *q, const float (&pv)[KNN_DIMS]) {
    float s = 0.0f;
#pragma unroll
    for (int d = 0; d < KNN_DIMS; ++d) {
        float x = __fsub_rn(q[d], pv[d]);
        s = __fadd_rn(s, __fmul_rn(x, x));
    }
    return s;
}

// Node m of a search: its point offered to `b` (with `offer_point`, when within `limit`, which
// then follows b's worst), and the query's offset from its split in `dim`, rounded as the
// boxes below take it (<= 0: the query's side is [lo, m)).
template <class B>
__device__ __forceinline__ float visit(const float *__restrict__ tc, const u32 *__restrict__ torig,
                                       u32 m, const float *q, int dim, bool offer_point, B &b,
                                       float &limit, bool unique) {
    float pv[KNN_DIMS];
    const u32 idx = tree_point(tc, m, pv);
    const float s = sq_dist(q, pv);
    if (offer_point && s <= limit) {
        offer(b, __fsqrt_rn(s), kept_index(torig, m, idx), unique);
        limit = sq_limit(worst(b));
    }
    float pd = 0.0f, qd = 0.0f;
#pragma unroll
    for (int d = 0; d < KNN_DIMS; ++d)
        if (d == dim) { pd = pv[d]; qd = q[d]; }
    return __fsub_rn(qd, pd);
}

// The query's search for the k best in registers: one loop that visits one node per turn, a
// leaf's next point or an inner node's point followed by its push and descent, with a pop
// first when the range is spent; the stack keeps a far side's range, split dimension and
// squared split offset (its plane's term, <= the squared distance of every point there).
// A warp's lanes then visit a node together whatever each is doing (one scanning a leaf,
// another descending, a third popping), where nested loops (pop, descend, scan) ran each kind
// of step apart from the others: ncu counted 9.0 of 32 lanes active per instruction at
// 8-NN, and on the H100 the one loop made 8-NN 12-20 % faster, 4-D 1-NN 15-20 %, k = 32
// 43-44 % (docs/bench-history). The heap's search (`search_boxes`) keeps its nested loops: there
// the one loop was 8-23 % slower on all but the smallest cloud.
// With BOXES a far side is pushed with its box, as `search_boxes` below pushes it (its proof
// holds here): the query's offsets from the current range's box ride along in registers, a
// near side keeping them and a far side's taken from the stack. In this one loop the boxes
// cost nothing at k = 1 on the real clouds (1.3-1.6x on 16.7M uniform points), pay from k = 8
// on scans of flat surfaces and from k = 32 on every cloud measured, where the nested loops'
// boxes had lost everywhere but on the table scan (docs/bench-history, twenty-second part).
template <bool BOXES, class B>
__device__ void search(const float *__restrict__ tc, const u32 *__restrict__ torig, u32 n,
                       const float *q, B &b, bool unique) {
    u32 slo[STACK], shi[STACK];
    unsigned char sdim[STACK];
    float sbox[STACK];
    float soff[BOXES ? STACK : 1][KNN_DIMS];
    float off[KNN_DIMS];
#pragma unroll
    for (int d = 0; d < KNN_DIMS; ++d) off[d] = 0.0f;
    float limit = sq_limit(worst(b));
    // The home phase first: the query's own side at every node down to its home subtree (the
    // first of at most KNN_HOME points), offering the path's points and the subtree's whole,
    // pushing nothing: the loop below then starts with a limit near the k-th distance and
    // pushes only the far sides that can still hold a point. Its first descent walks the same
    // path again without offering and skips the home subtree (each point is offered once).
    // With only the path and a leaf (the first form, k = 1 alone) the eighth best was a loose
    // bound, and 8-NN 9 % slower on the H100; a subtree of about 4k points makes it tight: on
    // the H200 (docs/bench-history) 8-NN on 1M points took 1.29-1.30 ms with 31 points against
    // 1.44-1.47 without, 1.38-1.41 with 15 or 63, and given each query's own 8th distance
    // from the start (a bound no home phase can beat) its search took about two thirds of
    // its time. The second walk is cheaper than pushing the path's far sides as it goes
    // (against its falling limit, then popping): on the H200 that made 1-NN 1.9-2.0x slower
    // in 3-D and 4-D (a push a level, whose stack lines leave L1 where the walk's loads mostly
    // hit), 1.7x with each far side packed in two words (docs/bench-history).
    {
        u32 lo = 0, hi = n;
        int dim = 0;
        while (lo < hi) {
            if (hi - lo <= KNN_HOME) {
                for (u32 m = lo; m < hi; ++m) visit(tc, torig, m, q, dim, true, b, limit, unique);
                break;
            }
            const u32 m = lo + (hi - lo) / 2;
            if (visit(tc, torig, m, q, dim, true, b, limit, unique) <= 0.0f) hi = m; else lo = m + 1;
            dim = dim + 1 == KNN_DIMS ? 0 : dim + 1;
        }
    }
    bool home = true;
    int top = 0;
    u32 lo = 0, hi = n;
    int dim = 0;
    for (;;) {
        // The home subtree was offered whole by the home phase.
        if (home && hi - lo <= KNN_HOME) lo = hi;
        if (lo >= hi) {
            // The range is spent (the home path's first walk ends here too).
            home = false;
            while (top > 0 && sbox[top - 1] > limit) --top;
            if (top == 0) break;
            --top;
            lo = slo[top]; hi = shi[top]; dim = sdim[top];
            if constexpr (BOXES) {
#pragma unroll
                for (int d = 0; d < KNN_DIMS; ++d) off[d] = soff[top][d];
            }
        }
        // Subtrees of at most KNN_LEAF points are scanned whole, one point per turn.
        const bool leaf = hi - lo <= KNN_LEAF;
        const u32 m = leaf ? lo : lo + (hi - lo) / 2;
        const float diff = visit(tc, torig, m, q, dim, !home, b, limit, unique);
        if (leaf) { ++lo; continue; }
        u32 nlo, nhi, flo, fhi;
        if (diff <= 0.0f) { nlo = lo; nhi = m; flo = m + 1; fhi = hi; }
        else { nlo = m + 1; nhi = hi; flo = lo; fhi = m; }
        float box = __fmul_rn(diff, diff);
        if constexpr (BOXES) {
            box = 0.0f;
#pragma unroll
            for (int d = 0; d < KNN_DIMS; ++d) {
                const float o = d == dim ? diff : off[d];
                box = __fadd_rn(box, __fmul_rn(o, o));
            }
        }
        const int next = dim + 1 == KNN_DIMS ? 0 : dim + 1;
        if (flo < fhi && box <= limit) {
            slo[top] = flo; shi[top] = fhi; sdim[top] = next; sbox[top] = box;
            if constexpr (BOXES) {
#pragma unroll
                for (int d = 0; d < KNN_DIMS; ++d) soff[top][d] = d == dim ? diff : off[d];
            }
            ++top;
        }
        dim = next;
        lo = nlo; hi = nhi;
    }
}

// The heap's search below [lo, hi) pushes far sides with their box: the query's offset from
// the side's bounding box in each dimension (0 where the query lies within it; the split's
// offset in the split dimension, the parent's in the others) and the box's squared distance,
// summed in dimension order exactly as a point's squared distance is. Every offset is a
// rounded difference no larger in magnitude than the rounded difference to any point of the
// box (rounding is monotone), and rounded sums of non-negative terms are monotone in each
// term, so the box's sum is <= the sum of every point in it: a side whose box sum exceeds the
// limit holds no point the search would keep. It prunes more than the split plane alone (the
// box sum includes the plane's term) but moves KNN_DIMS more floats per push and pop: on the
// H100 it made the heap's large k 10-17 % faster and k = 1 38-48 % slower (docs/bench-history),
// so the heap always takes boxes, and kd_knn takes them in its one loop (`search`) when
// asked.
template <class B>
__device__ void search_boxes(const float *__restrict__ tc, const u32 *__restrict__ torig, u32 n,
                             const float *q, B &b, bool unique) {
    u32 slo[STACK], shi[STACK];
    unsigned char sdim[STACK];
    float sbox[STACK];
    float soff[STACK][KNN_DIMS];
    float limit = sq_limit(worst(b));
    int top = 1;
    slo[0] = 0; shi[0] = n; sdim[0] = 0; sbox[0] = 0.0f;
#pragma unroll
    for (int d = 0; d < KNN_DIMS; ++d) soff[0][d] = 0.0f;
    while (top > 0) {
        --top;
        if (sbox[top] > limit) continue;
        u32 lo = slo[top], hi = shi[top];
        int dim = sdim[top];
        float off[KNN_DIMS];
#pragma unroll
        for (int d = 0; d < KNN_DIMS; ++d) off[d] = soff[top][d];
        while (lo < hi) {
            if (hi - lo <= KNN_LEAF) {
                for (u32 m = lo; m < hi; ++m) visit(tc, torig, m, q, dim, true, b, limit, unique);
                break;
            }
            const u32 m = lo + (hi - lo) / 2;
            const float diff = visit(tc, torig, m, q, dim, true, b, limit, unique);
            u32 nlo, nhi, flo, fhi;
            if (diff <= 0.0f) { nlo = lo; nhi = m; flo = m + 1; fhi = hi; }
            else { nlo = m + 1; nhi = hi; flo = lo; fhi = m; }
            // The far side's box: the split's offset in `dim`, this side's in the others.
            float box = 0.0f;
#pragma unroll
            for (int d = 0; d < KNN_DIMS; ++d) {
                const float o = d == dim ? diff : off[d];
                box = __fadd_rn(box, __fmul_rn(o, o));
            }
            const int next = dim + 1 == KNN_DIMS ? 0 : dim + 1;
            if (flo < fhi && box <= limit) {
                slo[top] = flo; shi[top] = fhi; sdim[top] = next; sbox[top] = box;
#pragma unroll
                for (int d = 0; d < KNN_DIMS; ++d) soff[top][d] = d == dim ? diff : off[d];
                ++top;
            }
            dim = next;
            lo = nlo; hi = nhi;
        }
    }
}

// One query's search into `b`: from q, and with so3 also from -q, one entry per point.
// MODE 0: the one loop by split planes; 1: nested loops by boxes (the heap's); 2: the one
// loop by boxes.
template <int MODE, class B>
__device__ __forceinline__ void search_query(const float *__restrict__ tc,
                                             const u32 *__restrict__ torig, u32 n,
                                             const float *query, int so3, B &b) {
    float q[KNN_DIMS];
#pragma unroll
    for (int d = 0; d < KNN_DIMS; ++d) q[d] = query[d];
    if constexpr (MODE == 1) search_boxes(tc, torig, n, q, b, false);
    else search<MODE == 2>(tc, torig, n, q, b, false);
    if (so3) {
#pragma unroll
        for (int d = 0; d < KNN_DIMS; ++d) q[d] = -q[d];
        if constexpr (MODE == 1) search_boxes(tc, torig, n, q, b, true);
        else search<MODE == 2>(tc, torig, n, q, b, true);
    }
}

// k nearest per query, queries taken in the order `perm` gives (spatially sorted, so a warp
// walks similar paths); so3: also from -q, one entry per point. Output row-major by query
// index: distances (square roots) and input indices.
extern "C" __global__ void kd_knn(const float *__restrict__ tc, const u32 *__restrict__ torig,
                                  u32 n, const float *__restrict__ queries,
                                  const u32 *__restrict__ perm, u32 nq, int k, int so3,
                                  float *out_d, u32 *out_i) {
    GRID_STRIDE(t, nq) {
        u32 qi = perm[t];
        Best b;
        best_init(b);
        search_query<KNN_BOXES ? 2 : 0>(tc, torig, n, queries + (size_t)qi * KNN_DIMS, so3, b);
#pragma unroll
        for (int j = 0; j < KNN_K; ++j)
            if (j < k) {
                out_d[(size_t)qi * k + j] = b.d[j];
                out_i[(size_t)qi * k + j] = b.i[j];
            }
    }
}

// k nearest per query for k above what registers hold: as kd_knn, the k best in a max-heap
// (HeapBest: scratch holds k entries for every thread of the launch, which may be fewer than
// the queries), heap-sorted, then written to the answer row (k <= the distinct points, so
// every row fills).
extern "C" __global__ void kd_knn_heap(const float *tc, const u32 *torig, u32 n,
                                       const float *queries, const u32 *perm, u32 nq, int k,
                                       int so3, u64 *scratch, float *out_d, u32 *out_i) {
    GRID_STRIDE(t, nq) {
        u32 qi = perm[t];
        HeapBest b;
        b.stride = grid_step();
        b.h = scratch + grid_first();
        b.k = k;
        b.len = 0;
        b.root = 0;
        search_query<1>(tc, torig, n, queries + (size_t)qi * KNN_DIMS, so3, b);
        for (int end = b.len - 1; end > 0; --end) {
            const u64 top = b.h[0];
            const u64 last = b.h[end * b.stride];
            b.h[end * b.stride] = top;
            sift_down(b, 0, end, last);
        }
        for (int j = 0; j < b.len; ++j) {
            const u64 e = b.h[j * b.stride];
            out_d[(size_t)qi * k + j] = key_dist(e);
            out_i[(size_t)qi * k + j] = (u32)e;
        }
    }
}

// Each dimension's range over n points as order-preserving words (see `sortable`):
// bounds[d] the least, complemented (its atomic is a max, as the greatest's), bounds[dims + d]
// the greatest; both start at 0, so the host zeroes them instead of copying starts up. The
// points are read as one flat array of n * dims floats, coalesced, with a grid-stride step
// that is a multiple of dims, so each thread stays on one dimension (a pass per dimension
// read every dims-th float: 80 us for 1M 3-D queries on an H200, under ncu); block partials in
// shared memory, then one atomic pair per block and dimension.
extern "C" __global__ void kd_bounds(const float *pts, int dims, u32 n, u32 *bounds) {
    __shared__ u32 lo_s[8], hi_s[8];  // dims <= 8 (src/kdtree/points.rs MAX_DIMS)
    if (threadIdx.x < (u32)dims) {
        lo_s[threadIdx.x] = 0xffffffffu;
        hi_s[threadIdx.x] = 0;
    }
    __syncthreads();
    const u64 step = grid_step() / dims * dims, t = grid_first(), total = (u64)n * dims;
    if (t < step) {
        u32 lo = 0xffffffffu, hi = 0;
        for (u64 e = t; e < total; e += step) {
            const u32 v = sortable(pts[e]);
            lo = min(lo, v);
            hi = max(hi, v);
        }
        atomicMin(&lo_s[t % dims], lo);
        atomicMax(&hi_s[t % dims], hi);
    }
    __syncthreads();
    if (threadIdx.x < (u32)dims) {
        atomicMax(&bounds[threadIdx.x], ~lo_s[threadIdx.x]);
        atomicMax(&bounds[dims + threadIdx.x], hi_s[threadIdx.x]);
    }
}

__device__ __forceinline__ float unsortable(u32 u) {
    return __uint_as_float((u & 0x80000000u) ? (u & 0x7fffffffu) : ~u);
}

// The queries' order (a warp then walks similar paths; only the order depends on it, never
// an answer): a counting sort by cell, one pass over the queries to count, one to place,
// where a radix sort of 64-bit Morton keys took a histogram pass and a pass per byte (on the
// H200, 1-NN on 16.7M 3-D points, 1M queries: 0.67 ms a call against 0.68-0.71 with the
// radix sort over two bytes, whose keys' 32-bit interleave alone took 52 us under ncu;
// docs/bench-history). A query's cell: the top bits of its Morton (Z-order) code, each
// coordinate scaled to the queries' range and quantised to the bits a dimension needs, bits
// interleaved; with
// batch_bits > 0, query j's batch (j / batch_rows) takes the cell's top batch_bits bits, so
// each batch's queries lie together, in Morton order among themselves, and each batch can be
// searched (and its answers sent back) on its own. Within a cell the order is the atomics'
// (any order answers the same).
struct CellCode {
    float lo[8], scale[8], top;
    int per, cut;
};

__device__ __forceinline__ CellCode cell_code(int dims, const u32 *bounds, int morton_bits) {
    CellCode c;
    c.per = (morton_bits + dims - 1) / dims;
    c.cut = c.per * dims - morton_bits;
    c.top = (float)((1u << c.per) - 1);
#pragma unroll
    for (int d = 0; d < 8; ++d)
        if (d < dims) {
            c.lo[d] = unsortable(~bounds[d]);
            c.scale[d] = c.top / fmaxf(unsortable(bounds[dims + d]) - c.lo[d], 1e-30f);
        }
    return c;
}

__device__ __forceinline__ u32 morton_cell(const CellCode &c, const float *p, int dims) {
    u32 q[8];
#pragma unroll
    for (int d = 0; d < 8; ++d)
        if (d < dims) q[d] = (u32)fminf(fmaxf((p[d] - c.lo[d]) * c.scale[d], 0.0f), c.top);
    u32 code = 0;
    for (int b = c.per - 1; b >= 0; --b)
#pragma unroll
        for (int d = 0; d < 8; ++d)
            if (d < dims) code = (code << 1) | ((q[d] >> b) & 1);
    return code >> c.cut;
}

// Lanes of the warp with the same cell as this one (dead lanes carry ~0, no cell's number):
// one atomic per cell and warp, its lowest lane's.
__device__ __forceinline__ u32 cell_peers(u32 c) { return __match_any_sync(0xffffffffu, c); }
__device__ __forceinline__ u32 lanes_below() {
    return (1u << (threadIdx.x & 31)) - 1;
}

// Each query's cell into cell[j], and the count of every cell (zeroed by the host; its
// exclusive scan, primitives.cu's, gives where each cell's queries start). One thread a
// query, every lane of a warp alive to the match.
extern "C" __global__ void kd_cells(const float *pts, int dims, u32 n, const u32 *bounds,
                                    u32 batch_rows, int batch_bits, int cell_bits, u32 *cell,
                                    u32 *count) {
    const CellCode code = cell_code(dims, bounds, cell_bits - batch_bits);
    const u64 j = grid_first();
    const bool live = j < n;
    u32 c = 0xffffffffu;
    if (live) {
        c = morton_cell(code, pts + j * dims, dims);
        if (batch_bits > 0) c |= (u32)(j / batch_rows) << (cell_bits - batch_bits);
    }
    const u32 peers = cell_peers(c);
    if (live) {
        cell[j] = c;
        if ((peers & lanes_below()) == 0) atomicAdd(&count[c], __popc(peers));
    }
}

// perm[start of j's cell + its place among them] = j: the queries in cell order.
extern "C" __global__ void kd_cell_place(const u32 *cell, u32 n, u32 *start, u32 *perm) {
    const u64 j = grid_first();
    const bool live = j < n;
    const u32 c = live ? cell[j] : 0xffffffffu;
    const u32 peers = cell_peers(c);
    const int leader = __ffs(peers) - 1;
    u32 base = 0;
    if (live && (peers & lanes_below()) == 0) base = atomicAdd(&start[c], __popc(peers));
    base = __shfl_sync(0xffffffffu, base, leader);
    if (live) perm[base + __popc(peers & lanes_below())] = (u32)j;
}

// The checker: every position on the correct side of each ancestor by the ancestor's super
// key. bad[0] counts violations; bad[1] keeps one violating position.
extern "C" __global__ void kd_check(const float *coords, const u32 *order, u32 n, int dims,
                                    u32 *bad) {
    GRID_STRIDE(i, n) {
        const float *a = coords + (size_t)order[i] * dims;
        u32 lo = 0, hi = n;
        for (int depth = 0;; ++depth) {
            u32 m = lo + (hi - lo) / 2;
            if (i == m) break;
            const float *p = coords + (size_t)order[m] * dims;
            int d = depth % dims, c = 0;
            for (int j = 0; j < dims && c == 0; ++j) {
                int x = (d + j) % dims;
                c = a[x] < p[x] ? -1 : (a[x] > p[x] ? 1 : 0);
            }
            if ((i < m && c >= 0) || (i > m && c <= 0)) {
                atomicAdd(&bad[0], 1u);
                bad[1] = i;
                break;
            }
            if (i < m) hi = m; else lo = m + 1;
        }
    }
}

// Radius search, in two passes over the same traversal: count (out_i == 0) the points within
// r of each query (and of -q with so3), then write (distance, input index) pairs from
// offsets[qi]. Order within a query is fixed on the host.
extern "C" __global__ void kd_radius(const float *tc, const u32 *torig, u32 n, int dims,
                                     const float *queries, u32 nq, float r, int so3,
                                     u32 *counts, const u32 *offsets, float *out_d,
                                     u32 *out_i) {
    GRID_STRIDE(qi, nq) {
        float q[8];
        for (int d = 0; d < dims; ++d) q[d] = queries[(size_t)qi * dims + d];
        u32 found = 0;
        size_t at = out_i ? offsets[qi] : 0;
        for (int side = 0; side < (so3 ? 2 : 1); ++side) {
            if (side == 1)
                for (int d = 0; d < dims; ++d) q[d] = -q[d];
            u32 slo[STACK], shi[STACK];
            unsigned char sdep[STACK];
            int top = 1;
            slo[0] = 0; shi[0] = n; sdep[0] = 0;
            while (top > 0) {
                --top;
                u32 lo = slo[top], hi = shi[top];
                int depth = sdep[top];
                while (lo < hi) {
                    u32 m = lo + (hi - lo) / 2;
                    const float *p = tc + (size_t)m * tree_row(dims);
                    float s = 0.0f;
                    for (int d = 0; d < dims; ++d) {
                        float x = __fsub_rn(q[d], p[d]);
                        s = __fadd_rn(s, __fmul_rn(x, x));
                    }
                    float dist = __fsqrt_rn(s);
                    if (dist <= r) {
                        if (out_i) {
                            out_d[at] = dist;
                            out_i[at] = torig[m];
                            ++at;
                        }
                        ++found;
                    }
                    int dd = depth % dims;
                    float diff = __fsub_rn(q[dd], p[dd]);
                    float plane = __fsqrt_rn(__fmul_rn(diff, diff));
                    u32 nlo, nhi, flo, fhi;
                    if (diff <= 0.0f) { nlo = lo; nhi = m; flo = m + 1; fhi = hi; }
                    else { nlo = m + 1; nhi = hi; flo = lo; fhi = m; }
                    if (flo < fhi && plane <= r) {
                        slo[top] = flo; shi[top] = fhi; sdep[top] = depth + 1;
                        ++top;
                    }
                    lo = nlo; hi = nhi; depth++;
                }
            }
        }
        if (!out_i) counts[qi] = found;
    }
}
