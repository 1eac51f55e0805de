//! The cell graph of an arrangement of quadric constraints on SO(3) (seed 000): samples
//! classified to bit vectors, the distinct vectors as cells, and the pairs of cells at Hamming
//! distance 1 as edges, by three algorithms that return the same graph: `heuristic` (h pivots),
//! `tree` (2^r-ary search tree) and `hash` (XOR hashes, O(n l) expected; the default).
//!
//! Forms are evaluated in f64 in one fixed order ([`arrangement::form`]) on every backend, so
//! the CPU and CUDA paths classify every sample identically.

#![warn(missing_docs)]

pub mod arrangement;
pub mod builder;
pub mod cells;
pub mod classify;
pub mod cli;
pub mod config;
pub mod cpu;
pub mod edges;
pub mod gpu;
pub mod graph;
pub mod samples;
pub mod tree;

pub use arrangement::Arrangement;
pub use builder::Builder;
pub use config::{Algorithm, Config};
pub use graph::{CellGraph, RotationPath};

use crate::compute::Backend;
use crate::error::{Error, Result};
use samples::UnitSamples;

// The dispatch.

/// Classifies `raw` samples (normalised here) and builds the graph.
pub fn build(
    backend: &Backend,
    arr: &Arrangement,
    raw: &[[f64; 4]],
    cfg: &Config,
) -> Result<CellGraph> {
    cfg.validate()?;
    build_unit(backend, arr, UnitSamples::new(raw)?, cfg)
}

/// [`build`] on samples normalised already (a node reuses one Shoemake set across builds);
/// the graph shares them.
pub fn build_unit(
    backend: &Backend,
    arr: &Arrangement,
    samples: UnitSamples,
    cfg: &Config,
) -> Result<CellGraph> {
    cfg.validate()?;
    if samples.len() >= u32::MAX as usize {
        return Err(Error::invalid(
            "samples",
            format!("{} samples exceed u32 indices", samples.len()),
        ));
    }
    let (cells, edges, classify_s, graph_s) = match backend {
        Backend::Cpu => cpu::build(arr, &samples, cfg),
        Backend::Cuda(rt) => gpu::build(rt, arr, &samples, cfg)?,
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
