//! Directed weighted graphs as callers give them (edge lists) and as the solvers take them
//! (dense, padded distance and successor matrices).

use rayon::prelude::*;

use super::weight::{Weight, INT_REACH_LIMIT};
use crate::compute::staging::host_filled;
use crate::error::{Error, Result};

/// Successor of a pair with no path (and of padding).
pub const NO_VERTEX: u32 = u32::MAX;

/// Edge weights: integers are solved exactly in i32, anything else in f32.
#[derive(Debug, Clone, PartialEq)]
pub enum Weights {
    /// Integer weights, solved exactly.
    Int(Vec<i32>),
    /// Any other weights, solved in f32.
    Float(Vec<f32>),
}

impl Weights {
    /// The number of weights (one per edge).
    pub fn len(&self) -> usize {
        match self {
            Weights::Int(w) => w.len(),
            Weights::Float(w) => w.len(),
        }
    }

    /// Whether there are no edges.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A directed graph as edge lists: edge i goes from `from[i]` to `to[i]` with weight i;
/// parallel edges are allowed (the lightest counts).
#[derive(Debug, Clone, PartialEq)]
pub struct Graph {
    /// Vertices are 0..vertices.
    pub vertices: u32,
    /// Each edge's tail.
    pub from: Vec<u32>,
    /// Each edge's head.
    pub to: Vec<u32>,
    /// Each edge's weight.
    pub weights: Weights,
}

impl Graph {
    /// Checks lengths, vertex ids and weights; errors name the field and the bad value. (A CUDA
    /// solve checks the ids and weights on the device, with the same errors:
    /// [`super::gpu::DeviceMatrices::from_edges`].)
    pub fn validate(&self) -> Result<()> {
        self.validate_lengths()?;
        let n = self.vertices;
        // Over the pool (a node's graph can be millions of edges); the first bad entry is
        // named, as one pass in order would name it.
        for (field, ids) in [("edge_from", &self.from), ("edge_to", &self.to)] {
            if let Some((e, &v)) = ids.par_iter().enumerate().find_first(|(_, &v)| v >= n) {
                return Err(bad_vertex(field, e, v, n));
            }
        }
        match &self.weights {
            Weights::Float(w) => {
                if let Some((e, x)) = w.par_iter().enumerate().find_first(|(_, x)| !x.is_finite()) {
                    return Err(bad_weight(e, x));
                }
            }
            Weights::Int(w) => check_int_range(n, &self.from, w)?,
        }
        Ok(())
    }

