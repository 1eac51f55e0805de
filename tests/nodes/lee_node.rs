//! The lee_planner node over DDS: a peer publishes an occupancy map with an offset origin,
//! calls ~/get_plan, and checks the path (cell centres in world coordinates) against the CPU
//! planner; ~/path and ~/distance_field are published too; a request off the map gets an
//! empty path and the node keeps serving.

use std::time::Duration;

use futures::StreamExt;
use gpu_planning::compute::Backend;
use gpu_planning::lee::{Config, Connectivity, Grid, Planner};
use gpu_planning::ros::msg::geometry_msgs::{Point, Pose, PoseStamped, Quaternion};
use gpu_planning::ros::msg::nav_msgs::{GetPlan, GetPlanRequest, OccupancyGrid, Path};
use gpu_planning::ros::msg::std_msgs::Header;
use gpu_planning::ros::{qos, NodeContext, ParamsFile, RosArgs, RosRuntime};

use crate::common;

fn pose(x: f64, y: f64) -> PoseStamped {
    PoseStamped {
        header: Header {
            frame_id: "map".into(),
            ..Default::default()
        },
        pose: Pose {
            position: Point { x, y, z: 0.0 },
            orientation: Quaternion::identity(),
        },
    }
}

/// 9 x 6 cells of 0.5 m, origin (1, 2); a wall in column 4 with a gap at the top row, and one
/// unknown cell.
pub(crate) fn walled_map() -> OccupancyGrid {
    let (w, h) = (9u32, 6u32);
    let mut data = vec![0i8; (w * h) as usize];
    for y in 0..h - 1 {
        data[(y * w + 4) as usize] = 100;
    }
    data[(2 * w + 7) as usize] = -1;
    let mut map = OccupancyGrid {
        data,
        ..Default::default()
    };
    map.header.frame_id = "map".into();
    map.info.width = w;
    map.info.height = h;
    map.info.resolution = 0.5;
    map.info.origin.position = Point {
        x: 1.0,
        y: 2.0,
        z: 0.0,
    };
    map.info.origin.orientation = Quaternion::identity();
    map
}

async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    match futures::future::select(
        Box::pin(f),
        Box::pin(smol::Timer::after(Duration::from_secs(30))),
    )
    .await
    {
        futures::future::Either::Left((v, _)) => v,
        futures::future::Either::Right(_) => panic!("{what}: nothing within 30 s"),
    }
}

/// A service call retried on timeout: a request sent before discovery matched is lost.
async fn call(
    client: &ros2_client::Client<GetPlanRequest, gpu_planning::ros::msg::nav_msgs::GetPlanResponse>,
    req: GetPlanRequest,
) -> Path {
    for _ in 0..15 {
        let attempt = futures::future::select(
            Box::pin(client.async_call_service(req.clone())),
            Box::pin(smol::Timer::after(Duration::from_secs(2))),
        )
        .await;
        if let futures::future::Either::Left((Ok(r), _)) = attempt {
            return r.plan;
        }
    }
    panic!("no response to get_plan within 30 s");
}

