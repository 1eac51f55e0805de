//! The bad-input matrix (README, "Bad input"): every node gets each kind of bad message and bad
//! request over DDS. A bad service request gets an error naming the field (GetPlan, which has
//! no error field: an empty path and a log line); a bad topic message gets a log line naming
//! the field and value and leaves the node's previous input in place. After each group the
//! node answers a good request correctly, so it kept serving.

use std::time::{Duration, Instant};

use gpu_planning::ros::msg::geometry_msgs::{Point, Pose, PoseArray, PoseStamped, Quaternion};
use gpu_planning::ros::msg::gpu_planning_msgs::{
    ApspStatus, BuildCellGraph, BuildCellGraphRequest, ExtractPolyline, ExtractPolylineRequest,
    FindRotationPath, FindRotationPathRequest, KNearest, KNearestRequest, QuadricArrangement,
    RadiusSearch, RadiusSearchRequest, ShortestPath, ShortestPathRequest, WeightedGraph,
};
use gpu_planning::ros::msg::grid_map_msgs::GridMap;
use gpu_planning::ros::msg::nav_msgs::{GetPlan, GetPlanRequest, OccupancyGrid};
use gpu_planning::ros::msg::sensor_msgs::{Image, PointCloud2};
use gpu_planning::ros::msg::std_msgs::Header;
use gpu_planning::ros::{qos, NodeContext, ParamsFile, RosArgs, RosRuntime};
use ros2_client::{Client, Message};

use crate::common;
pub(crate) use crate::common::{log_tail, logs};
use crate::nearest_neighbors_node::cloud;

/// Waits (20 s at most) for a log line containing every needle; returns it.
pub(crate) async fn logged(needles: &[&str]) -> String {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        {
            let text = logs().lock().unwrap_or_else(|p| p.into_inner());
            let text = String::from_utf8_lossy(&text);
            if let Some(l) = text.lines().find(|l| needles.iter().all(|n| l.contains(n))) {
                return l.to_string();
            }
        }
        if Instant::now() > until {
            let text = logs().lock().unwrap_or_else(|p| p.into_inner()).clone();
            let text = String::from_utf8_lossy(&text);
            let tail: Vec<&str> = text.lines().rev().take(40).collect();
            panic!("no log line with all of {needles:?} within 20 s; last lines: {tail:#?}");
        }
        smol::Timer::after(Duration::from_millis(20)).await;
    }
}

/// A call retried until answered (a request sent before discovery settles is lost).
pub(crate) async fn call<Q: Message + Clone + 'static, R: Message + 'static>(
    c: &Client<Q, R>,
    q: Q,
) -> R {
    for _ in 0..30 {
        let attempt = futures::future::select(
            Box::pin(c.async_call_service(q.clone())),
            Box::pin(smol::Timer::after(Duration::from_secs(2))),
        )
        .await;
        if let futures::future::Either::Left((Ok(r), _)) = attempt {
            return r;
        }
    }
    panic!("no response within 60 s");
}

/// Calls until an answer satisfies `ok` (the input it needs may still be in flight): up to 100
/// tries 100 ms apart, `resend` before every tenth (a sample sent before the match settled can
/// be lost). The first satisfying answer, or None.
pub(crate) async fn call_until<Q: Message + Clone + 'static, R: Message + 'static>(
    c: &Client<Q, R>,
    q: Q,
    ok: impl Fn(&R) -> bool,
    mut resend: impl FnMut(),
) -> Option<R> {
    for attempt in 0..100 {
        if attempt % 10 == 9 {
            resend();
        }
        let r = call(c, q.clone()).await;
        if ok(&r) {
            return Some(r);
        }
        smol::Timer::after(Duration::from_millis(100)).await;
    }
    None
}

pub(crate) fn runtimes(params: &str) -> (RosRuntime, RosRuntime) {
    logs();
    let domain = common::unique_domain();
    let server = RosRuntime::new(
        RosArgs::default(),
        ParamsFile::parse(params).unwrap(),
        Some(domain),
    )
    .unwrap();
    gpu_planning::nodes::start_all(&server).unwrap();
    let client = RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    (server, client)
}

pub(crate) fn pose(x: f64, y: f64, frame: &str) -> PoseStamped {
    PoseStamped {
        header: Header {
            frame_id: frame.into(),
            ..Default::default()
        },
        pose: Pose {
            position: Point { x, y, z: 0.0 },
            orientation: Quaternion::identity(),
        },
    }
}

pub(crate) fn occupancy(w: u32, h: u32, data: Vec<i8>, frame: &str) -> OccupancyGrid {
    let mut m = OccupancyGrid {
        data,
        ..Default::default()
    };
    m.header.frame_id = frame.into();
    m.info.width = w;
    m.info.height = h;
    m.info.resolution = 1.0;
    m.info.origin.orientation = Quaternion::identity();
    m
}

