// Polyline DP (src/polyline/gpu.rs drives these). Every floating-point step uses explicit
// round-to-nearest intrinsics, so no multiply-add is fused and each value is bit-identical to
// the CPU reference (src/polyline/{score,geometry,cpu}.rs), which performs the same operations
// in the same order.
//
// Kernels:
//   poly_links          link scores and directions of one stage
//   poly_stage          one DP stage over every predecessor
//   poly_order          each point's predecessors sorted by score (bitonic, shared memory)
//   poly_stage_sorted   one DP stage scanning predecessors best-first (the default)

#define ADD(a, b) __dadd_rn((a), (b))
#define SUB(a, b) __dsub_rn((a), (b))
#define MUL(a, b) __dmul_rn((a), (b))
#define DIV(a, b) __ddiv_rn((a), (b))

// Link scores and directions of one stage: every (i, j), p = from[i], q = to[j]; g holds
// (gx, gy) per pixel, interleaved so a sample is one 16-byte load.
// score[i * nto + j]; dir[3 * (i * nto + j) + {0, 1, 2}] = (q - p).x, (q - p).y, |q - p|.
extern "C" __global__ void poly_links(const double2 *g, int width, int height,
                                      const double *from, int nfrom, const double *to, int nto,
                                      double *score, double *dir) {
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long)nfrom * nto) return;
    int i = (int)(idx / nto), j = (int)(idx % nto);
    double px = from[2 * i], py = from[2 * i + 1];
    double dx = SUB(to[2 * j], px), dy = SUB(to[2 * j + 1], py);
    double len = __dsqrt_rn(ADD(MUL(dx, dx), MUL(dy, dy)));
    dir[3 * idx] = dx;
    dir[3 * idx + 1] = dy;
    dir[3 * idx + 2] = len;
    double s = 0.0;
    if (len != 0.0) {
        double ux = DIV(dx, len), uy = DIV(dy, len);
        double c = ceil(len);
        unsigned long long steps = c < 1.0 ? 1ull : (unsigned long long)c;
        double fsteps = (double)steps;
        for (unsigned long long t = 0; t < steps; ++t) {
            double f = DIV((double)t, fsteps);
            double x = floor(ADD(ADD(px, MUL(dx, f)), 0.5));
            double y = floor(ADD(ADD(py, MUL(dy, f)), 0.5));
            if (x >= 0.0 && y >= 0.0 && x < (double)width && y < (double)height) {
                double2 v = g[(long long)y * width + (long long)x];
                s = ADD(s, fabs(SUB(MUL(v.x, uy), MUL(v.y, ux))));
            }
        }
    }
    score[idx] = s;
}

// One DP stage at layer k: for each (j on k, l on k + 1), the best prefix (i on k - 1, j)
// whose turn at j towards l is within the limit (strict >, smallest i on ties), plus the link.
// best_in[i * ncur + j]; din: directions (i -> j); dout: directions (j -> l); link[j * nnext + l].
extern "C" __global__ void poly_stage(const double *best_in, const double *din,
                                      const double *dout, const double *link, int nprev,
                                      int ncur, int nnext, double cos_max, double *best_out,
                                      u32 *arg_out) {
    int l = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y;
    if (l >= nnext) return;
    long long o = (long long)j * nnext + l;
    double vx = dout[3 * o], vy = dout[3 * o + 1], nv = dout[3 * o + 2];
    double top = -1.0 / 0.0;
    u32 at = 0xffffffffu;
    for (int i = 0; i < nprev; ++i) {
        long long c = (long long)i * ncur + j;
        double s = best_in[c];
        if (s > top) {
            double dot = ADD(MUL(din[3 * c], vx), MUL(din[3 * c + 1], vy));
            if (dot >= MUL(cos_max, MUL(din[3 * c + 2], nv))) {
                top = s;
                at = (u32)i;
            }
        }
    }
    best_out[o] = at == 0xffffffffu ? -1.0 / 0.0 : ADD(top, link[o]);
    arg_out[o] = at;
}

// Orders each column j of best_in (the prefixes ending at point j of the current layer) by
// score, highest first, smallest predecessor index first among equals; NaN counts as -inf
// (the plain stage never picks it either). One block per j, bitonic sort in shared memory of
// p2 = the power of two >= nprev keys (padding sorts last).
// skey[j * nprev + r], order[j * nprev + r]: the r-th best predecessor of j.
extern "C" __global__ void poly_order(const double *best_in, int nprev, int ncur, int p2,
                                      double *skey, u32 *order) {
    extern __shared__ unsigned char smem[];
    double *key = (double *)smem;
    u32 *idx = (u32 *)(key + p2);
    int j = blockIdx.x;
    for (int r = threadIdx.x; r < p2; r += blockDim.x) {
        double s = -1.0 / 0.0;
        u32 i = 0xffffffffu;
        if (r < nprev) {
            s = best_in[(long long)r * ncur + j];
            if (s != s) s = -1.0 / 0.0;
            i = (u32)r;
        }
        key[r] = s;
        idx[r] = i;
    }
    __syncthreads();
    for (int k = 2; k <= p2; k <<= 1) {
        for (int h = k >> 1; h > 0; h >>= 1) {
            for (int t = threadIdx.x; t < p2 / 2; t += blockDim.x) {
                int a = (t / h) * 2 * h + (t % h), b = a + h;
                bool b_first = key[b] > key[a] || (key[b] == key[a] && idx[b] < idx[a]);
                // Runs with (a & k) == 0 sort best-first, the others worst-first.
                if (b_first == ((a & k) == 0)) {
                    double tk = key[a];
                    key[a] = key[b];
                    key[b] = tk;
                    u32 ti = idx[a];
                    idx[a] = idx[b];
                    idx[b] = ti;
                }
            }
            __syncthreads();
        }
    }
    for (int r = threadIdx.x; r < nprev; r += blockDim.x) {
        skey[(long long)j * nprev + r] = key[r];
        order[(long long)j * nprev + r] = idx[r];
    }
}

// poly_stage over the predecessors in poly_order's order: the first one whose turn is within
// the limit is the best (highest score, smallest index among equals), so the scan usually
// stops after a few candidates instead of visiting all nprev. Same results as poly_stage.
extern "C" __global__ void poly_stage_sorted(const double *skey, const u32 *order,
                                             const double *din, const double *dout,
                                             const double *link, int nprev, int ncur,
                                             int nnext, double cos_max, double *best_out,
                                             u32 *arg_out) {
    int l = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y;
    if (l >= nnext) return;
    long long o = (long long)j * nnext + l;
    double vx = dout[3 * o], vy = dout[3 * o + 1], nv = dout[3 * o + 2];
    double best = -1.0 / 0.0;
    u32 at = 0xffffffffu;
    const double *keys = skey + (long long)j * nprev;
    const u32 *ids = order + (long long)j * nprev;
    for (int r = 0; r < nprev; ++r) {
        double s = keys[r];
        if (!(s > -1.0 / 0.0)) break;
        u32 i = ids[r];
        long long c = (long long)i * ncur + j;
        double dot = ADD(MUL(din[3 * c], vx), MUL(din[3 * c + 1], vy));
        if (dot >= MUL(cos_max, MUL(din[3 * c + 2], nv))) {
            best = s;
            at = i;
            break;
        }
    }
    best_out[o] = at == 0xffffffffu ? -1.0 / 0.0 : ADD(best, link[o]);
    arg_out[o] = at;
}
