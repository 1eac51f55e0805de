//! visualization_msgs/MarkerArray, as RViz draws it. The layout with texture and mesh_file
//! fields is the one of Humble and Jazzy alike (it arrived in visualization_msgs 3.0, before
//! Humble); only Foxy and Galactic lack them.

use super::builtin_interfaces::Duration;
use super::geometry_msgs::{Point, Pose, Vector3};
use super::sensor_msgs::CompressedImage;
use super::std_msgs::{ColorRGBA, Header};

ros_message! {
    /// visualization_msgs/UVCoordinate
    "visualization_msgs" / "UVCoordinate"
    pub struct UVCoordinate { pub u: f32, pub v: f32 }
}

ros_message! {
    /// visualization_msgs/MeshFile
    "visualization_msgs" / "MeshFile"
    pub struct MeshFile { pub filename: String, #[serde(with = "super::bulk")] pub data: Vec<u8> }
}

ros_message! {
    /// visualization_msgs/Marker
    "visualization_msgs" / "Marker"
    pub struct Marker {
        pub header: Header,
        pub ns: String,
        pub id: i32,
        pub r#type: i32,
        pub action: i32,
        pub pose: Pose,
        pub scale: Vector3,
        pub color: ColorRGBA,
        pub lifetime: Duration,
        pub frame_locked: bool,
        pub points: Vec<Point>,
        pub colors: Vec<ColorRGBA>,
        pub texture_resource: String,
        pub texture: CompressedImage,
        pub uv_coordinates: Vec<UVCoordinate>,
        pub text: String,
        pub mesh_resource: String,
        pub mesh_file: MeshFile,
        pub mesh_use_embedded_materials: bool,
    }
}

impl Marker {
    pub const ARROW: i32 = 0;
    pub const SPHERE: i32 = 2;
    pub const LINE_STRIP: i32 = 4;
    pub const LINE_LIST: i32 = 5;
    pub const SPHERE_LIST: i32 = 7;
    pub const ADD: i32 = 0;
    pub const DELETEALL: i32 = 3;
}

ros_message! {
    /// visualization_msgs/MarkerArray
    "visualization_msgs" / "MarkerArray"
    pub struct MarkerArray { pub markers: Vec<Marker> }
}
