# What a request's device allocations cost when the device's stream-ordered memory pool hands
# freed memory back at every synchronisation (release threshold 0, CUDA's default) or keeps it
# (what src/compute/cuda.rs sets): each iteration allocates the sizes, frees them and
# synchronises, as a request that allocates after its previous request's sync does. Uses cupy's
# bindings of the same driver pool. Run on the CUDA machine: python3 pool_reuse.py
import time
import cupy as cp
from cupy.cuda import runtime as rt

pool = rt.deviceGetDefaultMemPool(0)
s = cp.cuda.Stream(non_blocking=True)
A = rt.cudaMemPoolAttrReleaseThreshold

def bench(th, frag, sizes):
    rt.memPoolSetAttribute(pool, A, th)
    s.synchronize(); rt.memPoolTrimTo(pool, 0)
    if frag:
        ptrs = [rt.mallocAsync((i % 17 + 1) * (3 << 20) + i * 4096, s.ptr) for i in range(300)]
        for p in ptrs[::2]: rt.freeAsync(p, s.ptr)
        s.synchronize()
        for p in ptrs[1::2]: rt.freeAsync(p, s.ptr)
        s.synchronize()
    best = []
    for rep in range(3):
        t = time.perf_counter()
        for i in range(2000):
            ps = [rt.mallocAsync(n, s.ptr) for n in sizes]
            for p in ps: rt.freeAsync(p, s.ptr)
            s.synchronize()
        best.append((time.perf_counter() - t) / 2000 * 1e6)
    return min(best), rt.memPoolGetAttribute(pool, rt.cudaMemPoolAttrReservedMemCurrent)

q = 20 << 30
for sizes, name in [([16000, 8000, 400000], "3 small"), ([64 << 20, 32 << 20], "96 MB"), ([16000] * 12, "12 x 16 KB")]:
    for th in (0, q):
        for frag in (False, True):
            us, res = bench(th, frag, sizes)
            print(f"{name:12s} threshold {'kept' if th else '0':4s} fragmented {str(frag):5s}: {us:8.1f} us per call (alloc+free+sync), pool reserved {res >> 20} MiB")
