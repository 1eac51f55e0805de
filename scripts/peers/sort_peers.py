"""Peers for `gpu_planning bench primitives`: torch and cupy on the same GPU, on the benchmark's
own inputs (--dir: keys.npy, small.npy, flags.npy written by `bench primitives --npy-dir`).

Sorts n (u64 key, u32 value) pairs stably (torch.sort(stable=True) on the keys viewed as int64,
which orders them as signed, the same cost, + a gather of the values); cupy.argsort (not stable)
+ gather; an inclusive int32 scan (torch.cumsum with dtype int32, so it writes 4 bytes per item
like ours) and a boolean-mask compaction. Medians of --reps runs by CUDA events, after a warm-up.
"""
import argparse

import numpy as np
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
    return float(np.median(times))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True, help="where bench primitives --npy-dir wrote")
    ap.add_argument("--reps", type=int, default=10)
    a = ap.parse_args()
    keys_u64 = np.load(f"{a.dir}/keys.npy")
    n = keys_u64.size
    keys = torch.from_numpy(keys_u64.view(np.int64)).cuda()
    vals = torch.arange(n, dtype=torch.int32, device="cuda")
    print(f"n = {n} pairs (the benchmark's keys), medians of {a.reps} runs")
    print("| operation | implementation | ms | notes |\n|---|---|---:|---|")
    dst = torch.empty_like(keys)
    copy = cuda_ms(lambda: dst.copy_(keys), a.reps)
    print(f"| copy (d2d) | torch copy_ | {copy:.3f} | {2 * n * 8 / copy / 1e6:.0f} GB/s |")

    def tsort():
        k, idx = torch.sort(keys, stable=True)
        return k, vals[idx]

    print(f"| sort pairs | torch.sort(stable) + gather | {cuda_ms(tsort, a.reps):.3f} | |")
    print(f"| sort keys only | torch.sort(stable) | {cuda_ms(lambda: torch.sort(keys, stable=True), a.reps):.3f} | |")
    x = torch.from_numpy(np.load(f"{a.dir}/small.npy").view(np.int32)).cuda()
    cs = torch.cumsum(x, 0, dtype=torch.int32)
    assert cs.dtype == torch.int32
    print(f"| inclusive scan int32 | torch.cumsum(dtype=int32) | {cuda_ms(lambda: torch.cumsum(x, 0, dtype=torch.int32), a.reps):.3f} | |")
    f = torch.from_numpy(np.load(f"{a.dir}/flags.npy").astype(bool)).cuda()
    print(f"| compact u32 | torch boolean mask | {cuda_ms(lambda: vals[f], a.reps):.3f} | |")
    try:
        import cupy as cp

        ck = cp.asarray(keys_u64)
        cv = cp.asarray(vals)

        def csort():
            idx = cp.argsort(ck)
            return ck[idx], cv[idx]

        print(f"| sort pairs | cupy.argsort(uint64) + gather (not stable) | {cuda_ms(csort, a.reps):.3f} | |")
    except Exception as e:  # noqa: BLE001 - report and carry on
        print(f"cupy unavailable: {e}")


if __name__ == "__main__":
    main()