#[test]
fn get_plan_over_dds_matches_the_cpu_planner() {
    let domain = common::unique_domain();
    let (args, _) = RosArgs::parse(&[
        "--ros-args",
        "-p",
        "backend:=cpu",
        "-p",
        "lee_planner:connectivity:=8",
    ])
    .unwrap();
    let server = RosRuntime::new(args, ParamsFile::default(), Some(domain)).unwrap();
    // What `run --nodes lee_planner` (launch/lee_planner.launch.py) starts: that node alone.
    let e = gpu_planning::nodes::start(&server, &["lee_planner", "planner"]).unwrap_err();
    assert!(e.to_string().contains("'planner'"), "{e}");
    let started = gpu_planning::nodes::start(&server, &["lee_planner"]).unwrap();
    assert_eq!(started.len(), 1, "{started:?}");
    assert!(started[0].ends_with("lee_planner"), "{started:?}");
    let client_rt =
        RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let mut peer = NodeContext::new(&client_rt, "peer").unwrap();
    let map_pub = peer.publisher::<OccupancyGrid>("/map", qos::map()).unwrap();
    let path_sub = peer
        .subscription::<Path>("/lee_planner/path", qos::result())
        .unwrap();
    let field_sub = peer
        .subscription::<OccupancyGrid>("/lee_planner/distance_field", qos::result())
        .unwrap();
    let client = peer.client::<GetPlan>("/lee_planner/get_plan").unwrap();
    let _a = common::run_in_background(&server);
    let _b = common::run_in_background(&client_rt);

    let map = walled_map();
    let (w, h, data) = (map.info.width, map.info.height, map.data.clone());

    let grid = Grid::from_occupancy(w, h, &data, 65, false, Connectivity::Eight).unwrap();
    let expected = Planner::new(&Backend::Cpu, grid, Config::default())
        .unwrap()
        .plan((0, 0), (8, 0), true)
        .unwrap();
    assert!(expected.reachable);
    let centre = |x: u32, y: u32| (1.0 + (x as f64 + 0.5) * 0.5, 2.0 + (y as f64 + 0.5) * 0.5);

    smol::block_on(async {
        common::settle_discovery("service", client.wait_for_service(peer.node())).await;
        map_pub.async_publish(map).await.unwrap();
        // The map may arrive after the first request: retry until the plan is non-empty.
        let mut plan = Path::default();
        for _ in 0..100 {
            let req = GetPlanRequest {
                start: pose(1.3, 2.1),
                goal: pose(5.4, 2.2),
                tolerance: 0.0,
            };
            plan = call(&client, req).await;
            if !plan.poses.is_empty() {
                break;
            }
            smol::Timer::after(Duration::from_millis(100)).await;
        }
        let got: Vec<(f64, f64)> = plan
            .poses
            .iter()
            .map(|p| (p.pose.position.x, p.pose.position.y))
            .collect();
        let want: Vec<(f64, f64)> = expected.path.iter().map(|&(x, y)| centre(x, y)).collect();
        assert_eq!(got, want);
        assert_eq!(plan.header.frame_id, "map");

        let s = path_sub.async_stream();
        futures::pin_mut!(s);
        let published = within("~/path", s.next()).await.unwrap().unwrap().0;
        assert_eq!(published.poses.len(), want.len());
        // The field goes out with a plan once the node has matched a reader for it (it is not
        // computed for nobody): plan again until this reader has one.
        let f = field_sub.async_stream();
        futures::pin_mut!(f);
        let mut field = None;
        for _ in 0..100 {
            let next = async { f.next().await.and_then(|r| r.ok()) };
            let timeout = async {
                smol::Timer::after(Duration::from_millis(200)).await;
                None
            };
            if let Some((m, _)) = smol::future::or(next, timeout).await {
                field = Some(m);
                break;
            }
            let req = GetPlanRequest {
                start: pose(1.3, 2.1),
                goal: pose(5.4, 2.2),
                tolerance: 0.0,
            };
            call(&client, req).await;
        }
        let field = field.expect("~/distance_field was never published to its subscriber");
        assert_eq!((field.info.width, field.info.height), (w, h));
        assert_eq!(field.data[8], 0); // the goal
        assert_eq!(field.data[4], -1); // a wall cell

        // Off the map: an empty path, and the node still answers the next request.
        let bad = GetPlanRequest {
            start: pose(-50.0, 2.1),
            goal: pose(5.4, 2.2),
            tolerance: 0.0,
        };
        assert!(call(&client, bad).await.poses.is_empty());
        let again = GetPlanRequest {
            start: pose(1.3, 2.1),
            goal: pose(5.4, 2.2),
            tolerance: 0.0,
        };
        assert_eq!(call(&client, again).await.poses.len(), want.len());
    });
    // backend:=cpu on purpose: the CPU planner over DDS.
    assert!(server.work().count("lee_planner", "cpu") > 0);
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}

/// Plans made while ~/path and ~/markers have no reader are not written for nobody, but the
/// latest is held: a reader that joins later gets it (both topics are latched).
#[test]
fn a_late_reader_gets_the_latest_plan() {
    use gpu_planning::ros::msg::visualization_msgs::MarkerArray;
    let domain = common::unique_domain();
    let (args, _) = RosArgs::parse(&["--ros-args", "-p", "backend:=cpu"]).unwrap();
    let server = RosRuntime::new(args, ParamsFile::default(), Some(domain)).unwrap();
    gpu_planning::nodes::start(&server, &["lee_planner"]).unwrap();
    let client_rt =
        RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let mut peer = NodeContext::new(&client_rt, "late_peer").unwrap();
    let map_pub = peer.publisher::<OccupancyGrid>("/map", qos::map()).unwrap();
    let client = peer.client::<GetPlan>("/lee_planner/get_plan").unwrap();
    let _a = common::run_in_background(&server);
    let _b = common::run_in_background(&client_rt);
    smol::block_on(async {
        common::settle_discovery("service", client.wait_for_service(peer.node())).await;
        map_pub.async_publish(walled_map()).await.unwrap();
        let to = |x: f64, y: f64| GetPlanRequest {
            start: pose(1.3, 2.1),
            goal: pose(x, y),
            tolerance: 0.0,
        };
        // The map may arrive after the first request: retry until the plan is non-empty.
        for _ in 0..100 {
            if !call(&client, to(5.4, 2.2)).await.poses.is_empty() {
                break;
            }
            smol::Timer::after(Duration::from_millis(100)).await;
        }
        let latest = call(&client, to(3.2, 4.7)).await;
        assert!(!latest.poses.is_empty());
        let path_sub = peer
            .subscription::<Path>("/lee_planner/path", qos::result())
            .unwrap();
        let markers_sub = peer
            .subscription::<MarkerArray>("/lee_planner/markers", qos::result())
            .unwrap();
        let s = path_sub.async_stream();
        futures::pin_mut!(s);
        let published = within("~/path for a late reader", s.next())
            .await
            .unwrap()
            .unwrap()
            .0;
        let cells = |p: &Path| -> Vec<(f64, f64)> {
            p.poses
                .iter()
                .map(|p| (p.pose.position.x, p.pose.position.y))
                .collect()
        };
        assert_eq!(cells(&published), cells(&latest), "the latest plan");
        let m = markers_sub.async_stream();
        futures::pin_mut!(m);
        let marks = within("~/markers for a late reader", m.next())
            .await
            .unwrap()
            .unwrap()
            .0;
        let strip: usize = marks.markers.iter().map(|m| m.points.len()).sum();
        assert_eq!(strip, latest.poses.len(), "one marker point per pose");
    });
    // backend:=cpu on purpose: the CPU planner over DDS.
    assert!(server.work().count("lee_planner", "cpu") > 0);
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}

