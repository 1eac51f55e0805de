//! The macros that declare message types together with their ROS field descriptions.

/// The ROS IDL name of a field type: `float64`, `string`, `uint8[]`, `std_msgs/Header`, ...
pub trait RosType {
    fn ros_type() -> String;
}

/// A message type: package, name and `(field, ROS type)` in declaration order.
pub trait RosMessage: RosType {
    const PACKAGE: &'static str;
    const NAME: &'static str;
    fn fields() -> Vec<(&'static str, String)>;
    /// The type name for `ros2-client` topics.
    fn type_name() -> ros2_client::MessageTypeName {
        ros2_client::MessageTypeName::new(Self::PACKAGE, Self::NAME)
    }
}

/// A service type: package, name, request and response.
pub trait RosService {
    const PACKAGE: &'static str;
    const NAME: &'static str;
    type Request: RosMessage + ros2_client::Message + Clone + 'static;
    type Response: RosMessage + ros2_client::Message + 'static;
    fn type_name() -> ros2_client::ServiceTypeName {
        ros2_client::ServiceTypeName::new(Self::PACKAGE, Self::NAME)
    }
}

macro_rules! primitive_ros_type {
    ($($t:ty => $name:literal),* $(,)?) => {
        $(impl RosType for $t {
            fn ros_type() -> String { $name.to_string() }
        })*
    };
}

primitive_ros_type! {
    bool => "bool", i8 => "int8", u8 => "uint8", i16 => "int16", u16 => "uint16",
    i32 => "int32", u32 => "uint32", i64 => "int64", u64 => "uint64",
    f32 => "float32", f64 => "float64", String => "string",
}

impl<T: RosType> RosType for Vec<T> {
    fn ros_type() -> String {
        format!("{}[]", T::ros_type())
    }
}

impl<T: RosType, const N: usize> RosType for [T; N] {
    fn ros_type() -> String {
        format!("{}[{N}]", T::ros_type())
    }
}

/// Declares a message struct (serde, `ros2_client::Message`) and its ROS description.
macro_rules! ros_message {
    (
        $(#[$meta:meta])*
        $pkg:literal / $name:literal
        pub struct $T:ident { $( $(#[$fmeta:meta])* pub $f:ident : $ty:ty ),* $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
        pub struct $T { $( $(#[$fmeta])* pub $f: $ty ),* }

        impl ros2_client::Message for $T {}

        impl $crate::ros::msg::RosType for $T {
            fn ros_type() -> String { format!("{}/{}", $pkg, $name) }
        }

        impl $crate::ros::msg::RosMessage for $T {
            const PACKAGE: &'static str = $pkg;
            const NAME: &'static str = $name;
            fn fields() -> Vec<(&'static str, String)> {
                // `r#type` is the ROS field `type`.
                vec![$( (stringify!($f).trim_start_matches("r#"), <$ty as $crate::ros::msg::RosType>::ros_type()) ),*]
            }
        }
    };
}

/// Declares a service from its request and response message names.
macro_rules! ros_service {
    ($(#[$meta:meta])* $pkg:literal / $name:literal pub struct $T:ident ($req:ty, $resp:ty);) => {
        $(#[$meta])*
        pub struct $T;
        impl $crate::ros::msg::RosService for $T {
            const PACKAGE: &'static str = $pkg;
            const NAME: &'static str = $name;
            type Request = $req;
            type Response = $resp;
        }
    };
}
