//! What every query shares, on any backend: the answer type, the distance, and the checks
//! that refuse a query before any work (dimensions, finite coordinates, unit quaternions for
//! SO(3), and answers too large to allocate). Shared by the node's services and the CLI.

use super::config::Metric;
use super::points::first_non_finite;
use super::tree::KdTree;
use crate::error::{Error, Result};

/// One query's answer: (distance, input index), nearest first.
pub type Neighbors = Vec<(f32, u32)>;

/// Squared Euclidean distance, summed in dimension order (as on the device).
#[inline]
pub fn dist2(a: &[f32], b: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for (x, y) in a.iter().zip(b) {
        let d = x - y;
        s += d * d;
    }
    s
}

/// Refuses k = 0, queries that are not whole rows of the tree's dimension, a non-finite
/// coordinate, and SO(3) queries that are not 4-D.
pub fn check_query(t: &KdTree, queries: &[f32], k: usize, metric: Metric) -> Result<()> {
    check_query_dims(t.dims, queries, k, metric)
}

/// Query checks for points of `dims` dimensions.
pub fn check_query_dims(dims: usize, queries: &[f32], k: usize, metric: Metric) -> Result<()> {
    if k == 0 {
        return Err(Error::invalid("k", "0: ask for at least one neighbour"));
    }
    if !queries.len().is_multiple_of(dims) {
        return Err(Error::invalid(
            "queries",
            format!(
                "{} values is not a multiple of {} dimensions",
                queries.len(),
                dims
            ),
        ));
    }
    if let Some(i) = first_non_finite(queries) {
        return Err(Error::invalid(
            format!("queries[{}]", i / dims),
            format!("coordinate {} is {}", i % dims, queries[i]),
        ));
    }
    if metric == Metric::So3 && dims != 4 {
        return Err(Error::invalid(
            "metric",
            format!(
                "so3 needs 4-D quaternions, the points have {} dimensions",
                dims
            ),
        ));
    }
    Ok(())
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
        return Err(Error::invalid(
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
    /// k nearest.
    Nearest {
        /// Neighbours per query.
        k: usize,
    },
    /// `max_count` 0 means every point within the radius.
    Radius {
        /// The most per query.
        max_count: usize,
    },
}

/// The SO(3) metric is min(|p - q|, |p + q|) on unit quaternions: anything else (norm 0, NaN,
/// a position sent as a rotation) would give distances that mean nothing. Node and CLI.
pub fn check_unit_quaternions(field: &str, q: &[f32]) -> Result<()> {
    for (i, c) in q.chunks_exact(4).enumerate() {
        let norm = c.iter().map(|v| (*v as f64).powi(2)).sum::<f64>().sqrt();
        if !(norm - 1.0).abs().le(&1e-3) {
            return Err(Error::invalid(
                format!("{field}[{i}]"),
                format!("{c:?} is not a unit quaternion (norm {norm})"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::kdtree::points::first_non_finite;

    #[test]
    fn the_first_non_finite_value_is_found_across_blocks() {
        let n = (1 << 14) * 3 + 5;
        assert_eq!(first_non_finite(&[]), None);
        assert_eq!(first_non_finite(&vec![1.5; n]), None);
        for (bad, at) in [
            (f32::NAN, 0),
            (f32::INFINITY, 1 << 14),
            (f32::NEG_INFINITY, (1 << 14) - 1),
            (f32::NAN, n - 1),
        ] {
            let mut v = vec![0.25f32; n];
            // A second bad value, later unless `at` is the last, must not win.
            let other = if at == n - 1 { n - 2 } else { n - 1 };
            v[other] = f32::NAN;
            v[at] = bad;
            assert_eq!(first_non_finite(&v), Some(at.min(other)), "{bad} at {at}");
        }
    }
}