#[test]
fn lee_planner_refuses_bad_maps_and_requests_and_keeps_serving() {
    let (server, client_rt) =
        runtimes("lee_planner:\n  ros__parameters:\n    max_cells: 1000000\n");
    let mut peer = NodeContext::new(&client_rt, "bad_lee").unwrap();
    let map_pub = peer.publisher::<OccupancyGrid>("/map", qos::map()).unwrap();
    let elev_pub = peer
        .publisher::<GridMap>("/elevation_map", qos::map())
        .unwrap();
    let plan = peer.client::<GetPlan>("/lee_planner/get_plan").unwrap();
    let _a = common::run_in_background(&server);
    let _b = common::run_in_background(&client_rt);
    // 5 x 3 map, a wall at x = 2 with a gap at y = 2.
    let mut good = vec![0i8; 15];
    good[2] = 100;
    good[7] = 100;
    let req = |s: (f64, f64), g: (f64, f64)| GetPlanRequest {
        start: pose(s.0, s.1, ""),
        goal: pose(g.0, g.1, ""),
        tolerance: 0.0,
    };
    smol::block_on(async {
        common::settle_discovery("get_plan", plan.wait_for_service(peer.node())).await;
        map_pub
            .async_publish(occupancy(5, 3, good.clone(), "good"))
            .await
            .unwrap();
        let first = call_until(
            &plan,
            req((0.5, 0.5), (4.5, 0.5)),
            |r| !r.plan.poses.is_empty(),
            || {},
        )
        .await
        .expect("a plan on the good map")
        .plan;
        assert_eq!(first.header.frame_id, "good");
        assert_eq!(first.poses.len(), 9, "around the wall through the gap");

        // Bad maps: each is refused with the field and value named; the good map stays.
        let mut nan_res = occupancy(5, 3, good.clone(), "bad");
        nan_res.info.resolution = f32::NAN;
        // A NaN origin or yaw would put every request on cell (0, 0): refused, named.
        let mut nan_origin = occupancy(5, 3, good.clone(), "bad");
        nan_origin.info.origin.position.x = f64::NAN;
        let mut inf_yaw = occupancy(5, 3, good.clone(), "bad");
        inf_yaw.info.origin.orientation.z = f64::INFINITY;
        let mut huge = occupancy(2000, 1000, vec![], "bad");
        huge.info.resolution = 0.05;
        for (map, needles) in [
            (
                occupancy(5, 3, vec![0; 14], "bad"),
                &["map rejected", "map.data", "14"][..],
            ),
            (nan_res, &["map.info.resolution", "NaN"]),
            (
                nan_origin,
                &["map rejected", "map.info.origin.position.x", "NaN"],
            ),
            (
                inf_yaw,
                &["map rejected", "map.info.origin.orientation.z", "inf"],
            ),
            (
                huge,
                &["map.info.width x height", "2000 x 1000", "max_cells"],
            ),
            (
                occupancy(0, 0, vec![], "bad"),
                &["map.info.width x height", "0 x 0 has no cells"],
            ),
        ] {
            map_pub.async_publish(map).await.unwrap();
            logged(needles).await;
        }
        let mut no_layer = GridMap::default();
        no_layer.header.frame_id = "bad".into();
        no_layer.info.resolution = 1.0;
        no_layer.info.length_x = 2.0;
        no_layer.info.length_y = 2.0;
        no_layer.layers = vec!["traversability".into()];
        no_layer.data = vec![Default::default()];
        let mut nan_pose = no_layer.clone();
        nan_pose.layers = vec!["elevation".into()];
        nan_pose.info.pose.position.y = f64::NAN;
        elev_pub.async_publish(nan_pose).await.unwrap();
        logged(&[
            "elevation_map rejected",
            "elevation_map.info.pose.position.y",
            "NaN",
        ])
        .await;
        elev_pub.async_publish(no_layer).await.unwrap();
        logged(&[
            "elevation_map.layers",
            "no layer 'elevation'",
            "traversability",
        ])
        .await;

        // Bad requests: empty path, a log line naming the field and value.
        for (r, needles) in [
            (
                req((-3.0, 0.5), (4.5, 0.5)),
                &["~/get_plan", "start", "-3"][..],
            ),
            (
                req((0.5, 0.5), (f64::NAN, 0.5)),
                &["~/get_plan", "goal", "NaN"],
            ),
            (req((0.5, 0.5), (4.5, 99.0)), &["~/get_plan", "goal", "99"]),
        ] {
            let got = call(&plan, r).await;
            assert!(got.plan.poses.is_empty(), "{needles:?}");
            logged(needles).await;
        }
        let mut other_frame = req((0.5, 0.5), (4.5, 0.5));
        other_frame.goal.header.frame_id = "odom".into();
        assert!(call(&plan, other_frame).await.plan.poses.is_empty());
        logged(&["goal", "no transform from 'odom' to 'good'"]).await;
        // A goal on a wall cell: an empty path, the cell named.
        let walled = call(&plan, req((0.5, 0.5), (2.5, 0.5))).await;
        assert!(walled.plan.poses.is_empty());
        logged(&["~/get_plan", "goal", "(2, 0) is a blocked cell"]).await;

        // Still serving, on the good map.
        let again = call(&plan, req((0.5, 0.5), (4.5, 0.5))).await;
        let cells = |p: &gpu_planning::ros::msg::nav_msgs::Path| -> Vec<(f64, f64)> {
            p.poses
                .iter()
                .map(|q| (q.pose.position.x, q.pose.position.y))
                .collect()
        };
        assert_eq!(again.plan.header.frame_id, "good");
        assert_eq!(cells(&again.plan), cells(&first));
    });
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}