    /// One weight and one head for every tail.
    pub fn validate_lengths(&self) -> Result<()> {
        let m = self.from.len();
        if self.to.len() != m || self.weights.len() != m {
            return Err(Error::invalid(
                "edges",
                format!(
                    "edge_from has {m} entries, edge_to {}, weights {}: they must be equal",
                    self.to.len(),
                    self.weights.len()
                ),
            ));
        }
        Ok(())
    }
}

/// Edge `e`'s id `v` in `field` (edge_from, edge_to) is not a vertex of a graph of `n`.
pub(crate) fn bad_vertex(field: &str, e: usize, v: u32, n: u32) -> Error {
    Error::invalid(
        format!("{field}[{e}]"),
        format!("vertex {v} is not below vertex_count {n}"),
    )
}

/// Edge `e`'s weight `x` is not finite.
pub(crate) fn bad_weight(e: usize, x: impl std::fmt::Display) -> Error {
    Error::invalid(format!("weights[{e}]"), format!("{x} is not finite"))
}

/// The range check from its sums: `p` of each vertex's largest positive out-weight, `q` of
/// each one's smallest negative (see [`check_int_range`]).
pub(crate) fn check_reach(p: i64, q: i64) -> Result<()> {
    let limit = INT_REACH_LIMIT as i64;
    if p >= limit || q <= -limit {
        return Err(Error::invalid(
            "integer_weights",
            format!(
                "path lengths could reach {} (from the largest out-weight of each vertex), \
                 beyond the exact int32 range ±{}; scale the weights down or send float weights",
                if p >= limit { p } else { q },
                limit - 1
            ),
        ));
    }
    Ok(())
}

/// Every simple path length must stay inside (-2^29, 2^29) so that i32 arithmetic is exact:
/// bounded by the sum over vertices of their largest positive (smallest negative) out-weight.
/// Only vertices with out-edges count, so the work and memory follow the edges, not n: a table
/// by vertex where there are no more vertices than edges (a map per edge took most of a
/// validation: 3.4M edges at n = 2000), a map otherwise.
fn check_int_range(n: u32, from: &[u32], w: &[i32]) -> Result<()> {
    /// Edges per vertex from which the tables are built over the pool: then a table's n
    /// entries are few beside the edges of the piece it takes.
    const EDGES_PER_TABLE: usize = 64;
    let widen = |e: &mut (i64, i64), x: i32| {
        e.0 = e.0.max(x as i64);
        e.1 = e.1.min(x as i64);
    };
    // Every id is below n (checked before this); one that were not would not count.
    let extremes: Vec<(i64, i64)> = if (n as usize) * EDGES_PER_TABLE <= from.len() {
        // Many edges per vertex: a table per piece of the edges over the pool, merged (a
        // table of n entries is small beside the edges a piece has).
        let table = || vec![(0i64, 0i64); n as usize];
        from.par_chunks(1 << 16)
            .zip(w.par_chunks(1 << 16))
            .fold(table, |mut by_vertex, (from, w)| {
                for (&u, &x) in from.iter().zip(w) {
                    if let Some(e) = by_vertex.get_mut(u as usize) {
                        widen(e, x);
                    }
                }
                by_vertex
            })
            .reduce(table, |mut a, b| {
                for (e, &(hi, lo)) in a.iter_mut().zip(&b) {
                    *e = (e.0.max(hi), e.1.min(lo));
                }
                a
            })
    } else if (n as usize) <= from.len() {
        let mut by_vertex = vec![(0i64, 0i64); n as usize];
        for (&u, &x) in from.iter().zip(w) {
            if let Some(e) = by_vertex.get_mut(u as usize) {
                widen(e, x);
            }
        }
        by_vertex
    } else {
        let mut out: std::collections::HashMap<u32, (i64, i64)> =
            std::collections::HashMap::with_capacity(from.len().min(1 << 20));
        for (&u, &x) in from.iter().zip(w) {
            widen(out.entry(u).or_insert((0, 0)), x);
        }
        out.into_values().collect()
    };
    let (p, q): (i64, i64) = extremes.iter().fold((0, 0), |a, v| (a.0 + v.0, a.1 + v.1));
    check_reach(p, q)
}

/// Dense start matrices: `d[u][v]` the lightest u->v edge (INF when none), `d[u][u]` = 0 unless a
/// negative self loop; `h[u][v]` = v where an edge is, u on the diagonal, NO_VERTEX elsewhere.
/// `np >= n` adds isolated padding vertices so tiles divide the matrix.
pub fn dense<T: Weight>(
    n: usize,
    np: usize,
    from: &[u32],
    to: &[u32],
    w: &[T],
) -> (Vec<T>, Vec<u32>) {
    // The n² fills are the host's largest work of a device solve (n = 2000: 16 ms on one
    // thread against 3 ms of device time), so rows are filled over the pool, each page
    // first touched by the thread that fills it.
    let mut d = host_filled(np * np, T::INF);
    let mut h = host_filled(np * np, NO_VERTEX);
    for i in 0..np {
        d[i * np + i] = T::ZERO;
        h[i * np + i] = i as u32;
    }
    for ((&u, &v), &x) in from.iter().zip(to).zip(w) {
        let (u, v, x) = (u as usize, v as usize, x.canonical());
        debug_assert!(u < n && v < n);
        let c = u * np + v;
        // Parallel edges keep the lightest (the first of equal ones); a self loop matters
        // only when negative, and then it is a negative cycle.
        if x < d[c] {
            d[c] = x;
            h[c] = v as u32;
        }
    }
    (d, h)
}

/// Rounds `n` up to a multiple of `tile` (at least one tile for n > 0).
pub fn padded(n: usize, tile: usize) -> usize {
    n.div_ceil(tile) * tile
}
