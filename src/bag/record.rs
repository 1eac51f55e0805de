//! `gpu_planning bag record`: subscribes to topics of the types this package knows and writes
//! what arrives into a bag, until a duration passes or Ctrl-C. For machines without ROS; on a
//! robot `ros2 bag record` writes bags that `bag replay` reads alike.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::StreamExt;

use super::qos::TopicQos;
use super::types;
use super::writer::BagWriter;
use crate::error::{Error, Result};
use crate::ros::{NodeContext, RosRuntime};
use crate::sync::lock;

/// Topics of this package's nodes (default names) and their types, so that `--topic NAME`
/// needs no type; with the QoS their publishers offer.
pub const KNOWN_TOPICS: &[(&str, &str, bool)] = &[
    ("/map", "nav_msgs/msg/OccupancyGrid", true),
    ("/elevation_map", "grid_map_msgs/msg/GridMap", true),
    ("/start_pose", "geometry_msgs/msg/PoseStamped", false),
    ("/goal_pose", "geometry_msgs/msg/PoseStamped", false),
    ("/lee_planner/path", "nav_msgs/msg/Path", true),
    (
        "/lee_planner/distance_field",
        "nav_msgs/msg/OccupancyGrid",
        true,
    ),
    (
        "/lee_planner/markers",
        "visualization_msgs/msg/MarkerArray",
        true,
    ),
    ("/apsp/graph", "gpu_planning_msgs/msg/WeightedGraph", true),
    ("/apsp/status", "gpu_planning_msgs/msg/ApspStatus", true),
    ("/polyline/image", "sensor_msgs/msg/Image", false),
    ("/polyline/polyline", "nav_msgs/msg/Path", true),
    (
        "/polyline/markers",
        "visualization_msgs/msg/MarkerArray",
        true,
    ),
    (
        "/cell_graph/constraints",
        "gpu_planning_msgs/msg/QuadricArrangement",
        true,
    ),
    ("/cell_graph/samples", "geometry_msgs/msg/PoseArray", true),
    (
        "/cell_graph/cell_graph",
        "gpu_planning_msgs/msg/CellGraph",
        true,
    ),
    (
        "/cell_graph/markers",
        "visualization_msgs/msg/MarkerArray",
        true,
    ),
    (
        "/nearest_neighbors/cloud",
        "sensor_msgs/msg/PointCloud2",
        true,
    ),
    (
        "/nearest_neighbors/orientations",
        "geometry_msgs/msg/PoseArray",
        true,
    ),
    (
        "/nearest_neighbors/queries",
        "sensor_msgs/msg/PointCloud2",
        false,
    ),
    (
        "/nearest_neighbors/neighbors",
        "gpu_planning_msgs/msg/Neighbors",
        true,
    ),
    (
        "/gpu_planning/status",
        "gpu_planning_msgs/msg/RuntimeStatus",
        true,
    ),
];

/// `NAME` (a known topic) or `NAME:TYPE` to (topic, type, QoS to record as offered).
pub fn parse_topic(spec: &str) -> Result<(String, String, TopicQos)> {
    let (name, ty) = match spec.split_once(':') {
        Some((n, t)) => (n.to_string(), Some(t.to_string())),
        None => (spec.to_string(), None),
    };
    // Before anything is made for the bag: a refused name leaves no half-made bag behind.
    crate::ros::names::check_topic("--topic", &name)?;
    let known = KNOWN_TOPICS.iter().find(|(n, _, _)| *n == name);
    let ty = match (ty, known) {
        (Some(t), _) => t,
        (None, Some((_, t, _))) => t.to_string(),
        (None, None) => {
            return Err(Error::invalid(
                "--topic",
                format!(
                    "'{name}' is not a topic of this package's nodes: give it as NAME:pkg/msg/Type"
                ),
            ))
        }
    };
    if types::message(&ty).is_none() {
        return Err(Error::invalid(
            "--topic",
            format!("'{ty}' is not a message type this package reads"),
        ));
    }
    let latched = known.is_some_and(|(_, _, l)| *l);
    Ok((
        name,
        ty,
        if latched {
            TopicQos::latched()
        } else {
            TopicQos::default()
        },
    ))
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Records `topics` on `rt`'s domain into a new bag at `out` until `duration` passes (if
/// given) or `rt` shuts down; the number of messages written.
pub fn record(
    rt: &RosRuntime,
    out: &Path,
    topics: &[(String, String, TopicQos)],
    duration: Option<Duration>,
) -> Result<u64> {
    let mut ctx = NodeContext::new(rt, "bag_recorder")?;
    let writer = Arc::new(Mutex::new(BagWriter::create(out)?));
    let written = Arc::new(Mutex::new(0u64));
    for (topic, ty, offered) in topics {
        // Reliable, and transient local where the publisher offers it (a late recorder still
        // gets the map); a volatile reader for the rest matches any durability.
        let listen = TopicQos {
            reliable: true,
            transient_local: offered.transient_local,
            depth: 100,
        };
        lock(&writer).add_topic(topic, ty, *offered)?;
        let m = types::message(ty)
            .ok_or_else(|| Error::invalid(topic, format!("unknown type {ty}")))?;
        let mut stream = m.subscribe(&mut ctx, topic, listen)?;
        let (w, n, topic) = (writer.clone(), written.clone(), topic.clone());
        rt.spawn(async move {
            while let Some(bytes) = stream.next().await {
                match lock(&w).write(&topic, now_ns(), &bytes) {
                    Ok(()) => *lock(&n) += 1,
                    Err(e) => tracing::error!("bag record: {topic}: {e}"),
                }
            }
        });
    }
    let shutdown = rt.shutdown().clone();
    smol::block_on(async {
        match duration {
            Some(d) => {
                futures::future::select(Box::pin(shutdown.wait()), Box::pin(smol::Timer::after(d)))
                    .await;
            }
            None => shutdown.wait().await,
        }
    });
    // The subscription tasks may still hold the writer; a finished one refuses their writes.
    lock(&writer).finish()?;
    drop(ctx);
    let n = *lock(&written);
    Ok(n)
}
