"""Peers for `gpu_planning bench apsp`: the torch int32 min-plus loop over k on the GPU
(D = min(D, D[:, k:k+1] + D[k:k+1, :]), distances only) and scipy's floyd_warshall on the CPU,
on random graphs of the same sizes and densities (weights 1..100)."""
import argparse
import time

import numpy as np


def graph(n, density, seed):
    rng = np.random.default_rng(seed)
    inf = 1 << 29
    d = np.where(rng.random((n, n)) < density, rng.integers(1, 101, (n, n)), inf).astype(np.int32)
    np.fill_diagonal(d, 0)
    return d, inf


def torch_loop(d):
    import torch
    D = torch.from_numpy(d).cuda()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for k in range(D.shape[0]):
        D = torch.minimum(D, D[:, k:k + 1] + D[k:k + 1, :])
    torch.cuda.synchronize()
    return (time.perf_counter() - t) * 1e3


def scipy_fw(d, inf):
    from scipy.sparse.csgraph import floyd_warshall
    m = np.where(d >= inf, 0, d).astype(np.float64)
    t = time.perf_counter()
    floyd_warshall(m, directed=True)
    return (time.perf_counter() - t) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="500,2000,8192")
    ap.add_argument("--densities", default="0.15,0.85")
    ap.add_argument("--torch-limit", type=int, default=8192)
    ap.add_argument("--scipy-limit", type=int, default=2000)
    a = ap.parse_args()
    print("| n | density | peer | ms |\n|---:|---:|---|---:|")
    for n in [int(s) for s in a.sizes.split(",")]:
        for p in [float(s) for s in a.densities.split(",")]:
            d, inf = graph(n, p, 1)
            if n <= a.torch_limit:
                torch_loop(d[:64, :64])  # warm-up
                print(f"| {n} | {p * 100:.0f} % | torch int32 min-plus loop (GPU, no successors) | {torch_loop(d):.2f} |", flush=True)
            if n <= a.scipy_limit:
                print(f"| {n} | {p * 100:.0f} % | scipy floyd_warshall (CPU, predecessors off) | {scipy_fw(d, inf):.2f} |", flush=True)


if __name__ == "__main__":
    main()
