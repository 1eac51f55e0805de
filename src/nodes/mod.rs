//! The nodes: thin adapters from ROS messages to the algorithm modules and back. No algorithm
//! code lives here.

pub mod apsp;
pub mod cell_graph;
pub mod cloud_convert;
pub mod fallback;
pub mod grid_convert;
pub mod image_convert;
pub mod lee_planner;
pub mod map_summary;
pub mod markers;
pub mod nearest_neighbors;
pub mod polyline;
pub mod runtime;
pub mod serve;

use crate::error::Result;
use crate::ros::RosRuntime;

/// The nodes this build has, by the name each gets (and its section in config/default.yaml).
pub const NODE_NAMES: [&str; 6] = [
    runtime::NODE_NAME,
    lee_planner::NODE_NAME,
    apsp::NODE_NAME,
    polyline::NODE_NAME,
    cell_graph::NODE_NAME,
    nearest_neighbors::NODE_NAME,
];

/// Starts every node this build has on `rt`'s executor; returns their fully qualified names.
pub fn start_all(rt: &RosRuntime) -> Result<Vec<String>> {
    start(rt, &NODE_NAMES)
}

/// Starts the named nodes (names from [`NODE_NAMES`]); an unknown name is an error naming it.
pub fn start(rt: &RosRuntime, names: &[&str]) -> Result<Vec<String>> {
    if let Some(bad) = names.iter().find(|n| !NODE_NAMES.contains(n)) {
        return Err(crate::Error::invalid(
            "--nodes",
            format!("'{bad}' is not one of {}", NODE_NAMES.join(", ")),
        ));
    }
    let mut started = Vec::new();
    for name in NODE_NAMES.iter().filter(|n| names.contains(n)) {
        started.push(match *name {
            runtime::NODE_NAME => runtime::start(rt)?,
            lee_planner::NODE_NAME => lee_planner::start(rt)?,
            apsp::NODE_NAME => apsp::start(rt)?,
            polyline::NODE_NAME => polyline::start(rt)?,
            cell_graph::NODE_NAME => cell_graph::start(rt)?,
            _ => nearest_neighbors::start(rt)?,
        });
    }
    Ok(started)
}
