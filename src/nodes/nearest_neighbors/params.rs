//! The `nearest_neighbors` node's parameters: k, the device traversal and the caps on
//! clouds and answers.

use serde::{Deserialize, Serialize};

use crate::compute::BackendKind;
use crate::error::{Error, Result};
use crate::ros::live_params::{Param, Range};

/// The parameters' ranges (every one read at start).
pub const PARAMS: &[Param] = &[
    Param::fixed("gpu_priority", Range::Integer(0, u32::MAX as i64)),
    Param::fixed("k", Range::Integer(1, u32::MAX as i64)),
    Param::fixed("max_points", Range::Integer(1, u32::MAX as i64)),
    Param::fixed("max_queries", Range::Integer(1, u32::MAX as i64)),
    Param::fixed("max_results", Range::Integer(0, i64::MAX)),
];

/// Parameters of the `nearest_neighbors` node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NearestNeighborsParams {
    pub backend: BackendKind,
    pub service_mapping: String,
    pub use_sim_time: bool,
    /// CUDA stream priority of the node's own stream: 0 is CUDA's default, higher values run
    /// first when nodes share the device (clamped to the device's range, 0..=5 on the H100).
    pub gpu_priority: u32,
    /// Neighbours per point of `~/queries`.
    pub k: u32,
    /// How the device's k-nearest search rules out a far side (`auto`, `plane` or `boxes`;
    /// the answers are the same): see [`crate::kdtree::Traversal`].
    pub knn_traversal: crate::kdtree::Traversal,
    /// Clouds and orientation sets with more points are refused.
    pub max_points: u32,
    /// Query batches with more points are refused.
    pub max_queries: u32,
    /// Requests whose answer could hold more neighbours in all (queries x k, or queries x
    /// max_count for a radius search, max_count 0 counting as the whole cloud) are refused.
    pub max_results: u64,
}

impl Default for NearestNeighborsParams {
    fn default() -> Self {
        NearestNeighborsParams {
            backend: BackendKind::Auto,
            service_mapping: "auto".into(),
            use_sim_time: false,
            gpu_priority: 0,
            k: crate::kdtree::config::DEFAULT_K as u32,
            knn_traversal: crate::kdtree::Traversal::Auto,
            max_points: 16 << 20,
            max_queries: 4 << 20,
            max_results: crate::kdtree::config::DEFAULT_MAX_RESULTS,
        }
    }
}

impl NearestNeighborsParams {
    pub fn validate(&self) -> Result<()> {
        if self.k == 0 {
            return Err(Error::invalid("k", "0: ask for at least one neighbour"));
        }
        if self.max_points == 0 || self.max_queries == 0 {
            return Err(Error::invalid("max_points", "0 allows no input"));
        }
        Ok(())
    }
}
