//! The `gpu_planning` runtime node's parameters, read from its merged `ros__parameters`
//! with unknown keys refused, then validated with errors naming the key and the value.

use serde::{Deserialize, Serialize};

use crate::compute::BackendKind;
use crate::error::{Error, Result};
use crate::ros::live_params::{Param, Range, ABOVE_ZERO};

/// The parameters' ranges (every one read at start).
pub const PARAMS: &[Param] = &[
    Param::fixed("status_period_s", Range::Float(ABOVE_ZERO, 3600.0)),
    Param::fixed("occupied_threshold", Range::Integer(1, 100)),
];

/// Parameters of the `gpu_planning` runtime node (process status and map summary).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RuntimeParams {
    /// auto | cpu | cuda
    pub backend: BackendKind,
    /// auto (per request) | enhanced (Fast DDS) | cyclone (rmw_cyclonedds) | basic
    pub service_mapping: String,
    /// Accepted for launch-file compatibility; the runtime node only stamps with wall time.
    pub use_sim_time: bool,
    /// Seconds between status messages on `~/status`.
    pub status_period_s: f64,
    /// Occupancy values at or above this count as occupied in the map summary.
    pub occupied_threshold: i8,
}

impl Default for RuntimeParams {
    fn default() -> Self {
        RuntimeParams {
            backend: BackendKind::Auto,
            service_mapping: "auto".into(),
            use_sim_time: false,
            status_period_s: 1.0,
            occupied_threshold: 65,
        }
    }
}

impl RuntimeParams {
    pub fn validate(&self) -> Result<()> {
        if !(self.status_period_s.is_finite()
            && self.status_period_s > 0.0
            && self.status_period_s <= 3600.0)
        {
            return Err(Error::invalid(
                "status_period_s",
                format!("{} is not in (0, 3600]", self.status_period_s),
            ));
        }
        if !(1..=100).contains(&self.occupied_threshold) {
            return Err(Error::invalid(
                "occupied_threshold",
                format!("{} is not in 1..=100", self.occupied_threshold),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_and_bad_values_are_named() {
        let e = serde_yaml::from_str::<RuntimeParams>("status_perod_s: 1.0").unwrap_err();
        assert!(e.to_string().contains("status_perod_s"), "{e}");
        let e = serde_yaml::from_str::<RuntimeParams>("backend: opencl").unwrap_err();
        assert!(e.to_string().contains("opencl"), "{e}");
        let p: RuntimeParams = serde_yaml::from_str("status_period_s: -1").unwrap();
        let e = p.validate().unwrap_err().to_string();
        assert!(e.contains("status_period_s") && e.contains("-1"), "{e}");
        assert!(RuntimeParams::default().validate().is_ok());
    }
}