/// `heightmap:=world.sdf`: the node plans on a Gazebo heightmap before any map arrives, in
/// `heightmap_frame`, at the heightmap's own cell size and position.
#[test]
fn heightmap_parameter_plans_on_a_gazebo_world() {
    let dir = std::env::temp_dir().join(format!("gpu_planning_hm_node_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // 5 x 5 pixels over 8 x 8 m (2 m cells) centred at (10, 20); a white wall in image
    // column 2 except the top row (world row 4, the maximum y).
    let mut img = image::GrayImage::new(5, 5);
    for (x, y, p) in img.enumerate_pixels_mut() {
        p.0[0] = if x == 2 && y > 0 { 255 } else { 0 };
    }
    img.save(dir.join("hm.png")).unwrap();
    std::fs::write(
        dir.join("world.sdf"),
        "<sdf><world name='w'><model name='t'><link name='l'><collision name='c'><geometry>\
         <heightmap><uri>hm.png</uri><size>8 8 3</size><pos>10 20 0</pos></heightmap>\
         </geometry></collision></link></model></world></sdf>",
    )
    .unwrap();
    let domain = common::unique_domain();
    let hm = format!("lee_planner:heightmap:={}", dir.join("world.sdf").display());
    let (args, _) = RosArgs::parse(&[
        "--ros-args",
        "-p",
        "backend:=cpu",
        "-p",
        &hm,
        "-p",
        "lee_planner:max_step:=1.0",
        "-p",
        "lee_planner:heightmap_frame:=odom",
    ])
    .unwrap();
    let server = RosRuntime::new(args, ParamsFile::default(), Some(domain)).unwrap();
    gpu_planning::nodes::start(&server, &["lee_planner"]).unwrap();
    let client_rt =
        RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let mut peer = NodeContext::new(&client_rt, "peer").unwrap();
    let client = peer.client::<GetPlan>("/lee_planner/get_plan").unwrap();
    let _a = common::run_in_background(&server);
    let _b = common::run_in_background(&client_rt);
    smol::block_on(async {
        common::settle_discovery("service", client.wait_for_service(peer.node())).await;
        // Vertices sit at x = 6, 8, .., 14 and y = 16, .., 24: cell (0, 0) is around (6, 16).
        // Poses in "map" are refused (the heightmap is in "odom"); in "odom" they plan.
        let req = GetPlanRequest {
            start: pose(6.2, 16.3),
            goal: pose(13.8, 15.9),
            tolerance: 0.0,
        };
        assert!(call(&client, req.clone()).await.poses.is_empty());
        let odom = |mut p: PoseStamped| {
            p.header.frame_id = "odom".into();
            p
        };
        let req = GetPlanRequest {
            start: odom(req.start),
            goal: odom(req.goal),
            tolerance: 0.0,
        };
        let plan = call(&client, req).await;
        assert_eq!(plan.header.frame_id, "odom");
        // Around the wall through world row 4: up 4, across 4, down 4.
        assert_eq!(plan.poses.len(), 13, "{:?}", plan.poses);
        let top = plan
            .poses
            .iter()
            .map(|p| p.pose.position.y)
            .fold(f64::MIN, f64::max);
        assert!((top - 24.0).abs() < 1e-9, "{top}");
        let first = &plan.poses[0].pose.position;
        assert!(
            (first.x - 6.0).abs() < 1e-9 && (first.y - 16.0).abs() < 1e-9,
            "{first:?}"
        );
    });
    std::fs::remove_dir_all(&dir).ok();
}
