// Cell graph on SO(3) (src/cellgraph/gpu.rs drives these). Forms use explicitly rounded f64
// operations in the order of src/cellgraph/arrangement.rs::form, so every bit equals the CPU's.
//
// Kernels:
//   cg_classify      bit vector and XOR hash of each sample
//   cg_gather_word   one word of each sample's bits, as sort keys (LSD over words)
//   cg_flags         where a run of equal vectors starts, in sorted order
//   cg_cells         one cell per run: its bits, first position, representative and hash
//   cg_hash_insert   cells into an open-addressing table by hash      (algorithm `hash`)
//   cg_hash_probe    each cell's neighbour candidates, one per bit     (algorithm `hash`)
//   cg_pivot_dist    Hamming distances to the h pivots                  (algorithm `heuristic`)
//   cg_heuristic     the pairs the pivots do not rule out, verified    (algorithm `heuristic`)
//   cg_tree_probe    each cell's flipped keys looked up in the 2^r-ary tree (algorithm `tree`)
// Fills and sorts come from primitives.cu.

#define EMPTY 0xffffffffu

// Bit vector and XOR hash of each sample. coef: 10 per constraint (a00 a01 a02 a03 a11 a12 a13
// a22 a23 a33); samples: (x, y, z, w) unit quaternions; z: the constraints' 64-bit keys.
extern "C" __global__ void cg_classify(const double *coef, int l, int words,
                                       const double *samples, u32 n, const u64 *z, u64 *bits,
                                       u64 *hash) {
    const double wt[10] = {1.0, 2.0, 2.0, 2.0, 1.0, 2.0, 2.0, 1.0, 2.0, 1.0};
    GRID_STRIDE(s, n) {
        double x = samples[4 * (size_t)s], y = samples[4 * (size_t)s + 1];
        double zz = samples[4 * (size_t)s + 2], w = samples[4 * (size_t)s + 3];
        double m[10] = {__dmul_rn(x, x),  __dmul_rn(x, y),  __dmul_rn(x, zz), __dmul_rn(x, w),
                        __dmul_rn(y, y),  __dmul_rn(y, zz), __dmul_rn(y, w),  __dmul_rn(zz, zz),
                        __dmul_rn(zz, w), __dmul_rn(w, w)};
        u64 h = 0;
        for (int wd = 0; wd < words; ++wd) {
            u64 word = 0;
            int hi = min(l, 64 * wd + 64);
            for (int i = 64 * wd; i < hi; ++i) {
                const double *c = coef + 10 * (size_t)i;
                double v = 0.0;
#pragma unroll
                for (int t = 0; t < 10; ++t) v = __dadd_rn(v, __dmul_rn(__dmul_rn(c[t], m[t]), wt[t]));
                if (v >= 0.0) {
                    word |= 1ull << (i - 64 * wd);
                    h ^= z[i];
                }
            }
            bits[(size_t)s * words + wd] = word;
        }
        hash[s] = h;
    }
}

// keys[j] = word wd of sample perm[j]: one pass of the LSD sort over words.
extern "C" __global__ void cg_gather_word(const u64 *bits, int words, int wd, const u32 *perm,
                                          u32 n, u64 *keys) {
    GRID_STRIDE(j, n)
        keys[j] = bits[(size_t)perm[j] * words + wd];
}

// flags[j] = 1 where sorted position j starts a new cell.
extern "C" __global__ void cg_flags(const u64 *bits, int words, const u32 *perm, u32 n,
                                    u32 *flags) {
    GRID_STRIDE(j, n) {
        u32 f = 1;
        if (j > 0) {
            const u64 *a = bits + (size_t)perm[j] * words, *b = bits + (size_t)perm[j - 1] * words;
            f = 0;
            for (int w = 0; w < words; ++w) f |= a[w] != b[w];
        }
        flags[j] = f;
    }
}

// One cell per run start: its bits, first sorted position, representative and hash.
// pos: exclusive scan of the flags; flags re-read to find run starts.
extern "C" __global__ void cg_cells(const u32 *flags, const u32 *pos, const u32 *perm,
                                    const u64 *bits, const u64 *hash, int words, u32 n,
                                    u64 *cell_bits, u32 *starts, u32 *reps, u64 *cell_hash) {
    GRID_STRIDE(j, n) {
        if (!flags[j]) continue;
        u32 c = pos[j], s = perm[j];
        starts[c] = j;
        reps[c] = s;
        cell_hash[c] = hash[s];
        for (int w = 0; w < words; ++w) cell_bits[(size_t)c * words + w] = bits[(size_t)s * words + w];
    }
}

__device__ __forceinline__ u32 slot_of(u64 h, u32 mask) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (u32)h & mask;
}

// Open addressing, linear probing; cells with equal hashes take separate slots.
extern "C" __global__ void cg_hash_insert(const u64 *cell_hash, u32 cells, u32 *table,
                                          u32 mask) {
    GRID_STRIDE(c, cells) {
        u32 at = slot_of(cell_hash[c], mask);
        while (atomicCAS(&table[at], EMPTY, c) != EMPTY) at = (at + 1) & mask;
    }
}

// Whether a and b differ exactly in bit k.
__device__ __forceinline__ bool differ_in(const u64 *a, const u64 *b, int words, int k) {
    for (int w = 0; w < words; ++w) {
        u64 want = (w == k / 64) ? (1ull << (k % 64)) : 0ull;
        if ((a[w] ^ b[w]) != want) return false;
    }
    return true;
}

