use super::std_msgs::Header;

ros_message! {
    /// geometry_msgs/Point
    "geometry_msgs" / "Point"
    pub struct Point { pub x: f64, pub y: f64, pub z: f64 }
}

ros_message! {
    /// geometry_msgs/Quaternion. Note: ROS's default is the identity (w = 1); `Default` here
    /// is all zeros, so construct with [`Quaternion::identity`] where that matters.
    "geometry_msgs" / "Quaternion"
    pub struct Quaternion { pub x: f64, pub y: f64, pub z: f64, pub w: f64 }
}

impl Quaternion {
    pub fn identity() -> Self {
        Quaternion {
            x: 0.0,
            y: 0.0,
            z: 0.0,
            w: 1.0,
        }
    }
}

ros_message! {
    /// geometry_msgs/Pose
    "geometry_msgs" / "Pose"
    pub struct Pose { pub position: Point, pub orientation: Quaternion }
}

ros_message! {
    /// geometry_msgs/PoseStamped
    "geometry_msgs" / "PoseStamped"
    pub struct PoseStamped { pub header: Header, pub pose: Pose }
}

ros_message! {
    /// geometry_msgs/PoseArray
    "geometry_msgs" / "PoseArray"
    pub struct PoseArray { pub header: Header, pub poses: Vec<Pose> }
}

ros_message! {
    /// geometry_msgs/Vector3
    "geometry_msgs" / "Vector3"
    pub struct Vector3 { pub x: f64, pub y: f64, pub z: f64 }
}

ros_message! {
    /// geometry_msgs/Transform: the child frame's origin and axes in the parent frame.
    "geometry_msgs" / "Transform"
    pub struct Transform { pub translation: Vector3, pub rotation: Quaternion }
}

ros_message! {
    /// geometry_msgs/TransformStamped: `transform` of `child_frame_id` in `header.frame_id`.
    "geometry_msgs" / "TransformStamped"
    pub struct TransformStamped {
        pub header: Header,
        pub child_frame_id: String,
        pub transform: Transform,
    }
}
