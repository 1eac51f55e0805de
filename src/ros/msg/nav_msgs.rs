use super::builtin_interfaces::Time;
use super::geometry_msgs::{Pose, PoseStamped};
use super::std_msgs::Header;

ros_message! {
    /// nav_msgs/MapMetaData
    "nav_msgs" / "MapMetaData"
    pub struct MapMetaData {
        pub map_load_time: Time,
        pub resolution: f32,
        pub width: u32,
        pub height: u32,
        pub origin: Pose,
    }
}

ros_message! {
    /// nav_msgs/OccupancyGrid: row-major, row 0 at the origin; -1 unknown, 0..100 occupancy.
    "nav_msgs" / "OccupancyGrid"
    pub struct OccupancyGrid {
        pub header: Header,
        pub info: MapMetaData,
        #[serde(with = "super::bulk")] pub data: Vec<i8>,
    }
}

ros_message! {
    /// nav_msgs/Path
    "nav_msgs" / "Path"
    pub struct Path { pub header: Header, pub poses: Vec<PoseStamped> }
}

ros_message! {
    /// nav_msgs/GetPlan request
    "nav_msgs" / "GetPlan_Request"
    pub struct GetPlanRequest { pub start: PoseStamped, pub goal: PoseStamped, pub tolerance: f32 }
}

ros_message! {
    /// nav_msgs/GetPlan response
    "nav_msgs" / "GetPlan_Response"
    pub struct GetPlanResponse { pub plan: Path }
}

ros_service! {
    /// nav_msgs/srv/GetPlan
    "nav_msgs" / "GetPlan"
    pub struct GetPlan(GetPlanRequest, GetPlanResponse);
}
