//! `ros2msg` schemas, as rosbag2 stores them in MCAP: the type's own definition, then every
//! type it uses, each after a line of 80 `=` and `MSG: pkg/Type`. Independent readers (rosbags,
//! Foxglove, `ros2 bag`) decode messages from these texts alone, so a bag needs no ROS install
//! to be read.

use crate::error::{Error, Result};
use crate::ros::idl::{parse_msg, srv_parts, FieldDef, SEPARATOR};

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
    "unique_identifier_msgs/UUID" => "interfaces/unique_identifier_msgs/msg/UUID.msg",
    "action_msgs/GoalInfo" => "interfaces/action_msgs/msg/GoalInfo.msg",
    "action_msgs/GoalStatus" => "interfaces/action_msgs/msg/GoalStatus.msg",
    "action_msgs/GoalStatusArray" => "interfaces/action_msgs/msg/GoalStatusArray.msg",
    "rcl_interfaces/Log" => "interfaces/rcl_interfaces/msg/Log.msg",
    "rmw_dds_common/Gid" => "interfaces/rmw_dds_common/msg/Gid.msg",
    "rmw_dds_common/NodeEntitiesInfo" => "interfaces/rmw_dds_common/msg/NodeEntitiesInfo.msg",
    "rmw_dds_common/ParticipantEntitiesInfo" => "interfaces/rmw_dds_common/msg/ParticipantEntitiesInfo.msg",
    "rcl_interfaces/ParameterValue" => "interfaces/rcl_interfaces/msg/ParameterValue.msg",
    "rcl_interfaces/Parameter" => "interfaces/rcl_interfaces/msg/Parameter.msg",
    "rcl_interfaces/ParameterEvent" => "interfaces/rcl_interfaces/msg/ParameterEvent.msg",
    "rcl_interfaces/SetParametersResult" => "interfaces/rcl_interfaces/msg/SetParametersResult.msg",
    "rcl_interfaces/ListParametersResult" => "interfaces/rcl_interfaces/msg/ListParametersResult.msg",
    "rcl_interfaces/FloatingPointRange" => "interfaces/rcl_interfaces/msg/FloatingPointRange.msg",
    "rcl_interfaces/IntegerRange" => "interfaces/rcl_interfaces/msg/IntegerRange.msg",
    "rcl_interfaces/ParameterDescriptor" => "interfaces/rcl_interfaces/msg/ParameterDescriptor.msg",
    "gpu_planning_msgs/ApspStatus" => "gpu_planning_msgs/msg/ApspStatus.msg",
    "gpu_planning_msgs/CellGraph" => "gpu_planning_msgs/msg/CellGraph.msg",
    "gpu_planning_msgs/Neighbors" => "gpu_planning_msgs/msg/Neighbors.msg",
    "gpu_planning_msgs/QuadricArrangement" => "gpu_planning_msgs/msg/QuadricArrangement.msg",
    "gpu_planning_msgs/RuntimeStatus" => "gpu_planning_msgs/msg/RuntimeStatus.msg",
    "gpu_planning_msgs/WeightedGraph" => "gpu_planning_msgs/msg/WeightedGraph.msg",
};

