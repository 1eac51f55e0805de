"""Peers for `gpu_planning bench kdtree`: scipy's cKDTree (build, and queries with all host
threads) and a torch brute-force kNN on the GPU (cdist + topk in query chunks), on uniform
random float32 points of the same sizes (the figures do not depend on the values)."""
import argparse
import os
import time

import numpy as np


def ckdtree(points, queries, k):
    from scipy.spatial import cKDTree
    t = time.perf_counter()
    tree = cKDTree(points, balanced_tree=True, compact_nodes=True)
    build = (time.perf_counter() - t) * 1e3
    t = time.perf_counter()
    tree.query(queries, k=k, workers=os.cpu_count())
    return build, (time.perf_counter() - t) * 1e3


def torch_brute(points, queries, k, chunk=8192):
    import torch
    p = torch.from_numpy(points).cuda()
    q = torch.from_numpy(queries).cuda()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for s in range(0, q.shape[0], chunk):
        d = torch.cdist(q[s:s + chunk], p)
        torch.topk(d, k, dim=1, largest=False)
    torch.cuda.synchronize()
    return (time.perf_counter() - t) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--brute-limit", type=int, default=1 << 20,
                    help="run the torch brute force only up to this many points")
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    cases = [("4-D build + 1M 1-NN", 1 << 24, 4, 1), ("3-D 1M points, 1M 8-NN", 1 << 20, 3, 8)]
    print("| case | peer | build ms | queries ms |")
    print("|---|---|---:|---:|")
    for name, n, dims, k in cases:
        pts = rng.random((n, dims), dtype=np.float32)
        qs = rng.random((1 << 20, dims), dtype=np.float32)
        b, q = ckdtree(pts, qs, k)
        print(f"| {name} | scipy cKDTree ({os.cpu_count()} threads) | {b:.0f} | {q:.0f} |", flush=True)
        if n <= a.brute_limit:
            print(f"| {name} | torch cdist + topk (GPU) | - | {torch_brute(pts, qs, k):.0f} |", flush=True)


if __name__ == "__main__":
    main()
