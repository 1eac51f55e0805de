//! Exact queries on the CPU: k nearest and radius search, Euclidean or SO(3). Squared
//! distances are summed over the dimensions in order in f32 and their correctly rounded square
//! root is the distance (the CUDA kernel does the same operations, so results match bit for
//! bit). Neighbours are ranked by (distance, input index): two points whose squared sums
//! differ but whose distances round equal are a tie, and the smaller index wins.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::tree::{mid, KdTree};
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    Euclidean,
    /// Quaternions (x, y, z, w): min(|p - q|, |p + q|), so q and -q are one rotation.
    So3,
}

/// One query's answer: (distance, input index), nearest first.
pub type Neighbors = Vec<(f32, u32)>;

#[inline]
pub fn dist2(a: &[f32], b: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for (x, y) in a.iter().zip(b) {
        let d = x - y;
        s += d * d;
    }
    s
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

pub fn check_query(t: &KdTree, queries: &[f32], k: usize, metric: Metric) -> Result<()> {
    check_query_dims(t.dims, queries, k, metric)
}

/// Query checks for points of `dims` dimensions.
pub fn check_query_dims(dims: usize, queries: &[f32], k: usize, metric: Metric) -> Result<()> {
    if k == 0 {
        return Err(Error::invalid("k", "0: ask for at least one neighbour"));
    }
    if !queries.len().is_multiple_of(dims) {
        return Err(Error::invalid(
            "queries",
            format!(
                "{} values is not a multiple of {} dimensions",
                queries.len(),
                dims
            ),
        ));
    }
    if let Some(i) = queries.iter().position(|v| !v.is_finite()) {
        return Err(Error::invalid(
            format!("queries[{}]", i / dims),
            format!("coordinate {} is {}", i % dims, queries[i]),
        ));
    }
    if metric == Metric::So3 && dims != 4 {
        return Err(Error::invalid(
            "metric",
            format!(
                "so3 needs 4-D quaternions, the points have {} dimensions",
                dims
            ),
        ));
    }
    Ok(())
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
