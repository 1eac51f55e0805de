//! Typed node parameters. Each struct is deserialised from the node's merged `ros__parameters`
//! with unknown keys rejected, then validated with errors naming the key and the value.

use serde::{Deserialize, Serialize};

use crate::compute::BackendKind;
use crate::error::{Error, Result};

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

/// The planner's default stream priority: the highest on every device CUDA has shipped (a
/// robot's get_plan should not wait behind an all-pairs solve or a cell graph).
pub const LEE_GPU_PRIORITY: u32 = 5;

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

/// The ROS 2 distribution whose layouts the process speaks where they differ (the process-wide
/// `ros_distro` parameter, [`crate::ros::distro`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RosDistro {
    Humble,
    #[default]
    Jazzy,
}

impl Default for LeeParams {
    fn default() -> Self {
        let p = crate::lee::Config::default();
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
            robot_radius: 0.0,
            cost_model: crate::lee::costmap::CostModel::Unit,
            path: crate::lee::costmap::config::PathShape::Auto,
            neutral_cost: 50,
            cost_factor: 80,
            inflation_radius: 0.55,
            cost_scaling_factor: 10.0,
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
            max_vertices: 12_000,
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

/// Parameters of the `polyline` node; the extraction defaults apply where a request leaves a
/// field at 0 (or a negative angle / width).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolylineParams {
    pub backend: BackendKind,
    pub service_mapping: String,
    pub use_sim_time: bool,
    /// CUDA stream priority of the node's own stream: 0 is CUDA's default, higher values run
    /// first when nodes share the device (clamped to the device's range, 0..=5 on the H100).
    pub gpu_priority: u32,
    pub guides: u32,
    pub points_per_guide: u32,
    /// Pixels.
    pub half_width: f64,
    /// Radians.
    pub max_angle: f64,
    /// Caps on requests and images.
    pub max_guides: u32,
    pub max_points_per_guide: u32,
    pub max_image_pixels: u64,
    /// Metres per pixel for `~/polyline`; 0 publishes pixel coordinates.
    pub pixel_size: f64,
    /// Where pixel (0, 0) lies in `output_frame`, metres (used when `pixel_size` > 0).
    pub origin_x: f64,
    pub origin_y: f64,
    /// Frame of `~/polyline`; empty: the image's frame.
    pub output_frame: String,
}

impl Default for PolylineParams {
    fn default() -> Self {
        PolylineParams {
            backend: BackendKind::Auto,
            service_mapping: "auto".into(),
            use_sim_time: false,
            gpu_priority: 0,
            guides: 8,
            points_per_guide: 64,
            half_width: 10.0,
            max_angle: 30f64.to_radians(),
            max_guides: 256,
            max_points_per_guide: 4096,
            max_image_pixels: 64 << 20,
            pixel_size: 0.0,
            origin_x: 0.0,
            origin_y: 0.0,
            output_frame: String::new(),
        }
    }
}

impl PolylineParams {
    pub fn validate(&self) -> Result<()> {
        if self.guides > self.max_guides {
            return Err(Error::invalid(
                "guides",
                format!("{} is above max_guides {}", self.guides, self.max_guides),
            ));
        }
        if self.points_per_guide < 2 || self.points_per_guide > self.max_points_per_guide {
            return Err(Error::invalid(
                "points_per_guide",
                format!(
                    "{} is not in 2..={}",
                    self.points_per_guide, self.max_points_per_guide
                ),
            ));
        }
        if !(self.half_width.is_finite() && self.half_width > 0.0) {
            return Err(Error::invalid(
                "half_width",
                format!("{} is not a positive number", self.half_width),
            ));
        }
        if !(self.max_angle.is_finite() && self.max_angle >= 0.0) {
            return Err(Error::invalid(
                "max_angle",
                format!("{} is not a non-negative angle", self.max_angle),
            ));
        }
        if self.max_image_pixels == 0 {
            return Err(Error::invalid("max_image_pixels", "0 allows no image"));
        }
        if !(self.pixel_size.is_finite() && self.pixel_size >= 0.0) {
            return Err(Error::invalid(
                "pixel_size",
                format!("{} is not a non-negative number of metres", self.pixel_size),
            ));
        }
        for (f, v) in [("origin_x", self.origin_x), ("origin_y", self.origin_y)] {
            if !v.is_finite() {
                return Err(Error::invalid(f, format!("{v} is not finite")));
            }
        }
        Ok(())
    }
}

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
            max_samples: 16 << 20,
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
            k: 1,
            knn_traversal: crate::kdtree::Traversal::Auto,
            max_points: 16 << 20,
            max_queries: 4 << 20,
            max_results: 1 << 26,
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

/// How a node serves its services: deadlines, queueing and the CPU fallback. The same keys
/// apply to every node, so they usually sit under `/**`; they are taken out of a node's
/// parameters before its own struct is read ([`split_service_params`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServiceParams {
    /// A request not answered within this many seconds (queueing included) is answered with a
    /// deadline error; its computation is abandoned. 0: no deadline.
    pub request_timeout_s: f64,
    /// Requests of one service computed at the same time; more wait their turn.
    pub max_concurrent_requests: u32,
    /// Requests of one service accepted but not yet answered; above it a request is answered
    /// at once with an overload error instead of queueing without bound.
    pub max_pending_requests: u32,
    /// When the device runs out of memory, compute on the CPU instead of failing.
    pub cpu_fallback: bool,
}

