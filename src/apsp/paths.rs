//! Reading results: paths from the successor matrix, and negative cycles from the diagonal.

use rayon::prelude::*;

use super::graph::NO_VERTEX;
use super::weight::Weight;

/// A negative cycle: a vertex on it, and the cycle itself when following successors from that
/// vertex closes it with a negative total (cheap to try; not always possible once distances
/// have run away).
#[derive(Debug, Clone, PartialEq)]
pub struct NegativeCycle {
    /// A vertex whose distance to itself went negative.
    pub vertex: u32,
    /// The cycle's vertices in order, when it could be traced.
    pub cycle: Option<Vec<u32>>,
}

/// The path u -> v (both included) by successors; None when v is unreachable from u or the
/// successors do not lead there within n steps (which a correct solve never produces).
pub fn path(succ: &[u32], n: usize, u: u32, v: u32) -> Option<Vec<u32>> {
    let mut out = vec![u];
    let mut x = u;
    while x != v {
        let next = succ[x as usize * n + v as usize];
        if next == NO_VERTEX || out.len() > n {
            return None;
        }
        out.push(next);
        x = next;
    }
    Some(out)
}

/// Finds a vertex with a negative distance to itself, and tries to read its cycle from the
/// successors, keeping it only if its weight (by `edge`) really is negative.
pub fn negative_cycle<T: Weight>(
    dist: &[T],
    succ: &[u32],
    n: usize,
    edge: impl Fn(u32, u32) -> Option<T>,
) -> Option<NegativeCycle> {
    let v = (0..n).find(|&i| dist[i * n + i] < T::ZERO)? as u32;
    let cycle = (|| {
        // Walk successors towards v; the first repeated vertex closes a cycle.
        let mut seen = vec![usize::MAX; n];
        let mut walk = vec![v];
        seen[v as usize] = 0;
        let mut x = succ[v as usize * n + v as usize];
        loop {
            if x == NO_VERTEX {
                return None;
            }
            if seen[x as usize] != usize::MAX {
                let mut c = walk[seen[x as usize]..].to_vec();
                c.push(x);
                let mut total = T::ZERO;
                for p in c.windows(2) {
                    total = T::add(total, edge(p[0], p[1])?);
                }
                return (total < T::ZERO).then_some(c);
            }
            seen[x as usize] = walk.len();
            walk.push(x);
            x = succ[x as usize * n + v as usize];
        }
    })();
    Some(NegativeCycle { vertex: v, cycle })
}

/// A negative cycle of the edge list, by Bellman–Ford from a virtual source joined to every
/// vertex: when a relaxation still happens in round n, following parents n times from the last
/// relaxed vertex lands on a cycle of the parent graph, and that cycle is negative. Used when
/// the successor matrix does not close the cycle (the blocked order can leave it open). Sums
/// in f64 (exact for the i32 weights, which stay below 2^53 over n rounds); the cycle is kept
/// only if its weight in `T` (by `edge`) is negative, so a float "cycle" made of rounding is
/// not reported. Stops with `None` when the request's cancel flag is set.
pub fn bellman_ford_cycle<T: Weight>(
    from: &[u32],
    to: &[u32],
    w: &[T],
    n: usize,
    edge: impl Fn(u32, u32) -> Option<T>,
) -> Option<Vec<u32>> {
    let mut d = vec![0f64; n];
    let mut parent = vec![NO_VERTEX; n];
    let mut last = None;
    for _ in 0..n {
        crate::cancel::checkpoint().ok()?;
        last = None;
        for ((&u, &v), &x) in from.iter().zip(to).zip(w) {
            let c = d[u as usize] + x.to_f64();
            if c < d[v as usize] {
                d[v as usize] = c;
                parent[v as usize] = u;
                last = Some(v);
            }
        }
        last?;
    }
    let mut x = last?;
    for _ in 0..n {
        x = parent[x as usize];
    }
    // Parents point backwards along edges: collect them, then reverse into walking order.
    let mut c = vec![x];
    let mut y = parent[x as usize];
    while y != x {
        c.push(y);
        y = parent[y as usize];
    }
    c.push(x);
    c.reverse();
    let mut total = T::ZERO;
    for p in c.windows(2) {
        total = T::add(total, edge(p[0], p[1])?);
    }
    (total < T::ZERO).then_some(c)
}

