//! The reference. The build is Brown's balanced one: presort by each dimension's super key
//! (as ranks), remove duplicate tuples, then build breadth-first, one level per pass: every
//! open range is ordered by the rank of its level's dimension and its median becomes the node.
//! The CUDA builder (`gpu.rs`) makes the same passes with radix sorts and yields the same
//! layout.
//!
//! Queries are exact, k nearest and radius search, Euclidean or SO(3). Squared distances are
//! summed over the dimensions in order in f32 and their correctly rounded square root is the
//! distance (the CUDA kernel does the same operations, so results match bit for bit).
//! Neighbours are ranked by (distance, input index): two points whose squared sums differ but
//! whose distances round equal are a tie, and the smaller index wins.

use rayon::prelude::*;

use super::config::Metric;
use super::points::{cmp_super, Points};
use super::query::{check_query, dist2, Neighbors};
use super::tree::{mid, KdTree};
use crate::error::{Error, Result};

/// Distinct points in super-key-0 order (first copies), and their input indices.
pub fn dedupe(p: &Points) -> (Vec<f32>, Vec<u32>) {
    let mut idx: Vec<u32> = (0..p.len() as u32).collect();
    idx.par_sort_by(|&a, &b| {
        cmp_super(p.point(a as usize), p.point(b as usize), 0).then(a.cmp(&b))
    });
    let mut coords = Vec::new();
    let mut original = Vec::new();
    for (j, &i) in idx.iter().enumerate() {
        if j > 0 && p.point(idx[j - 1] as usize) == p.point(i as usize) {
            continue;
        }
        coords.extend_from_slice(p.point(i as usize));
        original.push(i);
    }
    (coords, original)
}

/// `rank[d][id]`: position of distinct point id in dimension d's super-key order.
pub fn ranks(dims: usize, coords: &[f32]) -> Vec<Vec<u32>> {
    let n = coords.len() / dims;
    let pt = |i: u32| &coords[i as usize * dims..(i as usize + 1) * dims];
    (0..dims)
        .map(|d| {
            let mut idx: Vec<u32> = (0..n as u32).collect();
            idx.par_sort_by(|&a, &b| cmp_super(pt(a), pt(b), d));
            let mut r = vec![0u32; n];
            for (j, &i) in idx.iter().enumerate() {
                r[i as usize] = j as u32;
            }
            r
        })
        .collect()
}

/// Open ranges of a level, in position order.
pub fn level_ranges(n: usize, level: usize) -> Vec<(usize, usize)> {
    let mut ranges = vec![(0, n)];
    for _ in 0..level {
        ranges = ranges
            .into_iter()
            .flat_map(|(lo, hi)| {
                let m = mid(lo, hi);
                [(lo, m), (m + 1, hi)]
            })
            .filter(|&(lo, hi)| hi > lo)
            .collect();
    }
    ranges
}

/// The reference build: dedupe, then split each range at its median by the super key of
/// the level's dimension.
pub fn build(p: &Points) -> KdTree {
    let dims = p.dims;
    let (coords, original) = dedupe(p);
    let n = original.len();
    let rank = ranks(dims, &coords);
    // Level 0 sorts everything by dimension 0; ids are already in that order.
    let mut order: Vec<u32> = (0..n as u32).collect();
    let mut ranges = vec![(0usize, n)];
    let mut level = 0;
    while ranges.iter().any(|&(lo, hi)| hi - lo > 1) {
        let d = level % dims;
        let r = &rank[d];
        // Ranges are disjoint: sort each in place, in parallel.
        let mut rest: &mut [u32] = &mut order;
        let mut offset = 0;
        let mut parts = Vec::with_capacity(ranges.len());
        for &(lo, hi) in &ranges {
            let (_, tail) = std::mem::take(&mut rest).split_at_mut(lo - offset);
            let (part, tail) = tail.split_at_mut(hi - lo);
            parts.push(part);
            rest = tail;
            offset = hi;
        }
        parts
            .into_par_iter()
            .for_each(|s| s.sort_unstable_by_key(|&id| r[id as usize]));
        ranges = ranges
            .into_iter()
            .flat_map(|(lo, hi)| {
                let m = mid(lo, hi);
                [(lo, m), (m + 1, hi)]
            })
            .filter(|&(lo, hi)| hi > lo)
            .collect();
        level += 1;
    }
    KdTree {
        dims,
        coords,
        original,
        order,
        input_len: p.len(),
    }
}

/// The k best (distance, index) pairs, kept sorted.
struct Best {
    k: usize,
    list: Vec<(f32, u32)>,
}

impl Best {
    fn worst(&self) -> f32 {
        if self.list.len() < self.k {
            f32::INFINITY
        } else {
            self.list[self.k - 1].0
        }
    }

