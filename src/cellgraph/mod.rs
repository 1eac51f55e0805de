//! The cell graph of an arrangement of quadric constraints on SO(3) (seed 000): samples
//! classified to bit vectors, the distinct vectors as cells, and the pairs of cells at Hamming
//! distance 1 as edges, by three algorithms that return the same graph: `heuristic` (h pivots),
//! `tree` (2^r-ary search tree) and `hash` (XOR hashes, O(n l) expected; the default).
//!
//! Forms are evaluated in f64 in one fixed order ([`arrangement::form`]) on every backend, so
//! the CPU and CUDA paths classify every sample identically.

pub mod arrangement;
pub mod cells;
pub mod classify;
pub mod cli;
pub mod edges;
pub mod gpu;
pub mod graph;
pub mod samples;
pub mod tree;

pub use arrangement::Arrangement;
pub use graph::{build, Algorithm, CellGraph, Config, RotationPath};
