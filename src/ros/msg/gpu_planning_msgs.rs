//! This package's own interfaces (msg/ and srv/ at the repository root).

use super::geometry_msgs::{Point, Pose, Quaternion};
use super::std_msgs::Header;

ros_message! {
    "gpu_planning_msgs" / "RuntimeStatus"
    pub struct RuntimeStatus {
        pub header: Header,
        pub backend: String,
        pub device: String,
        pub compute_capability: String,
        pub device_memory_total: u64,
        pub device_memory_free: u64,
        pub nodes: Vec<String>,
        pub uptime_s: f64,
        pub maps_received: u64,
        pub map_header: Header,
        pub map_width: u32,
        pub map_height: u32,
        pub map_resolution: f32,
        pub map_free: u32,
        pub map_occupied: u32,
        pub map_unknown: u32,
        pub map_checksum: u64,
    }
}

ros_message! {
    "gpu_planning_msgs" / "QuadricArrangement"
    pub struct QuadricArrangement {
        pub header: Header,
        pub count: u32,
        #[serde(with = "super::bulk")] pub coefficients: Vec<f64>,
    }
}

ros_message! {
    "gpu_planning_msgs" / "CellGraph"
    pub struct CellGraph {
        pub header: Header,
        pub constraint_count: u32,
        pub words_per_cell: u32,
        #[serde(with = "super::bulk")] pub cells: Vec<u64>,
        #[serde(with = "super::bulk")] pub sample_counts: Vec<u32>,
        #[serde(with = "super::bulk")] pub representatives: Vec<u32>,
        #[serde(with = "super::bulk")] pub edge_from: Vec<u32>,
        #[serde(with = "super::bulk")] pub edge_to: Vec<u32>,
        #[serde(with = "super::bulk")] pub edge_bits: Vec<u32>,
        pub sample_count: u32,
        pub algorithm: String,
        pub compute_time_s: f64,
    }
}

ros_message! {
    "gpu_planning_msgs" / "Neighbors"
    pub struct Neighbors {
        pub header: Header,
        pub k: u32,
        pub radius: f32,
        #[serde(with = "super::bulk")] pub offsets: Vec<u32>,
        #[serde(with = "super::bulk")] pub indices: Vec<u32>,
        #[serde(with = "super::bulk")] pub distances: Vec<f32>,
        pub dropped_queries: u32,
    }
}

ros_message! {
    "gpu_planning_msgs" / "ApspStatus"
    pub struct ApspStatus {
        pub header: Header,
        pub vertex_count: u32,
        pub edge_count: u32,
        pub backend: String,
        pub memory_model: String,
        pub compute_time_s: f64,
        pub negative_cycle: bool,
        pub negative_cycle_vertex: i64,
        pub error: String,
        pub graphs_received: u64,
    }
}

ros_message! {
    "gpu_planning_msgs" / "WeightedGraph"
    pub struct WeightedGraph {
        pub header: Header,
        pub vertex_count: u32,
        #[serde(with = "super::bulk")] pub edge_from: Vec<u32>,
        #[serde(with = "super::bulk")] pub edge_to: Vec<u32>,
        #[serde(with = "super::bulk")] pub weights: Vec<f32>,
        #[serde(with = "super::bulk")] pub integer_weights: Vec<i32>,
        pub vertex_names: Vec<String>,
        pub vertex_poses: Vec<Pose>,
    }
}

ros_message! {
    "gpu_planning_msgs" / "GetStatus_Request"
    pub struct GetStatusRequest { pub refresh_memory: bool }
}
ros_message! {
    "gpu_planning_msgs" / "GetStatus_Response"
    pub struct GetStatusResponse { pub status: RuntimeStatus }
}
ros_service! { "gpu_planning_msgs" / "GetStatus" pub struct GetStatus(GetStatusRequest, GetStatusResponse); }

