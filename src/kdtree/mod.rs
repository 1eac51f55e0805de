//! Balanced k-d trees (seed 001, Brown's builder) and exact nearest-neighbour queries.
//!
//! Points have 2..=8 f32 coordinates. Duplicate tuples are removed before the build; every
//! answer names a point by the input index of its **first** copy, so a query lists each
//! distinct point once. Distances are Euclidean (or the SO(3) distance between quaternions),
//! summed in f32 in dimension order on every backend; ties go to the smaller input index.

#![warn(missing_docs)]

pub mod brute;
pub mod cli;
pub mod config;
pub mod cpu;
pub mod gpu;
pub mod index;
pub mod io;
pub mod las;
pub mod points;
pub mod query;
pub mod tree;

pub use config::{Metric, Traversal};
pub use index::{FlatNeighbors, Index, IndexConfig};
pub use points::{FiniteRows, Points};
pub use query::{check_result_size, check_unit_quaternions, Neighbors, ResultSize};
pub use tree::KdTree;

use crate::compute::Backend;
use crate::error::Result;

/// Builds the host tree on the backend (both give the same tree); [`Index`] keeps the
/// device's too, for queries.
pub fn build(backend: &Backend, p: &Points) -> Result<KdTree> {
    match backend {
        Backend::Cpu => Ok(cpu::build(p)),
        Backend::Cuda(rt) => gpu::build(rt, p),
    }
}
