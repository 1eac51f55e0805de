//! The CPU fallback on device out-of-memory, for real, in every node: a `gpu_planning run`
//! process on the CUDA backend whose device allocations above 4 KiB fail
//! (`GPU_PLANNING_DEVICE_ALLOC_LIMIT`, the driver's out-of-memory error) answers every node's
//! request from the CPU, and says so in its log. Needs a GPU: skips (or fails with
//! GPU_PLANNING_REQUIRE_CUDA) elsewhere.

use std::io::Read;
use std::process::{Command, Stdio};

use futures::StreamExt;
use gpu_planning::compute::testing::cuda_or_skip;
use gpu_planning::ros::msg::geometry_msgs::Point;
use gpu_planning::ros::msg::gpu_planning_msgs::{
    ApspStatus, BuildCellGraph, BuildCellGraphRequest, ExtractPolyline, ExtractPolylineRequest,
    KNearest, KNearestRequest, QuadricArrangement, WeightedGraph,
};
use gpu_planning::ros::msg::nav_msgs::{GetPlan, GetPlanRequest, OccupancyGrid};
use gpu_planning::ros::msg::sensor_msgs::{Image, PointCloud2};
use gpu_planning::ros::{qos, NodeContext, ParamsFile, RosArgs, RosRuntime};

use crate::bad_input::{call, call_until, occupancy, pose};
use crate::common;
use crate::nearest_neighbors_node::cloud;

/// A `gpu_planning run` on CUDA whose device allocations above 4 KiB fail, its log echoed as
/// it comes (so a failure shows why) and kept for the checks.
struct OomRun {
    child: std::process::Child,
    log: std::sync::Arc<std::sync::Mutex<String>>,
    echo: std::thread::JoinHandle<()>,
}

impl OomRun {
    fn start(domain: u16, args: &[&str]) -> OomRun {
        let mut child = Command::new(common::executable())
            .args(["run", "--backend", "cuda"])
            .args(args)
            .args(["--domain-id", &domain.to_string()])
            .env(gpu_planning::env::DEVICE_ALLOC_LIMIT.name, "4096")
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let echo = {
            let (log, mut err) = (log.clone(), child.stderr.take().unwrap());
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = err.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let text = String::from_utf8_lossy(&buf[..n]).to_string();
                    eprint!("{text}");
                    log.lock().unwrap().push_str(&text);
                }
            })
        };
        OomRun { child, log, echo }
    }

    /// Stops the process and returns its whole log.
    fn finish(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = self.echo.join();
        let log = self.log.lock().unwrap().clone();
        log
    }
}

#[test]
fn every_node_falls_back_to_the_cpu_when_the_device_is_out_of_memory() {
    if cuda_or_skip("every_node_falls_back_to_the_cpu_when_the_device_is_out_of_memory").is_none() {
        return;
    }
    let domain = common::unique_domain();
    let run = OomRun::start(domain, &["--duration-s", "90"]);
    let client_rt =
        RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let mut peer = NodeContext::new(&client_rt, "oom_peer").unwrap();
    let map_pub = peer.publisher::<OccupancyGrid>("/map", qos::map()).unwrap();
    let plan = peer.client::<GetPlan>("/lee_planner/get_plan").unwrap();
    let graph_pub = peer
        .publisher::<WeightedGraph>("/apsp/graph", qos::map())
        .unwrap();
    let status_sub = peer
        .subscription::<ApspStatus>("/apsp/status", qos::map())
        .unwrap();
    let image_pub = peer
        .publisher::<Image>("/polyline/image", qos::map())
        .unwrap();
    let extract = peer.client::<ExtractPolyline>("/polyline/extract").unwrap();
    let build = peer.client::<BuildCellGraph>("/cell_graph/build").unwrap();
    let cloud_pub = peer
        .publisher::<PointCloud2>("/nearest_neighbors/cloud", qos::map())
        .unwrap();
    let knn = peer.client::<KNearest>("/nearest_neighbors/knn").unwrap();
    let _b = common::run_in_background(&client_rt);
    smol::block_on(async {
        common::settle_discovery("get_plan", plan.wait_for_service(peer.node())).await;
        common::settle_discovery("extract", extract.wait_for_service(peer.node())).await;
        common::settle_discovery("build", build.wait_for_service(peer.node())).await;
        common::settle_discovery("knn", knn.wait_for_service(peer.node())).await;
        // Every input is above 4 KiB on the device.
        map_pub
            .async_publish(occupancy(64, 64, vec![0; 64 * 64], "map"))
            .await
            .unwrap();
        let n = 40u32;
        graph_pub
            .async_publish(WeightedGraph {
                vertex_count: n,
                edge_from: (0..n - 1).collect(),
                edge_to: (1..n).collect(),
                weights: vec![1.0; n as usize - 1],
                ..Default::default()
            })
            .await
            .unwrap();
        let (w, h) = (40u32, 30u32);
        let image = Image {
            width: w,
            height: h,
            encoding: "mono8".into(),
            step: w,
            data: (0..w * h)
                .map(|i| if i % w == 20 { 255 } else { 0 })
                .collect(),
            ..Default::default()
        };
        image_pub.async_publish(image.clone()).await.unwrap();
        let pts: Vec<[f32; 3]> = (0..500).map(|i| [i as f32, 0.0, 0.0]).collect();
        cloud_pub.async_publish(cloud(&pts)).await.unwrap();

        let s = status_sub.async_stream();
        futures::pin_mut!(s);
        let status = s.next().await.unwrap().unwrap().0;
        assert_eq!(status.error, "", "{status:?}");
        assert_eq!(
            status.backend, "cpu",
            "solved on the CPU after the fallback"
        );
        let req = GetPlanRequest {
            start: pose(0.5, 0.5, "map"),
            goal: pose(63.5, 0.5, "map"),
            tolerance: 0.0,
        };
        let path = call_until(&plan, req, |r| !r.plan.poses.is_empty(), || {}).await;
        assert_eq!(path.expect("a plan").plan.poses.len(), 64);
        let req = ExtractPolylineRequest {
            a: Point {
                x: 20.0,
                y: 2.0,
                z: 0.0,
            },
            b: Point {
                x: 20.0,
                y: 27.0,
                z: 0.0,
            },
            guides: 3,
            points_per_guide: 9,
            ..Default::default()
        };
        // A sample sent before the match settled can be lost: it is sent again while waiting.
        let extracted = call_until(
            &extract,
            req,
            |r| r.success,
            || {
                let _ = image_pub.publish(image.clone());
            },
        )
        .await;
        assert!(extracted.expect("a polyline").feasible);
        let mut coefficients = vec![0.0; 10];
        coefficients[0] = -1.0;
        coefficients[9] = 1.0;
        let built = call(
            &build,
            BuildCellGraphRequest {
                constraints: QuadricArrangement {
                    count: 1,
                    coefficients,
                    ..Default::default()
                },
                sample_count: 200,
                seed: 3,
                ..Default::default()
            },
        )
        .await;
        assert!(built.success, "{}", built.error);
        let req = KNearestRequest {
            dimensions: 3,
            points: vec![7.2, 0.0, 0.0],
            k: 1,
        };
        let found = call_until(
            &knn,
            req,
            |r| r.success,
            || {
                let _ = cloud_pub.publish(cloud(&pts));
            },
        )
        .await;
        assert_eq!(found.expect("a neighbour").neighbors.indices, vec![7]);
    });
    client_rt.shutdown().trigger();
    let log = run.finish();
    for (node, needles) in [
        ("lee_planner", ["lee: the grid: ", "(cpu_fallback)"]),
        ("apsp", ["apsp: graph of 40 vertices", "(cpu_fallback)"]),
        ("polyline", ["polyline: image 40 x 30", "(cpu_fallback)"]),
        ("cell_graph", ["cell_graph: 200 samples", "(cpu_fallback)"]),
        (
            "nearest_neighbors",
            ["nearest_neighbors: tree of 500", "(cpu_fallback)"],
        ),
    ] {
        assert!(
            log.lines().any(|l| needles.iter().all(|n| l.contains(n))),
            "no fallback line from {node} ({needles:?}); log:\n{log}"
        );
    }
}