ros_message! {
    "gpu_planning_msgs" / "BuildCellGraph_Request"
    pub struct BuildCellGraphRequest {
        pub constraints: QuadricArrangement,
        pub samples: Vec<Quaternion>,
        pub sample_count: u32,
        pub seed: u64,
        pub algorithm: String,
    }
}
ros_message! {
    "gpu_planning_msgs" / "BuildCellGraph_Response"
    pub struct BuildCellGraphResponse { pub success: bool, pub error: String, pub graph: CellGraph }
}
ros_service! {
    "gpu_planning_msgs" / "BuildCellGraph"
    pub struct BuildCellGraph(BuildCellGraphRequest, BuildCellGraphResponse);
}

ros_message! {
    "gpu_planning_msgs" / "FindRotationPath_Request"
    pub struct FindRotationPathRequest { pub start: Quaternion, pub goal: Quaternion }
}
ros_message! {
    "gpu_planning_msgs" / "FindRotationPath_Response"
    pub struct FindRotationPathResponse {
        pub success: bool,
        pub error: String,
        pub reachable: bool,
        #[serde(with = "super::bulk")] pub cells: Vec<u32>,
        pub waypoints: Vec<Quaternion>,
    }
}
ros_service! {
    "gpu_planning_msgs" / "FindRotationPath"
    pub struct FindRotationPath(FindRotationPathRequest, FindRotationPathResponse);
}

ros_message! {
    "gpu_planning_msgs" / "KNearest_Request"
    pub struct KNearestRequest {
        pub dimensions: u32,
        #[serde(with = "super::bulk")] pub points: Vec<f32>,
        pub k: u32,
    }
}
ros_message! {
    "gpu_planning_msgs" / "KNearest_Response"
    pub struct KNearestResponse { pub success: bool, pub error: String, pub neighbors: Neighbors }
}
ros_service! { "gpu_planning_msgs" / "KNearest" pub struct KNearest(KNearestRequest, KNearestResponse); }

ros_message! {
    "gpu_planning_msgs" / "RadiusSearch_Request"
    pub struct RadiusSearchRequest {
        pub dimensions: u32,
        #[serde(with = "super::bulk")] pub points: Vec<f32>,
        pub radius: f32,
        pub max_count: u32,
    }
}
ros_message! {
    "gpu_planning_msgs" / "RadiusSearch_Response"
    pub struct RadiusSearchResponse { pub success: bool, pub error: String, pub neighbors: Neighbors }
}
ros_service! {
    "gpu_planning_msgs" / "RadiusSearch"
    pub struct RadiusSearch(RadiusSearchRequest, RadiusSearchResponse);
}

ros_message! {
    "gpu_planning_msgs" / "ShortestPath_Request"
    pub struct ShortestPathRequest {
        #[serde(with = "super::bulk")] pub sources: Vec<u32>,
        #[serde(with = "super::bulk")] pub targets: Vec<u32>,
    }
}
ros_message! {
    "gpu_planning_msgs" / "ShortestPath_Response"
    pub struct ShortestPathResponse {
        pub success: bool,
        pub error: String,
        #[serde(with = "super::bulk")] pub distances: Vec<f64>,
        pub reachable: Vec<bool>,
        #[serde(with = "super::bulk")] pub path_offsets: Vec<u32>,
        #[serde(with = "super::bulk")] pub path_vertices: Vec<u32>,
    }
}
ros_service! {
    "gpu_planning_msgs" / "ShortestPath"
    pub struct ShortestPath(ShortestPathRequest, ShortestPathResponse);
}

ros_message! {
    "gpu_planning_msgs" / "ExtractPolyline_Request"
    pub struct ExtractPolylineRequest {
        pub a: Point,
        pub b: Point,
        pub guides: u32,
        pub points_per_guide: u32,
        pub half_width: f64,
        pub max_angle: f64,
    }
}
ros_message! {
    "gpu_planning_msgs" / "ExtractPolyline_Response"
    pub struct ExtractPolylineResponse {
        pub success: bool,
        pub error: String,
        pub feasible: bool,
        pub points: Vec<Point>,
        pub score: f64,
    }
}
ros_service! {
    "gpu_planning_msgs" / "ExtractPolyline"
    pub struct ExtractPolyline(ExtractPolylineRequest, ExtractPolylineResponse);
}