/// Service definitions by `pkg/Service`.
const SERVICES: &[(&str, &str)] = definitions! {
    "nav_msgs/GetPlan" => "interfaces/nav_msgs/srv/GetPlan.srv",
    "gpu_planning_msgs/BuildCellGraph" => "gpu_planning_msgs/srv/BuildCellGraph.srv",
    "gpu_planning_msgs/ExtractPolyline" => "gpu_planning_msgs/srv/ExtractPolyline.srv",
    "gpu_planning_msgs/FindRotationPath" => "gpu_planning_msgs/srv/FindRotationPath.srv",
    "gpu_planning_msgs/GetStatus" => "gpu_planning_msgs/srv/GetStatus.srv",
    "gpu_planning_msgs/KNearest" => "gpu_planning_msgs/srv/KNearest.srv",
    "gpu_planning_msgs/RadiusSearch" => "gpu_planning_msgs/srv/RadiusSearch.srv",
    "gpu_planning_msgs/ShortestPath" => "gpu_planning_msgs/srv/ShortestPath.srv",
    "lifecycle_msgs/ChangeState" => "interfaces/lifecycle_msgs/srv/ChangeState.srv",
    "lifecycle_msgs/GetAvailableStates" => "interfaces/lifecycle_msgs/srv/GetAvailableStates.srv",
    "lifecycle_msgs/GetAvailableTransitions" => "interfaces/lifecycle_msgs/srv/GetAvailableTransitions.srv",
    "lifecycle_msgs/GetState" => "interfaces/lifecycle_msgs/srv/GetState.srv",
    "action_msgs/CancelGoal" => "interfaces/action_msgs/srv/CancelGoal.srv",
    "rcl_interfaces/GetParameters" => "interfaces/rcl_interfaces/srv/GetParameters.srv",
    "rcl_interfaces/GetParameterTypes" => "interfaces/rcl_interfaces/srv/GetParameterTypes.srv",
    "rcl_interfaces/SetParameters" => "interfaces/rcl_interfaces/srv/SetParameters.srv",
    "rcl_interfaces/SetParametersAtomically" => "interfaces/rcl_interfaces/srv/SetParametersAtomically.srv",
    "rcl_interfaces/ListParameters" => "interfaces/rcl_interfaces/srv/ListParameters.srv",
    "rcl_interfaces/DescribeParameters" => "interfaces/rcl_interfaces/srv/DescribeParameters.srv",
};

/// Action definitions by `pkg/Action` (Jazzy's: type hashes exist from Iron on).
const ACTIONS: &[(&str, &str)] = definitions! {
    "nav2_msgs/ComputePathToPose" => "interfaces/nav2_msgs/action/jazzy/ComputePathToPose.action",
    "nav2_msgs/ComputePathThroughPoses" => "interfaces/nav2_msgs/action/jazzy/ComputePathThroughPoses.action",
};

/// The text of message `pkg/Type`.
fn text(ty: &str) -> Option<String> {
    MESSAGES
        .iter()
        .find(|(n, _)| *n == ty)
        .map(|(_, t)| t.to_string())
}

/// The `.srv` text of `pkg/Service`.
fn service_text(service: &str) -> Option<&'static str> {
    SERVICES
        .iter()
        .find(|(n, _)| *n == service)
        .map(|(_, t)| *t)
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

/// The `ros2msg` schema of a topic type, as rosbag2 stores it: for a message
/// (`nav_msgs/msg/Path`) its definition then every type it uses; for a service event
/// (`gpu_planning_msgs/srv/KNearest_Event`) the `SRV:` form rosbag2 writes from Jazzy on (a
/// separator, `SRV: pkg/srv/Name`, the `.srv` text, then the messages it uses; readers know
/// the event's own layout).
pub fn definition(type_name: &str) -> Result<String> {
    let top = short_name(type_name)?;
    let unknown = || {
        Error::invalid(
            "type",
            format!("'{type_name}' is not a type this package knows"),
        )
    };
    if let Some(service) = top.strip_suffix("_Event") {
        let srv = service_text(service).ok_or_else(unknown)?;
        let (pkg, name) = service.split_once('/').ok_or_else(unknown)?;
        let mut roots = Vec::new();
        for half in srv_parts(srv) {
            roots.extend(dependencies(service, &half)?);
        }
        let out = format!("{SEPARATOR}\nSRV: {pkg}/srv/{name}\n{srv}");
        return with_dependencies(type_name, out, Vec::new(), roots);
    }
    let body = text(&top).ok_or_else(unknown)?;
    let roots = dependencies(&top, &body)?;
    with_dependencies(type_name, body, vec![top], roots)
}

