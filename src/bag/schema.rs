//! `ros2msg` schemas, as rosbag2 stores them in MCAP: the type's own definition, then every
//! type it uses, each after a line of 80 `=` and `MSG: pkg/Type`. Independent readers (rosbags,
//! Foxglove, `ros2 bag`) decode messages from these texts alone, so a bag needs no ROS install
//! to be read.

use crate::error::{Error, Result};
use crate::ros::idl::{parse_msg, FieldDef};

macro_rules! definitions {
    ($($name:literal => $path:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/", $path)))),*]
    };
}

/// Message definitions by `pkg/Type`: the vendored standard ones and this package's own.
const MESSAGES: &[(&str, &str)] = definitions! {
    "builtin_interfaces/Time" => "interfaces/builtin_interfaces/msg/Time.msg",
    "builtin_interfaces/Duration" => "interfaces/builtin_interfaces/msg/Duration.msg",
    "std_msgs/Header" => "interfaces/std_msgs/msg/Header.msg",
    "std_msgs/MultiArrayDimension" => "interfaces/std_msgs/msg/MultiArrayDimension.msg",
    "std_msgs/MultiArrayLayout" => "interfaces/std_msgs/msg/MultiArrayLayout.msg",
    "std_msgs/Float32MultiArray" => "interfaces/std_msgs/msg/Float32MultiArray.msg",
    "geometry_msgs/Point" => "interfaces/geometry_msgs/msg/Point.msg",
    "geometry_msgs/Quaternion" => "interfaces/geometry_msgs/msg/Quaternion.msg",
    "geometry_msgs/Pose" => "interfaces/geometry_msgs/msg/Pose.msg",
    "geometry_msgs/PoseStamped" => "interfaces/geometry_msgs/msg/PoseStamped.msg",
    "geometry_msgs/PoseArray" => "interfaces/geometry_msgs/msg/PoseArray.msg",
    "nav_msgs/MapMetaData" => "interfaces/nav_msgs/msg/MapMetaData.msg",
    "nav_msgs/OccupancyGrid" => "interfaces/nav_msgs/msg/OccupancyGrid.msg",
    "nav_msgs/Path" => "interfaces/nav_msgs/msg/Path.msg",
    "sensor_msgs/PointField" => "interfaces/sensor_msgs/msg/PointField.msg",
    "sensor_msgs/PointCloud2" => "interfaces/sensor_msgs/msg/PointCloud2.msg",
    "sensor_msgs/Image" => "interfaces/sensor_msgs/msg/Image.msg",
    "grid_map_msgs/GridMapInfo" => "interfaces/grid_map_msgs/msg/GridMapInfo.msg",
    "grid_map_msgs/GridMap" => "interfaces/grid_map_msgs/msg/GridMap.msg",
    "std_msgs/ColorRGBA" => "interfaces/std_msgs/msg/ColorRGBA.msg",
    "geometry_msgs/Vector3" => "interfaces/geometry_msgs/msg/Vector3.msg",
    "sensor_msgs/CompressedImage" => "interfaces/sensor_msgs/msg/CompressedImage.msg",
    "visualization_msgs/UVCoordinate" => "interfaces/visualization_msgs/msg/UVCoordinate.msg",
    "visualization_msgs/MeshFile" => "interfaces/visualization_msgs/msg/MeshFile.msg",
    "visualization_msgs/Marker" => "interfaces/visualization_msgs/msg/Marker.msg",
    "visualization_msgs/MarkerArray" => "interfaces/visualization_msgs/msg/MarkerArray.msg",
    "service_msgs/ServiceEventInfo" => "interfaces/service_msgs/msg/ServiceEventInfo.msg",
    "geometry_msgs/Transform" => "interfaces/geometry_msgs/msg/Transform.msg",
    "geometry_msgs/TransformStamped" => "interfaces/geometry_msgs/msg/TransformStamped.msg",
    "tf2_msgs/TFMessage" => "interfaces/tf2_msgs/msg/TFMessage.msg",
    "rosgraph_msgs/Clock" => "interfaces/rosgraph_msgs/msg/Clock.msg",
    "bond/Status" => "interfaces/bond/msg/Status.msg",
    "lifecycle_msgs/State" => "interfaces/lifecycle_msgs/msg/State.msg",
    "lifecycle_msgs/Transition" => "interfaces/lifecycle_msgs/msg/Transition.msg",
    "lifecycle_msgs/TransitionDescription" => "interfaces/lifecycle_msgs/msg/TransitionDescription.msg",
    "lifecycle_msgs/TransitionEvent" => "interfaces/lifecycle_msgs/msg/TransitionEvent.msg",
    "nav2_msgs/CostmapMetaData" => "interfaces/nav2_msgs/msg/CostmapMetaData.msg",
    "nav2_msgs/Costmap" => "interfaces/nav2_msgs/msg/Costmap.msg",
    "gpu_planning/ApspStatus" => "msg/ApspStatus.msg",
    "gpu_planning/CellGraph" => "msg/CellGraph.msg",
    "gpu_planning/Neighbors" => "msg/Neighbors.msg",
    "gpu_planning/QuadricArrangement" => "msg/QuadricArrangement.msg",
    "gpu_planning/RuntimeStatus" => "msg/RuntimeStatus.msg",
    "gpu_planning/WeightedGraph" => "msg/WeightedGraph.msg",
};

/// Announces the REP-2016 type hash of every message type defined here in the USER_DATA of
/// this process's endpoints of that type (as rmw does from Iron on); once per process.
pub fn announce_type_hashes() -> Result<()> {
    static DONE: std::sync::OnceLock<std::result::Result<(), String>> = std::sync::OnceLock::new();
    DONE.get_or_init(|| {
        for (name, _) in MESSAGES {
            let (pkg, ty) = name.split_once('/').unwrap_or(("", name));
            let full = format!("{pkg}/msg/{ty}");
            let hash = definition(&full)
                .and_then(|d| crate::ros::type_hash::rihs01(&full, &d))
                .map_err(|e| e.to_string())?;
            crate::ros::type_hash::announce(&format!("{pkg}::msg::dds_::{ty}_"), &hash);
        }
        Ok(())
    })
    .clone()
    .map_err(|e| Error::invalid("type hashes", e))
}

/// Service definitions by `pkg/Service`.
const SERVICES: &[(&str, &str)] = definitions! {
    "nav_msgs/GetPlan" => "interfaces/nav_msgs/srv/GetPlan.srv",
    "gpu_planning/BuildCellGraph" => "srv/BuildCellGraph.srv",
    "gpu_planning/ExtractPolyline" => "srv/ExtractPolyline.srv",
    "gpu_planning/FindRotationPath" => "srv/FindRotationPath.srv",
    "gpu_planning/GetStatus" => "srv/GetStatus.srv",
    "gpu_planning/KNearest" => "srv/KNearest.srv",
    "gpu_planning/RadiusSearch" => "srv/RadiusSearch.srv",
    "gpu_planning/ShortestPath" => "srv/ShortestPath.srv",
};

const SEPARATOR: &str =
    "================================================================================";

/// The text of `pkg/Type`: a message, a service's `Name_Request` / `Name_Response` half, or
/// the `Name_Event` that rosidl generates for every service.
fn text(ty: &str) -> Option<String> {
    if let Some((_, t)) = MESSAGES.iter().find(|(n, _)| *n == ty) {
        return Some(t.to_string());
    }
    let (pkg, name) = ty.split_once('/')?;
    for (suffix, half) in [("_Request", 0), ("_Response", 1)] {
        if let Some(srv) = name.strip_suffix(suffix) {
            let full = format!("{pkg}/{srv}");
            let (_, t) = SERVICES.iter().find(|(n, _)| *n == full)?;
            let mut halves = t.splitn(2, "\n---");
            let req = halves.next()?;
            return Some(if half == 0 {
                req.to_string()
            } else {
                halves.next()?.trim_start_matches('\n').to_string()
            });
        }
    }
    let srv = name.strip_suffix("_Event")?;
    SERVICES
        .iter()
        .find(|(n, _)| *n == format!("{pkg}/{srv}"))?;
    // Package-qualified: readers resolve a bare name against `pkg/srv`, where no
    // `Name_Request` message lives.
    Some(format!(
        "service_msgs/ServiceEventInfo info\n{pkg}/{srv}_Request[<=1] request\n{pkg}/{srv}_Response[<=1] response\n"
    ))
}

/// `pkg/msg/Type` or `pkg/srv/Name_Event` (a topic type as rosbag2 names it) to `pkg/Type`.
fn short_name(type_name: &str) -> Result<String> {
    let parts: Vec<&str> = type_name.split('/').collect();
    match parts.as_slice() {
        [pkg, "msg" | "srv", name] => Ok(format!("{pkg}/{name}")),
        [pkg, name] => Ok(format!("{pkg}/{name}")),
        _ => Err(Error::invalid(
            "type",
            format!("'{type_name}' is not pkg/msg/Type"),
        )),
    }
}

/// The `ros2msg` schema of a topic type (`nav_msgs/msg/Path`, `gpu_planning/srv/KNearest_Event`).
pub fn definition(type_name: &str) -> Result<String> {
    let top = short_name(type_name)?;
    let unknown = || {
        Error::invalid(
            "type",
            format!("'{type_name}' is not a type this package knows"),
        )
    };
    let mut out = text(&top).ok_or_else(unknown)?;
    let mut seen = vec![top.clone()];
    let mut stack = dependencies(&top, &out)?;
    stack.reverse();
    while let Some(dep) = stack.pop() {
        if seen.contains(&dep) {
            continue;
        }
        let body = text(&dep).ok_or_else(|| {
            Error::invalid(
                "type",
                format!("'{type_name}' uses '{dep}', which has no definition here"),
            )
        })?;
        let mut more = dependencies(&dep, &body)?;
        more.reverse();
        stack.extend(more);
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!("{SEPARATOR}\nMSG: {dep}\n{body}"));
        seen.push(dep);
    }
    Ok(out)
}

