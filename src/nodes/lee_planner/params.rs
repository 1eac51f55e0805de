//! The `lee_planner` node's parameters: the map's cost model and the planner's variant, the
//! planner server's frames, tolerances and bond, and their bounds.

use serde::{Deserialize, Serialize};

use crate::compute::BackendKind;
use crate::error::{Error, Result};

use crate::ros::live_params::{Param, Range, ABOVE_ZERO};
use crate::ros::node_params::node_params;

/// The node's name (its namespace's last part).
pub const NODE_NAME: &str = "lee_planner";

/// The planner's default stream priority: the highest on every device CUDA has shipped (a
/// robot's get_plan should not wait behind an all-pairs solve or a cell graph).
pub const LEE_GPU_PRIORITY: u32 = 5;

/// The parameters' ranges, and those `ros2 param set` changes while the node runs (as NavFn's
/// dynamic parameters: `tolerance`, `use_final_approach_orientation`); the map-building ones
/// apply to the maps of a node started with them.
pub const PARAMS: &[Param] = &[
    Param::dynamic("tolerance", Range::Float(0.0, f64::MAX)),
    Param::dynamic("use_final_approach_orientation", Range::Any),
    Param::dynamic("transform_tolerance", Range::Float(0.0, f64::MAX)),
    Param::dynamic("publish_distance_field", Range::Any),
    Param::dynamic("path", Range::Any),
    Param::dynamic("max_viapoints", Range::Integer(1, MAX_VIAPOINTS as i64)),
    Param::fixed("gpu_priority", Range::Integer(0, u32::MAX as i64)),
    Param::fixed("block_x", Range::Integer(1, 1024)),
    Param::fixed("block_y", Range::Integer(1, 1024)),
    Param::fixed("portal_table_mib", Range::Integer(-1, i64::MAX)),
    Param::fixed("max_step", Range::Float(0.0, f64::MAX)),
    Param::fixed("occupied_threshold", Range::Integer(1, 101)),
    Param::fixed("connectivity", Range::Steps(0, 8, 4)),
    Param::fixed("max_cells", Range::Integer(1, i64::MAX)),
    Param::fixed("robot_radius", Range::Float(0.0, f64::MAX)),
    Param::fixed(
        "neutral_cost",
        Range::Integer(1, crate::lee::costmap::config::MAX_NEUTRAL_COST as i64),
    ),
    Param::fixed(
        "cost_factor",
        Range::Integer(0, crate::lee::costmap::config::MAX_COST_FACTOR as i64),
    ),
    Param::fixed("inflation_radius", Range::Float(0.0, f64::MAX)),
    Param::fixed("cost_scaling_factor", Range::Float(0.0, f64::MAX)),
    Param::fixed("bond_heartbeat_period", Range::Float(ABOVE_ZERO, 3600.0)),
    Param::fixed("bond_timeout", Range::Float(ABOVE_ZERO, 3600.0)),
];

