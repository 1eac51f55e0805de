//! Every service of every node, called from an independent client: Eclipse Cyclone DDS
//! (`tests/interop/cyclone_services.py`, Python `cyclonedds`, types built from the ROS
//! definitions by rosbags, rmw_cyclonedds's request header) publishes a map, a graph, an image
//! and a cloud, and calls `get_plan`, `shortest_path`, `extract`, `build`, `find_path`, `knn`,
//! `radius`, `get_status`, lee_planner's four lifecycle services and its ComputePathToPose
//! action (send_goal, then get_result), on the default `service_mapping` (auto: the nodes see
//! a Cyclone writer and read its header). Each reply comes back as the CDR the peer decoded
//! and is checked here against the CPU references. Skips when python3, cyclonedds or rosbags
//! is missing, unless GPU_PLANNING_REQUIRE_INTEROP=1 (CI).

use std::process::Command;

use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use gpu_planning::apsp::synth::random_graph;
use gpu_planning::apsp::Weights;
use gpu_planning::cellgraph::samples::shoemake;
use gpu_planning::cellgraph::{Algorithm, Arrangement};
use gpu_planning::compute::Backend;
use gpu_planning::kdtree::{Metric, Points};
use gpu_planning::lee::{Connectivity, Grid, Planner};
use gpu_planning::polyline::{Gradient, Gray, Problem};
use gpu_planning::ros::msg::action_msgs::{GetResultResponse, GoalState, SendGoalResponse};
use gpu_planning::ros::msg::gpu_planning_msgs as gp;
use gpu_planning::ros::msg::lifecycle_msgs as lc;
use gpu_planning::ros::msg::nav2_msgs::jazzy;
use gpu_planning::ros::msg::nav_msgs::GetPlanResponse;
use gpu_planning::ros::{ParamsFile, RosArgs, RosRuntime};

use crate::common;
use crate::nearest_neighbors_node::rows;

fn pose(x: f64, y: f64) -> Value {
    json!({"header": {"frame_id": "map"}, "pose": {"position": {"x": x, "y": y},
           "orientation": {"w": 1.0}}})
}

/// One reply, decoded from the CDR the peer re-serialized.
fn reply<T: DeserializeOwned>(line: &Value, service: &str) -> T {
    assert_eq!(line["service"], service, "{line}");
    let hex = line["response"].as_str().unwrap();
    let bytes: Vec<u8> = (0..hex.len() / 2)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    gpu_planning::bag::cdr::decode(service, &bytes).unwrap()
}

#[test]
fn cyclone_client_calls_every_service_of_every_node() {
    if let Err(why) = gpu_planning::testing::python_imports("cyclonedds.domain, rosbags.typesys") {
        gpu_planning::testing::peer_missing("cyclone services", &why);
        return;
    }
    let script = gpu_planning::testing::repo().join("tests/interop/cyclone_services.py");
    calls_every_service_of_every_node("cyclone", |job| {
        Command::new("python3")
            .arg(&script)
            .arg(job)
            .env(gpu_planning::env::REPO.name, gpu_planning::testing::repo())
            .output()
            .expect("python3 runs")
    });
}

