//! The solver callers use: a graph in, distances and successors out, on the CPU or a GPU
//! memory model.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::graph::{dense, padded, Graph, Weights};
use super::paths::{negative_cycle, path, repair_circular_successors};
use super::weight::Weight;
use super::{cpu, gpu, NO_VERTEX};
use crate::compute::Backend;
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryModel {
    /// The seed's starting point: one launch per k, a 1-D grid walking down columns.
    Linear,
    /// One launch per k, 2-D blocks along rows (coalesced).
    Coalesced,
    /// As coalesced, with row k and column k staged in shared memory.
    Shared,
    /// Venkataraman's three phases with the seed's 32 x 32 tiles, one thread per cell.
    Blocked,
    /// The three phases with `tile`-wide k-blocks, `thread_tile`^2 cells per thread held in
    /// registers, and Hopper DPX add-min for integers. The default: the fastest measured.
    #[default]
    Tiled,
}

impl MemoryModel {
    pub const ALL: [MemoryModel; 5] = [
        MemoryModel::Linear,
        MemoryModel::Coalesced,
        MemoryModel::Shared,
        MemoryModel::Blocked,
        MemoryModel::Tiled,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Linear => "linear",
            Self::Coalesced => "coalesced",
            Self::Shared => "shared",
            Self::Blocked => "blocked",
            Self::Tiled => "tiled",
        }
    }

    /// Whether this model relaxes in the blocked order (else the textbook order).
    pub fn is_blocked(self) -> bool {
        matches!(self, Self::Blocked | Self::Tiled)
    }
}

impl std::str::FromStr for MemoryModel {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                Error::invalid(
                    "memory_model",
                    format!("'{s}' is not one of linear, coalesced, shared, blocked, tiled"),
                )
            })
    }
}

/// Shapes of the GPU models (validated ranges; CPU runs use `tile` for their blocked order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SolverConfig {
    pub memory_model: MemoryModel,
    /// k-block of the `tiled` model: 16, 32 or 64.
    pub tile: u32,
    /// Cells per thread along each axis in the `tiled` model's phase 3: 1, 2, 4 or 8.
    pub thread_tile: u32,
    /// Block shape of the per-k models (linear uses block_x * block_y threads in 1-D).
    pub block_x: u32,
    pub block_y: u32,
}

/// The seed's tile for the `blocked` model.
pub const BLOCKED_TILE: u32 = 32;

impl Default for SolverConfig {
    fn default() -> Self {
        SolverConfig {
            memory_model: MemoryModel::Tiled,
            tile: 64,
            thread_tile: 4,
            block_x: 32,
            block_y: 8,
        }
    }
}

impl SolverConfig {
    pub fn validate(&self) -> Result<()> {
        if ![16, 32, 64].contains(&self.tile) {
            return Err(Error::invalid(
                "tile",
                format!("{} is not 16, 32 or 64", self.tile),
            ));
        }
        if ![1, 2, 4, 8].contains(&self.thread_tile) || self.thread_tile > self.tile / 4 {
            return Err(Error::invalid(
                "thread_tile",
                format!(
                    "{} is not 1, 2, 4 or 8 (and at most tile / 4 = {})",
                    self.thread_tile,
                    self.tile / 4
                ),
            ));
        }
        let per_block = (self.tile / self.thread_tile).pow(2);
        if per_block > 1024 {
            return Err(Error::invalid(
                "thread_tile",
                format!(
                    "{} gives {per_block} threads per block for tile {} (at most 1024)",
                    self.thread_tile, self.tile
                ),
            ));
        }
        let threads = self.block_x as u64 * self.block_y as u64;
        if self.block_x == 0 || self.block_y == 0 || threads > 1024 {
            return Err(Error::invalid(
                "block_x x block_y",
                format!(
                    "{} x {} is not 1..=1024 threads",
                    self.block_x, self.block_y
                ),
            ));
        }
        Ok(())
    }