/// Parameters of the `lee_planner` node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LeeParams {
    pub backend: BackendKind,
    pub service_mapping: String,
    pub use_sim_time: bool,
    /// CUDA stream priority of the node's own stream: 0 is CUDA's default, higher values run
    /// first when nodes share the device (clamped to the device's range, 0..=5 on the H100).
    pub gpu_priority: u32,
    /// bitwave (default) | global | shared | texture
    pub memory_model: crate::lee::MemoryModel,
    pub block_x: u32,
    pub block_y: u32,
    /// MiB of device memory bitwave's portal tables may take per map: -1 the default
    /// (`GPU_PLANNING_LEE_PORTAL_MIB`, else 1024 or a sixteenth of the device), 0 none.
    pub portal_table_mib: i64,
    /// Largest height difference between neighbours a move may climb (elevation maps).
    pub max_step: f64,
    /// Occupancy values at or above this are blocked (occupancy maps).
    pub occupied_threshold: i8,
    pub unknown_is_free: bool,
    /// 4, 8, or 0: the cost model's own ([`crate::lee::Connectivity::for_model`]).
    pub connectivity: u32,
    /// GridMap layer holding the elevation.
    pub layer: String,
    /// Gazebo heightmap loaded as the first map: an SDF world/model or a PNG ("" = none).
    pub heightmap: String,
    /// [x, y, z] metres a PNG heightmap spans (not used for SDF, which says it).
    pub heightmap_size: Vec<f64>,
    /// Frame of the heightmap's map (Gazebo's world frame as the robot sees it).
    pub heightmap_frame: String,
    /// Maps with more cells are refused.
    pub max_cells: u64,
    /// Compute and publish ~/distance_field with every plan even when nothing subscribes to
    /// it (with a subscriber it is published anyway).
    pub publish_distance_field: bool,
    /// Metres: cells within this distance of an obstacle cell are blocked (0: none).
    pub robot_radius: f64,
    /// unit (moves) | costmap (nav2's inflation costs, least total cost).
    pub cost_model: crate::lee::costmap::CostModel,
    /// The path sent out: grid | smooth (costmap mode) | auto (smooth in costmap mode).
    pub path: crate::lee::costmap::config::PathShape,
    /// Costmap: cost of entering a cell of value 0 (NavFn's neutral_cost).
    pub neutral_cost: u32,
    /// Costmap: percent of a cell's value added when entering it (NavFn's cost_factor x 100).
    pub cost_factor: u32,
    /// Costmap: metres from an obstacle within which the inflation cost decays.
    pub inflation_radius: f64,
    /// Costmap: decay per metre of the inflation cost.
    pub cost_scaling_factor: f64,
    /// The planning frame of maps whose header names none.
    pub global_frame: String,
    /// The robot's frame: queries without a start plan from its pose (TF).
    pub robot_base_frame: String,
    /// Seconds a transform may be older than now before a lookup is refused as stale.
    pub transform_tolerance: f64,
    /// Metres the nav2 actions may move a blocked or unreachable goal, or a start in the
    /// inflated zone, to the nearest usable cell (NavFn's `tolerance`).
    pub tolerance: f64,
    /// The path's last pose faces the direction it arrived from instead of taking the goal's
    /// orientation (NavFn's and Smac's parameter).
    pub use_final_approach_orientation: bool,
    /// A compute_path_through_poses goal with more poses is rejected (its path and result
    /// grow with them, and results are kept for get_result).
    pub max_viapoints: u32,
    /// Start in the active lifecycle state (for use without nav2's lifecycle_manager); false
    /// starts unconfigured and answers only once configured and activated.
    pub start_active: bool,
    /// Seconds between bond heartbeats while active (nav2's bond_heartbeat_period).
    pub bond_heartbeat_period: f64,
    /// Seconds of silence after which the manager takes the bond as broken (bond_timeout).
    pub bond_timeout: f64,
}

/// The largest `max_viapoints`: 65536 via-points of even one-cell legs make a result of
/// megabytes; far beyond any route bt_navigator sends.
pub const MAX_VIAPOINTS: u32 = 65_536;

impl Default for LeeParams {
    fn default() -> Self {
        let p = crate::lee::Config::default();
        let c = crate::lee::costmap::CostParams::default();
        LeeParams {
            backend: BackendKind::Auto,
            service_mapping: "auto".into(),
            use_sim_time: false,
            gpu_priority: LEE_GPU_PRIORITY,
            memory_model: p.memory_model,
            block_x: p.block_x,
            block_y: p.block_y,
            portal_table_mib: -1,
            max_step: 0.1,
            occupied_threshold: 65,
            unknown_is_free: false,
            connectivity: 0,
            layer: "elevation".into(),
            heightmap: String::new(),
            heightmap_size: Vec::new(),
            heightmap_frame: "map".into(),
            publish_distance_field: false,
            max_cells: 1 << 28,
            robot_radius: c.robot_radius,
            cost_model: crate::lee::costmap::CostModel::default(),
            path: crate::lee::costmap::config::PathShape::Auto,
            neutral_cost: c.neutral_cost,
            cost_factor: c.cost_factor,
            inflation_radius: c.inflation_radius,
            cost_scaling_factor: c.cost_scaling_factor,
            global_frame: "map".into(),
            robot_base_frame: "base_link".into(),
            transform_tolerance: 0.3,
            tolerance: 0.5,
            use_final_approach_orientation: false,
            max_viapoints: 256,
            start_active: true,
            bond_heartbeat_period: 0.1,
            bond_timeout: 4.0,
        }
    }
}

impl LeeParams {
    /// `heightmap_size` as [x, y, z] when set.
    pub fn heightmap_size(&self) -> Result<Option<[f64; 3]>> {
        if self.heightmap_size.is_empty() {
            return Ok(None);
        }
        <[f64; 3]>::try_from(self.heightmap_size.as_slice())
            .map(Some)
            .map_err(|_| {
                Error::invalid(
                    "heightmap_size",
                    format!("{:?} is not [x, y, z]", self.heightmap_size),
                )
            })
    }