    fn offer(&mut self, d2: f32, idx: u32) {
        let key = (d2, idx);
        if self.list.len() == self.k {
            let w = self.list[self.k - 1];
            if !(key.0 < w.0 || (key.0 == w.0 && key.1 < w.1)) {
                return;
            }
            self.list.pop();
        }
        let at = self
            .list
            .partition_point(|&(d, i)| d < key.0 || (d == key.0 && i < key.1));
        self.list.insert(at, key);
    }
}

fn knn_euclid(t: &KdTree, q: &[f32], best: &mut Best, lo: usize, hi: usize, depth: usize) {
    if lo >= hi {
        return;
    }
    let m = mid(lo, hi);
    let p = t.at(m);
    best.offer(dist2(q, p).sqrt(), t.original[t.order[m] as usize]);
    let d = depth % t.dims;
    let diff = q[d] - p[d];
    let (near, far) = if diff <= 0.0 {
        ((lo, m), (m + 1, hi))
    } else {
        ((m + 1, hi), (lo, m))
    };
    knn_euclid(t, q, best, near.0, near.1, depth + 1);
    // Every point beyond the plane has a summed square >= diff^2 (f32 rounding is monotone),
    // so a distance >= sqrt(diff^2): this skips only points that cannot enter, ties included.
    if (diff * diff).sqrt() <= best.worst() {
        knn_euclid(t, q, best, far.0, far.1, depth + 1);
    }
}

/// k nearest of one query (fewer when the tree has fewer distinct points).
pub fn knn_one(t: &KdTree, q: &[f32], k: usize, metric: Metric) -> Neighbors {
    let k = k.min(t.len());
    if k == 0 {
        return vec![];
    }
    let mut best = Best {
        k,
        list: Vec::with_capacity(k + 1),
    };
    knn_euclid(t, q, &mut best, 0, t.len(), 0);
    if metric == Metric::So3 {
        // Nearest under min(|p - q|, |p + q|): the k best for q and for -q, merged per point.
        let neg: Vec<f32> = q.iter().map(|v| -v).collect();
        let mut other = Best {
            k,
            list: Vec::with_capacity(k + 1),
        };
        knn_euclid(t, &neg, &mut other, 0, t.len(), 0);
        for (d, i) in other.list {
            match best.list.iter().position(|&(_, j)| j == i) {
                Some(at) if best.list[at].0 <= d => {}
                Some(at) => {
                    best.list.remove(at);
                    best.offer(d, i);
                }
                None => best.offer(d, i),
            }
        }
    }
    best.list
}

/// k nearest of many queries (rayon over queries).
pub fn knn(t: &KdTree, queries: &[f32], k: usize, metric: Metric) -> Result<Vec<Neighbors>> {
    check_query(t, queries, k, metric)?;
    Ok(queries
        .par_chunks(t.dims)
        .map(|q| knn_one(t, q, k, metric))
        .collect())
}

fn radius_euclid(
    t: &KdTree,
    q: &[f32],
    r: f32,
    out: &mut Vec<(f32, u32)>,
    lo: usize,
    hi: usize,
    depth: usize,
) {
    if lo >= hi {
        return;
    }
    let m = mid(lo, hi);
    let p = t.at(m);
    let d = dist2(q, p).sqrt();
    if d <= r {
        out.push((d, t.original[t.order[m] as usize]));
    }
    let dim = depth % t.dims;
    let diff = q[dim] - p[dim];
    let (near, far) = if diff <= 0.0 {
        ((lo, m), (m + 1, hi))
    } else {
        ((m + 1, hi), (lo, m))
    };
    radius_euclid(t, q, r, out, near.0, near.1, depth + 1);
    if (diff * diff).sqrt() <= r {
        radius_euclid(t, q, r, out, far.0, far.1, depth + 1);
    }
}

/// Every point within distance r of each query (distance <= r), nearest first, at most
/// `max_count` of them (0: all).
pub fn radius(
    t: &KdTree,
    queries: &[f32],
    r: f32,
    max_count: usize,
    metric: Metric,
) -> Result<Vec<Neighbors>> {
    check_query(t, queries, 1, metric)?;
    if !(r.is_finite() && r >= 0.0) {
        return Err(Error::invalid("radius", format!("{r} is not a distance")));
    }
    Ok(queries
        .par_chunks(t.dims)
        .map(|q| {
            let mut out = Vec::new();
            radius_euclid(t, q, r, &mut out, 0, t.len(), 0);
            if metric == Metric::So3 {
                let neg: Vec<f32> = q.iter().map(|v| -v).collect();
                radius_euclid(t, &neg, r, &mut out, 0, t.len(), 0);
                // A point found from both sides keeps its smaller distance.
                out.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.total_cmp(&b.0)));
                out.dedup_by_key(|e| e.1);
            }
            out.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            if max_count > 0 {
                out.truncate(max_count);
            }
            out
        })
        .collect())
}
