//! One server answers clients of both request layouts: a lee_planner on the default
//! `service_mapping` (auto) serves a Fast DDS-style client (related sample identity in inline
//! QoS) and an rmw_cyclonedds-style client (16-byte header in the payload) side by side, each
//! with the CPU planner's path. With `service_mapping: enhanced` forced, the Cyclone client's
//! request does not decode exactly, so it is refused: no reply, and nothing on `~/path` (before,
//! its header was read as the start pose and a bogus path went out).

use std::time::Duration;

use futures::StreamExt;
use gpu_planning::compute::Backend;
use gpu_planning::lee::{Config, Connectivity, Grid, Planner};
use gpu_planning::ros::msg::nav_msgs::{
    GetPlan, GetPlanRequest, GetPlanResponse, OccupancyGrid, Path,
};
use gpu_planning::ros::{qos, NodeContext, ParamsFile, RosArgs, RosRuntime};

use crate::bad_input::pose;
use crate::common;
use crate::lee_node::walled_map;

type PlanClient = ros2_client::Client<GetPlanRequest, GetPlanResponse>;

fn request() -> GetPlanRequest {
    GetPlanRequest {
        start: pose(1.3, 2.1, "map"),
        goal: pose(5.4, 2.2, "map"),
        tolerance: 0.0,
    }
}

fn expected() -> Vec<(f64, f64)> {
    let m = walled_map();
    let grid = Grid::from_occupancy(
        m.info.width,
        m.info.height,
        &m.data,
        65,
        false,
        Connectivity::Eight,
    )
    .unwrap();
    let plan = Planner::new(&Backend::Cpu, grid, Config::default())
        .unwrap()
        .plan((0, 0), (8, 0), true)
        .unwrap();
    assert!(plan.reachable);
    plan.path
        .iter()
        .map(|&(x, y)| (1.0 + (x as f64 + 0.5) * 0.5, 2.0 + (y as f64 + 0.5) * 0.5))
        .collect()
}

/// The reply to one call, or None when none comes within `wait`.
async fn call_once(client: &PlanClient, wait: Duration) -> Option<Path> {
    match futures::future::select(
        Box::pin(client.async_call_service(request())),
        Box::pin(smol::Timer::after(wait)),
    )
    .await
    {
        futures::future::Either::Left((Ok(r), _)) => Some(r.plan),
        _ => None,
    }
}

/// A non-empty plan, retried while discovery and the map settle.
async fn plan(client: &PlanClient) -> Vec<(f64, f64)> {
    for _ in 0..60 {
        if let Some(p) = call_once(client, Duration::from_secs(1)).await {
            if !p.poses.is_empty() {
                return p
                    .poses
                    .iter()
                    .map(|p| (p.pose.position.x, p.pose.position.y))
                    .collect();
            }
        }
        smol::Timer::after(Duration::from_millis(100)).await;
    }
    panic!("no plan within 60 tries");
}

/// A peer runtime with one client of `mapping` (ros2-client's Enhanced is Fast DDS's layout).
fn client(domain: u16, mapping: &str) -> (RosRuntime, NodeContext, PlanClient) {
    let (args, _) =
        RosArgs::parse(&["--ros-args", "-p", &format!("service_mapping:={mapping}")]).unwrap();
    let rt = RosRuntime::new(args, ParamsFile::default(), Some(domain)).unwrap();
    let mut peer = NodeContext::new(&rt, &format!("{mapping}_peer")).unwrap();
    let c = peer.client::<GetPlan>("/lee_planner/get_plan").unwrap();
    (rt, peer, c)
}

fn planner(domain: u16, mapping: Option<&str>) -> RosRuntime {
    let mut argv: Vec<String> = [
        "--ros-args",
        "-p",
        "backend:=cpu",
        "-p",
        "lee_planner:connectivity:=8",
    ]
    .map(String::from)
    .to_vec();
    if let Some(m) = mapping {
        argv.extend(["-p".into(), format!("service_mapping:={m}")]);
    }
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let (args, _) = RosArgs::parse(&argv).unwrap();
    let rt = RosRuntime::new(args, ParamsFile::default(), Some(domain)).unwrap();
    gpu_planning::nodes::start(&rt, &["lee_planner"]).unwrap();
    rt
}