    pub fn validate(&self) -> Result<()> {
        self.heightmap_size()?;
        self.planner_config().validate()?;
        crate::lee::Connectivity::for_model(
            self.connectivity,
            self.cost_model == crate::lee::costmap::CostModel::Costmap,
        )?;
        crate::lee::clearance::check_radius("robot_radius", self.robot_radius)?;
        self.path.check(self.cost_model)?;
        if self.cost_model == crate::lee::costmap::CostModel::Costmap {
            self.cost_params().validate()?;
        }
        if !(self.max_step.is_finite() && self.max_step >= 0.0) {
            return Err(Error::invalid(
                "max_step",
                format!("{} is not a finite non-negative number", self.max_step),
            ));
        }
        if !(1..=101).contains(&self.occupied_threshold) {
            return Err(Error::invalid(
                "occupied_threshold",
                format!("{} is not in 1..=101", self.occupied_threshold),
            ));
        }
        if self.layer.is_empty() {
            return Err(Error::invalid("layer", "is empty"));
        }
        if self.max_cells == 0 {
            return Err(Error::invalid("max_cells", "0 would refuse every map"));
        }
        if self.portal_table_mib < -1 {
            return Err(Error::invalid(
                "portal_table_mib",
                format!(
                    "{} is not -1 (the default), 0 (no tables) or a size in MiB",
                    self.portal_table_mib
                ),
            ));
        }
        if !(1..=MAX_VIAPOINTS).contains(&self.max_viapoints) {
            return Err(Error::invalid(
                "max_viapoints",
                format!("{} is not in 1..={MAX_VIAPOINTS}", self.max_viapoints),
            ));
        }
        for (key, v) in [
            ("bond_heartbeat_period", self.bond_heartbeat_period),
            ("bond_timeout", self.bond_timeout),
        ] {
            if !(v.is_finite() && v > 0.0 && v <= 3600.0) {
                return Err(Error::invalid(
                    key,
                    format!("{v} is not in (0, 3600] seconds"),
                ));
            }
        }
        for (key, v) in [
            ("transform_tolerance", self.transform_tolerance),
            ("tolerance", self.tolerance),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::invalid(
                    key,
                    format!("{v} is not a finite non-negative number"),
                ));
            }
        }
        for (key, v) in [
            ("global_frame", &self.global_frame),
            ("robot_base_frame", &self.robot_base_frame),
        ] {
            if v.trim_start_matches('/').is_empty() {
                return Err(Error::invalid(key, "is empty"));
            }
        }
        Ok(())
    }

    /// The costmap model's parameters.
    pub fn cost_params(&self) -> crate::lee::costmap::CostParams {
        crate::lee::costmap::CostParams {
            neutral_cost: self.neutral_cost,
            cost_factor: self.cost_factor,
            robot_radius: self.robot_radius,
            inflation_radius: self.inflation_radius,
            cost_scaling_factor: self.cost_scaling_factor,
            unknown_is_free: self.unknown_is_free,
        }
    }

    /// What makes each map into the node's planner; `cpu_fallback` from the service keys.
    pub fn robot_config(&self, cpu_fallback: bool) -> crate::lee::RobotConfig {
        crate::lee::RobotConfig {
            cost_model: self.cost_model,
            planner: self.planner_config(),
            costs: self.cost_params(),
            cpu_fallback,
        }
    }

    pub fn planner_config(&self) -> crate::lee::Config {
        crate::lee::Config {
            memory_model: self.memory_model,
            block_x: self.block_x,
            block_y: self.block_y,
            portal_table_mib: u64::try_from(self.portal_table_mib).ok(),
        }
    }
}

impl crate::ros::live_params::NodeParams for LeeParams {
    fn parse(all: &serde_yaml::Mapping) -> Result<Self> {
        let p: LeeParams = node_params(all)?;
        p.validate()?;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `path: smooth` is priced by costs: refused in unit mode, naming the key; auto is
    /// smooth in costmap mode only.
    #[test]
    fn smooth_paths_need_the_costmap_model() {
        use crate::lee::costmap::config::PathShape;
        use crate::lee::costmap::CostModel;
        let p = |path, cost_model| LeeParams {
            path,
            cost_model,
            ..LeeParams::default()
        };
        let e = p(PathShape::Smooth, CostModel::Unit)
            .validate()
            .unwrap_err();
        assert!(e.to_string().contains("path"), "{e}");
        assert!(p(PathShape::Smooth, CostModel::Costmap).validate().is_ok());
        assert!(p(PathShape::Auto, CostModel::Unit).validate().is_ok());
        assert!(PathShape::Auto.smooth(CostModel::Costmap));
        assert!(!PathShape::Auto.smooth(CostModel::Unit));
        assert!(!PathShape::Grid.smooth(CostModel::Costmap));
    }

    #[test]
    fn portal_table_mib_is_the_default_none_or_a_size() {
        let p = |v: i64| LeeParams {
            portal_table_mib: v,
            ..LeeParams::default()
        };
        assert_eq!(p(-1).planner_config().portal_table_mib, None);
        assert_eq!(p(0).planner_config().portal_table_mib, Some(0));
        assert_eq!(p(256).planner_config().portal_table_mib, Some(256));
        assert!(p(-1).validate().is_ok() && p(0).validate().is_ok());
        let e = p(-2).validate().unwrap_err().to_string();
        assert!(e.contains("portal_table_mib") && e.contains("-2"), "{e}");
    }
}
