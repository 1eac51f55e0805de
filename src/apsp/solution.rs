//! What a solve returns: the distance and successor matrices, and the pair queries on them.

use super::config::MemoryModel;
use super::paths::path;
use super::weight::Weight;
use crate::error::{Error, Result};

/// n x n distances, row-major (row u, column v: u to v), in the weights' type.
#[derive(Debug, Clone, PartialEq)]
pub enum Distances {
    /// From integer weights.
    Int(Vec<i32>),
    /// From float weights.
    Float(Vec<f32>),
}

/// n x n distances (unreached: `Weight::INF`) and successors (unreached: NO_VERTEX).
#[derive(Debug, Clone, PartialEq)]
pub struct Solution {
    /// n, the side of both matrices.
    pub vertices: usize,
    /// Shortest distances.
    pub distances: Distances,
    /// Row u, column v: the vertex after u on a shortest u-v path.
    pub successors: Vec<u32>,
    /// The backend that solved it ([`crate::compute::Backend::name`]).
    pub backend: &'static str,
    /// The device variant asked for.
    pub memory_model: MemoryModel,
    /// Seconds the solve took, host clock.
    pub compute_s: f64,
}

/// One answered pair.
#[derive(Debug, Clone, PartialEq)]
pub struct PairPath {
    /// The pair's source.
    pub from: u32,
    /// The pair's target.
    pub to: u32,
    /// Whether any path leads from `from` to `to`.
    pub reachable: bool,
    /// +inf when unreachable.
    pub distance: f64,
    /// The vertices of a shortest path, both ends included; empty when unreachable.
    pub path: Vec<u32>,
}

impl Solution {
    /// The distance from u to v (+inf when unreachable).
    pub fn distance(&self, u: u32, v: u32) -> f64 {
        let c = u as usize * self.vertices + v as usize;
        match &self.distances {
            Distances::Int(d) => d[c].to_f64(),
            Distances::Float(d) => d[c].to_f64(),
        }
    }

    /// The shortest path u -> v; errors name the vertex that is out of range.
    pub fn query(&self, u: u32, v: u32) -> Result<PairPath> {
        for (field, x) in [("from", u), ("to", v)] {
            if x as usize >= self.vertices {
                return Err(Error::invalid(
                    field,
                    format!("vertex {x} is not below the vertex count {}", self.vertices),
                ));
            }
        }
        let distance = self.distance(u, v);
        let p = if distance.is_finite() {
            path(&self.successors, self.vertices, u, v)
        } else {
            None
        };
        Ok(PairPath {
            from: u,
            to: v,
            reachable: p.is_some(),
            distance: if p.is_some() { distance } else { f64::INFINITY },
            path: p.unwrap_or_default(),
        })
    }
}
