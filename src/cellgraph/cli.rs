//! `gpu_planning cellgraph`: the cell graph of an arrangement from files.

use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use super::arrangement::Arrangement;
use super::config::DEFAULT_MAX_SAMPLES;
use super::samples::shoemake;
use super::{build, Algorithm, Config};
use crate::compute::{Backend, BackendKind};
use crate::error::{Error, Result};
use crate::npy::read_f64_nd;

/// `gpu_planning cell-graph`'s flags: constraints, samples, the algorithm and its shape.
#[derive(Debug, Args)]
pub struct CellGraphArgs {
    /// (l, 4, 4) float64 symmetric matrices, .npy.
    #[arg(long)]
    pub constraints: PathBuf,
    /// (n, 4) quaternions (x, y, z, w), .npy; normalised here.
    #[arg(long, conflicts_with = "random_samples")]
    pub samples: Option<PathBuf>,
    /// Instead of --samples: this many Shoemake uniform rotations.
    #[arg(long)]
    pub random_samples: Option<usize>,
    /// Seed of the random samples.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Refuse more samples than this (the node's max_samples; 32 bytes each, and more per
    /// sample while building).
    #[arg(long, default_value_t = DEFAULT_MAX_SAMPLES as usize)]
    pub max_samples: usize,
    /// How cells at Hamming distance 1 are found.
    #[arg(long, value_enum, default_value_t = Config::default().algorithm)]
    pub algorithm: Algorithm,
    /// Tree arity 2^r (tree).
    #[arg(long, default_value_t = Config::default().r)]
    pub r: u32,
    /// Pivots (heuristic).
    #[arg(long, default_value_t = Config::default().h)]
    pub h: u32,
    /// auto (CUDA when a device is there), cpu or cuda.
    #[arg(long, default_value = "auto")]
    pub backend: BackendKind,
    /// Print one JSON object instead of a summary.
    #[arg(long)]
    pub json: bool,
}

fn read(path: &PathBuf) -> Result<(Vec<usize>, Vec<f64>)> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| Error::invalid(name.clone(), e))?;
    read_f64_nd(&name, &bytes)
}

/// Lower-case hex of sum(bit_i 2^i), ceil(l / 4) digits.
pub fn hex(row: &[u64], l: usize) -> String {
    let digits = l.div_ceil(4);
    (0..digits)
        .rev()
        .map(|d| {
            let v = super::tree::digit(row, 4 * d, 4.min(l - 4 * d));
            char::from_digit(v, 16).unwrap_or('0')
        })
        .collect()
}

/// Reads the constraints and samples, builds the graph, prints its cells and edges.
pub fn run(a: CellGraphArgs) -> Result<()> {
    let (shape, m) = read(&a.constraints)?;
    let name = a.constraints.display().to_string();
    let arr = match shape[..] {
        [l, 4, 4] => Arrangement::from_full(l, &m).map_err(|e| e.under(format!("{name}: ")))?,
        _ => {
            return Err(Error::invalid(
                name,
                format!("shape {shape:?} is not (l, 4, 4)"),
            ))
        }
    };
    let samples: Vec<[f64; 4]> = match (&a.samples, a.random_samples) {
        (Some(p), _) => {
            let (shape, v) = read(p)?;
            let name = p.display().to_string();
            if !matches!(shape[..], [_, 4]) {
                return Err(Error::invalid(
                    name,
                    format!("shape {shape:?} is not (n, 4)"),
                ));
            }
            v.chunks_exact(4)
                .map(|q| [q[0], q[1], q[2], q[3]])
                .collect()
        }
        (None, Some(0)) => {
            return Err(Error::invalid(
                "--random-samples",
                "0: ask for at least one sample",
            ))
        }
        (None, Some(n)) if n > a.max_samples => {
            return Err(Error::invalid(
                "--random-samples",
                format!("{n} is above --max-samples {}", a.max_samples),
            ))
        }
        (None, Some(n)) => shoemake(n, a.seed),
        (None, None) => {
            return Err(Error::invalid(
                "--samples",
                "give --samples FILE.npy or --random-samples N",
            ))
        }
    };
    let backend = Backend::select(a.backend)?;
    let cfg = Config {
        algorithm: a.algorithm,
        r: a.r,
        h: a.h,
    };
    let g = build(&backend, &arr, &samples, &cfg)?;
    let l = arr.len();
    if a.json {
        let cells: Vec<_> = (0..g.cells.len())
            .map(|c| {
                json!({
                    "bits": hex(g.cells.bits.row(c), l),
                    "count": g.cells.counts[c],
                    "representative": g.cells.representatives[c],
                })
            })
            .collect();
        let edges: Vec<[u32; 3]> = (0..g.edges.len())
            .map(|e| [g.edges.from[e], g.edges.to[e], g.edges.bit[e]])
            .collect();
        println!("{}", json!({"cells": cells, "edges": edges}));
    } else {
        println!(
            "{} samples, {l} constraints: {} cells, {} edges ({}, {}; classify {:.3} s, graph {:.3} s)",
            samples.len(),
            g.cells.len(),
            g.edges.len(),
            a.algorithm.name(),
            backend.name(),
            g.classify_s,
            g.graph_s
        );
    }
    Ok(())
}
