//! Floyd–Warshall all-pairs shortest paths with successors, on directed graphs with integer
//! (exact, i32) or float (f32) weights, negative edges allowed and negative cycles reported.
//! The CPU loops in [`cpu`] are the references; every GPU memory model in [`gpu`] returns the
//! same distances and the successor matrix of the reference that relaxes in its order.

pub mod cli;
pub mod cpu;
pub mod gpu;
pub mod graph;
pub mod io;
pub mod paths;
pub mod solver;
pub mod synth;
pub mod weight;

pub use graph::{Graph, Weights};
pub use paths::NegativeCycle;
pub use solver::{MemoryModel, Solution, SolverConfig};
pub use weight::Weight;

/// Successor of a pair with no path (and of padding).
pub const NO_VERTEX: u32 = u32::MAX;
