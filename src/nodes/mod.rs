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
use crate::ros::live_params::Param;
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

/// The sections of config/default.yaml with their keys' ranges, as `ros2 param describe`
/// gives them: `/**` the service keys every node has, then each node's own.
pub const PARAM_RANGES: [(&str, &[Param]); NODES.len() + 1] = [
    ("/**", &crate::ros::node_params::SERVICE_PARAMS),
    (runtime::NODE_NAME, runtime::params::PARAMS),
    (lee_planner::NODE_NAME, lee_planner::params::PARAMS),
    (apsp::NODE_NAME, apsp::params::PARAMS),
    (polyline::NODE_NAME, polyline::params::PARAMS),
    (cell_graph::NODE_NAME, cell_graph::params::PARAMS),
    (
        nearest_neighbors::NODE_NAME,
        nearest_neighbors::params::PARAMS,
    ),
];

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

    /// The ranges `ros2 param describe` gives are the values a node takes: every numeric
    /// parameter of every node has one (or says it takes any value of its type), both ends
    /// are accepted and the values just outside refused, by the same parsing and validation
    /// as at start. Where a bound depends on another parameter, that one is set so the end is
    /// reachable (`others`).
    #[test]
    fn every_numeric_parameter_has_the_range_its_node_accepts() {
        use crate::ros::live_params::{Param, Range};
        use crate::ros::node_params::SERVICE_PARAMS;
        use serde_yaml::{Mapping, Value};

        fn check<T>(m: &Mapping) -> crate::error::Result<()>
        where
            T: serde::de::DeserializeOwned + Validated,
        {
            node_params::<T>(m)?.validated()?;
            service_params(m).map(|_| ())
        }
        trait Validated {
            fn validated(&self) -> crate::error::Result<()>;
        }
        macro_rules! validated {
            ($($t:ty),*) => {$(impl Validated for $t {
                fn validated(&self) -> crate::error::Result<()> { self.validate() }
            })*};
        }
        validated!(
            RuntimeParams,
            LeeParams,
            ApspParams,
            PolylineParams,
            CellGraphParams,
            NearestNeighborsParams
        );

        /// The other parameters a value of `key` needs to be taken.
        fn others(node: &str, key: &str, v: &Value) -> Vec<(&'static str, Value)> {
            let int = |i: i64| Value::Number(i.into());
            let nonzero = v.as_i64().is_some_and(|v| v != 0);
            match (node, key) {
                (_, "max_pending_requests") => vec![("max_concurrent_requests", int(1))],
                (_, "max_concurrent_requests") => {
                    vec![("max_pending_requests", int(u32::MAX as i64))]
                }
                (_, "block_x") => vec![("block_y", int(1))],
                (_, "block_y") => vec![("block_x", int(1))],
                ("lee_planner", "neutral_cost" | "cost_factor" | "cost_scaling_factor") => {
                    vec![("cost_model", Value::String("costmap".into()))]
                }
                ("lee_planner", "inflation_radius") => vec![
                    ("cost_model", Value::String("costmap".into())),
                    ("robot_radius", int(0)),
                ],
                ("apsp", "tile") => vec![("thread_tile", int(if nonzero { 4 } else { 0 }))],
                ("apsp", "thread_tile") => vec![("tile", int(if nonzero { 64 } else { 0 }))],
                ("polyline", "guides") => vec![("max_guides", int(u32::MAX as i64))],
                ("polyline", "max_guides") => vec![("guides", int(0))],
                ("polyline", "points_per_guide") => {
                    vec![("max_points_per_guide", int(u32::MAX as i64))]
                }
                ("polyline", "max_points_per_guide") => vec![("points_per_guide", int(2))],
                ("cell_graph", "sample_count") => vec![("max_samples", int(u32::MAX as i64))],
                ("cell_graph", "max_samples") => vec![("sample_count", int(0))],
                _ => vec![],
            }
        }

        type Check = fn(&Mapping) -> crate::error::Result<()>;
        let nodes: [(&str, Mapping, Check); 6] = [
            (
                super::runtime::NODE_NAME,
                declared_defaults::<RuntimeParams>(true),
                check::<RuntimeParams>,
            ),
            (
                super::lee_planner::NODE_NAME,
                declared_defaults::<LeeParams>(true),
                check::<LeeParams>,
            ),
            (
                super::apsp::NODE_NAME,
                declared_defaults::<ApspParams>(true),
                check::<ApspParams>,
            ),
            (
                super::polyline::NODE_NAME,
                declared_defaults::<PolylineParams>(true),
                check::<PolylineParams>,
            ),
            (
                super::cell_graph::NODE_NAME,
                declared_defaults::<CellGraphParams>(true),
                check::<CellGraphParams>,
            ),
            (
                super::nearest_neighbors::NODE_NAME,
                declared_defaults::<NearestNeighborsParams>(true),
                check::<NearestNeighborsParams>,
            ),
        ];
        let mut wrong = Vec::new();
        let mut bounded = 0;
        for (node, defaults, check) in nodes {
            // The tables the nodes declare and the node pages show.
            let own = super::PARAM_RANGES
                .iter()
                .find(|(section, _)| *section == node)
                .map_or(&[][..], |(_, params)| *params);
            let table: Vec<Param> = SERVICE_PARAMS.iter().chain(own).copied().collect();
            for p in &table {
                assert!(
                    defaults.contains_key(p.key),
                    "{node}: {} is not a parameter",
                    p.key
                );
            }
            let takes = |key: &'static str, v: Value| {
                let mut m = defaults.clone();
                for (k, o) in others(node, key, &v) {
                    m.insert(k.into(), o);
                }
                m.insert(key.into(), v);
                check(&m).is_ok()
            };
            for (key, value) in &defaults {
                let Some(key) = key.as_str() else { continue };
                let numeric = matches!(value, Value::Number(_));
                let entry = table.iter().find(|p| p.key == key);
                match (numeric, entry) {
                    (true, None) => wrong.push(format!("{node}: {key} has no range")),
                    (false, Some(p)) if p.range != Range::Any => {
                        wrong.push(format!("{node}: {key} is not numeric but has a range"))
                    }
                    _ => {}
                }
            }
            for p in &table {
                let key = p.key;
                let (inside, outside): (Vec<Value>, Vec<Value>) = match p.range {
                    Range::Any => continue,
                    Range::Integer(lo, hi) => (
                        vec![lo.into(), hi.into()],
                        [lo.checked_sub(1), hi.checked_add(1)]
                            .into_iter()
                            .flatten()
                            .map(Value::from)
                            .collect(),
                    ),
                    Range::Steps(lo, hi, step) => (
                        (lo..=hi).step_by(step as usize).map(Value::from).collect(),
                        (lo - 1..=hi + 1)
                            .filter(|v| !(lo..=hi).contains(v) || (v - lo) % step != 0)
                            .map(Value::from)
                            .collect(),
                    ),
                    Range::Float(lo, hi) => (
                        vec![lo.into(), hi.into()],
                        vec![lo.next_down().into(), hi.next_up().into()],
                    ),
                };
                bounded += 1;
                for v in inside {
                    if !takes(key, v.clone()) {
                        wrong.push(format!("{node}: {key} = {v:?} refused, inside its range"));
                    }
                }
                for v in outside {
                    if takes(key, v.clone()) {
                        wrong.push(format!("{node}: {key} = {v:?} taken, outside its range"));
                    }
                }
            }
        }
        assert!(bounded > 50, "only {bounded} ranges checked");
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
