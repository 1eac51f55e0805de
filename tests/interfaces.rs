//! The Rust message mirrors against the interface definitions: every file in msg/ and srv/
//! (this package's), and the standard ROS 2 definitions we mirror (vendored verbatim under
//! interfaces/), field by field; plus golden CDR bytes computed by hand.

use std::collections::BTreeMap;
use std::path::Path;

use gpu_planning::ros::idl::{parse_msg, parse_srv, FieldDef};
use gpu_planning::ros::msg::lifecycle_msgs as lc;
use gpu_planning::ros::msg::{
    builtin_interfaces as bi, geometry_msgs as gm, gpu_planning_msgs as ours, grid_map_msgs as gmm,
    nav_msgs as nav, rosgraph_msgs as rg, sensor_msgs as sm, std_msgs as stdm, RosMessage,
    RosService,
};

type Fields = fn() -> Vec<(&'static str, String)>;

fn msg<M: RosMessage>() -> (String, Fields) {
    (format!("{}/{}", M::PACKAGE, M::NAME), M::fields as Fields)
}

fn srv<S: RosService>() -> (String, Fields, Fields) {
    (
        format!("{}/{}", S::PACKAGE, S::NAME),
        <S::Request as RosMessage>::fields as Fields,
        <S::Response as RosMessage>::fields as Fields,
    )
}

fn ours_msgs() -> BTreeMap<String, Fields> {
    [
        msg::<ours::RuntimeStatus>(),
        msg::<ours::QuadricArrangement>(),
        msg::<ours::CellGraph>(),
        msg::<ours::Neighbors>(),
        msg::<ours::WeightedGraph>(),
        msg::<ours::ApspStatus>(),
    ]
    .into_iter()
    .collect()
}

fn ours_srvs() -> BTreeMap<String, (Fields, Fields)> {
    [
        srv::<ours::GetStatus>(),
        srv::<ours::BuildCellGraph>(),
        srv::<ours::FindRotationPath>(),
        srv::<ours::KNearest>(),
        srv::<ours::RadiusSearch>(),
        srv::<ours::ShortestPath>(),
        srv::<ours::ExtractPolyline>(),
    ]
    .into_iter()
    .map(|(n, a, b)| (n, (a, b)))
    .collect()
}

fn standard_msgs() -> BTreeMap<String, Fields> {
    [
        msg::<bi::Time>(),
        msg::<bi::Duration>(),
        msg::<stdm::Header>(),
        msg::<rg::Clock>(),
        msg::<stdm::MultiArrayDimension>(),
        msg::<stdm::MultiArrayLayout>(),
        msg::<stdm::Float32MultiArray>(),
        msg::<gm::Point>(),
        msg::<gm::Quaternion>(),
        msg::<gm::Pose>(),
        msg::<gm::PoseStamped>(),
        msg::<gm::PoseArray>(),
        msg::<nav::MapMetaData>(),
        msg::<nav::OccupancyGrid>(),
        msg::<nav::Path>(),
        msg::<gpu_planning::ros::msg::nav2_msgs::CostmapMetaData>(),
        msg::<gpu_planning::ros::msg::nav2_msgs::Costmap>(),
        msg::<sm::PointField>(),
        msg::<sm::PointCloud2>(),
        msg::<sm::Image>(),
        msg::<gmm::GridMapInfo>(),
        msg::<gmm::GridMap>(),
        msg::<gpu_planning::ros::msg::service_msgs::ServiceEventInfo>(),
        msg::<stdm::ColorRGBA>(),
        msg::<gm::Vector3>(),
        msg::<sm::CompressedImage>(),
        msg::<gpu_planning::ros::msg::visualization_msgs::UVCoordinate>(),
        msg::<gpu_planning::ros::msg::visualization_msgs::MeshFile>(),
        msg::<gpu_planning::ros::msg::visualization_msgs::Marker>(),
        msg::<gpu_planning::ros::msg::visualization_msgs::MarkerArray>(),
        msg::<gm::Transform>(),
        msg::<gm::TransformStamped>(),
        msg::<gpu_planning::ros::msg::tf2_msgs::TFMessage>(),
        msg::<lc::State>(),
        msg::<lc::Transition>(),
        msg::<lc::TransitionDescription>(),
        msg::<lc::TransitionEvent>(),
        msg::<gpu_planning::ros::msg::bond::Status>(),
        msg::<gpu_planning::ros::msg::unique_identifier_msgs::Uuid>(),
        msg::<gpu_planning::ros::msg::action_msgs::GoalInfo>(),
        msg::<gpu_planning::ros::msg::action_msgs::GoalStatus>(),
        msg::<gpu_planning::ros::msg::action_msgs::GoalStatusArray>(),
    ]
    .into_iter()
    .collect()
}

fn as_pairs(defs: &[FieldDef]) -> Vec<(String, String)> {
    defs.iter()
        .map(|f| (f.name.clone(), f.ty.clone()))
        .collect()
}

fn from_rust(f: Fields) -> Vec<(String, String)> {
    f().into_iter().map(|(n, t)| (n.to_string(), t)).collect()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn files(dir: &Path, ext: &str) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    v.sort();
    v
}

#[test]
fn every_package_msg_file_matches_its_rust_type() {
    let root = gpu_planning::testing::repo();
    let rust = ours_msgs();
    let found = files(&root.join("gpu_planning_msgs/msg"), "msg");
    assert_eq!(
        found.len(),
        rust.len(),
        "gpu_planning_msgs/msg/ files and Rust types differ in number"
    );
    for path in found {
        let name = format!(
            "gpu_planning_msgs/{}",
            path.file_stem().unwrap().to_str().unwrap()
        );
        let fields = rust
            .get(&name)
            .unwrap_or_else(|| panic!("no Rust type for {name}"));
        let defs = parse_msg("gpu_planning_msgs", &read(&path)).unwrap();
        assert_eq!(as_pairs(&defs), from_rust(*fields), "{name}");
    }
}

#[test]
fn every_package_srv_file_matches_its_rust_types() {
    let root = gpu_planning::testing::repo();
    let rust = ours_srvs();
    let found = files(&root.join("gpu_planning_msgs/srv"), "srv");
    assert_eq!(
        found.len(),
        rust.len(),
        "gpu_planning_msgs/srv/ files and Rust types differ in number"
    );
    for path in found {
        let name = format!(
            "gpu_planning_msgs/{}",
            path.file_stem().unwrap().to_str().unwrap()
        );
        let (req, resp) = rust
            .get(&name)
            .unwrap_or_else(|| panic!("no Rust type for {name}"));
        let (dreq, dresp) = parse_srv("gpu_planning_msgs", &read(&path)).unwrap();
        assert_eq!(as_pairs(&dreq), from_rust(*req), "{name} request");
        assert_eq!(as_pairs(&dresp), from_rust(*resp), "{name} response");
    }
}

#[test]
fn standard_mirrors_match_the_ros2_definitions() {
    let root = gpu_planning::testing::repo().join("interfaces");
    let rust = standard_msgs();
    let mut checked = 0;
    for pkg in std::fs::read_dir(&root).unwrap() {
        let pkg = pkg.unwrap().path();
        if !pkg.is_dir() {
            continue;
        }
        let pkg_name = pkg.file_name().unwrap().to_str().unwrap().to_string();
        // ros2-client's own types (rosout, parameters, ros_discovery_info): held for their
        // type hashes only, checked in src/bag/schema.rs against the hashes Jazzy publishes.
        if pkg_name == "rcl_interfaces" || pkg_name == "rmw_dds_common" {
            continue;
        }
        for path in files(&pkg.join("msg"), "msg") {
            let name = format!("{pkg_name}/{}", path.file_stem().unwrap().to_str().unwrap());
            let fields = rust
                .get(&name)
                .unwrap_or_else(|| panic!("no Rust type for {name}"));
            let defs = parse_msg(&pkg_name, &read(&path)).unwrap();
            assert_eq!(as_pairs(&defs), from_rust(*fields), "{name}");
            checked += 1;
        }
    }
    assert_eq!(
        checked,
        rust.len(),
        "every standard mirror has a vendored definition"
    );
    let (req, resp) = parse_srv("nav_msgs", &read(&root.join("nav_msgs/srv/GetPlan.srv"))).unwrap();
    assert_eq!(as_pairs(&req), from_rust(nav::GetPlanRequest::fields));
    assert_eq!(as_pairs(&resp), from_rust(nav::GetPlanResponse::fields));
    // Services: every vendored .srv against its request and response mirrors (an empty
    // request is rosidl's one placeholder byte).
    let srvs = [
        srv::<nav::GetPlan>(),
        srv::<lc::ChangeState>(),
        srv::<lc::GetState>(),
        srv::<lc::GetAvailableStates>(),
        srv::<lc::GetAvailableTransitions>(),
        srv::<gpu_planning::ros::msg::action_msgs::CancelGoal>(),
    ];
    let placeholder = vec![(
        "structure_needs_at_least_one_member".to_string(),
        "uint8".to_string(),
    )];
    let mut vendored = 0;
    for pkg in ["nav_msgs", "lifecycle_msgs", "action_msgs"] {
        for path in files(&root.join(pkg).join("srv"), "srv") {
            let name = format!("{pkg}/{}", path.file_stem().unwrap().to_str().unwrap());
            let (_, req, resp) = srvs
                .iter()
                .find(|(n, _, _)| *n == name)
                .unwrap_or_else(|| panic!("no Rust type for {name}"));
            let (dreq, dresp) = parse_srv(pkg, &read(&path)).unwrap();
            let want_req = if dreq.is_empty() {
                placeholder.clone()
            } else {
                as_pairs(&dreq)
            };
            assert_eq!(want_req, from_rust(*req), "{name} request");
            assert_eq!(as_pairs(&dresp), from_rust(*resp), "{name} response");
            vendored += 1;
        }
    }
    assert_eq!(
        vendored,
        srvs.len(),
        "every service mirror has a vendored definition"
    );
}

/// nav2's planner actions, both distros: goal, result and feedback of each `.action` file under
/// interfaces/nav2_msgs/action/{humble,jazzy}/ against the mirrors (an empty feedback is
/// rosidl's one placeholder byte).
#[test]
fn nav2_action_mirrors_match_humble_and_jazzy() {
    use gpu_planning::ros::msg::nav2_msgs::{
        humble, jazzy, ComputePathThroughPosesGoal, ComputePathToPoseGoal, EmptyFeedback,
    };
    let root = gpu_planning::testing::repo().join("interfaces/nav2_msgs/action");
    let cases: [(&str, &str, Fields, Fields); 4] = [
        (
            "humble",
            "ComputePathToPose",
            ComputePathToPoseGoal::fields,
            humble::ComputePathToPoseResult::fields,
        ),
        (
            "humble",
            "ComputePathThroughPoses",
            ComputePathThroughPosesGoal::fields,
            humble::ComputePathThroughPosesResult::fields,
        ),
        (
            "jazzy",
            "ComputePathToPose",
            ComputePathToPoseGoal::fields,
            jazzy::ComputePathToPoseResult::fields,
        ),
        (
            "jazzy",
            "ComputePathThroughPoses",
            ComputePathThroughPosesGoal::fields,
            jazzy::ComputePathThroughPosesResult::fields,
        ),
    ];
    for (distro, name, goal, result) in cases {
        let text = read(&root.join(distro).join(format!("{name}.action")));
        let parts: Vec<&str> = text.split("\n---").collect();
        assert_eq!(parts.len(), 3, "{distro}/{name}: goal, result, feedback");
        let goal_defs = parse_msg("nav2_msgs", parts[0]).unwrap();
        assert_eq!(
            as_pairs(&goal_defs),
            from_rust(goal),
            "{distro}/{name} goal"
        );
        let result_defs = parse_msg("nav2_msgs", parts[1]).unwrap();
        assert_eq!(
            as_pairs(&result_defs),
            from_rust(result),
            "{distro}/{name} result"
        );
        let feedback = parse_msg("nav2_msgs", parts[2]).unwrap();
        assert!(
            feedback.is_empty(),
            "{distro}/{name}: nav2's feedback is empty"
        );
        assert_eq!(
            from_rust(EmptyFeedback::fields),
            vec![(
                "structure_needs_at_least_one_member".to_string(),
                "uint8".to_string()
            )]
        );
    }
    // The distros differ exactly by Jazzy's two error fields.
    let (h, j) = (
        from_rust(humble::ComputePathToPoseResult::fields),
        from_rust(jazzy::ComputePathToPoseResult::fields),
    );
    assert_eq!(&j[..h.len()], &h[..]);
    assert_eq!(
        &j[h.len()..],
        &[
            ("error_code".to_string(), "uint16".to_string()),
            ("error_msg".to_string(), "string".to_string())
        ]
    );
}

// ---- golden CDR (little endian, XCDR1 as ROS 2 uses), bytes worked out from the rules:
// primitives aligned to their size relative to the payload start, strings as u32 length
// (including the NUL) + bytes + NUL, sequences as u32 count + elements.

fn cdr<T: serde::Serialize>(v: &T) -> Vec<u8> {
    ros2_client::dds::rustdds::cdr_encoding::to_vec::<T, byteorder::LittleEndian>(v).unwrap()
}

fn decode<T: serde::de::DeserializeOwned>(b: &[u8]) -> T {
    ros2_client::dds::rustdds::cdr_encoding::from_bytes::<T, byteorder::LittleEndian>(b)
        .unwrap()
        .0
}

#[test]
fn header_golden_bytes() {
    let h = stdm::Header {
        stamp: bi::Time { sec: 1, nanosec: 2 },
        frame_id: "map".into(),
    };
    let expected = [
        1, 0, 0, 0, // sec
        2, 0, 0, 0, // nanosec
        4, 0, 0, 0, b'm', b'a', b'p', 0, // "map" with NUL
    ];
    assert_eq!(cdr(&h), expected);
    assert_eq!(decode::<stdm::Header>(&expected), h);
}

#[test]
fn occupancy_grid_golden_bytes() {
    let g = nav::OccupancyGrid {
        header: stdm::Header {
            stamp: bi::Time { sec: 7, nanosec: 0 },
            frame_id: "m".into(),
        },
        info: nav::MapMetaData {
            map_load_time: bi::Time { sec: 0, nanosec: 9 },
            resolution: 0.5,
            width: 2,
            height: 1,
            origin: gm::Pose {
                position: gm::Point {
                    x: 1.0,
                    y: 0.0,
                    z: 0.0,
                },
                orientation: gm::Quaternion::identity(),
            },
        },
        data: vec![-1, 100],
    };
    let mut e: Vec<u8> = Vec::new();
    e.extend([7, 0, 0, 0, 0, 0, 0, 0]); // stamp
    e.extend([2, 0, 0, 0, b'm', 0]); // frame_id "m" (offset 8..14)
    e.extend([0, 0]); // pad to 16 for map_load_time.sec (i32, 4-aligned)
    e.extend([0, 0, 0, 0, 9, 0, 0, 0]); // map_load_time (16..24)
    e.extend(0.5f32.to_le_bytes()); // resolution (24..28)
    e.extend([2, 0, 0, 0, 1, 0, 0, 0]); // width, height (28..36)
    e.extend([0, 0, 0, 0]); // pad to 40 for f64
    for v in [1.0f64, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0] {
        e.extend(v.to_le_bytes()); // position, orientation (40..96)
    }
    e.extend([2, 0, 0, 0, 0xff, 100]); // data: count 2, then int8s
    assert_eq!(cdr(&g), e);
    assert_eq!(decode::<nav::OccupancyGrid>(&e), g);
}

#[test]
fn point_field_and_empty_sequences_golden_bytes() {
    let c = sm::PointCloud2 {
        header: stdm::Header::default(),
        height: 1,
        width: 0,
        fields: vec![sm::PointField {
            name: "x".into(),
            offset: 0,
            datatype: sm::PointField::FLOAT32,
            count: 1,
        }],
        is_bigendian: false,
        point_step: 12,
        row_step: 0,
        data: vec![],
        is_dense: true,
    };
    let mut e: Vec<u8> = Vec::new();
    e.extend([0; 8]); // stamp
    e.extend([1, 0, 0, 0, 0]); // empty frame_id: length 1, just the NUL (8..13)
    e.extend([0, 0, 0]); // pad to 16
    e.extend([1, 0, 0, 0, 0, 0, 0, 0]); // height, width (16..24)
    e.extend([1, 0, 0, 0]); // one field (24..28)
    e.extend([2, 0, 0, 0, b'x', 0]); // name (28..34)
    e.extend([0, 0]); // pad to 36
    e.extend([0, 0, 0, 0]); // offset (36..40)
    e.push(7); // datatype (40)
    e.extend([0, 0, 0]); // pad to 44
    e.extend([1, 0, 0, 0]); // count (44..48)
    e.push(0); // is_bigendian (48)
    e.extend([0, 0, 0]); // pad to 52
    e.extend([12, 0, 0, 0, 0, 0, 0, 0]); // point_step, row_step (52..60)
    e.extend([0, 0, 0, 0]); // empty data (60..64)
    e.push(1); // is_dense
    assert_eq!(cdr(&c), e);
    assert_eq!(decode::<sm::PointCloud2>(&e), c);
}
