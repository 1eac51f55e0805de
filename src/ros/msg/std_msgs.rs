use super::builtin_interfaces::Time;

ros_message! {
    /// std_msgs/Header
    "std_msgs" / "Header"
    pub struct Header { pub stamp: Time, pub frame_id: String }
}

ros_message! {
    /// std_msgs/MultiArrayDimension
    "std_msgs" / "MultiArrayDimension"
    pub struct MultiArrayDimension { pub label: String, pub size: u32, pub stride: u32 }
}

ros_message! {
    /// std_msgs/MultiArrayLayout
    "std_msgs" / "MultiArrayLayout"
    pub struct MultiArrayLayout { pub dim: Vec<MultiArrayDimension>, pub data_offset: u32 }
}

ros_message! {
    /// std_msgs/Float32MultiArray
    "std_msgs" / "Float32MultiArray"
    pub struct Float32MultiArray {
        pub layout: MultiArrayLayout,
        #[serde(with = "super::bulk")] pub data: Vec<f32>,
    }
}

ros_message! {
    /// std_msgs/ColorRGBA: components in 0..1.
    "std_msgs" / "ColorRGBA"
    pub struct ColorRGBA { pub r: f32, pub g: f32, pub b: f32, pub a: f32 }
}
