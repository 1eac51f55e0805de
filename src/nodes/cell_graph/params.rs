//! The `cell_graph` node's parameters: the algorithm, its sampling, and the caps on inputs.

use serde::{Deserialize, Serialize};

use crate::compute::BackendKind;
use crate::error::{Error, Result};
use crate::ros::live_params::{Param, Range};

/// The parameters' ranges (every one read at start); `sample_count` is at most `max_samples`.
pub const PARAMS: &[Param] = &[
    Param::fixed("gpu_priority", Range::Integer(0, u32::MAX as i64)),
    Param::fixed("r", Range::Integer(1, 8)),
    Param::fixed("h", Range::Integer(1, 64)),
    Param::fixed("sample_count", Range::Integer(0, u32::MAX as i64)),
    Param::fixed("seed", Range::Integer(0, i64::MAX)),
    Param::fixed("max_constraints", Range::Integer(0, u32::MAX as i64)),
    Param::fixed("max_samples", Range::Integer(0, u32::MAX as i64)),
    Param::fixed("max_markers", Range::Integer(0, u32::MAX as i64)),
];

/// Parameters of the `cell_graph` node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CellGraphParams {
    pub backend: BackendKind,
    pub service_mapping: String,
    pub use_sim_time: bool,
    /// CUDA stream priority of the node's own stream: 0 is CUDA's default, higher values run
    /// first when nodes share the device (clamped to the device's range, 0..=5 on the H100).
    pub gpu_priority: u32,
    /// heuristic | tree | hash
    pub algorithm: String,
    /// Tree arity 2^r.
    pub r: u32,
    /// Heuristic pivots.
    pub h: u32,
    /// Samples generated (Shoemake) while no ~/samples arrived, and their seed.
    pub sample_count: u32,
    pub seed: u64,
    /// Caps on inputs.
    pub max_constraints: u32,
    pub max_samples: u32,
    /// Cells drawn on ~/markers (the most-sampled ones).
    pub max_markers: u32,
}

impl Default for CellGraphParams {
    fn default() -> Self {
        let c = crate::cellgraph::Config::default();
        CellGraphParams {
            backend: BackendKind::Auto,
            service_mapping: "auto".into(),
            use_sim_time: false,
            gpu_priority: 0,
            algorithm: c.algorithm.name().into(),
            r: c.r,
            h: c.h,
            sample_count: 100_000,
            seed: 1,
            max_constraints: 4096,
            max_samples: crate::cellgraph::config::DEFAULT_MAX_SAMPLES,
            max_markers: 500,
        }
    }
}

impl CellGraphParams {
    pub fn validate(&self) -> Result<()> {
        self.config(None)?;
        if self.sample_count > self.max_samples {
            return Err(Error::invalid(
                "sample_count",
                format!(
                    "{} is above max_samples {}",
                    self.sample_count, self.max_samples
                ),
            ));
        }
        Ok(())
    }

    /// The build configuration, with a request's algorithm name where it gives one.
    pub fn config(&self, algorithm: Option<&str>) -> Result<crate::cellgraph::Config> {
        let name = algorithm
            .filter(|a| !a.is_empty())
            .unwrap_or(&self.algorithm);
        let c = crate::cellgraph::Config {
            algorithm: crate::cellgraph::Algorithm::parse(name)?,
            r: self.r,
            h: self.h,
        };
        c.validate()?;
        Ok(c)
    }
}