#[test]
fn the_default_serves_fast_dds_and_cyclone_clients_side_by_side() {
    let domain = common::unique_domain();
    let server = planner(domain, None);
    let (fast_rt, mut fast, fast_client) = client(domain, "enhanced");
    let (cyc_rt, _cyc, cyc_client) = client(domain, "cyclone");
    let map_pub = fast.publisher::<OccupancyGrid>("/map", qos::map()).unwrap();
    let _bg: Vec<_> = [&server, &fast_rt, &cyc_rt]
        .iter()
        .map(|rt| common::run_in_background(rt))
        .collect();
    let want = expected();
    smol::block_on(async {
        map_pub.async_publish(walled_map()).await.unwrap();
        assert_eq!(plan(&fast_client).await, want, "Fast DDS layout");
        assert_eq!(plan(&cyc_client).await, want, "Cyclone layout");
        // Interleaved, still each to its own client.
        for _ in 0..3 {
            assert_eq!(plan(&cyc_client).await, want);
            assert_eq!(plan(&fast_client).await, want);
        }
    });
    for rt in [&server, &fast_rt, &cyc_rt] {
        rt.shutdown().trigger();
    }
}

#[test]
fn a_forced_layout_refuses_requests_that_do_not_decode_exactly() {
    // Capture log lines from here on (the refusal's only trace is one).
    crate::bad_input::logs();
    let domain = common::unique_domain();
    let server = planner(domain, Some("enhanced"));
    let (fast_rt, mut fast, fast_client) = client(domain, "enhanced");
    let (cyc_rt, cyc, cyc_client) = client(domain, "cyclone");
    let map_pub = fast.publisher::<OccupancyGrid>("/map", qos::map()).unwrap();
    let path_sub = fast
        .subscription::<Path>("/lee_planner/path", qos::result())
        .unwrap();
    let _bg: Vec<_> = [&server, &fast_rt, &cyc_rt]
        .iter()
        .map(|rt| common::run_in_background(rt))
        .collect();
    smol::block_on(async {
        map_pub.async_publish(walled_map()).await.unwrap();
        // The node is up, has the map and answers its own layout.
        let want = expected();
        assert_eq!(plan(&fast_client).await, want);
        let paths = path_sub.async_stream();
        futures::pin_mut!(paths);
        // Drain what the good plans published (transient local: at least the last one).
        loop {
            let next = async { paths.next().await.map(|r| r.is_ok()) };
            let quiet = async {
                smol::Timer::after(Duration::from_millis(500)).await;
                None
            };
            if smol::future::or(next, quiet).await.is_none() {
                break;
            }
        }
        // Cyclone requests to it: never answered, nothing published. The client has matched
        // the service, and several tries rule out a request lost to discovery.
        common::settle_discovery("service", cyc_client.wait_for_service(cyc.node())).await;
        for _ in 0..3 {
            assert!(
                call_once(&cyc_client, Duration::from_secs(1))
                    .await
                    .is_none(),
                "a Cyclone request was answered by a server forced to enhanced"
            );
        }
        let next = async { paths.next().await.map(|r| r.map(|(p, _)| p.poses.len())) };
        let quiet = async {
            smol::Timer::after(Duration::from_millis(500)).await;
            None
        };
        let published = smol::future::or(next, quiet).await;
        assert!(
            published.is_none(),
            "a refused request published a path: {published:?}"
        );
        // The refusal is logged, naming the service and why.
        let line = crate::bad_input::logged(&["/lee_planner/get_plan", "request refused"]).await;
        assert!(
            line.contains("left over") || line.contains("do not decode"),
            "{line}"
        );
        // And the node still serves its own layout.
        assert_eq!(plan(&fast_client).await, want);
    });
    for rt in [&server, &fast_rt, &cyc_rt] {
        rt.shutdown().trigger();
    }
}
