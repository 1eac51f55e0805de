//! The reference pipeline: classify every sample, sort the distinct bit vectors into cells,
//! and find the pairs at Hamming distance 1 with the configured algorithm.

use std::time::Instant;

use super::arrangement::Arrangement;
use super::cells::{cells, Cells};
use super::classify::classify;
use super::config::{Algorithm, Config};
use super::edges::{hash_probe, heuristic, tree, Edges};

/// Cells and edges of normalised `samples`, with the seconds spent classifying and building
/// the graph.
pub fn build(arr: &Arrangement, samples: &[[f64; 4]], cfg: &Config) -> (Cells, Edges, f64, f64) {
    let t = Instant::now();
    let bits = classify(arr, samples);
    let classify_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let c = cells(arr.len(), &bits);
    let e = edges(&c, cfg);
    (c, e, classify_s, t.elapsed().as_secs_f64())
}

/// The edges of `c` by the configured algorithm (all three give the same edges).
pub fn edges(c: &Cells, cfg: &Config) -> Edges {
    match cfg.algorithm {
        Algorithm::Heuristic => heuristic(c, cfg.h as usize),
        Algorithm::Tree => tree(c, cfg.r),
        Algorithm::Hash => hash_probe(c),
    }
}
