//! File inputs of the `lee` CLI: NumPy `.npy` elevation arrays and ROS map_server maps.

pub mod map_yaml;
pub use crate::npy;