/// The non-primitive types that `ty`'s fields use, in field order.
fn dependencies(ty: &str, body: &str) -> Result<Vec<String>> {
    let pkg = ty.split('/').next().unwrap_or_default();
    Ok(parse_msg(pkg, body)?
        .into_iter()
        .filter_map(|FieldDef { ty, .. }| {
            let base = ty.split('[').next().unwrap_or_default().to_string();
            base.contains('/').then_some(base)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_types_follow_once_each() {
        let d = definition("nav_msgs/msg/Path").unwrap();
        let sections: Vec<&str> = d.lines().filter_map(|l| l.strip_prefix("MSG: ")).collect();
        assert_eq!(
            sections,
            [
                "std_msgs/Header",
                "builtin_interfaces/Time",
                "geometry_msgs/PoseStamped",
                "geometry_msgs/Pose",
                "geometry_msgs/Point",
                "geometry_msgs/Quaternion",
            ]
        );
        assert!(d.starts_with(&text("nav_msgs/Path").unwrap()));
    }

    #[test]
    fn service_events_carry_both_halves() {
        let d = definition("gpu_planning/srv/KNearest_Event").unwrap();
        assert!(d.starts_with(
            "service_msgs/ServiceEventInfo info\ngpu_planning/KNearest_Request[<=1] request"
        ));
        for s in [
            "MSG: service_msgs/ServiceEventInfo",
            "MSG: gpu_planning/KNearest_Request",
            "MSG: gpu_planning/KNearest_Response",
            "MSG: gpu_planning/Neighbors",
        ] {
            assert!(d.contains(s), "{s} missing from\n{d}");
        }
        assert!(!d.contains("\n---"), "the halves are separate sections");
    }

    #[test]
    fn unknown_types_are_named() {
        let e = definition("sensor_msgs/msg/LaserScan").unwrap_err();
        assert!(e.to_string().contains("sensor_msgs/msg/LaserScan"));
        assert!(definition("nonsense").is_err());
    }
}