/// Whether `to` is as short as `target` (floats within 1e-5 relative, as sums in another
/// order may round differently; kernels/apsp.cu apsp_zero_cycle compares as this does).
fn tight<T: Weight>(x: T, target: T) -> bool {
    if T::KERNEL_FLOAT {
        x.to_f64() <= target.to_f64() + 1e-5 * target.to_f64().abs().max(1.0)
    } else {
        x <= target
    }
}

/// Whether an edge u -> v (u != v) and the path v -> u of the solved distances `d` make a
/// cycle of weight <= 0, the only graphs whose successors may need
/// [`repair_on_zero_weight_cycles`]. On the device: kernels/apsp.cu apsp_zero_cycle.
pub fn has_zero_weight_cycle<T: Weight>(
    from: &[u32],
    to: &[u32],
    w: &[T],
    d: &[T],
    n: usize,
) -> bool {
    (0..from.len()).into_par_iter().any(|e| {
        let (u, v) = (from[e] as usize, to[e] as usize);
        u != v && d[v * n + u].reached() && tight(T::add(w[e], d[v * n + u]), T::ZERO)
    })
}

/// Successors that lead in circles, which the blocked relaxation order can leave behind on
/// cycles of total weight zero (the textbook order never does), are rebuilt column by column:
/// for each affected target j, a breadth-first search backwards from j over tight edges
/// (`w(u, v) + d[v][j] == d[u][j]`) gives every vertex the first-found tight edge one level closer
/// to j. Deterministic (edge order), so CPU and GPU results stay equal. Run only where
/// [`has_zero_weight_cycle`] found one (the check costs O(m)).
pub fn repair_on_zero_weight_cycles<T: Weight>(
    from: &[u32],
    to: &[u32],
    w: &[T],
    d: &[T],
    h: &mut [u32],
    n: usize,
) -> usize {
    // In-edges of each vertex, in edge order.
    let mut start = vec![0usize; n + 1];
    for &v in to {
        start[v as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut incoming = vec![0usize; from.len()];
    for (e, &v) in to.iter().enumerate() {
        incoming[fill[v as usize]] = e;
        fill[v as usize] += 1;
    }
    let mut repaired = 0;
    let mut state = vec![0u8; n];
    let mut level = vec![u32::MAX; n];
    let mut queue = Vec::with_capacity(n);
    for j in 0..n {
        if !column_has_cycle(h, n, j, &mut state) {
            continue;
        }
        repaired += 1;
        level.fill(u32::MAX);
        queue.clear();
        level[j] = 0;
        queue.push(j);
        let mut head = 0;
        while head < queue.len() {
            let v = queue[head];
            head += 1;
            for &e in &incoming[start[v]..start[v + 1]] {
                let u = from[e] as usize;
                if level[u] != u32::MAX || u == v || !d[u * n + j].reached() {
                    continue;
                }
                if tight(T::add(w[e], d[v * n + j]), d[u * n + j]) {
                    level[u] = level[v] + 1;
                    h[u * n + j] = v as u32;
                    queue.push(u);
                }
            }
        }
    }
    repaired
}

/// Whether following successors towards `j` loops anywhere in column j.
fn column_has_cycle(h: &[u32], n: usize, j: usize, state: &mut [u8]) -> bool {
    // 0 unvisited, 1 on the current walk, 2 known to end.
    state.fill(0);
    state[j] = 2;
    let mut walk = Vec::new();
    for i in 0..n {
        let mut x = i;
        while state[x] == 0 {
            state[x] = 1;
            walk.push(x);
            let next = h[x * n + j];
            if next == NO_VERTEX {
                break;
            }
            x = next as usize;
        }
        if state[x] == 1 && h[x * n + j] != NO_VERTEX {
            return true;
        }
        for &y in &walk {
            state[y] = 2;
        }
        walk.clear();
    }
    false
}