#[test]
fn nearest_neighbors_refuses_bad_clouds_and_requests_and_keeps_serving() {
    let (server, client_rt) = runtimes("");
    let mut peer = NodeContext::new(&client_rt, "bad_nn").unwrap();
    let cloud_pub = peer
        .publisher::<PointCloud2>("/nearest_neighbors/cloud", qos::map())
        .unwrap();
    let orient_pub = peer
        .publisher::<PoseArray>("/nearest_neighbors/orientations", qos::map())
        .unwrap();
    let knn = peer.client::<KNearest>("/nearest_neighbors/knn").unwrap();
    let radius = peer
        .client::<RadiusSearch>("/nearest_neighbors/radius")
        .unwrap();
    let _a = common::run_in_background(&server);
    let _b = common::run_in_background(&client_rt);
    let pts = [[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 2.0, 0.0]];
    let ask = |points: Vec<f32>, k| KNearestRequest {
        dimensions: 3,
        points,
        k,
    };
    smol::block_on(async {
        common::settle_discovery("knn", knn.wait_for_service(peer.node())).await;
        cloud_pub.async_publish(cloud(&pts)).await.unwrap();
        let first = call_until(&knn, ask(vec![0.9, 0.1, 0.0], 1), |r| r.success, || {})
            .await
            .expect("an answer on the good cloud");
        assert_eq!(first.neighbors.indices, vec![1]);

        // Bad clouds: refused, the field named; the good cloud stays.
        let mut short = cloud(&pts);
        short.data.truncate(40);
        let mut no_z = cloud(&pts);
        no_z.fields.retain(|f| f.name != "z");
        let mut step = cloud(&pts);
        step.row_step = 8;
        for (c, needles) in [
            (short, &["~/cloud rejected", "data", "40 bytes"][..]),
            (no_z, &["~/cloud rejected", "fields", "'z'"]),
            (step, &["~/cloud rejected", "row_step", "8"]),
        ] {
            cloud_pub.async_publish(c).await.unwrap();
            logged(needles).await;
        }
        let zero = PoseArray {
            poses: vec![Pose {
                orientation: Quaternion {
                    x: 0.0,
                    y: 0.0,
                    z: 0.0,
                    w: 0.0,
                },
                ..Default::default()
            }],
            ..Default::default()
        };
        orient_pub.async_publish(zero).await.unwrap();
        logged(&["~/orientations rejected", "poses[0]", "norm 0"]).await;

        // Bad requests: an error naming the field.
        for (r, field) in [
            (ask(vec![0.0, 0.0, 0.0], 0), "k"),
            (ask(vec![0.0, 0.0], 1), "points"),
            (
                KNearestRequest {
                    dimensions: 7,
                    points: vec![0.0; 7],
                    k: 1,
                },
                "dimensions",
            ),
            (
                KNearestRequest {
                    dimensions: 4,
                    points: vec![0.0, 0.0, 0.0, 1.0],
                    k: 1,
                },
                "no ~/orientations",
            ),
        ] {
            let e = call(&knn, r).await;
            assert!(
                !e.success && e.error.contains(field),
                "{field}: {}",
                e.error
            );
        }
        // k above the number of points lists them all, nearest first.
        let all = call(&knn, ask(vec![0.0, 0.0, 0.0], 10)).await;
        assert!(all.success, "{}", all.error);
        assert_eq!(all.neighbors.indices, vec![0, 1, 2]);
        // A NaN query is refused, naming it.
        let e = call(&knn, ask(vec![f32::NAN, 0.0, 0.0], 1)).await;
        assert!(!e.success && e.error.contains("NaN"), "{}", e.error);
        for (r, value) in [(-1.0f32, "-1"), (f32::NAN, "NaN")] {
            let e = call(
                &radius,
                RadiusSearchRequest {
                    dimensions: 3,
                    points: vec![0.0; 3],
                    radius: r,
                    max_count: 0,
                },
            )
            .await;
            assert!(
                !e.success && e.error.contains("radius") && e.error.contains(value),
                "{}",
                e.error
            );
        }
        let again = call(&knn, ask(vec![0.9, 0.1, 0.0], 1)).await;
        assert_eq!(again.neighbors.indices, vec![1]);
    });
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}

