//! What a solve returns: the distance and successor matrices, and the pair queries on them.

use super::config::MemoryModel;
use super::paths::path;
use super::weight::Weight;
use crate::error::{Error, Result};

#[derive(Debug, Clone, PartialEq)]
pub enum Distances {
    Int(Vec<i32>),
    Float(Vec<f32>),
}

/// n x n distances (unreached: `Weight::INF`) and successors (unreached: NO_VERTEX).
#[derive(Debug, Clone, PartialEq)]
pub struct Solution {
    pub vertices: usize,
    pub distances: Distances,
    pub successors: Vec<u32>,
    pub backend: &'static str,
    pub memory_model: MemoryModel,
    pub compute_s: f64,
}

/// One answered pair.
#[derive(Debug, Clone, PartialEq)]
pub struct PairPath {
    pub from: u32,
    pub to: u32,
    pub reachable: bool,
    /// +inf when unreachable.
    pub distance: f64,
    pub path: Vec<u32>,
}

impl Solution {
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
