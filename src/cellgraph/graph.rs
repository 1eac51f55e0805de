//! The cell graph: classification, cells, edges with the chosen algorithm, on the chosen
//! backend; and the rotation path query over it.

use std::collections::VecDeque;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::arrangement::Arrangement;
use super::cells::{cells, Cells};
use super::classify::{classify, classify_one};
use super::edges::{hash_probe, heuristic, tree, Edges};
use super::samples::normalised;
use crate::compute::Backend;
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    /// h pivots prune the O(n^2) pairs (seed algorithms 1-2).
    Heuristic,
    /// 2^r-ary search tree over sorted cells (seed algorithms 3-4).
    Tree,
    /// XOR hashes: one probe per neighbour candidate, O(n l) expected.
    Hash,
}

impl Algorithm {
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Heuristic => "heuristic",
            Algorithm::Tree => "tree",
            Algorithm::Hash => "hash",
        }
    }

    pub fn parse(s: &str) -> Result<Algorithm> {
        match s {
            "heuristic" => Ok(Algorithm::Heuristic),
            "tree" => Ok(Algorithm::Tree),
            "hash" => Ok(Algorithm::Hash),
            _ => Err(Error::invalid(
                "algorithm",
                format!("'{s}' is not heuristic, tree or hash"),
            )),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    pub algorithm: Algorithm,
    /// Tree arity 2^r, r in 1..=8.
    pub r: u32,
    /// Heuristic pivots, 1..=64.
    pub h: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            algorithm: Algorithm::Hash,
            r: 4,
            h: 8,
        }
    }
}

impl Config {
    pub fn validate(&self) -> Result<()> {
        if !(1..=8).contains(&self.r) {
            return Err(Error::invalid("r", format!("{} is not in 1..=8", self.r)));
        }
        if !(1..=64).contains(&self.h) {
            return Err(Error::invalid("h", format!("{} is not in 1..=64", self.h)));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct CellGraph {
    pub cells: Cells,
    pub edges: Edges,
    /// The samples, normalised (representatives index them).
    pub samples: Vec<[f64; 4]>,
    pub arrangement: Arrangement,
    pub algorithm: Algorithm,
    /// Seconds spent classifying, and building cells and edges.
    pub classify_s: f64,
    pub graph_s: f64,
}

/// Classifies `raw` samples (normalised here) and builds the graph.
pub fn build(
    backend: &Backend,
    arr: &Arrangement,
    raw: &[[f64; 4]],
    cfg: &Config,
) -> Result<CellGraph> {
    cfg.validate()?;
    let samples = normalised(raw)?;
    if samples.len() >= u32::MAX as usize {
        return Err(Error::invalid(
            "samples",
            format!("{} samples exceed u32 indices", samples.len()),
        ));
    }
    let (cells, edges, classify_s, graph_s) = match backend {
        Backend::Cpu => {
            let t = Instant::now();
            let bits = classify(arr, &samples);
            let classify_s = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let c = cells(arr.len(), &bits);
            let e = edges_cpu(&c, cfg);
            (c, e, classify_s, t.elapsed().as_secs_f64())
        }
        Backend::Cuda(rt) => super::gpu::build(rt, arr, &samples, cfg)?,
    };
    Ok(CellGraph {
        cells,
        edges,
        samples,
        arrangement: arr.clone(),
        algorithm: cfg.algorithm,
        classify_s,
        graph_s,
    })
}

pub fn edges_cpu(c: &Cells, cfg: &Config) -> Edges {
    match cfg.algorithm {
        Algorithm::Heuristic => heuristic(c, cfg.h as usize),
        Algorithm::Tree => tree(c, cfg.r),
        Algorithm::Hash => hash_probe(c),
    }
}

/// A path of cells between two rotations.
#[derive(Debug, Clone, PartialEq)]
pub struct RotationPath {
    pub reachable: bool,
    pub cells: Vec<u32>,
    /// A representative sample of each cell.
    pub waypoints: Vec<[f64; 4]>,
}

impl CellGraph {
    /// The cell of a rotation, if some sample fell in it.
    pub fn cell_of(&self, field: &str, q: [f64; 4]) -> Result<u32> {
        let q = normalised(&[q]).map_err(|e| Error::invalid(field, e.to_string()))?[0];
        let mut row = vec![0u64; self.cells.bits.words];
        classify_one(&self.arrangement, &q, &mut row);
        self.cells.find(&row).ok_or_else(|| {
            Error::invalid(
                field,
                format!("{q:?} lies in a cell that no sample reached; add samples"),
            )
        })
    }

    /// Fewest-cells path (breadth first; neighbours in ascending cell order).
    pub fn path(&self, start: [f64; 4], goal: [f64; 4]) -> Result<RotationPath> {
        let (s, g) = (self.cell_of("start", start)?, self.cell_of("goal", goal)?);
        let n = self.cells.len();
        let mut adj_start = vec![0u32; n + 1];
        for (&a, &b) in self.edges.from.iter().zip(&self.edges.to) {
            adj_start[a as usize + 1] += 1;
            adj_start[b as usize + 1] += 1;
        }
        for i in 0..n {
            adj_start[i + 1] += adj_start[i];
        }
        let mut fill = adj_start.clone();
        let mut adj = vec![0u32; adj_start[n] as usize];
        for (&a, &b) in self.edges.from.iter().zip(&self.edges.to) {
            adj[fill[a as usize] as usize] = b;
            fill[a as usize] += 1;
            adj[fill[b as usize] as usize] = a;
            fill[b as usize] += 1;
        }
        let mut prev = vec![u32::MAX; n];
        prev[s as usize] = s;
        let mut queue = VecDeque::from([s]);
        while let Some(v) = queue.pop_front() {
            if v == g {
                break;
            }
            let nb = &mut adj[adj_start[v as usize] as usize..adj_start[v as usize + 1] as usize];
            nb.sort_unstable();
            for &u in nb.iter() {
                if prev[u as usize] == u32::MAX {
                    prev[u as usize] = v;
                    queue.push_back(u);
                }
            }
        }
        if prev[g as usize] == u32::MAX {
            return Ok(RotationPath {
                reachable: false,
                cells: vec![],
                waypoints: vec![],
            });
        }
        let mut cells = vec![g];
        while *cells.last().unwrap_or(&s) != s {
            let v = *cells.last().unwrap_or(&s);
            cells.push(prev[v as usize]);
        }
        cells.reverse();
        let waypoints = cells
            .iter()
            .map(|&c| self.samples[self.cells.representatives[c as usize] as usize])
            .collect();
        Ok(RotationPath {
            reachable: true,
            cells,
            waypoints,
        })
    }
}