__device__ __forceinline__ void emit(u32 a, u32 b, u32 k, u64 *out_keys, u32 *out_bits,
                                     u32 *counter, u32 cap) {
    u32 e = atomicAdd(counter, 1u);
    if (e < cap) {
        out_keys[e] = ((u64)a << 32) | b;
        out_bits[e] = k;
    }
}

// Candidate (c, k): the cell with hash H(c) ^ z_k, verified word by word; kept when c < d.
extern "C" __global__ void cg_hash_probe(const u64 *cell_hash, const u64 *cell_bits, int words,
                                         u32 cells, int l, const u64 *z, const u32 *table,
                                         u32 mask, u64 *out_keys, u32 *out_bits, u32 *counter,
                                         u32 cap) {
    u64 total = (u64)cells * l;
    GRID_STRIDE(i, total) {
        u32 c = (u32)(i / l);
        int k = (int)(i % l);
        u64 target = cell_hash[c] ^ z[k];
        for (u32 at = slot_of(target, mask);; at = (at + 1) & mask) {
            u32 d = table[at];
            if (d == EMPTY) break;
            if (d > c && cell_hash[d] == target &&
                differ_in(cell_bits + (size_t)c * words, cell_bits + (size_t)d * words, words, k))
                emit(c, d, (u32)k, out_keys, out_bits, counter, cap);
        }
    }
}

// Hamming distance of every cell to each of the h pivot cells.
extern "C" __global__ void cg_pivot_dist(const u64 *cell_bits, int words, u32 cells,
                                         const u32 *pivots, int h, u32 *dist) {
    GRID_STRIDE(c, cells)
        for (int t = 0; t < h; ++t) {
            u32 d = 0;
            for (int w = 0; w < words; ++w)
                d += __popcll(cell_bits[(size_t)c * words + w] ^ cell_bits[(size_t)pivots[t] * words + w]);
            dist[(size_t)c * h + t] = d;
        }
}

// The seed's heuristic: pairs (a, b > a) survive only if |d(a, p) - d(b, p)| = 1 for every
// pivot; survivors are compared with an early exit at distance 2. One row of pairs per
// grid row: a strides over grid rows, b over the threads of the row.
extern "C" __global__ void cg_heuristic(const u64 *cell_bits, int words, u32 cells,
                                        const u32 *dist, int h, u64 *out_keys, u32 *out_bits,
                                        u32 *counter, u32 cap) {
    for (u32 a = blockIdx.y; a < cells; a += gridDim.y) {
        const u32 *da = dist + (size_t)a * h;
        for (u32 b = a + 1 + blockIdx.x * blockDim.x + threadIdx.x; b < cells;
             b += gridDim.x * blockDim.x) {
            const u32 *db = dist + (size_t)b * h;
            bool keep = true;
            for (int t = 0; t < h && keep; ++t) {
                int diff = (int)da[t] - (int)db[t];
                keep = diff == 1 || diff == -1;
            }
            if (!keep) continue;
            int d = 0, k = -1;
            for (int w = 0; w < words && d < 2; ++w) {
                u64 x = cell_bits[(size_t)a * words + w] ^ cell_bits[(size_t)b * words + w];
                int p = __popcll(x);
                if (p == 1) k = 64 * w + __ffsll((long long)x) - 1;
                d += p;
            }
            if (d == 1) emit(a, b, (u32)k, out_keys, out_bits, counter, cap);
        }
    }
}

// Tree lookups (the tree is built level by level on the host from the device's cells):
// nodes[5 * i + {0..4}] = start, end, first_child, children, digit.
__device__ __forceinline__ u32 digit_of(const u64 *row, int words, int lo, int len) {
    int w = lo / 64, s = lo % 64;
    u64 v = row[w] >> s;
    if (s + len > 64 && w + 1 < words) v |= row[w + 1] << (64 - s);
    return (u32)(v & ((1ull << len) - 1));
}

extern "C" __global__ void cg_tree_probe(const u64 *cell_bits, int words, u32 cells, int l,
                                         int r, const u32 *nodes, u64 *out_keys, u32 *out_bits,
                                         u32 *counter, u32 cap) {
    u64 total = (u64)cells * l;
    u64 key[16];  // words <= 16 (l <= 1024)
    GRID_STRIDE(i, total) {
        u32 c = (u32)(i / l);
        int k = (int)(i % l);
        for (int w = 0; w < words; ++w) key[w] = cell_bits[(size_t)c * words + w];
        key[k / 64] ^= 1ull << (k % 64);
        u32 n = 0;
        for (int level = 0;; ++level) {
            u32 start = nodes[5 * n], end = nodes[5 * n + 1];
            if (end - start == 1) {
                bool same = true;
                for (int w = 0; w < words; ++w) same &= cell_bits[(size_t)start * words + w] == key[w];
                if (same && start > c) emit(c, start, (u32)k, out_keys, out_bits, counter, cap);
                break;
            }
            int hi = l - min(level * r, l), lo = max(hi - r, 0);
            u32 d = digit_of(key, words, lo, hi - lo);
            u32 first = nodes[5 * n + 2], count = nodes[5 * n + 3];
            // Children are ordered by digit: binary search.
            u32 a = 0, b = count;
            while (a < b) {
                u32 mid = (a + b) / 2;
                if (nodes[5 * (first + mid) + 4] < d) a = mid + 1; else b = mid;
            }
            if (a == count || nodes[5 * (first + a) + 4] != d) break;
            n = first + a;
        }
    }
}
