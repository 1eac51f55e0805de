//! The cell graph a build returns, and the rotation path query over it.

use std::collections::VecDeque;

use super::arrangement::Arrangement;
use super::cells::Cells;
use super::classify::classify_one;
use super::config::Algorithm;
use super::edges::Edges;
use super::samples::{normalised, UnitSamples};
use crate::error::{Error, Result};

/// The cell graph of an arrangement over a sample set.
#[derive(Debug, Clone, PartialEq)]
pub struct CellGraph {
    /// The cells the samples fell in.
    pub cells: Cells,
    /// Cells at Hamming distance 1.
    pub edges: Edges,
    /// The samples, normalised (representatives index them).
    pub samples: UnitSamples,
    /// The constraints it was built over.
    pub arrangement: Arrangement,
    /// The algorithm that found the edges.
    pub algorithm: Algorithm,
    /// Seconds spent classifying, and building cells and edges.
    pub classify_s: f64,
    /// See `classify_s`.
    pub graph_s: f64,
}

/// A path of cells between two rotations.
#[derive(Debug, Clone, PartialEq)]
pub struct RotationPath {
    /// Whether the goal's cell is reachable from the start's.
    pub reachable: bool,
    /// The cells from the start's to the goal's, both included.
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
