//! Rust mirrors of the ROS 2 message types the nodes use. Field order and types follow the ROS
//! definitions exactly, because CDR has no field names: the serde order *is* the wire format.
//! Every type also describes its fields ([`RosMessage::fields`]) so tests can check it against
//! the `.msg` / `.srv` files. Vectors of numbers go on the wire in one piece ([`bulk`]).

#[macro_use]
mod define;
pub mod action_msgs;
pub mod bond;
pub mod builtin_interfaces;
pub mod bulk;
pub mod geometry_msgs;
pub mod gpu_planning_msgs;
pub mod grid_map_msgs;
pub mod lifecycle_msgs;
pub mod nav2_msgs;
pub mod nav_msgs;
pub mod rosgraph_msgs;
pub mod sensor_msgs;
pub mod service_msgs;
pub mod std_msgs;
pub mod tf2_msgs;
pub mod unique_identifier_msgs;
pub mod visualization_msgs;

pub use define::{RosMessage, RosService, RosType};
