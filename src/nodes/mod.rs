//! The nodes: thin adapters from ROS messages to the algorithm modules and back. No algorithm
//! code lives here.

pub mod apsp;
pub mod cell_graph;
pub mod cli;
pub mod cloud_convert;
pub mod grid_convert;
pub mod image_convert;
pub(crate) mod latched;
pub mod lee_planner;
pub mod lifecycle;
pub mod map_summary;
pub mod markers;
pub mod nearest_neighbors;
pub mod planner_server;
pub mod polyline;
pub mod runtime;
pub mod serve;
pub mod subscribe;
pub mod timings;

use crate::error::Result;
use crate::ros::RosRuntime;

/// Starts one node on a runtime's executor; returns its fully qualified name.
pub type StartFn = fn(&RosRuntime) -> Result<String>;

/// The nodes this build has, by the name each gets (and its section in config/default.yaml),
/// with the function that starts it: a new node is one row here, and no name can start
/// another node's code.
pub const NODES: [(&str, StartFn); 6] = [
    (runtime::NODE_NAME, runtime::start),
    (lee_planner::NODE_NAME, lee_planner::start),
    (apsp::NODE_NAME, apsp::start),
    (polyline::NODE_NAME, polyline::start),
    (cell_graph::NODE_NAME, cell_graph::start),
    (nearest_neighbors::NODE_NAME, nearest_neighbors::start),
];

/// The names of [`NODES`], in start order.
pub const NODE_NAMES: [&str; NODES.len()] = {
    let mut names = [""; NODES.len()];
    let mut i = 0;
    while i < NODES.len() {
        names[i] = NODES[i].0;
        i += 1;
    }
    names
};

/// Starts every node this build has on `rt`'s executor; returns their fully qualified names.
pub fn start_all(rt: &RosRuntime) -> Result<Vec<String>> {
    start(rt, &NODE_NAMES)
}

/// Starts the named nodes (names from [`NODE_NAMES`]), in the table's order; an unknown name
/// is an error naming it.
pub fn start(rt: &RosRuntime, names: &[&str]) -> Result<Vec<String>> {
    if let Some(bad) = names.iter().find(|n| !NODE_NAMES.contains(n)) {
        return Err(crate::Error::invalid(
            "--nodes",
            format!("'{bad}' is not one of {}", NODE_NAMES.join(", ")),
        ));
    }
    crate::bag::schema::announce_type_hashes()?;
    NODES
        .iter()
        .filter(|(name, _)| names.contains(name))
        .map(|(_, start)| start(rt))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::apsp::ApspParams;
    use super::cell_graph::CellGraphParams;
    use super::lee_planner::LeeParams;
    use super::nearest_neighbors::NearestNeighborsParams;
    use super::polyline::PolylineParams;
    use super::runtime::RuntimeParams;
    use crate::ros::node_params::{declared_defaults, node_params, service_params, ServiceParams};
    use serde::Serialize;

    /// What a node declares when no file sets anything parses back to its defaults: the
    /// declared values are the ones it runs with.
    #[test]
    fn declared_defaults_parse_back_to_the_defaults() {
        fn round_trip<T>()
        where
            T: Serialize + Default + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
        {
            let d = declared_defaults::<T>(true);
            assert_eq!(node_params::<T>(&d).unwrap(), T::default());
            assert_eq!(service_params(&d).unwrap(), ServiceParams::default());
        }
        round_trip::<RuntimeParams>();
        round_trip::<LeeParams>();
        round_trip::<ApspParams>();
        round_trip::<PolylineParams>();
        round_trip::<CellGraphParams>();
        round_trip::<NearestNeighborsParams>();
    }
}
