//! Balanced k-d trees (seed 001, Brown's builder) and exact nearest-neighbour queries.
//!
//! Points have 2..=8 f32 coordinates. Duplicate tuples are removed before the build; every
//! answer names a point by the input index of its **first** copy, so a query lists each
//! distinct point once. Distances are Euclidean (or the SO(3) distance between quaternions),
//! summed in f32 in dimension order on every backend; ties go to the smaller input index.

pub mod brute;
pub mod cli;
pub mod config;
pub mod cpu;
pub mod gpu;
pub mod io;
pub mod las;
pub mod points;
pub mod query;
pub mod tree;

pub use config::{Metric, Traversal};
pub use points::{FiniteRows, Points};
pub use query::{check_result_size, check_unit_quaternions, Neighbors, ResultSize};
pub use tree::KdTree;

use crate::compute::Backend;
use crate::error::Result;

/// Builds on the backend (both give the same tree).
pub fn build(backend: &Backend, p: &Points) -> Result<KdTree> {
    match backend {
        Backend::Cpu => Ok(cpu::build(p)),
        Backend::Cuda(rt) => gpu::build(rt, p),
    }
}

/// k nearest on the backend (the CUDA path holds up to [`gpu::MAX_K`] neighbours per query,
/// and traverses the tree as `traversal` says; the CPU's answers are the same).
pub fn knn(
    backend: &Backend,
    t: &KdTree,
    queries: &[f32],
    k: usize,
    metric: Metric,
    traversal: Traversal,
) -> Result<Vec<Neighbors>> {
    match backend {
        Backend::Cuda(rt) if k <= gpu::MAX_K => {
            let dev = gpu::DeviceTree::upload(rt, t)?;
            dev.set_traversal(traversal);
            dev.knn(queries, k, metric)
        }
        Backend::Cuda(_) => {
            tracing::warn!(
                "knn: k = {k} is above the device query's limit of {}: answered on the CPU",
                gpu::MAX_K
            );
            cpu::knn(t, queries, k, metric)
        }
        Backend::Cpu => cpu::knn(t, queries, k, metric),
    }
}

/// Radius search on the backend.
pub fn radius(
    backend: &Backend,
    t: &KdTree,
    queries: &[f32],
    r: f32,
    max_count: usize,
    metric: Metric,
) -> Result<Vec<Neighbors>> {
    match backend {
        Backend::Cuda(rt) => gpu::DeviceTree::upload(rt, t)?.radius(queries, r, max_count, metric),
        Backend::Cpu => cpu::radius(t, queries, r, max_count, metric),
    }
}
