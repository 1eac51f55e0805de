// Balanced k-d tree (src/kdtree/gpu.rs drives these): sort keys for Brown's presorts and the
// breadth-first levels, dedupe, and exact k-nearest queries. Distances: f32 sums of squared
// differences in dimension order with explicit rounding, as src/kdtree/query.rs computes them.

typedef unsigned int u32;
typedef unsigned long long u64;

__device__ __forceinline__ u32 sortable(float v) {
    u32 b = __float_as_uint(v);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

extern "C" __global__ void kd_iota(u32 *out, u32 n) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = i;
}

// One LSD pass of a super-key sort: keys[j] = coordinate ca of point perm[j] (more
// significant) and, when cb >= 0, coordinate cb (less significant) below it.
extern "C" __global__ void kd_pair_keys(const float *coords, int dims, const u32 *perm, u32 n,
                                        int ca, int cb, u64 *keys) {
    for (u32 j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x) {
        const float *p = coords + (size_t)perm[j] * dims;
        u64 k = sortable(p[ca]);
        if (cb >= 0) k = (k << 32) | sortable(p[cb]);
        keys[j] = k;
    }
}

// flags[j] = 1 where sorted position j starts a new distinct tuple.
extern "C" __global__ void kd_flags(const float *coords, int dims, const u32 *perm, u32 n,
                                    u32 *flags) {
    for (u32 j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x) {
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
    for (u32 j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x) {
        if (!flags[j]) continue;
        u32 u = pos[j], s = perm[j];
        original[u] = s;
        for (int d = 0; d < dims; ++d) ucoords[(size_t)u * dims + d] = coords[(size_t)s * dims + d];
    }
}

extern "C" __global__ void kd_ranks(const u32 *perm, u32 n, u32 *rank) {
    for (u32 j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x)
        rank[perm[j]] = j;
}

// Keys of one breadth-first level: a position inside an open range [lo, hi) gets
// (lo, rank of its point in this level's dimension); a finished node keeps its place.
extern "C" __global__ void kd_level_keys(const u32 *order, u32 n, int level, const u32 *rank,
                                         u64 *keys) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
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

#define MAX_K 32
#define STACK 96

struct Best {
    float d[MAX_K];
    u32 i[MAX_K];
    int len, k;
};

__device__ __forceinline__ float worst(const Best &b) {
    return b.len < b.k ? __int_as_float(0x7f800000) : b.d[b.k - 1];
}

__device__ __forceinline__ bool before(float d, u32 i, float d2, u32 i2) {
    return d < d2 || (d == d2 && i < i2);
}

// Insert keeping (d, i) order; with `unique`, an index already listed keeps its smaller d.
__device__ void offer(Best &b, float d, u32 idx, bool unique) {
    if (unique) {
        for (int t = 0; t < b.len; ++t)
            if (b.i[t] == idx) {
                if (b.d[t] <= d) return;
                for (int s = t; s + 1 < b.len; ++s) { b.d[s] = b.d[s + 1]; b.i[s] = b.i[s + 1]; }
                b.len--;
                break;
            }
    }
    if (b.len == b.k && !before(d, idx, b.d[b.k - 1], b.i[b.k - 1])) return;
    int at = b.len < b.k ? b.len : b.k - 1;
    while (at > 0 && before(d, idx, b.d[at - 1], b.i[at - 1])) {
        b.d[at] = b.d[at - 1];
        b.i[at] = b.i[at - 1];
        --at;
    }
    b.d[at] = d;
    b.i[at] = idx;
    if (b.len < b.k) b.len++;
}

__device__ void search(const float *coords, const u32 *order, const u32 *original, u32 n,
                       int dims, const float *q, Best &b, bool unique) {
    u32 slo[STACK], shi[STACK];
    unsigned char sdep[STACK];
    float splane[STACK];
    int top = 0;
    slo[0] = 0; shi[0] = n; sdep[0] = 0; splane[0] = 0.0f; top = 1;
    while (top > 0) {
        --top;
        u32 lo = slo[top], hi = shi[top];
        int depth = sdep[top];
        if (splane[top] > worst(b)) continue;
        while (lo < hi) {
            u32 m = lo + (hi - lo) / 2;
            const float *p = coords + (size_t)order[m] * dims;
            float s = 0.0f;
            for (int d = 0; d < dims; ++d) {
                float x = __fsub_rn(q[d], p[d]);
                s = __fadd_rn(s, __fmul_rn(x, x));
            }
            offer(b, s, original[order[m]], unique);
            int dd = depth % dims;
            float diff = __fsub_rn(q[dd], p[dd]);
            float plane = __fmul_rn(diff, diff);
            u32 nlo, nhi, flo, fhi;
            if (diff <= 0.0f) { nlo = lo; nhi = m; flo = m + 1; fhi = hi; }
            else { nlo = m + 1; nhi = hi; flo = lo; fhi = m; }
            if (flo < fhi && plane <= worst(b) && top < STACK) {
                slo[top] = flo; shi[top] = fhi; sdep[top] = depth + 1; splane[top] = plane;
                ++top;
            }
            lo = nlo; hi = nhi; depth++;
        }
    }
}

// k nearest per query; so3: also from -q, one entry per point. Output row-major nq x k:
// distances (square roots) and input indices.
extern "C" __global__ void kd_knn(const float *coords, const u32 *order, const u32 *original,
                                  u32 n, int dims, const float *queries, u32 nq, int k, int so3,
                                  float *out_d, u32 *out_i) {
    for (u32 qi = blockIdx.x * blockDim.x + threadIdx.x; qi < nq; qi += gridDim.x * blockDim.x) {
        float q[8];
        for (int d = 0; d < dims; ++d) q[d] = queries[(size_t)qi * dims + d];
        Best b;
        b.len = 0;
        b.k = k;
        search(coords, order, original, n, dims, q, b, false);
        if (so3) {
            for (int d = 0; d < dims; ++d) q[d] = -q[d];
            search(coords, order, original, n, dims, q, b, true);
        }
        for (int t = 0; t < k; ++t) {
            out_d[(size_t)qi * k + t] = __fsqrt_rn(b.d[t]);
            out_i[(size_t)qi * k + t] = b.i[t];
        }
    }
}

// The checker: every position on the correct side of each ancestor by the ancestor's super
// key. bad[0] counts violations; bad[1] keeps one violating position.
extern "C" __global__ void kd_check(const float *coords, const u32 *order, u32 n, int dims,
                                    u32 *bad) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
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
