//! Balanced k-d trees (seed 001, Brown's builder) and exact nearest-neighbour queries.
//!
//! Points have 2..=8 f32 coordinates. Duplicate tuples are removed before the build; every
//! answer names a point by the input index of its **first** copy, so a query lists each
//! distinct point once. Distances are Euclidean (or the SO(3) distance between quaternions),
//! summed in f32 in dimension order on every backend; ties go to the smaller input index.

pub mod build_cpu;
pub mod cli;
pub mod gpu;
pub mod io;
pub mod points;
pub mod query;
pub mod tree;

pub use points::Points;
pub use query::{knn, radius, Metric, Neighbors};
pub use tree::KdTree;

use crate::compute::Backend;
use crate::error::Result;

/// Builds on the backend (both give the same tree).
pub fn build(backend: &Backend, p: &Points) -> Result<KdTree> {
    match backend {
        Backend::Cpu => Ok(build_cpu::build(p)),
        Backend::Cuda(rt) => gpu::build(rt, p),
    }
}

/// k nearest on the backend (the CUDA path holds up to [`gpu::MAX_K`] neighbours per query).
pub fn knn_on(
    backend: &Backend,
    t: &KdTree,
    queries: &[f32],
    k: usize,
    metric: Metric,
) -> Result<Vec<Neighbors>> {
    match backend {
        Backend::Cuda(rt) if k <= gpu::MAX_K => {
            gpu::DeviceTree::upload(rt, t)?.knn(queries, k, metric)
        }
        _ => knn(t, queries, k, metric),
    }
}

/// Radius search on the backend.
pub fn radius_on(
    backend: &Backend,
    t: &KdTree,
    queries: &[f32],
    r: f32,
    max_count: usize,
    metric: Metric,
) -> Result<Vec<Neighbors>> {
    match backend {
        Backend::Cuda(rt) => gpu::DeviceTree::upload(rt, t)?.radius(queries, r, max_count, metric),
        Backend::Cpu => radius(t, queries, r, max_count, metric),
    }
}

/// Refuses a query whose answer could hold more than `max_results` neighbours in all (answers
/// are allocated in full): k nearest give min(k, distinct points) per query; a radius search
/// gives up to `max_count` per query, or every point when `max_count` is 0. Shared by the
/// node's services and the CLI.
pub fn check_result_size(
    t: &KdTree,
    queries: &[f32],
    request: ResultSize,
    max_results: u64,
) -> Result<()> {
    let n = (queries.len() / t.dims.max(1)) as u64;
    let (field, per_query) = match request {
        ResultSize::Nearest { k } => ("k", k.min(t.len()) as u64),
        ResultSize::Radius { max_count: 0 } => ("max_count", t.len() as u64),
        ResultSize::Radius { max_count } => ("max_count", max_count.min(t.len()) as u64),
    };
    let worst = n.saturating_mul(per_query);
    if worst > max_results {
        let most = (max_results / n.max(1)).max(1);
        return Err(crate::error::Error::invalid(
            field,
            format!(
                "{per_query} per query x {n} queries could return {worst} neighbours, above \
                 max_results {max_results}: ask for at most {most} per query, or fewer queries"
            ),
        ));
    }
    Ok(())
}

/// What a query asks for, for [`check_result_size`].
#[derive(Debug, Clone, Copy)]
pub enum ResultSize {
    Nearest {
        k: usize,
    },
    /// `max_count` 0 means every point within the radius.
    Radius {
        max_count: usize,
    },
}

/// The SO(3) metric is min(|p - q|, |p + q|) on unit quaternions: anything else (norm 0, NaN,
/// a position sent as a rotation) would give distances that mean nothing. Node and CLI.
pub fn check_unit_quaternions(field: &str, q: &[f32]) -> crate::error::Result<()> {
    for (i, c) in q.chunks_exact(4).enumerate() {
        let norm = c.iter().map(|v| (*v as f64).powi(2)).sum::<f64>().sqrt();
        if !(norm - 1.0).abs().le(&1e-3) {
            return Err(crate::error::Error::invalid(
                format!("{field}[{i}]"),
                format!("{c:?} is not a unit quaternion (norm {norm})"),
            ));
        }
    }
    Ok(())
}
