//! The nodes: thin adapters from ROS messages to the algorithm modules and back. No algorithm
//! code lives here.

pub mod apsp;
pub mod cell_graph;
pub mod cloud_convert;
pub mod grid_convert;
pub mod image_convert;
pub mod lee_planner;
pub mod map_summary;
pub mod nearest_neighbors;
pub mod polyline;
pub mod runtime;

use crate::error::Result;
use crate::ros::RosRuntime;

/// Starts every node this build has on `rt`'s executor; returns their fully qualified names.
pub fn start_all(rt: &RosRuntime) -> Result<Vec<String>> {
    Ok(vec![
        runtime::start(rt)?,
        lee_planner::start(rt)?,
        apsp::start(rt)?,
        polyline::start(rt)?,
        cell_graph::start(rt)?,
        nearest_neighbors::start(rt)?,
    ])
}
