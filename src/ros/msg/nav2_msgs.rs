use super::builtin_interfaces::Time;
use super::geometry_msgs::Pose;
use super::std_msgs::Header;

ros_message! {
    /// nav2_msgs/CostmapMetaData
    "nav2_msgs" / "CostmapMetaData"
    pub struct CostmapMetaData {
        pub map_load_time: Time,
        pub update_time: Time,
        pub layer: String,
        pub resolution: f32,
        pub size_x: u32,
        pub size_y: u32,
        pub origin: Pose,
    }
}

ros_message! {
    /// nav2_msgs/Costmap: what nav2's costmaps publish on `costmap_raw` (row-major from cell
    /// (0, 0); 254 lethal, 253 inscribed, 255 unknown, 0..=252 free to inflated).
    "nav2_msgs" / "Costmap"
    pub struct Costmap { pub header: Header, pub metadata: CostmapMetaData, pub data: Vec<u8> }
}