/// The same in costmap mode with a robot radius: the inflation costs (the distance transform)
/// and the costmap's upload do not fit, so the map is made and planned on the CPU, and the
/// plan goes round the wall as on any backend.
#[test]
fn the_costmap_planner_falls_back_to_the_cpu_when_the_device_is_out_of_memory() {
    if cuda_or_skip("the_costmap_planner_falls_back_to_the_cpu_when_the_device_is_out_of_memory")
        .is_none()
    {
        return;
    }
    let domain = common::unique_domain();
    let params = std::env::temp_dir().join(format!("gpu_planning_oom_costmap_{domain}.yaml"));
    std::fs::write(
        &params,
        "lee_planner:\n  ros__parameters:\n    cost_model: costmap\n    robot_radius: 0.1\n",
    )
    .unwrap();
    let params_arg = params.display().to_string();
    let run = OomRun::start(
        domain,
        &[
            "--duration-s",
            "60",
            "--nodes",
            "lee_planner",
            "--params",
            &params_arg,
        ],
    );
    let client_rt =
        RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let mut peer = NodeContext::new(&client_rt, "oom_costmap_peer").unwrap();
    let map_pub = peer.publisher::<OccupancyGrid>("/map", qos::map()).unwrap();
    let plan = peer.client::<GetPlan>("/lee_planner/get_plan").unwrap();
    let _b = common::run_in_background(&client_rt);
    // A wall across the middle with a gap: the path must go round the inflated wall.
    let (w, h) = (64u32, 48u32);
    let data: Vec<i8> = (0..w * h)
        .map(|i| {
            let (x, y) = (i % w, i / w);
            if y == 24 && !(40..44).contains(&x) {
                100
            } else {
                0
            }
        })
        .collect();
    let got = smol::block_on(async {
        common::settle_discovery("get_plan", plan.wait_for_service(peer.node())).await;
        map_pub
            .async_publish(occupancy(w, h, data.clone(), "map"))
            .await
            .unwrap();
        let req = GetPlanRequest {
            start: pose(10.5, 10.5, "map"),
            goal: pose(10.5, 40.5, "map"),
            tolerance: 0.0,
        };
        call_until(&plan, req, |r| !r.plan.poses.is_empty(), || {}).await
    });
    client_rt.shutdown().trigger();
    let log = run.finish();
    let _ = std::fs::remove_file(&params);
    let poses = got.expect("a plan").plan.poses;
    let at = |i: usize| (poses[i].pose.position.x, poses[i].pose.position.y);
    assert_eq!(at(0), (10.5, 10.5), "the plan starts at the start");
    assert_eq!(at(poses.len() - 1), (10.5, 40.5), "and ends at the goal");
    // Round the wall through its gap: some pose is on the far side of x = 40.
    assert!(poses.iter().any(|p| p.pose.position.x >= 40.0), "{poses:?}");
    for needles in [
        ["lee: the inflation costs", "(cpu_fallback)"],
        ["lee: the costmap", "(cpu_fallback)"],
    ] {
        assert!(
            log.lines().any(|l| needles.iter().all(|n| l.contains(n))),
            "no fallback line {needles:?}; log:\n{log}"
        );
    }
}
