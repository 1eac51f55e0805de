//! The `apsp` node's parameters: the solver's variant and the caps on graphs and answers.

use serde::{Deserialize, Serialize};

use crate::compute::BackendKind;
use crate::error::{Error, Result};
use crate::ros::live_params::{Param, Range};

/// The parameters' ranges (every one read at start). `tile` is 0, 16, 32 or 64 and
/// `thread_tile` 0, 1, 2, 4 or 8: their ranges are the bounds of those sets.
pub const PARAMS: &[Param] = &[
    Param::fixed("gpu_priority", Range::Integer(0, u32::MAX as i64)),
    Param::fixed("tile", Range::Integer(0, 64)),
    Param::fixed("thread_tile", Range::Integer(0, 8)),
    Param::fixed("block_x", Range::Integer(1, 1024)),
    Param::fixed("block_y", Range::Integer(1, 1024)),
    Param::fixed("max_vertices", Range::Integer(1, u32::MAX as i64)),
    Param::fixed(
        "max_solve_s",
        Range::Float(
            crate::seconds::MIN_POSITIVE_SECONDS,
            crate::seconds::MAX_SECONDS,
        ),
    ),
    Param::fixed("max_pairs", Range::Integer(0, u32::MAX as i64)),
    Param::fixed("max_path_vertices", Range::Integer(0, i64::MAX)),
];

/// Parameters of the `apsp` node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ApspParams {
    pub backend: BackendKind,
    pub service_mapping: String,
    pub use_sim_time: bool,
    /// CUDA stream priority of the node's own stream: 0 is CUDA's default, higher values run
    /// first when nodes share the device (clamped to the device's range, 0..=5 on the H100).
    pub gpu_priority: u32,
    /// linear | coalesced | shared | blocked | tiled
    pub memory_model: crate::apsp::MemoryModel,
    pub tile: u32,
    pub thread_tile: u32,
    pub block_x: u32,
    pub block_y: u32,
    /// Graphs with more vertices are refused: n x n matrices of 8 n^2 bytes on the device, and
    /// 16 n^2 on the host at the peak (the kept solution beside the next graph's).
    pub max_vertices: u32,
    /// A graph solve still running after this many seconds is stopped and the graph refused.
    pub max_solve_s: f64,
    /// A ~/shortest_path request with more pairs is refused.
    pub max_pairs: u32,
    /// A ~/shortest_path response with more path vertices in all is refused.
    pub max_path_vertices: u64,
}

impl Default for ApspParams {
    fn default() -> Self {
        let c = crate::apsp::Config::default();
        ApspParams {
            backend: BackendKind::Auto,
            service_mapping: "auto".into(),
            use_sim_time: false,
            gpu_priority: 0,
            memory_model: c.memory_model,
            tile: c.tile,
            thread_tile: c.thread_tile,
            block_x: c.block_x,
            block_y: c.block_y,
            max_vertices: crate::apsp::config::DEFAULT_MAX_VERTICES,
            max_solve_s: 600.0,
            max_pairs: 1 << 20,
            max_path_vertices: 1 << 24,
        }
    }
}

impl ApspParams {
    pub fn validate(&self) -> Result<()> {
        self.solver_config().validate()?;
        if self.max_vertices == 0 {
            return Err(Error::invalid("max_vertices", "0 allows no graph"));
        }
        crate::seconds::positive_duration("max_solve_s", self.max_solve_s)?;
        Ok(())
    }

    pub fn solver_config(&self) -> crate::apsp::Config {
        crate::apsp::Config {
            memory_model: self.memory_model,
            tile: self.tile,
            thread_tile: self.thread_tile,
            block_x: self.block_x,
            block_y: self.block_y,
        }
    }
}