/// `out` followed by each type of `roots` and every type those use, once each, after a
/// separator and `MSG: pkg/Type`; types in `seen` are left out.
fn with_dependencies(
    what: &str,
    mut out: String,
    mut seen: Vec<String>,
    roots: Vec<String>,
) -> Result<String> {
    let mut stack = roots;
    stack.reverse();
    while let Some(dep) = stack.pop() {
        if seen.contains(&dep) {
            continue;
        }
        let body = text(&dep).ok_or_else(|| {
            Error::invalid(
                "type",
                format!("'{what}' uses '{dep}', which has no definition here"),
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

/// The text whose RIHS01 hash (REP-2016) is a service's: `service` (`pkg/srv/Name`, or an
/// action's `pkg/action/Name_SendGoal`) as rosidl describes it, a struct of its request,
/// response and event messages, then every type those use. `parts` are definitions the
/// halves use that are not messages of their own (an action's goal, result and feedback).
fn service_hash_text(
    service: &str,
    request: &str,
    response: &str,
    parts: &[(String, String)],
) -> Result<String> {
    let (req, resp, event) = (
        format!("{service}_Request"),
        format!("{service}_Response"),
        format!("{service}_Event"),
    );
    let event_body =
        format!("service_msgs/ServiceEventInfo info\n{req}[<=1] request\n{resp}[<=1] response\n");
    let mut sections = vec![
        (req.clone(), request.to_string()),
        (resp.clone(), response.to_string()),
        (event.clone(), event_body),
    ];
    sections.extend(parts.iter().cloned());
    let mut out =
        format!("{req} request_message\n{resp} response_message\n{event} event_message\n");
    let mut roots = vec!["service_msgs/ServiceEventInfo".to_string()];
    for (name, body) in &sections {
        out.push_str(&format!("{SEPARATOR}\nMSG: {name}\n{body}"));
        if !out.ends_with('\n') {
            out.push('\n');
        }
        roots.extend(dependencies(name, body)?);
    }
    let seen = sections.into_iter().map(|(n, _)| n).collect();
    with_dependencies(service, out, seen, roots)
}

/// Announces the REP-2016 type hash of every message, service and action this package
/// defines or serves (its own, rosout, parameter events and services, lifecycle, nav2's
/// planner actions) in the USER_DATA of this process's endpoints of that type, as rmw does
/// from Iron on; once per process.
pub fn announce_type_hashes() -> Result<()> {
    static DONE: std::sync::OnceLock<std::result::Result<(), String>> = std::sync::OnceLock::new();
    DONE.get_or_init(|| {
        for (dds, hash) in type_hashes().map_err(|e| e.to_string())? {
            crate::ros::type_hash::announce(&dds, &hash);
        }
        Ok(())
    })
    .clone()
    .map_err(|e| Error::invalid("type hashes", e))
}

/// (DDS type name, RIHS01 hash) of every type [`announce_type_hashes`] announces: a service's
/// request and reply types both carry the service's hash, as rmw gives them.
pub fn type_hashes() -> Result<Vec<(String, String)>> {
    use crate::ros::type_hash::rihs01;
    let mut out = Vec::new();
    for (name, _) in MESSAGES {
        let (pkg, ty) = name.split_once('/').unwrap_or(("", name));
        let full = format!("{pkg}/msg/{ty}");
        let hash = rihs01(&full, &definition(&full)?)?;
        out.push((format!("{pkg}::msg::dds_::{ty}_"), hash));
    }
    let mut service = |kind: &str, pkg: &str, name: &str, text: String| -> Result<()> {
        let full = format!("{pkg}/{kind}/{name}");
        let hash = rihs01(&full, &text)?;
        for half in ["Request", "Response"] {
            out.push((format!("{pkg}::{kind}::dds_::{name}_{half}_"), hash.clone()));
        }
        Ok(())
    };
    for (name, srv) in SERVICES {
        let (pkg, ty) = name.split_once('/').unwrap_or(("", name));
        let halves = srv_parts(srv);
        let [request, response] = &halves[..] else {
            return Err(Error::invalid(*name, "a .srv is request --- response"));
        };
        let full = format!("{pkg}/srv/{ty}");
        service(
            "srv",
            pkg,
            ty,
            service_hash_text(&full, request, response, &[])?,
        )?;
    }
    let mut feedback = Vec::new();
    for (name, action) in ACTIONS {
        let (pkg, ty) = name.split_once('/').unwrap_or(("", name));
        let parts = srv_parts(action);
        let [goal, result, fb] = &parts[..] else {
            return Err(Error::invalid(
                *name,
                "an .action is goal --- result --- feedback",
            ));
        };
        let base = format!("{pkg}/action/{ty}");
        let part = |suffix: &str, body: &str| vec![(format!("{base}_{suffix}"), body.to_string())];
        let send_goal = service_hash_text(
            &format!("{base}_SendGoal"),
            &format!("unique_identifier_msgs/UUID goal_id\n{base}_Goal goal\n"),
            "bool accepted\nbuiltin_interfaces/Time stamp\n",
            &part("Goal", goal),
        )?;
        service("action", pkg, &format!("{ty}_SendGoal"), send_goal)?;
        let get_result = service_hash_text(
            &format!("{base}_GetResult"),
            "unique_identifier_msgs/UUID goal_id\n",
            &format!("int8 status\n{base}_Result result\n"),
            &part("Result", result),
        )?;
        service("action", pkg, &format!("{ty}_GetResult"), get_result)?;
        let message = format!("{base}_FeedbackMessage");
        let text = with_dependencies(
            &message,
            format!(
                "unique_identifier_msgs/UUID goal_id\n{base}_Feedback feedback\n{SEPARATOR}\nMSG: {base}_Feedback\n{fb}"
            ),
            vec![format!("{base}_Feedback")],
            [
                vec!["unique_identifier_msgs/UUID".to_string()],
                dependencies(&base, fb)?,
            ]
            .concat(),
        )?;
        feedback.push((
            format!("{pkg}::action::dds_::{ty}_FeedbackMessage_"),
            rihs01(&message, &text)?,
        ));
    }
    out.extend(feedback);
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
    fn service_events_are_in_rosbag2s_srv_form() {
        let d = definition("gpu_planning_msgs/srv/KNearest_Event").unwrap();
        let srv = include_str!("../../gpu_planning_msgs/srv/KNearest.srv");
        assert!(d.starts_with(&format!(
            "{SEPARATOR}\nSRV: gpu_planning_msgs/srv/KNearest\n{srv}"
        )));
        assert!(d.contains(&format!("{SEPARATOR}\nMSG: gpu_planning_msgs/Neighbors\n")));
        assert!(
            !d.contains("ServiceEventInfo"),
            "rosbag2 leaves the event's info out"
        );
        // Readers turn it back into the event's plain form.
        let plain =
            crate::ros::idl::service_event_as_msg("gpu_planning_msgs/srv/KNearest_Event", &d)
                .unwrap()
                .unwrap();
        assert!(plain.starts_with(
            "service_msgs/ServiceEventInfo info\ngpu_planning_msgs/KNearest_Request[<=1] request"
        ));
        for s in [
            "MSG: service_msgs/ServiceEventInfo",
            "MSG: gpu_planning_msgs/KNearest_Request",
            "MSG: gpu_planning_msgs/KNearest_Response",
            "MSG: gpu_planning_msgs/Neighbors",
            "MSG: builtin_interfaces/Time",
        ] {
            assert_eq!(plain.matches(s).count(), 1, "{s} in\n{plain}");
        }
    }

    /// Jazzy's published hashes (its `share/<pkg>/**/*.json`, as ros2-client's Zenoh table
    /// lists them), against ours from the definitions.
    #[test]
    fn hashes_match_jazzys_for_messages_services_and_actions() {
        let hashes: std::collections::HashMap<String, String> =
            type_hashes().unwrap().into_iter().collect();
        for (dds, want) in [
            (
                "rcl_interfaces::msg::dds_::Log_",
                "e28ce254ca8abc06abf92773b74602cdbf116ed34fbaf294fb9f81da9f318eac",
            ),
            (
                // ros_discovery_info's type: without it in USER_DATA, rmw_cyclonedds logs
                // "Failed to parse type hash for topic 'ros_discovery_info'" for every peer.
                "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_",
                "91a0593bacdcc50ea9bdcf849a938b128412cc1ea821245c663bcd26f83c295e",
            ),
            (
                "rcl_interfaces::msg::dds_::ParameterEvent_",
                "043e627780fcad87a22d225bc2a037361dba713fca6a6b9f4b869a5aa0393204",
            ),
            (
                "action_msgs::msg::dds_::GoalStatusArray_",
                "6c1684b00f177d37438febe6e709fc4e2b0d4248dca4854946f9ed8b30cda83e",
            ),
            (
                "action_msgs::srv::dds_::CancelGoal_Request_",
                "573d8b0a534451d7bc2ac8c5ffde8ac14b8593b7001175d0cd6516dcbeb8689a",
            ),
            (
                "action_msgs::srv::dds_::CancelGoal_Response_",
                "573d8b0a534451d7bc2ac8c5ffde8ac14b8593b7001175d0cd6516dcbeb8689a",
            ),
            (
                "rcl_interfaces::srv::dds_::GetParameters_Request_",
                "bf9803d5c74cf989a5de3e0c2e99444599a627c7ff75f97b8c05b01003675cbc",
            ),
            (
                "rcl_interfaces::srv::dds_::GetParameterTypes_Request_",
                "da199c878688b3e530bdfe3ca8f74cb9fa0c303101e980a9e8f260e25e1c80ca",
            ),
            (
                "rcl_interfaces::srv::dds_::SetParameters_Request_",
                "56eed9a67e169f9cb6c1f987bc88f868c14a8fc9f743a263bc734c154015d7e0",
            ),
            (
                "rcl_interfaces::srv::dds_::SetParametersAtomically_Request_",
                "0e192ef259c07fc3c07a13191d27002222e65e00ccec653ca05e856f79285fcd",
            ),
            (
                "rcl_interfaces::srv::dds_::ListParameters_Request_",
                "3e6062bfbb27bfb8730d4cef2558221f51a11646d78e7bb30a1e83afac3aad9d",
            ),
            (
                "rcl_interfaces::srv::dds_::DescribeParameters_Response_",
                "845b484d71eb0673dae682f2e3ba3c4851a65a3dcfb97bddd82c5b57e91e4cff",
            ),
        ] {
            assert_eq!(
                hashes.get(dds).map(String::as_str),
                Some(&*format!("RIHS01_{want}")),
                "{dds}"
            );
        }
        // Every service and action part of ours has one too.
        for dds in [
            "nav_msgs::srv::dds_::GetPlan_Request_",
            "gpu_planning_msgs::srv::dds_::KNearest_Response_",
            "lifecycle_msgs::srv::dds_::ChangeState_Request_",
            "nav2_msgs::action::dds_::ComputePathToPose_SendGoal_Request_",
            "nav2_msgs::action::dds_::ComputePathToPose_GetResult_Response_",
            "nav2_msgs::action::dds_::ComputePathThroughPoses_FeedbackMessage_",
        ] {
            assert!(
                hashes.get(dds).is_some_and(|h| h.starts_with("RIHS01_")),
                "{dds}"
            );
        }
    }

    /// An action's parts hash as rosidl describes them: checked on action_tutorials'
    /// Fibonacci against Jazzy's published hashes.
    #[test]
    fn action_parts_hash_as_jazzys() {
        use crate::ros::type_hash::rihs01;
        let base = "action_tutorials_interfaces/action/Fibonacci";
        let send_goal = service_hash_text(
            &format!("{base}_SendGoal"),
            &format!("unique_identifier_msgs/UUID goal_id\n{base}_Goal goal\n"),
            "bool accepted\nbuiltin_interfaces/Time stamp\n",
            &[(format!("{base}_Goal"), "int32 order\n".into())],
        )
        .unwrap();
        assert_eq!(
            rihs01(&format!("{base}_SendGoal"), &send_goal).unwrap(),
            "RIHS01_a0603060ed69fe2dfbd1a6f3b982a1749957ef346e4a4d2b311a05e305ec37bb"
        );
        let get_result = service_hash_text(
            &format!("{base}_GetResult"),
            "unique_identifier_msgs/UUID goal_id\n",
            &format!("int8 status\n{base}_Result result\n"),
            &[(format!("{base}_Result"), "int32[] sequence\n".into())],
        )
        .unwrap();
        assert_eq!(
            rihs01(&format!("{base}_GetResult"), &get_result).unwrap(),
            "RIHS01_8b47e383f1e31f6d8df6417ab54957e7d5ea24dad315646ad711ac3fdea81d58"
        );
        let add = service_hash_text(
            "example_interfaces/srv/AddTwoInts",
            "int64 a\nint64 b\n",
            "int64 sum\n",
            &[],
        )
        .unwrap();
        assert_eq!(
            rihs01("example_interfaces/srv/AddTwoInts", &add).unwrap(),
            "RIHS01_e118de6bf5eeb66a2491b5bda11202e7b68f198d6f67922cf30364858239c81a"
        );
    }

    #[test]
    fn unknown_types_are_named() {
        let e = definition("sensor_msgs/msg/LaserScan").unwrap_err();
        assert!(e.to_string().contains("sensor_msgs/msg/LaserScan"));
        assert!(definition("nonsense").is_err());
    }
}