    /// (k-block, cells per thread) the blocked order runs with under this config.
    pub fn blocked_shape(&self) -> (u32, u32) {
        match self.memory_model {
            MemoryModel::Blocked => (BLOCKED_TILE, 1),
            _ => (self.tile, self.thread_tile),
        }
    }
}

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

/// Solves `graph`; a negative cycle is `Error::NegativeCycle`.
pub fn solve(backend: &Backend, graph: &Graph, config: &SolverConfig) -> Result<Solution> {
    config.validate()?;
    graph.validate()?;
    let started = Instant::now();
    let n = graph.vertices as usize;
    let (distances, successors) = match &graph.weights {
        Weights::Int(w) => {
            let (d, h) = solve_typed(backend, graph, w, config)?;
            (Distances::Int(d), h)
        }
        Weights::Float(w) => {
            let (d, h) = solve_typed(backend, graph, w, config)?;
            (Distances::Float(d), h)
        }
    };
    Ok(Solution {
        vertices: n,
        distances,
        successors,
        backend: backend.name(),
        memory_model: config.memory_model,
        compute_s: started.elapsed().as_secs_f64(),
    })
}

fn solve_typed<T: Weight>(
    backend: &Backend,
    graph: &Graph,
    w: &[T],
    config: &SolverConfig,
) -> Result<(Vec<T>, Vec<u32>)> {
    let n = graph.vertices as usize;
    let np = padded_size(n, config);
    let (mut d, mut h) = dense(n, np, &graph.from, &graph.to, w);
    run(backend, &mut d, &mut h, np, config)?;
    let (d, mut h) = finish(&d, &h, n, np);
    if let Some(c) = negative_cycle(&d, &h, n, |u, v| lightest_edge(graph, w, u, v)) {
        return Err(Error::NegativeCycle {
            vertex: c.vertex,
            cycle: c.cycle,
        });
    }
    let repaired = repair_circular_successors(&graph.from, &graph.to, w, &d, &mut h, n);
    if repaired > 0 {
        tracing::debug!("apsp: rebuilt successors of {repaired} targets on zero-weight cycles");
    }
    Ok((d, h))
}

/// Matrix side the model runs on: a multiple of its tile for the blocked orders.
pub fn padded_size(n: usize, config: &SolverConfig) -> usize {
    if config.memory_model.is_blocked() {
        padded(n, config.blocked_shape().0 as usize)
    } else {
        n
    }
}

/// Runs `config`'s model in place on padded start matrices.
pub fn run<T: Weight>(
    backend: &Backend,
    d: &mut [T],
    h: &mut [u32],
    np: usize,
    config: &SolverConfig,
) -> Result<()> {
    if np == 0 {
        return Ok(());
    }
    match backend {
        Backend::Cpu => {
            if config.memory_model.is_blocked() {
                cpu::blocked(d, h, np, config.blocked_shape().0 as usize)
            } else {
                cpu::textbook(d, h, np)
            }
        }
        Backend::Cuda(rt) => {
            let mut m = gpu::DeviceMatrices::upload(rt, d, h, np)?;
            m.solve(config)?;
            m.download(d, h)
        }
    }
}

/// Crops padding and maps everything unreached to (INF, NO_VERTEX).
pub fn finish<T: Weight>(d: &[T], h: &[u32], n: usize, np: usize) -> (Vec<T>, Vec<u32>) {
    let mut od = Vec::with_capacity(n * n);
    let mut oh = Vec::with_capacity(n * n);
    for i in 0..n {
        for j in 0..n {
            let x = d[i * np + j];
            if x.reached() {
                od.push(x);
                oh.push(h[i * np + j]);
            } else {
                od.push(T::INF);
                oh.push(NO_VERTEX);
            }
        }
    }
    (od, oh)
}

fn lightest_edge<T: Weight>(g: &Graph, w: &[T], u: u32, v: u32) -> Option<T> {
    let mut best: Option<T> = None;
    for ((&a, &b), &x) in g.from.iter().zip(&g.to).zip(w) {
        if a == u && b == v && best.is_none_or(|m| x < m) {
            best = Some(x);
        }
    }
    best
}
