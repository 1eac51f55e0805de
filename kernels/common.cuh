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
