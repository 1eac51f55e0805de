"""Peers for `gpu_planning bench kdtree`: scipy's cKDTree (build, and queries with all host
threads) and a torch brute-force kNN on the GPU (cdist + topk in query chunks), on the
benchmark's own points and queries (--dir: points_N_D.npy, queries_Q_D.npy written by
`bench kdtree --npy-dir`; with --clouds, the real clouds it wrote as cloud_STEM.npy, each
point a query, as `bench kdtree --clouds` asks). Whole calls from host memory, medians of
--reps runs (cKDTree's build and queries: one run at 16.7M points, where each takes seconds)."""
import argparse
import glob
import os
import re
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
    ap.add_argument("--dir", required=True, help="where bench kdtree --npy-dir wrote")
    ap.add_argument("--cases", default="16777216:4:1,1048576:3:8", help="POINTS:DIMS:K")
    ap.add_argument("--queries", type=int, default=1 << 20)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--brute-limit", type=int, default=1 << 20,
                    help="run the torch brute force only up to this many points")
    ap.add_argument("--clouds", default="", help="STEM,...: cloud_STEM.npy, each point a query")
    ap.add_argument("--cloud-k", default="1,8", help="K,...: the k of each cloud")
    a = ap.parse_args()
    print(f"medians of {a.reps} runs (cKDTree above 1M points: one run)")
    print("| case | peer | build ms | queries ms |")
    print("|---|---|---:|---:|")
    runs = []
    for case in filter(None, a.cases.split(",")):
        n, dims, k = (int(x) for x in case.split(":"))
        pts = np.load(f"{a.dir}/points_{n}_{dims}.npy")
        qs = np.load(f"{a.dir}/queries_{a.queries}_{dims}.npy")
        runs.append((f"{n} x {dims}-D, {qs.shape[0]} {k}-NN", pts, qs, k))
    for stem in filter(None, a.clouds.split(",")):
        pts = np.load(f"{a.dir}/cloud_{stem}.npy")
        for k in (int(x) for x in a.cloud_k.split(",")):
            runs.append((f"{stem} ({pts.shape[0]} points), each point's {k}-NN", pts, pts, k))
    for name, pts, qs, k in runs:
        reps = a.reps if pts.shape[0] <= 1 << 20 else 1
        times = [ckdtree(pts, qs, k) for _ in range(reps)]
        b = float(np.median([r[0] for r in times]))
        q = float(np.median([r[1] for r in times]))
        print(f"| {name} | scipy cKDTree ({os.cpu_count()} threads) | {b:.0f} | {q:.0f} |", flush=True)
        if pts.shape[0] <= a.brute_limit:
            torch_brute(pts, qs[:8192], k)  # warm-up
            t = float(np.median([torch_brute(pts, qs, k) for _ in range(a.reps)]))
            print(f"| {name} | torch cdist + topk (GPU) | - | {t:.0f} |", flush=True)


if __name__ == "__main__":
    main()