#[test]
fn apsp_polyline_and_cell_graph_refuse_bad_input_and_keep_serving() {
    let (server, client_rt) = runtimes("apsp:\n  ros__parameters:\n    max_vertices: 100\n");
    let mut peer = NodeContext::new(&client_rt, "bad_misc").unwrap();
    let graph_pub = peer
        .publisher::<WeightedGraph>("/apsp/graph", qos::map())
        .unwrap();
    let status_sub = peer
        .subscription::<ApspStatus>("/apsp/status", qos::map())
        .unwrap();
    let sp = peer.client::<ShortestPath>("/apsp/shortest_path").unwrap();
    let image_pub = peer
        .publisher::<Image>("/polyline/image", qos::map())
        .unwrap();
    let extract = peer.client::<ExtractPolyline>("/polyline/extract").unwrap();
    let build = peer.client::<BuildCellGraph>("/cell_graph/build").unwrap();
    let find = peer
        .client::<FindRotationPath>("/cell_graph/find_path")
        .unwrap();
    let _a = common::run_in_background(&server);
    let _b = common::run_in_background(&client_rt);
    let graph = |n: u32, e: &[(u32, u32, f32)]| WeightedGraph {
        vertex_count: n,
        edge_from: e.iter().map(|x| x.0).collect(),
        edge_to: e.iter().map(|x| x.1).collect(),
        weights: e.iter().map(|x| x.2).collect(),
        ..Default::default()
    };
    smol::block_on(async {
        use futures::StreamExt;
        common::settle_discovery("shortest_path", sp.wait_for_service(peer.node())).await;
        // APSP. A duplicated edge keeps its lightest copy: 0 -> 1 costs 2, then 1 -> 2.
        graph_pub
            .async_publish(graph(3, &[(0, 1, 5.0), (0, 1, 2.0), (1, 2, 1.0)]))
            .await
            .unwrap();
        let pair = ShortestPathRequest {
            sources: vec![0],
            targets: vec![2],
        };
        let first = call_until(&sp, pair.clone(), |r| r.success, || {})
            .await
            .expect("the good graph solved");
        assert_eq!(first.distances, vec![3.0]);
        let statuses = status_sub.async_stream();
        futures::pin_mut!(statuses);
        let mut mismatch = graph(3, &[(0, 1, 1.0)]);
        mismatch.edge_to.push(2);
        for (g, needles) in [
            (mismatch, &["edges"][..]),
            (graph(3, &[(0, 7, 1.0)]), &["edge_to[0]", "7"]),
            (graph(3, &[(0, 1, f32::NAN)]), &["weights[0]", "NaN"]),
            (graph(3, &[(0, 1, f32::INFINITY)]), &["weights[0]", "inf"]),
            (graph(500, &[]), &["vertex_count", "500", "max_vertices"]),
            (
                graph(3, &[(0, 1, 1.0), (1, 2, -3.0), (2, 0, 1.0)]),
                &["negative cycle"],
            ),
        ] {
            graph_pub.async_publish(g).await.unwrap();
            // Each refused graph says why on ~/status (and in the log).
            loop {
                let (s, _) = statuses.next().await.unwrap().unwrap();
                if needles.iter().all(|n| s.error.contains(n)) {
                    break;
                }
            }
        }
        for (r, field) in [
            (
                ShortestPathRequest {
                    sources: vec![0, 1],
                    targets: vec![2],
                },
                "targets",
            ),
            (
                ShortestPathRequest {
                    sources: vec![9],
                    targets: vec![2],
                },
                "sources[0]",
            ),
        ] {
            let e = call(&sp, r).await;
            assert!(
                !e.success && e.error.contains(field),
                "{field}: {}",
                e.error
            );
        }
        assert_eq!(call(&sp, pair.clone()).await.distances, vec![3.0]);

        // Polyline: a 40 x 30 mono8 image with a bright column at x = 20.
        let (w, h) = (40u32, 30u32);
        let img = |enc: &str, step: u32, data: Vec<u8>| Image {
            height: h,
            width: w,
            encoding: enc.into(),
            step,
            data,
            ..Default::default()
        };
        let pixels: Vec<u8> = (0..w * h)
            .map(|i| if i % w == 20 { 255 } else { 0 })
            .collect();
        image_pub
            .async_publish(img("mono8", w, pixels.clone()))
            .await
            .unwrap();
        let good = ExtractPolylineRequest {
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
        // The node takes images with sensor QoS (best effort, volatile): one sent before the
        // subscription matched is gone, so it goes again while no answer uses it.
        let first = call_until(
            &extract,
            good.clone(),
            |r| r.success,
            || {
                let _ = image_pub.publish(img("mono8", w, pixels.clone()));
            },
        )
        .await
        .expect("a polyline on the good image");
        for (i, needles) in [
            (
                img("yuv422", w * 2, vec![0; (w * h * 2) as usize]),
                &["image.encoding", "'yuv422'"][..],
            ),
            (img("mono8", w, vec![0; 100]), &["image.data", "100 bytes"]),
            (img("mono8", 10, pixels.clone()), &["image.step", "10"]),
        ] {
            image_pub.async_publish(i).await.unwrap();
            logged(needles).await;
        }
        let mut nan_a = good.clone();
        nan_a.a.x = f64::NAN;
        let mut off = good.clone();
        off.b.y = 400.0;
        let mut same = good.clone();
        same.b = same.a.clone();
        let mut many = good.clone();
        many.guides = 1_000_000;
        let mut angle = good.clone();
        angle.max_angle = f64::NAN;
        for (r, needles) in [
            (nan_a, &["a", "NaN"][..]),
            (off, &["b", "400"]),
            (same, &["b"]),
            (many, &["guides", "1000000"]),
            (angle, &["max_angle", "NaN"]),
        ] {
            let e = call(&extract, r).await;
            assert!(
                !e.success && needles.iter().all(|n| e.error.contains(n)),
                "{needles:?}: {}",
                e.error
            );
        }
        let again = call(&extract, good.clone()).await;
        assert_eq!(again.points, first.points);

        // Cell graph: one constraint (w^2 - x^2 >= 0), 200 Shoemake samples.
        let mut coefficients = vec![0.0; 10];
        coefficients[0] = -1.0; // a00 (x x)
        coefficients[9] = 1.0; // a33 (w w)
        let arrangement = QuadricArrangement {
            count: 1,
            coefficients,
            ..Default::default()
        };
        let good = BuildCellGraphRequest {
            constraints: arrangement.clone(),
            sample_count: 200,
            seed: 3,
            ..Default::default()
        };
        let built = call(&build, good.clone()).await;
        assert!(built.success, "{}", built.error);
        let mut short = good.clone();
        short.constraints.coefficients.pop();
        let mut nan = good.clone();
        nan.constraints.coefficients[4] = f64::NAN;
        let mut zero_q = good.clone();
        zero_q.samples = vec![Quaternion::identity(), Quaternion::default()];
        let mut none = good.clone();
        none.sample_count = 0;
        let mut algo = good.clone();
        algo.algorithm = "magic".into();
        for (r, needles) in [
            (short, &["coefficients"][..]),
            (nan, &["coefficients[4]", "NaN"]),
            (zero_q, &["samples[1]"]),
            (none, &["sample_count", "0"]),
            (algo, &["algorithm", "magic"]),
        ] {
            let e = call(&build, r).await;
            assert!(
                !e.success && needles.iter().all(|n| e.error.contains(n)),
                "{needles:?}: {}",
                e.error
            );
        }
        let e = call(
            &find,
            FindRotationPathRequest {
                start: Quaternion::default(),
                goal: Quaternion::identity(),
            },
        )
        .await;
        assert!(!e.success && e.error.contains("start"), "{}", e.error);
        let p = call(
            &find,
            FindRotationPathRequest {
                start: Quaternion::identity(),
                goal: Quaternion::identity(),
            },
        )
        .await;
        assert!(p.success && p.reachable, "{}", p.error);
        let again = call(&build, good).await;
        assert_eq!(again.graph.cells, built.graph.cells);
    });
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}

/// A request past its deadline gets the deadline error and its computation stops: the
/// polyline DP below needs minutes on a CPU (3 guides of 2048 points: 8.6e9 steps in stage 2),
/// and the node logs that the cancelled work ended within seconds of the deadline. A half
/// width of 1e30 (unbounded link sampling) is refused outright.
#[test]
fn polyline_work_stops_at_its_deadline_and_links_are_bounded() {
    let (server, client_rt) =
        runtimes("polyline:\n  ros__parameters:\n    backend: cpu\n    request_timeout_s: 0.5\n");
    let mut peer = NodeContext::new(&client_rt, "deadline_peer").unwrap();
    let image_pub = peer
        .publisher::<Image>("/polyline/image", qos::map())
        .unwrap();
    let extract = peer.client::<ExtractPolyline>("/polyline/extract").unwrap();
    let _a = common::run_in_background(&server);
    let _b = common::run_in_background(&client_rt);
    let (w, h) = (64u32, 48u32);
    smol::block_on(async {
        common::settle_discovery("extract", extract.wait_for_service(peer.node())).await;
        let image = Image {
            width: w,
            height: h,
            encoding: "mono8".into(),
            step: w,
            data: (0..w * h).map(|i| (i % 7) as u8 * 30).collect(),
            ..Default::default()
        };
        image_pub.async_publish(image.clone()).await.unwrap();
        let mut req = ExtractPolylineRequest {
            a: Point {
                x: 2.0,
                y: 24.0,
                z: 0.0,
            },
            b: Point {
                x: 60.0,
                y: 24.0,
                z: 0.0,
            },
            guides: 2,
            points_per_guide: 3,
            ..Default::default()
        };
        // Sensor QoS on the node's side: an image sent before the subscription matched is
        // gone, so it goes again while no answer uses it.
        call_until(
            &extract,
            req.clone(),
            |r| r.success,
            || {
                let _ = image_pub.publish(image.clone());
            },
        )
        .await
        .expect("a polyline on the image");
        let mut wide = req.clone();
        wide.half_width = 1e30;
        let e = call(&extract, wide).await;
        assert!(
            !e.success && e.error.contains("half_width") && e.error.contains("diagonal"),
            "{}",
            e.error
        );
        // Stage 2 of 3 guides relaxes d^3 = 8.6e9 (point, point, point) triples.
        req.guides = 3;
        req.points_per_guide = 2048;
        req.half_width = 20.0;
        let e = call(&extract, req).await;
        assert!(!e.success && e.error.contains("deadline"), "{}", e.error);
        let stopped = logged(&["cancelled work stopped after"]).await;
        let secs: f64 = stopped
            .rsplit("after ")
            .next()
            .and_then(|t| t.trim_end_matches(" s").trim().parse().ok())
            .unwrap_or_else(|| panic!("no duration in: {stopped}"));
        assert!(
            secs < 10.0,
            "the cancelled DP ran on for {secs} s: {stopped}"
        );
    });
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}

#[test]
fn lee_planner_keeps_robot_radius_off_the_walls_and_names_inflated_poses() {
    // A negative radius is refused when the node starts, naming the parameter.
    let domain = common::unique_domain();
    let bad = RosRuntime::new(
        RosArgs::default(),
        ParamsFile::parse("lee_planner:\n  ros__parameters:\n    robot_radius: -0.2\n").unwrap(),
        Some(domain),
    )
    .unwrap();
    let e = gpu_planning::nodes::start(&bad, &["lee_planner"]).unwrap_err();
    assert!(e.to_string().contains("robot_radius"), "{e}");
    bad.shutdown().trigger();

    let (server, client_rt) =
        runtimes("lee_planner:\n  ros__parameters:\n    robot_radius: 0.25\n    backend: auto\n");
    let mut peer = NodeContext::new(&client_rt, "radius_lee").unwrap();
    let map_pub = peer.publisher::<OccupancyGrid>("/map", qos::map()).unwrap();
    let plan = peer.client::<GetPlan>("/lee_planner/get_plan").unwrap();
    let _a = common::run_in_background(&server);
    let _b = common::run_in_background(&client_rt);
    // 12 x 7 room of 0.1 m cells walled all round; a free path exists along every row.
    let (w, h) = (12u32, 7u32);
    let wall = |x: u32, y: u32| x == 0 || y == 0 || x == w - 1 || y == h - 1;
    let data: Vec<i8> = (0..w * h)
        .map(|c| if wall(c % w, c / w) { 100 } else { 0 })
        .collect();
    let mut map = occupancy(w, h, data, "map");
    map.info.resolution = 0.1;
    let req = |s: (f64, f64), g: (f64, f64)| GetPlanRequest {
        start: pose(s.0, s.1, ""),
        goal: pose(g.0, g.1, ""),
        tolerance: 0.0,
    };
    smol::block_on(async {
        common::settle_discovery("get_plan", plan.wait_for_service(peer.node())).await;
        map_pub.async_publish(map.clone()).await.unwrap();
        // Cells (3..=8, 3): 0.3 m from every wall cell centre, the only row clear of 0.25 m.
        let got = call_until(
            &plan,
            req((0.35, 0.35), (0.85, 0.35)),
            |r| !r.plan.poses.is_empty(),
            || {
                let _ = map_pub.publish(map.clone());
            },
        )
        .await
        .expect("a plan with the radius")
        .plan;
        for p in &got.poses {
            let (x, y) = (p.pose.position.x, p.pose.position.y);
            assert!(
                (0.3..=0.9).contains(&x) && (y - 0.35).abs() < 1e-6,
                "({x}, {y}) is within 0.25 m of a wall"
            );
        }
        assert_eq!(got.poses.len(), 6);
        // A start next to the wall: refused, the zone named.
        let near = call(&plan, req((0.15, 0.35), (0.85, 0.35))).await;
        assert!(near.plan.poses.is_empty());
        logged(&[
            "~/get_plan",
            "start",
            "(1, 3) is within robot_radius 0.25 m of an obstacle",
        ])
        .await;
    });
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}

#[test]
fn lee_planner_in_costmap_mode_publishes_its_costs_and_plans_least_cost() {
    use futures::StreamExt;
    use gpu_planning::compute::Backend;
    use gpu_planning::lee::costmap::config::occupancy_value;
    use gpu_planning::lee::costmap::{inflation_values, CostParams, CostPlanner};
    use gpu_planning::lee::{Connectivity, Grid};

    let (server, client_rt) = runtimes(
        "lee_planner:\n  ros__parameters:\n    cost_model: costmap\n    robot_radius: 0.1\n    inflation_radius: 0.4\n    cost_scaling_factor: 5.0\n    connectivity: 8\n",
    );
    let mut peer = NodeContext::new(&client_rt, "costmap_lee").unwrap();
    let map_pub = peer.publisher::<OccupancyGrid>("/map", qos::map()).unwrap();
    let costs = peer
        .subscription::<OccupancyGrid>("/lee_planner/costmap", qos::map())
        .unwrap();
    let plan = peer.client::<GetPlan>("/lee_planner/get_plan").unwrap();
    let _a = common::run_in_background(&server);
    let _b = common::run_in_background(&client_rt);
    // 16 x 9 room of 0.1 m cells, walled, with a pillar in the middle: the cheap way round
    // keeps away from it.
    let (w, h) = (16u32, 9u32);
    let data: Vec<i8> = (0..w * h)
        .map(|c| {
            let (x, y) = (c % w, c / w);
            let wall = x == 0 || y == 0 || x == w - 1 || y == h - 1;
            if wall || ((7..=8).contains(&x) && (3..=5).contains(&y)) {
                100
            } else {
                0
            }
        })
        .collect();
    let mut map = occupancy(w, h, data.clone(), "map");
    map.info.resolution = 0.1;
    // The reference: the same costs and the same least-cost path on the CPU.
    let p = CostParams {
        robot_radius: 0.1,
        inflation_radius: 0.4,
        cost_scaling_factor: 5.0,
        ..CostParams::default()
    };
    let grid = Grid::from_occupancy(w, h, &data, 65, false, Connectivity::Eight).unwrap();
    let values = inflation_values(&Backend::Cpu, &grid, 0.1f32 as f64, &p).unwrap();
    let reference_planner = CostPlanner::new(&Backend::Cpu, grid, &values, &p).unwrap();
    let reference = reference_planner.plan((2, 4), (13, 4)).unwrap();
    assert!(reference.reachable);
    // What goes out in costmap mode (path: auto): the grid path shortened, in metres.
    let res = 0.1f32 as f64;
    let smooth: Vec<(f64, f64)> = reference_planner
        .smooth(&reference.path)
        .into_iter()
        .map(|(x, y)| (x * res, y * res))
        .collect();
    assert!(
        smooth.len() != reference.path.len() || {
            let centres = reference
                .path
                .iter()
                .map(|&(x, y)| ((x as f64 + 0.5) * res, (y as f64 + 0.5) * res));
            smooth.iter().copied().ne(centres)
        },
        "the smooth path is the grid path here: the test would not tell them apart"
    );
    smol::block_on(async {
        common::settle_discovery("get_plan", plan.wait_for_service(peer.node())).await;
        map_pub.async_publish(map.clone()).await.unwrap();
        let got = call_until(
            &plan,
            GetPlanRequest {
                start: pose(0.25, 0.45, ""),
                goal: pose(1.35, 0.45, ""),
                tolerance: 0.0,
            },
            |r| !r.plan.poses.is_empty(),
            || {
                let _ = map_pub.publish(map.clone());
            },
        )
        .await
        .expect("a costmap plan")
        .plan;
        let points: Vec<(f64, f64)> = got
            .poses
            .iter()
            .map(|p| (p.pose.position.x, p.pose.position.y))
            .collect();
        assert_eq!(points.len(), smooth.len(), "{points:?}");
        for (g, w) in points.iter().zip(&smooth) {
            assert!(
                (g.0 - w.0).abs() < 1e-9 && (g.1 - w.1).abs() < 1e-9,
                "{g:?} != {w:?}"
            );
        }
        let s = costs.async_stream();
        futures::pin_mut!(s);
        let published = smol::future::or(async { s.next().await }, async {
            smol::Timer::after(Duration::from_secs(20)).await;
            None
        })
        .await
        .expect("~/costmap within 20 s")
        .expect("a decodable ~/costmap")
        .0;
        let want: Vec<i8> = values.iter().map(|&v| occupancy_value(v)).collect();
        assert_eq!(published.data, want);
        assert_eq!((published.info.width, published.info.height), (w, h));
    });
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}

#[test]
fn lee_planner_plans_to_the_nearest_reachable_cell_within_tolerance() {
    let (server, client_rt) = runtimes("lee_planner:\n  ros__parameters:\n    backend: auto\n");
    let mut peer = NodeContext::new(&client_rt, "tolerance_lee").unwrap();
    let map_pub = peer.publisher::<OccupancyGrid>("/map", qos::map()).unwrap();
    let plan = peer.client::<GetPlan>("/lee_planner/get_plan").unwrap();
    let _a = common::run_in_background(&server);
    let _b = common::run_in_background(&client_rt);
    // 9 x 5, 1 m cells: a wall at x = 4 except (4, 0); a closed pocket: (7, 2) walled in by
    // (6, 2), (8, 2), (7, 1), (7, 3).
    let (w, h) = (9u32, 5u32);
    let blocked =
        |x: u32, y: u32| (x == 4 && y > 0) || [(6, 2), (8, 2), (7, 1), (7, 3)].contains(&(x, y));
    let data: Vec<i8> = (0..w * h)
        .map(|c| if blocked(c % w, c / w) { 100 } else { 0 })
        .collect();
    let map = occupancy(w, h, data, "map");
    let req = |g: (f64, f64), tolerance: f32| GetPlanRequest {
        start: pose(0.5, 2.5, ""),
        goal: pose(g.0, g.1, ""),
        tolerance,
    };
    let last = |r: &gpu_planning::ros::msg::nav_msgs::GetPlanResponse| {
        r.plan
            .poses
            .last()
            .map(|p| (p.pose.position.x, p.pose.position.y))
    };
    smol::block_on(async {
        common::settle_discovery("get_plan", plan.wait_for_service(peer.node())).await;
        map_pub.async_publish(map.clone()).await.unwrap();
        // Tolerance 0: a goal on the wall is refused, as before.
        call_until(
            &plan,
            req((2.5, 2.5), 0.0),
            |r| !r.plan.poses.is_empty(),
            || {
                let _ = map_pub.publish(map.clone());
            },
        )
        .await
        .expect("the map is in");
        assert!(call(&plan, req((4.5, 2.5), 0.0))
            .await
            .plan
            .poses
            .is_empty());
        // Tolerance 1.2 m: the goal on the wall (4, 2) moves to its nearest reachable cell;
        // (3, 2) and (5, 2) are both 1 m away, and on a tie the smaller row, then column wins.
        let r = call(&plan, req((4.5, 2.5), 1.2)).await;
        assert_eq!(last(&r), Some((3.5, 2.5)));
        logged(&["goal cell (4, 2)", "planning to (3, 2)", "tolerance 1.2"]).await;
        // The walled-in pocket (7, 2) is unreachable: within 1.5 m the nearest reachable cells
        // are the four diagonal ones at 1.41 m, and (6, 1) comes first.
        let r = call(&plan, req((7.5, 2.5), 1.5)).await;
        assert_eq!(last(&r), Some((6.5, 1.5)));
        // Nothing within 0.5 m of the pocket: an empty path and a log line.
        assert!(call(&plan, req((7.5, 2.5), 0.5))
            .await
            .plan
            .poses
            .is_empty());
        logged(&["no cell reachable from the start within tolerance 0.5"]).await;
        // A bad tolerance is refused, named.
        assert!(call(&plan, req((2.5, 2.5), -1.0))
            .await
            .plan
            .poses
            .is_empty());
        logged(&["tolerance", "-1"]).await;
    });
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}

#[test]
fn lee_planner_plans_on_a_nav2_costmap_as_it_comes() {
    use gpu_planning::compute::Backend;
    use gpu_planning::lee::costmap::{CostParams, CostPlanner};
    use gpu_planning::lee::{Connectivity, Grid};
    use gpu_planning::ros::msg::nav2_msgs::Costmap;

    let (server, client_rt) = runtimes(
        "lee_planner:\n  ros__parameters:\n    cost_model: costmap\n    connectivity: 8\n    path: grid\n",
    );
    let mut peer = NodeContext::new(&client_rt, "nav2_costmap").unwrap();
    let costmap_pub = peer.publisher::<Costmap>("/costmap", qos::map()).unwrap();
    let plan = peer.client::<GetPlan>("/lee_planner/get_plan").unwrap();
    let _a = common::run_in_background(&server);
    let _b = common::run_in_background(&client_rt);
    // 12 x 6 at 0.5 m: a band of cost 200 across the middle columns with a cheap gap in row 0,
    // a lethal cell and an unknown cell.
    let (w, h) = (12u32, 6u32);
    let data: Vec<u8> = (0..w * h)
        .map(|c| {
            let (x, y) = (c % w, c / w);
            match (x, y) {
                (9, 4) => 254,
                (10, 1) => 255,
                (5..=6, 1..) => 200,
                _ => 0,
            }
        })
        .collect();
    let mut msg = Costmap {
        data: data.clone(),
        ..Default::default()
    };
    msg.header.frame_id = "map".into();
    msg.metadata.resolution = 0.5;
    msg.metadata.size_x = w;
    msg.metadata.size_y = h;
    msg.metadata.origin.orientation = Quaternion::identity();
    let grid = Grid::from_occupancy(
        w,
        h,
        &vec![0; (w * h) as usize],
        101,
        true,
        Connectivity::Eight,
    )
    .unwrap();
    let reference = CostPlanner::new(&Backend::Cpu, grid, &data, &CostParams::default())
        .unwrap()
        .plan((1, 4), (11, 4))
        .unwrap();
    assert!(
        reference.path.iter().any(|&(_, y)| y == 0),
        "the cheap way is the gap"
    );
    let req = |s: (f64, f64), g: (f64, f64)| GetPlanRequest {
        start: pose(s.0, s.1, ""),
        goal: pose(g.0, g.1, ""),
        tolerance: 0.0,
    };
    smol::block_on(async {
        common::settle_discovery("get_plan", plan.wait_for_service(peer.node())).await;
        costmap_pub.async_publish(msg.clone()).await.unwrap();
        let got = call_until(
            &plan,
            req((0.75, 2.25), (5.75, 2.25)),
            |r| !r.plan.poses.is_empty(),
            || {
                let _ = costmap_pub.publish(msg.clone());
            },
        )
        .await
        .expect("a plan on the nav2 costmap")
        .plan;
        let cells: Vec<(u32, u32)> = got
            .poses
            .iter()
            .map(|p| {
                (
                    (p.pose.position.x / 0.5).floor() as u32,
                    (p.pose.position.y / 0.5).floor() as u32,
                )
            })
            .collect();
        assert_eq!(cells, reference.path);
        // A goal on the lethal cell, and on the unknown one: refused, the cost named.
        assert!(call(&plan, req((0.75, 2.25), (4.75, 2.25)))
            .await
            .plan
            .poses
            .is_empty());
        logged(&["goal", "(9, 4) has cost 254 (lethal)"]).await;
        assert!(call(&plan, req((0.75, 2.25), (5.25, 0.75)))
            .await
            .plan
            .poses
            .is_empty());
        logged(&["goal", "(10, 1) has cost 255 (unknown)"]).await;
        // A costmap whose data does not fit its size: refused, named; the good one stays.
        let mut short = msg.clone();
        short.data.pop();
        costmap_pub.async_publish(short).await.unwrap();
        logged(&["costmap rejected", "costmap.data", "length 71"]).await;
        let again = call(&plan, req((0.75, 2.25), (5.75, 2.25))).await;
        assert_eq!(again.plan.poses.len(), reference.path.len());
    });
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}
