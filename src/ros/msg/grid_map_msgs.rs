use super::geometry_msgs::Pose;
use super::std_msgs::{Float32MultiArray, Header};

ros_message! {
    /// grid_map_msgs/GridMapInfo
    "grid_map_msgs" / "GridMapInfo"
    pub struct GridMapInfo {
        pub resolution: f64,
        pub length_x: f64,
        pub length_y: f64,
        pub pose: Pose,
    }
}

ros_message! {
    /// grid_map_msgs/GridMap (ROS 2 layout: header, info, layers, basic_layers, data,
    /// outer_start_index, inner_start_index). Each layer is column-major, as grid_map stores it.
    "grid_map_msgs" / "GridMap"
    pub struct GridMap {
        pub header: Header,
        pub info: GridMapInfo,
        pub layers: Vec<String>,
        pub basic_layers: Vec<String>,
        pub data: Vec<Float32MultiArray>,
        pub outer_start_index: u16,
        pub inner_start_index: u16,
    }
}
