"""Peers for `gpu_planning bench primitives`: torch and cupy on the same GPU, same sizes.

Sorts n (u64 key, u32 value) pairs stably (torch.sort(stable=True) + gather; cupy argsort
(stable by default is not guaranteed, so cupy.lexsort on (index, key)) ), and measures the
device copy bandwidth the same way as ours (device-to-device copy of n u64).
"""
import argparse

import torch


def cuda_ms(fn, reps):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn()
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 24)
    ap.add_argument("--reps", type=int, default=10)
    a = ap.parse_args()
    n = a.n
    g = torch.Generator(device="cuda").manual_seed(1)
    # Full 64-bit random keys (torch has no uint64 sort; int64 covers 64 bits of entropy).
    keys = torch.randint(-(2**63), 2**63 - 1, (n,), dtype=torch.int64, device="cuda", generator=g)
    vals = torch.arange(n, dtype=torch.int32, device="cuda")
    dst = torch.empty_like(keys)
    copy = cuda_ms(lambda: dst.copy_(keys), a.reps)
    print(f"| copy (d2d) | torch copy_ | {copy:.3f} | {2 * n * 8 / copy / 1e6:.0f} GB/s |")

    def tsort():
        k, idx = torch.sort(keys, stable=True)
        return k, vals[idx]

    print(f"| sort pairs | torch.sort(stable) + gather | {cuda_ms(tsort, a.reps):.3f} | |")
    print(f"| sort keys only | torch.sort(stable) | {cuda_ms(lambda: torch.sort(keys, stable=True), a.reps):.3f} | |")
    x = torch.randint(0, 4, (n,), dtype=torch.int32, device="cuda", generator=g)
    print(f"| inclusive scan int32 | torch.cumsum | {cuda_ms(lambda: torch.cumsum(x, 0), a.reps):.3f} | |")
    f = torch.randint(0, 2, (n,), dtype=torch.bool, device="cuda", generator=g)
    print(f"| compact u32 | torch boolean mask | {cuda_ms(lambda: vals[f], a.reps):.3f} | |")
    try:
        import cupy as cp

        ck = cp.asarray(keys).view(cp.uint64)
        cv = cp.asarray(vals)

        def csort():
            idx = cp.argsort(ck)
            return ck[idx], cv[idx]

        print(f"| sort pairs | cupy.argsort(uint64) + gather (not stable) | {cuda_ms(csort, a.reps):.3f} | |")
    except Exception as e:  # noqa: BLE001 - report and carry on
        print(f"cupy unavailable: {e}")


if __name__ == "__main__":
    main()
