// The Lee module's sweeps part: compiled after kernels/lee/wave.cu (whose header says how the
// module is put together), with its definitions in scope.
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
// Tiles in shared memory (the seed's shared model).
// ---------------------------------------------------------------------------------------------

// One block relaxes tile (blockIdx.x, blockIdx.y) (blockDim.x x blockDim.y cells, one per
// thread) to convergence against the halo it loaded and writes improved labels back; any
// improvement sets *changed. `s` holds (blockDim.x + 2) * (blockDim.y + 2) labels.
extern "C" __global__ void lee_tiles_shared(const u8 *__restrict__ masks, u32 *labels, u32 w,
                                            u32 h, u32 ndirs, u32 *changed) {
    extern __shared__ u32 s[];
    const u32 bx = blockDim.x, by = blockDim.y, sw = bx + 2;
    const u32 tid = threadIdx.y * bx + threadIdx.x, nthreads = bx * by;
    const long long x0 = (long long)blockIdx.x * bx, y0 = (long long)blockIdx.y * by;
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
    int local;
    do {
        local = 0;
        if (m) {
            u32 best = UNREACHED;
            for (u32 k = 0; k < ndirs; ++k)
                if (m & (1u << k)) best = min(best, s[(int)si + DY[k] * (int)sw + DX[k]]);
            best = plus_one(best);
            if (best < cur) {
                cur = best;
                s[si] = cur;
                local = 1;
            }
        }
    } while (__syncthreads_or(local));
    // Each tile has one block per launch, so a plain store cannot lose a smaller label.
    if (cur < orig) {
        labels[gy * w + gx] = cur;
        *changed = 1;
    }
}

