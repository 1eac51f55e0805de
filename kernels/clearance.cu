// Exact Euclidean distance transform for clearance (src/lee/clearance/gpu.rs drives these;
// src/lee/clearance/cpu.rs is the reference they equal bit for bit):
//   clr_rows      one thread per row: |x - x'| to the row's nearest obstacle (two sweeps)
//   clr_columns   one thread per column: the lower envelope of the parabolas (y - q)^2 + g(q)^2
//                 (Felzenszwalb-Huttenlocher) in 64-bit integers, boundaries kept as floors;
//                 threads of a warp take neighbouring columns, so every step is coalesced
//   clr_blocked   one flag per cell: sqrt(d2) * resolution <= radius, in f64 as the host does
// Squared distances are cells^2; NO_OBSTACLE (all ones) where the map has no obstacle.

typedef long long i64;

#define NO_OBSTACLE 0xffffffffffffffffull
#define NO_OBSTACLE_1D 0xffffffffu

extern "C" __global__ void clr_rows(const u8 *__restrict__ obstacle, u32 w, u32 h, u32 *g) {
    GRID_STRIDE(y, h) {
        const u8 *o = obstacle + y * w;
        u32 *row = g + y * w;
        i64 last = -1;
        for (u32 x = 0; x < w; ++x) {
            if (o[x]) last = x;
            row[x] = last >= 0 ? (u32)(x - last) : NO_OBSTACLE_1D;
        }
        i64 next = -1;
        for (i64 x = (i64)w - 1; x >= 0; --x) {
            if (o[x]) next = x;
            if (next >= 0) {
                u32 d = (u32)(next - x);
                if (d < row[x]) row[x] = d;
            }
        }
    }
}

__device__ __forceinline__ i64 sq(u32 g) { return (i64)g * (i64)g; }

// v (u32) and z (i64) are scratch of w x h, entry k of column x at k * w + x.
extern "C" __global__ void clr_columns(const u32 *__restrict__ g, u32 w, u32 h, u32 *v, i64 *z,
                                       u64 *d2) {
    GRID_STRIDE(x, w) {
        i64 k = -1;
        for (u32 q = 0; q < h; ++q) {
            u32 gq = g[(u64)q * w + x];
            if (gq == NO_OBSTACLE_1D) continue;
            i64 fq = sq(gq), qi = q;
            for (;;) {
                if (k < 0) {
                    k = 0;
                    v[x] = q;
                    z[x] = (i64)0x8000000000000000ull;
                    break;
                }
                u32 p = v[(u64)k * w + x];
                i64 fp = sq(g[(u64)p * w + x]), pi = p;
                i64 num = (fq + qi * qi) - (fp + pi * pi), den = 2 * (qi - pi);
                // Floor division (den > 0), as Rust's div_euclid for a positive divisor.
                i64 s = num >= 0 ? num / den : -((-num + den - 1) / den);
                if (s <= z[(u64)k * w + x]) {
                    --k;
                    continue;
                }
                ++k;
                v[(u64)k * w + x] = q;
                z[(u64)k * w + x] = s;
                break;
            }
        }
        if (k < 0) {
            for (u32 y = 0; y < h; ++y) d2[(u64)y * w + x] = NO_OBSTACLE;
            continue;
        }
        i64 j = 0;
        for (u32 y = 0; y < h; ++y) {
            while (j < k && z[(u64)(j + 1) * w + x] < (i64)y) ++j;
            u32 p = v[(u64)j * w + x];
            i64 d = (i64)y - (i64)p;
            d2[(u64)y * w + x] = (u64)(d * d + sq(g[(u64)p * w + x]));
        }
    }
}

extern "C" __global__ void clr_blocked(const u64 *__restrict__ d2, u64 n, double resolution,
                                       double radius, u8 *blocked) {
    GRID_STRIDE(i, n) {
        u64 d = d2[i];
        // The product rounded once, as the host's `sqrt(d2) * resolution` (no contraction).
        blocked[i] = d != NO_OBSTACLE && __dmul_rn(sqrt((double)d), resolution) <= radius;
    }
}
