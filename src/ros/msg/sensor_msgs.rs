use super::std_msgs::Header;

ros_message! {
    /// sensor_msgs/PointField (datatype: 1 INT8 .. 8 FLOAT64, as the ROS constants)
    "sensor_msgs" / "PointField"
    pub struct PointField { pub name: String, pub offset: u32, pub datatype: u8, pub count: u32 }
}

impl PointField {
    pub const INT8: u8 = 1;
    pub const UINT8: u8 = 2;
    pub const INT16: u8 = 3;
    pub const UINT16: u8 = 4;
    pub const INT32: u8 = 5;
    pub const UINT32: u8 = 6;
    pub const FLOAT32: u8 = 7;
    pub const FLOAT64: u8 = 8;
}

ros_message! {
    /// sensor_msgs/PointCloud2
    "sensor_msgs" / "PointCloud2"
    pub struct PointCloud2 {
        pub header: Header,
        pub height: u32,
        pub width: u32,
        pub fields: Vec<PointField>,
        pub is_bigendian: bool,
        pub point_step: u32,
        pub row_step: u32,
        #[serde(with = "super::bulk")] pub data: Vec<u8>,
        pub is_dense: bool,
    }
}

ros_message! {
    /// sensor_msgs/Image
    "sensor_msgs" / "Image"
    pub struct Image {
        pub header: Header,
        pub height: u32,
        pub width: u32,
        pub encoding: String,
        pub is_bigendian: u8,
        pub step: u32,
        #[serde(with = "super::bulk")] pub data: Vec<u8>,
    }
}

ros_message! {
    /// sensor_msgs/CompressedImage (inside visualization_msgs/Marker's texture).
    "sensor_msgs" / "CompressedImage"
    pub struct CompressedImage {
        pub header: Header,
        pub format: String,
        #[serde(with = "super::bulk")] pub data: Vec<u8>,
    }
}
