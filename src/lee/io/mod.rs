//! File inputs of the `lee` CLI: NumPy `.npy` elevation arrays, ROS map_server maps and Gazebo
//! heightmaps.

pub mod heightmap;
pub mod map_yaml;
pub use crate::npy;