/// Starts every node (default parameters but a few sizes), has `peer` (given the job file)
/// publish the inputs and call every service, and checks each reply it printed against the
/// CPU references.
pub(crate) fn calls_every_service_of_every_node(
    peer_name: &str,
    peer: impl FnOnce(&std::path::Path) -> std::process::Output,
) {
    let domain = common::unique_domain();
    let (args, _) = RosArgs::parse(&[
        "--ros-args",
        "-p",
        "lee_planner:connectivity:=8",
        "-p",
        "cell_graph:sample_count:=500",
    ])
    .unwrap();
    let rt = RosRuntime::new(args, ParamsFile::default(), Some(domain)).unwrap();
    gpu_planning::nodes::start_all(&rt).unwrap();
    let _bg = common::run_in_background(&rt);
    let seed = gpu_planning::compute::testing::seed(0xc7c);
    let mut rng = gpu_planning::rng::XorShift::new(seed);
    let goal_id: Vec<u8> = (0..16).map(|_| rng.next_u64() as u8).collect();

    // lee_planner: 9 x 6 cells of 0.5 m at (1, 2), a wall in column 4 open at the top row.
    let (w, h) = (9u32, 6u32);
    let mut cells = vec![0i8; (w * h) as usize];
    for y in 0..h - 1 {
        cells[(y * w + 4) as usize] = 100;
    }
    cells[(2 * w + 7) as usize] = -1;
    let map = json!({"header": {"frame_id": "map"}, "info": {"resolution": 0.5, "width": w,
        "height": h, "origin": {"position": {"x": 1.0, "y": 2.0}, "orientation": {"w": 1.0}}},
        "data": cells});
    let grid = Grid::from_occupancy(w, h, &cells, 65, false, Connectivity::Eight).unwrap();
    let lee = Planner::new(&Backend::Cpu, grid, gpu_planning::lee::Config::default())
        .unwrap()
        .plan((0, 0), (8, 0), true)
        .unwrap();
    assert!(lee.reachable);

    // apsp: a random graph with negative edges, 40 pairs.
    let g = random_graph(60, 0.15, 0, 6, 20, seed);
    let Weights::Int(weights) = &g.weights else {
        unreachable!()
    };
    let graph = json!({"header": {"frame_id": "graph"}, "vertex_count": g.vertices,
        "edge_from": g.from, "edge_to": g.to, "integer_weights": weights});
    let apsp = gpu_planning::apsp::solve(&Backend::Cpu, &g, &gpu_planning::apsp::Config::default())
        .unwrap();
    let n = g.vertices;
    let (sources, targets): (Vec<u32>, Vec<u32>) =
        (0..40).map(|i| ((i * 37) % n, (i * 11 + 5) % n)).unzip();

    // polyline: a 40 x 30 mono8 image, a bright diagonal band on noise.
    let (iw, ih) = (40u32, 30u32);
    let pixels: Vec<u8> = (0..iw * ih)
        .map(|i| {
            let (x, y) = ((i % iw) as i64, (i / iw) as i64);
            let base = if (x - y - 5).abs() < 3 { 200 } else { 20 };
            (base + rng.next_u64() % 30) as u8
        })
        .collect();
    let image = json!({"header": {"frame_id": "camera"}, "height": ih, "width": iw,
        "encoding": "mono8", "step": iw, "data": pixels});
    let gray = Gray::new(iw, ih, pixels.iter().map(|&p| p as f64).collect()).unwrap();
    let problem = Problem {
        a: (6.0, 1.0),
        b: (33.0, 28.0),
        guides: 5,
        points: 17,
        half_width: 6.0,
        max_angle: 0.6,
    };
    let polyline = gpu_planning::polyline::cpu::solve(&Gradient::sobel(&gray), &problem).unwrap();

    // cell_graph: a random arrangement over given samples, with the tree algorithm.
    let arr = Arrangement::random(6, seed);
    let samples = shoemake(700, seed);
    let quat = |s: &[f64; 4]| json!({"x": s[0], "y": s[1], "z": s[2], "w": s[3]});
    let cfg = gpu_planning::cellgraph::Config {
        algorithm: Algorithm::Tree,
        ..Default::default()
    };
    let cell_graph = gpu_planning::cellgraph::build(&Backend::Cpu, &arr, &samples, &cfg).unwrap();
    let rotation = cell_graph.path(samples[3], samples[500]).unwrap();

    // nearest_neighbors: 500 points with a NaN one, 30 queries.
    let mut unit = move || (rng.next_u64() % 1000) as f32 / 100.0;
    let mut pts: Vec<[f32; 3]> = (0..500).map(|_| [unit(), unit(), unit()]).collect();
    pts[7] = [f32::NAN; 3];
    let queries: Vec<f32> = (0..90).map(|_| unit()).collect();
    let cloud_bytes: Vec<u8> = pts
        .iter()
        .flat_map(|p| p.iter().flat_map(|v| v.to_le_bytes()))
        .collect();
    let field = |name: &str, offset: u32| json!({"name": name, "offset": offset, "datatype": 7, "count": 1});
    let cloud = json!({"header": {"frame_id": "lidar"}, "height": 1, "width": pts.len(),
        "fields": [field("x", 0), field("y", 4), field("z", 8)], "point_step": 12,
        "row_step": 12 * pts.len(), "data": cloud_bytes, "is_dense": false});
    let origin: Vec<u32> = (0..pts.len() as u32).filter(|&i| i != 7).collect();
    let kept: Vec<f32> = origin.iter().flat_map(|&i| pts[i as usize]).collect();
    let tree = gpu_planning::kdtree::build(&Backend::Cpu, &Points::new(3, kept).unwrap()).unwrap();
    let in_cloud = |mut rows: Vec<Vec<(f32, u32)>>| {
        for e in rows.iter_mut().flatten() {
            e.1 = origin[e.1 as usize];
        }
        rows
    };
    let knn =
        in_cloud(gpu_planning::kdtree::cpu::knn(&tree, &queries, 4, Metric::Euclidean).unwrap());
    let radius = in_cloud(
        gpu_planning::kdtree::cpu::radius(&tree, &queries, 1.2, 0, Metric::Euclidean).unwrap(),
    );

    let job = json!({
        "domain": domain,
        "timeout_s": 60,
        "publish": [
            {"topic": "/map", "type": "nav_msgs/msg/OccupancyGrid", "qos": "latched", "value": map},
            {"topic": "/apsp/graph", "type": "gpu_planning_msgs/msg/WeightedGraph", "qos": "latched",
             "value": graph},
            {"topic": "/polyline/image", "type": "sensor_msgs/msg/Image", "qos": "sensor",
             "value": image},
            {"topic": "/nearest_neighbors/cloud", "type": "sensor_msgs/msg/PointCloud2",
             "qos": "latched", "value": cloud},
        ],
        "calls": [
            {"service": "/lee_planner/get_plan", "type": "nav_msgs/srv/GetPlan",
             "request": {"start": pose(1.3, 2.1), "goal": pose(5.4, 2.2)}, "until": "plan.poses"},
            {"service": "/apsp/shortest_path", "type": "gpu_planning_msgs/srv/ShortestPath",
             "request": {"sources": sources, "targets": targets}, "until": "success"},
            {"service": "/polyline/extract", "type": "gpu_planning_msgs/srv/ExtractPolyline",
             "request": {"a": {"x": 6.0, "y": 1.0}, "b": {"x": 33.0, "y": 28.0}, "guides": 5,
                         "points_per_guide": 17, "half_width": 6.0, "max_angle": 0.6},
             "until": "success"},
            {"service": "/cell_graph/build", "type": "gpu_planning_msgs/srv/BuildCellGraph",
             "request": {"constraints": {"count": arr.len(),
                 "coefficients": arr.coefficients.iter().flatten().collect::<Vec<_>>()},
                 "samples": samples.iter().map(quat).collect::<Vec<_>>(), "algorithm": "tree"}},
            {"service": "/cell_graph/find_path", "type": "gpu_planning_msgs/srv/FindRotationPath",
             "request": {"start": quat(&samples[3]), "goal": quat(&samples[500])}},
            {"service": "/nearest_neighbors/knn", "type": "gpu_planning_msgs/srv/KNearest",
             "request": {"dimensions": 3, "points": queries, "k": 4}, "until": "success"},
            {"service": "/nearest_neighbors/radius", "type": "gpu_planning_msgs/srv/RadiusSearch",
             "request": {"dimensions": 3, "points": queries, "radius": 1.2}, "until": "success"},
            {"service": "/gpu_planning/get_status", "type": "gpu_planning_msgs/srv/GetStatus",
             "request": {"refresh_memory": true}},
            {"service": "/lee_planner/get_state", "type": "lifecycle_msgs/srv/GetState",
             "request": {}},
            {"service": "/lee_planner/get_available_states",
             "type": "lifecycle_msgs/srv/GetAvailableStates", "request": {}},
            {"service": "/lee_planner/get_available_transitions",
             "type": "lifecycle_msgs/srv/GetAvailableTransitions", "request": {}},
            // Configure is no transition out of active: refused, and the node stays active.
            {"service": "/lee_planner/change_state", "type": "lifecycle_msgs/srv/ChangeState",
             "request": {"transition": {"id": 1}}},
            // nav2's ComputePathToPose, as bt_navigator calls it: the goal, then its result.
            {"service": "/compute_path_to_pose/_action/send_goal",
             "type": "nav2_msgs/action/ComputePathToPose_SendGoal",
             "request": {"goal_id": {"uuid": goal_id}, "goal": {"goal": pose(5.4, 2.2),
                         "start": pose(1.3, 2.1), "use_start": true}}, "until": "accepted"},
            {"service": "/compute_path_to_pose/_action/get_result",
             "type": "nav2_msgs/action/ComputePathToPose_GetResult",
             "request": {"goal_id": {"uuid": goal_id}}},
        ],
    });
    let dir = std::env::temp_dir().join(format!(
        "gp-{peer_name}-services-{domain}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let job_path = dir.join("job.json");
    std::fs::write(&job_path, job.to_string()).unwrap();
    let out = peer(&job_path);
    rt.shutdown().trigger();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{peer_name} peer failed:\n{stdout}\n{stderr}"
    );
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 14, "{stdout}");
    common::assert_device_did_the_work(
        &rt,
        &[
            "lee_planner",
            "apsp",
            "polyline",
            "cell_graph",
            "nearest_neighbors",
        ],
    );

    let plan: GetPlanResponse = reply(&lines[0], "/lee_planner/get_plan");
    let centre = |x: u32, y: u32| (1.0 + (x as f64 + 0.5) * 0.5, 2.0 + (y as f64 + 0.5) * 0.5);
    let got: Vec<(f64, f64)> = plan
        .plan
        .poses
        .iter()
        .map(|p| (p.pose.position.x, p.pose.position.y))
        .collect();
    let want: Vec<(f64, f64)> = lee.path.iter().map(|&(x, y)| centre(x, y)).collect();
    assert_eq!(got, want);
    assert_eq!(plan.plan.header.frame_id, "map");

    let sp: gp::ShortestPathResponse = reply(&lines[1], "/apsp/shortest_path");
    assert!(sp.success, "{}", sp.error);
    for (i, (&u, &v)) in sources.iter().zip(&targets).enumerate() {
        let p = apsp.query(u, v).unwrap();
        assert_eq!(
            (sp.distances[i], sp.reachable[i]),
            (p.distance, p.reachable)
        );
        let (a, b) = (sp.path_offsets[i] as usize, sp.path_offsets[i + 1] as usize);
        assert_eq!(&sp.path_vertices[a..b], p.path.as_slice(), "pair {u} {v}");
    }

    let ex: gp::ExtractPolylineResponse = reply(&lines[2], "/polyline/extract");
    assert!(ex.success, "{}", ex.error);
    assert_eq!((ex.feasible, ex.score), (polyline.feasible, polyline.score));
    let got: Vec<(f64, f64)> = ex.points.iter().map(|p| (p.x, p.y)).collect();
    assert_eq!(got, polyline.points);

    let built: gp::BuildCellGraphResponse = reply(&lines[3], "/cell_graph/build");
    assert!(built.success, "{}", built.error);
    assert_eq!(built.graph.cells, cell_graph.cells.bits.data);
    assert_eq!(built.graph.sample_counts, cell_graph.cells.counts);
    assert_eq!(built.graph.edge_from, cell_graph.edges.from);
    assert_eq!(built.graph.edge_to, cell_graph.edges.to);
    assert_eq!(built.graph.edge_bits, cell_graph.edges.bit);
    let path: gp::FindRotationPathResponse = reply(&lines[4], "/cell_graph/find_path");
    assert!(path.success, "{}", path.error);
    assert_eq!(
        (path.reachable, &path.cells),
        (rotation.reachable, &rotation.cells)
    );

    let k: gp::KNearestResponse = reply(&lines[5], "/nearest_neighbors/knn");
    assert!(k.success, "{}", k.error);
    assert_eq!(rows(&k.neighbors), knn);
    let r: gp::RadiusSearchResponse = reply(&lines[6], "/nearest_neighbors/radius");
    assert!(r.success, "{}", r.error);
    assert_eq!(rows(&r.neighbors), radius);

    let status: gp::GetStatusResponse = reply(&lines[7], "/gpu_planning/get_status");
    for node in [
        "lee_planner",
        "apsp",
        "polyline",
        "cell_graph",
        "nearest_neighbors",
    ] {
        assert!(
            status.status.nodes.iter().any(|n| n.ends_with(node)),
            "{node} not in {:?}",
            status.status.nodes
        );
    }
    assert!(status.status.maps_received >= 1, "{:?}", status.status);

    let state: lc::GetStateResponse = reply(&lines[8], "/lee_planner/get_state");
    assert_eq!(
        (state.current_state.id, state.current_state.label.as_str()),
        (3, "active")
    );
    let states: lc::GetAvailableStatesResponse =
        reply(&lines[9], "/lee_planner/get_available_states");
    let labels: Vec<&str> = states
        .available_states
        .iter()
        .map(|s| s.label.as_str())
        .collect();
    for l in ["unconfigured", "inactive", "active", "finalized"] {
        assert!(labels.contains(&l), "{labels:?}");
    }
    let transitions: lc::GetAvailableTransitionsResponse =
        reply(&lines[10], "/lee_planner/get_available_transitions");
    let from_active: Vec<&str> = transitions
        .available_transitions
        .iter()
        .map(|t| t.transition.label.as_str())
        .collect();
    assert!(from_active.contains(&"deactivate"), "{from_active:?}");
    assert!(!from_active.contains(&"configure"), "{from_active:?}");
    let change: lc::ChangeStateResponse = reply(&lines[11], "/lee_planner/change_state");
    assert!(!change.success);

    let sent: SendGoalResponse = reply(&lines[12], "/compute_path_to_pose/_action/send_goal");
    assert!(sent.accepted);
    let result: GetResultResponse<jazzy::ComputePathToPoseResult> =
        reply(&lines[13], "/compute_path_to_pose/_action/get_result");
    assert_eq!(result.status, GoalState::Succeeded as i8);
    assert_eq!(
        (result.result.error_code, result.result.error_msg.as_str()),
        (0, "")
    );
    let got: Vec<(f64, f64)> = result
        .result
        .path
        .poses
        .iter()
        .map(|p| (p.pose.position.x, p.pose.position.y))
        .collect();
    assert_eq!(got, want, "the action's path is get_plan's");
    for l in &lines {
        println!(
            "{peer_name}: {} answered after {} request(s)",
            l["service"], l["attempts"]
        );
    }
}
