"""Peers for `gpu_planning bench apsp`: the torch int32 min-plus loop over k on the GPU
(D = min(D, D[:, k:k+1] + D[k:k+1, :]), distances only) and scipy's floyd_warshall on the CPU,
on the benchmark's own graphs (--dir: apsp_N_DENSITY.npy written by `bench apsp --npy-dir`;
int32, 0x3fffffff where there is no edge). torch: median of --reps runs after a warm-up;
scipy: one run (seconds each). Each peer's distances are compared with the other's where both
run."""
import argparse
import glob
import re
import time

import numpy as np

INF = 0x3FFFFFFF


def torch_loop(d):
    import torch
    D = torch.from_numpy(d).cuda()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for k in range(D.shape[0]):
        D = torch.minimum(D, D[:, k:k + 1] + D[k:k + 1, :])
    torch.cuda.synchronize()
    return (time.perf_counter() - t) * 1e3, D.cpu().numpy()


def scipy_fw(d):
    from scipy.sparse.csgraph import floyd_warshall
    m = np.where(d >= INF, 0, d).astype(np.float64)
    t = time.perf_counter()
    out = floyd_warshall(m, directed=True)
    return (time.perf_counter() - t) * 1e3, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True, help="where bench apsp --npy-dir wrote")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--torch-limit", type=int, default=8192)
    ap.add_argument("--scipy-limit", type=int, default=2000)
    a = ap.parse_args()
    print(f"torch: median of {a.reps} runs; scipy: one run")
    print("| n | density | peer | ms | check |\n|---:|---:|---|---:|---|")
    files = []
    for f in glob.glob(f"{a.dir}/apsp_*_*.npy"):
        m = re.search(r"apsp_(\d+)_(\d+)\.npy$", f)
        files.append((int(m.group(1)), int(m.group(2)), f))
    for n, p, f in sorted(files):
        d = np.load(f)
        got = None
        if n <= a.torch_limit:
            torch_loop(d[:64, :64].copy())  # warm-up
            runs = [torch_loop(d) for _ in range(a.reps)]
            got = runs[0][1]
            ms = float(np.median([r[0] for r in runs]))
            print(f"| {n} | {p} % | torch int32 min-plus loop (GPU, no successors) | {ms:.2f} | |", flush=True)
        if n <= a.scipy_limit:
            ms, out = scipy_fw(d)
            check = ""
            if got is not None:
                ref = np.where(np.isinf(out), INF, out).astype(np.int64)
                same = np.array_equal(np.minimum(got.astype(np.int64), INF), ref)
                check = "equal to torch's" if same else "DIFFERS from torch's"
            print(f"| {n} | {p} % | scipy floyd_warshall (CPU, predecessors off) | {ms:.2f} | {check} |", flush=True)


if __name__ == "__main__":
    main()
