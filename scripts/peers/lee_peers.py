"""Peers for `gpu_planning bench lee`: scipy csgraph BFS (CPU) and scikit-image MCP on the same
terrains, read from the .npy files the benchmark wrote (--npy-dir). 4-connectivity, max_step 1,
goal at the first open cell from the centre in scan order, full distance field. Medians of
--reps runs."""
import argparse
import time

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order


def nearest_open(h, x, y):
    flat = h.ravel()
    start = y * h.shape[1] + x
    order = np.concatenate([np.arange(start, flat.size), np.arange(0, start)])
    ok = order[~np.isnan(flat[order])]
    return int(ok[0])


def graph(h, max_step=1.0):
    rows, cols = h.shape
    idx = np.arange(rows * cols).reshape(rows, cols)
    src, dst = [], []
    for a, b, ha, hb in [(idx[:, :-1], idx[:, 1:], h[:, :-1], h[:, 1:]), (idx[:-1, :], idx[1:, :], h[:-1, :], h[1:, :])]:
        ok = ~np.isnan(ha) & ~np.isnan(hb) & (np.abs(ha - hb) <= max_step)
        src.append(a[ok]); dst.append(b[ok])
    s = np.concatenate(src); d = np.concatenate(dst)
    n = rows * cols
    return sp.csr_matrix((np.ones(2 * s.size, dtype=np.int8), (np.concatenate([s, d]), np.concatenate([d, s]))), shape=(n, n))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--sizes", default="1000,4000")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()

    def median_ms(fn):
        times = []
        for _ in range(a.reps):
            t = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t) * 1e3)
        return float(np.median(times))

    print(f"medians of {a.reps} runs")
    print("| terrain | size | peer | ms (field) |\n|---|---|---|---:|")
    for n in [int(s) for s in a.sizes.split(",")]:
        for terrain in ["random", "maze"]:
            h = np.load(f"{a.dir}/{terrain}_{n}.npy")
            goal = nearest_open(h, n // 2, n // 2)
            g = graph(h)
            ms = median_ms(lambda: breadth_first_order(g, goal, directed=False, return_predecessors=True))
            print(f"| {terrain} | {n}² | scipy csgraph breadth_first_order (CPU) | {ms:.1f} |")
            if n <= 4000:
                try:
                    from skimage.graph import MCP
                    costs = np.where(np.isnan(h), -1.0, 1.0)  # MCP ignores step limits: a looser problem
                    ms = median_ms(lambda: MCP(costs, fully_connected=False).find_costs([np.unravel_index(goal, h.shape)]))
                    print(f"| {terrain} | {n}² | skimage MCP, NaN cells blocked, no step limit (CPU) | {ms:.1f} |")
                except Exception as e:  # noqa: BLE001
                    print(f"skimage MCP unavailable: {e}")


if __name__ == "__main__":
    main()