/// The keys of [`ServiceParams`].
pub const SERVICE_KEYS: [&str; 4] = [
    "request_timeout_s",
    "max_concurrent_requests",
    "max_pending_requests",
    "cpu_fallback",
];

impl Default for ServiceParams {
    fn default() -> Self {
        ServiceParams {
            request_timeout_s: 60.0,
            max_concurrent_requests: 4,
            max_pending_requests: 1000,
            cpu_fallback: true,
        }
    }
}

impl ServiceParams {
    pub fn validate(&self) -> Result<()> {
        crate::seconds::duration("request_timeout_s", self.request_timeout_s)?;
        if !(1..=1024).contains(&self.max_concurrent_requests) {
            return Err(Error::invalid(
                "max_concurrent_requests",
                format!("{} is not in 1..=1024", self.max_concurrent_requests),
            ));
        }
        if self.max_pending_requests < self.max_concurrent_requests {
            return Err(Error::invalid(
                "max_pending_requests",
                format!(
                    "{} is below max_concurrent_requests {}",
                    self.max_pending_requests, self.max_concurrent_requests
                ),
            ));
        }
        Ok(())
    }

    /// The deadline, if any (none for 0, and for a value [`Self::validate`] refuses).
    pub fn deadline(&self) -> Option<std::time::Duration> {
        crate::seconds::duration("request_timeout_s", self.request_timeout_s)
            .ok()
            .filter(|d| !d.is_zero())
    }
}

/// Splits a node's merged parameters into its own keys and the [`SERVICE_KEYS`].
pub fn split_service_params(
    all: &serde_yaml::Mapping,
) -> (serde_yaml::Mapping, serde_yaml::Mapping) {
    let mut own = serde_yaml::Mapping::new();
    let mut service = serde_yaml::Mapping::new();
    for (k, v) in all {
        let is_service = k.as_str().is_some_and(|k| SERVICE_KEYS.contains(&k));
        if is_service {
            service.insert(k.clone(), v.clone());
        } else {
            own.insert(k.clone(), v.clone());
        }
    }
    (own, service)
}

/// The keys of [`ServiceParams`] `ros2 param set` changes at run time, on every node: the
/// next request is timed and admitted by the new values (`max_concurrent_requests` sizes a
/// node's workers at start).
pub const DYNAMIC_SERVICE_KEYS: [crate::ros::live_params::Dynamic; 2] = [
    crate::ros::live_params::Dynamic {
        key: "request_timeout_s",
        range: crate::ros::live_params::Range::Float(0.0, crate::seconds::MAX_SECONDS),
    },
    crate::ros::live_params::Dynamic {
        key: "max_pending_requests",
        range: crate::ros::live_params::Range::Integer(1, u32::MAX as i64),
    },
];

impl crate::ros::live_params::NodeParams for ServiceParams {
    fn parse(all: &serde_yaml::Mapping) -> Result<Self> {
        service_params(all)
    }
}

impl crate::ros::live_params::NodeParams for LeeParams {
    fn parse(all: &serde_yaml::Mapping) -> Result<Self> {
        let p: LeeParams = node_params(all)?;
        p.validate()?;
        Ok(p)
    }
}

/// The parameters node struct `T` runs with when no file sets them (with `served`, the
/// service keys' too), nested as in a params file: what a node declares, as an rclcpp node
/// declares every parameter with its default, so `ros2 param list` shows them all.
pub fn declared_defaults<T: Serialize + Default>(served: bool) -> serde_yaml::Mapping {
    let mut out = match serde_yaml::to_value(T::default()) {
        Ok(serde_yaml::Value::Mapping(m)) => m,
        _ => serde_yaml::Mapping::new(),
    };
    if served {
        if let Ok(serde_yaml::Value::Mapping(m)) = serde_yaml::to_value(ServiceParams::default()) {
            out.extend(m);
        }
    }
    out
}

/// A node's own parameter struct from its merged parameters (the service keys left out).
pub fn node_params<T: serde::de::DeserializeOwned>(all: &serde_yaml::Mapping) -> Result<T> {
    let (mut own, _) = split_service_params(all);
    // Process-wide: the runtime reads it before any node exists.
    own.remove(crate::ros::distro::PARAMETER);
    serde_yaml::from_value(serde_yaml::Value::Mapping(own)).map_err(|e| Error::invalid("", e))
}

/// The [`ServiceParams`] from a node's merged parameters, validated.
pub fn service_params(all: &serde_yaml::Mapping) -> Result<ServiceParams> {
    let (_, service) = split_service_params(all);
    let p: ServiceParams = serde_yaml::from_value(serde_yaml::Value::Mapping(service))
        .map_err(|e| Error::invalid("", e))?;
    p.validate()?;
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a node declares when no file sets anything parses back to its defaults: the
    /// declared values are the ones it runs with.
    #[test]
    fn declared_defaults_parse_back_to_the_defaults() {
        fn round_trip<T>()
        where
            T: Serialize + Default + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
        {
            let d = declared_defaults::<T>(true);
            assert_eq!(node_params::<T>(&d).unwrap(), T::default());
            assert_eq!(service_params(&d).unwrap(), ServiceParams::default());
        }
        round_trip::<RuntimeParams>();
        round_trip::<LeeParams>();
        round_trip::<ApspParams>();
        round_trip::<PolylineParams>();
        round_trip::<CellGraphParams>();
        round_trip::<NearestNeighborsParams>();
    }

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
