//! What real systems send, across DDS to and from an independent peer (Fast DDS 2.9, see
//! `fast_dds.rs`): a 4000 x 4000 OccupancyGrid (16 MB) in and its `~/distance_field` (16 MB)
//! out, a 1M-point PointCloud2 (16 MB) in, each answer checked against the CPU reference.
//! The one-way latencies (writer's write returning to the reader's sample, wall clocks of one
//! machine) are printed as `LATENCY` lines for BENCHMARKS.md; nothing here asserts on time.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::StreamExt;
use gpu_planning::compute::Backend;
use gpu_planning::lee::{Config, Connectivity, Grid, Planner};
use gpu_planning::ros::msg::gpu_planning_msgs::{KNearestRequest, KNearestResponse};
use gpu_planning::ros::msg::nav_msgs::{GetPlanRequest, GetPlanResponse, OccupancyGrid};
use gpu_planning::ros::msg::sensor_msgs::PointCloud2;
use gpu_planning::ros::{qos, NodeContext, ParamsFile, RosArgs, RosRuntime};

use crate::bad_input::{occupancy, pose};
use crate::common;
use crate::fast_dds::{peer, FastDdsPeer};
use crate::nearest_neighbors_node::cloud;

const SIDE: u32 = 4000;
const RES: f64 = 0.05;
const POINTS: usize = 1_000_000;
/// How long the node may take to take in a 16 MB input before it answers on it (the aarch64
/// tests run under qemu, several times slower than a robot's computer).
const PATIENCE: Duration = Duration::from_secs(300);

fn wall_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_micros() as i64
}

fn latency(what: &str, bytes: usize, sent_us: i64, got_us: i64) {
    println!(
        "LATENCY {what}: {:.1} MB in {:.1} ms",
        bytes as f64 / 1e6,
        (got_us - sent_us) as f64 / 1e3
    );
}

/// A SIDE x SIDE map with a wall down its middle column but for a gap at the top.
fn big_map() -> OccupancyGrid {
    let n = SIDE as usize;
    let mut data = vec![0i8; n * n];
    for y in 0..n - 100 {
        data[y * n + n / 2] = 100;
    }
    let mut m = occupancy(SIDE, SIDE, data, "map");
    m.info.resolution = RES as f32;
    m
}

/// 1M points on a 100 x 100 x 100 lattice, jittered so that no two distances tie.
fn big_cloud() -> Vec<[f32; 3]> {
    let mut rng = gpu_planning::rng::XorShift::new(7);
    (0..POINTS)
        .map(|i| {
            let (x, y, z) = (i % 100, (i / 100) % 100, i / 10_000);
            let j = |r: &mut gpu_planning::rng::XorShift| {
                ((r.next_u64() >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.5
            };
            [
                x as f32 + j(&mut rng),
                y as f32 + j(&mut rng),
                z as f32 + j(&mut rng),
            ]
        })
        .collect()
}

fn goal_cell(c: (u32, u32)) -> (i64, i64) {
    (c.0 as i64, c.1 as i64)
}

fn field_frame(m: &OccupancyGrid) -> gpu_planning::nodes::grid_convert::CellFrame {
    gpu_planning::nodes::grid_convert::CellFrame {
        origin: m.info.origin.clone(),
        resolution: m.info.resolution as f64,
        width: m.info.width,
        height: m.info.height,
    }
}

#[test]
fn fast_dds_large_messages_cross_both_ways() {
    let exe = match peer() {
        Ok(exe) => exe,
        Err(why) => {
            gpu_planning::testing::peer_missing("fast_dds large messages", &why);
            return;
        }
    };
    let domain = common::unique_domain();
    let params = "lee_planner:\n  ros__parameters:\n    publish_distance_field: true\n";
    let server = RosRuntime::new(
        RosArgs::default(),
        ParamsFile::parse(params).unwrap(),
        Some(domain),
    )
    .unwrap();
    gpu_planning::nodes::start(&server, &["lee_planner", "nearest_neighbors"]).unwrap();
    // The probe shares the nodes' participant: Fast DDS 2.9 (Debian's build, assertions on)
    // aborts in its statistics module when one writer sends to two RustDDS participants'
    // locators through one output socket, a peer-side defect outside what is tested here.
    let mut me = NodeContext::new(&server, "large_message_probe").unwrap();
    let map_seen = me
        .subscription::<OccupancyGrid>("/map", qos::map())
        .unwrap();
    let cloud_seen = me
        .subscription::<PointCloud2>("/nearest_neighbors/cloud", qos::map())
        .unwrap();
    let echo = me
        .publisher::<OccupancyGrid>("/large_out", qos::result())
        .unwrap();
    let _a = common::run_in_background(&server);
    let mut peer = FastDdsPeer::start(&exe, domain, None);
    let grid_type = "nav_msgs::msg::dds_::OccupancyGrid_";
    peer.listen("rt/lee_planner/distance_field", grid_type);
    peer.listen("rt/large_out", grid_type);
    std::thread::sleep(Duration::from_secs(2)); // discovery first: the latency is the transfer

    // 16 MB map in: the peer's write to our reader's sample.
    let map = big_map();
    let map_bytes = gpu_planning::bag::cdr::encode(&map).unwrap();
    let sent = peer.publish("/map", "nav_msgs::msg::dds_::OccupancyGrid_", &map_bytes);
    let got = smol::block_on(async {
        let s = map_seen.async_stream();
        futures::pin_mut!(s);
        let (m, _) = s.next().await.unwrap().unwrap();
        (m, wall_us())
    });
    assert_eq!(got.0, map, "the 16 MB map arrived changed");
    latency(
        "OccupancyGrid 4000x4000, Fast DDS -> RustDDS",
        map_bytes.len(),
        sent,
        got.1,
    );

    // A plan across it, asked by the peer, and the 16 MB distance field it takes.
    let (start, goal) = ((10u32, 10u32), (SIDE - 10, 10u32));
    let at = |c: (u32, u32)| pose((c.0 as f64 + 0.5) * RES, (c.1 as f64 + 0.5) * RES, "map");
    let request = gpu_planning::bag::cdr::encode(&GetPlanRequest {
        start: at(start),
        goal: at(goal),
        tolerance: 0.0,
    })
    .unwrap();
    let grid = Grid::from_occupancy(SIDE, SIDE, &map.data, 65, false, Connectivity::Four).unwrap();
    let reference = Planner::new(&Backend::Cpu, grid, Config::default()).unwrap();
    // One wave from the goal gives both the field and the path's length (its wave number at
    // the start, plus the start itself).
    let labels = reference.distance_field(goal_cell(goal)).unwrap();
    let want_len = labels[(start.1 * SIDE + start.0) as usize] as usize + 1;
    // The node takes the map in before it plans on it (seconds under emulation): ask until a
    // plan comes back, for at most the bound below.
    let mut plan = None;
    let deadline = Instant::now() + PATIENCE;
    while plan.is_none() && Instant::now() < deadline {
        let reply = peer.call(
            "/lee_planner/get_plan",
            "nav_msgs/srv/GetPlan",
            &request,
            20000,
        );
        if let Some(r) = reply {
            let r: GetPlanResponse = gpu_planning::bag::cdr::decode("GetPlan reply", &r).unwrap();
            if !r.plan.poses.is_empty() {
                plan = Some(r);
                continue;
            }
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let plan = plan.expect("no plan on the 16 MB map");
    assert_eq!(plan.plan.poses.len(), want_len);
    let (field, taken) = peer.take(
        "rt/lee_planner/distance_field",
        "nav_msgs::msg::dds_::OccupancyGrid_",
    );
    let field: OccupancyGrid = gpu_planning::bag::cdr::decode("distance field", &field).unwrap();
    let scaled = gpu_planning::nodes::lee_planner::field_grid(
        &field_frame(&field),
        field.header.clone(),
        &labels,
    );
    assert_eq!((field.info.width, field.info.height), (SIDE, SIDE));
    assert!(
        field.data == scaled.data,
        "the 16 MB distance field differs from the CPU's"
    );
    let _ = taken;

    // 16 MB out: our writer to the peer's sample.
    let out = big_map();
    let out_bytes = gpu_planning::bag::cdr::encode(&out).unwrap().len();
    let sent = wall_us();
    smol::block_on(echo.async_publish(out.clone())).unwrap();
    let (bytes, taken) = peer.take("rt/large_out", "nav_msgs::msg::dds_::OccupancyGrid_");
    let back: OccupancyGrid = gpu_planning::bag::cdr::decode("large_out", &bytes).unwrap();
    assert!(back == out, "the 16 MB grid arrived changed at the peer");
    latency(
        "OccupancyGrid 4000x4000, RustDDS -> Fast DDS",
        out_bytes,
        sent,
        taken,
    );

    // A 1M-point cloud in, and nearest neighbours on it asked by the peer.
    let points = big_cloud();
    let msg = cloud(&points);
    let cloud_bytes = gpu_planning::bag::cdr::encode(&msg).unwrap();
    let sent = peer.publish(
        "/nearest_neighbors/cloud",
        "sensor_msgs::msg::dds_::PointCloud2_",
        &cloud_bytes,
    );
    let got = smol::block_on(async {
        let s = cloud_seen.async_stream();
        futures::pin_mut!(s);
        let (m, _) = s.next().await.unwrap().unwrap();
        (m, wall_us())
    });
    assert!(got.0 == msg, "the 1M-point cloud arrived changed");
    latency(
        "PointCloud2 1M points, Fast DDS -> RustDDS",
        cloud_bytes.len(),
        sent,
        got.1,
    );
    let queries: Vec<[f32; 3]> = vec![
        [0.0, 0.0, 0.0],
        [50.3, 49.7, 50.1],
        [99.0, 12.5, 77.7],
        [-5.0, 120.0, 40.0],
    ];
    let k = 8usize;
    let request = gpu_planning::bag::cdr::encode(&KNearestRequest {
        dimensions: 3,
        points: queries.iter().flatten().copied().collect(),
        k: k as u32,
    })
    .unwrap();
    let (mut answer, mut last_error) = (None, String::new());
    // The node builds its tree of the 1M points before it answers (seconds under emulation).
    let deadline = Instant::now() + PATIENCE;
    while answer.is_none() && Instant::now() < deadline {
        if let Some(r) = peer.call(
            "/nearest_neighbors/knn",
            "gpu_planning_msgs/srv/KNearest",
            &request,
            20000,
        ) {
            let r: KNearestResponse = gpu_planning::bag::cdr::decode("knn reply", &r).unwrap();
            if r.success {
                answer = Some(r);
                continue;
            }
            last_error = r.error;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let answer =
        answer.unwrap_or_else(|| panic!("no knn answer on the 1M-point cloud: {last_error}"));
    for (qi, q) in queries.iter().enumerate() {
        let mut d: Vec<(f64, u32)> = points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let s: f64 = (0..3).map(|a| (p[a] as f64 - q[a] as f64).powi(2)).sum();
                (s, i as u32)
            })
            .collect();
        d.select_nth_unstable_by(k, |a, b| a.partial_cmp(b).unwrap());
        let mut best: Vec<(f64, u32)> = d[..k].to_vec();
        best.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let n = &answer.neighbors;
        let got = &n.indices[n.offsets[qi] as usize..n.offsets[qi + 1] as usize];
        let want: Vec<u32> = best.iter().map(|b| b.1).collect();
        assert_eq!(got, want.as_slice(), "query {q:?}");
    }
    common::assert_device_did_the_work(&server, &["lee_planner", "nearest_neighbors"]);
    drop(peer);
    server.shutdown().trigger();
}

/// A 16 MB map written before its reader's participant exists (map_server's latched map and a
/// planner started later) reaches the late joiner whole, through the writer's historical data
/// (its repair path). A one-cell map on a second topic, written at the same time, gives the
/// discovery's share. RustDDS on both sides, so no peer is needed.
#[test]
fn a_late_joiner_gets_a_16mb_map_whole() {
    let domain = common::unique_domain();
    let a = RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let mut writer = NodeContext::new(&a, "latched_maps").unwrap();
    let big_pub = writer
        .publisher::<OccupancyGrid>("/late/map", qos::map())
        .unwrap();
    let small_pub = writer
        .publisher::<OccupancyGrid>("/late/small", qos::map())
        .unwrap();
    let _ta = common::run_in_background(&a);
    let map = big_map();
    let small = occupancy(1, 1, vec![0], "map");
    smol::block_on(async {
        big_pub.async_publish(map.clone()).await.unwrap();
        small_pub.async_publish(small.clone()).await.unwrap();
    });

    let joined = Instant::now();
    let b = RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let mut reader = NodeContext::new(&b, "late_planner").unwrap();
    let big_sub = reader
        .subscription::<OccupancyGrid>("/late/map", qos::map())
        .unwrap();
    let small_sub = reader
        .subscription::<OccupancyGrid>("/late/small", qos::map())
        .unwrap();
    let _tb = common::run_in_background(&b);
    let (got_small, got_big) = smol::block_on(futures::future::join(
        first_sample(&small_sub, joined, "one-cell map"),
        first_sample(&big_sub, joined, "16 MB map"),
    ));
    a.shutdown().trigger();
    b.shutdown().trigger();
    assert_eq!(got_small.0.data, small.data);
    assert!(got_big.0.data == map.data, "the 16 MB map arrived changed");
    assert_eq!(got_big.0.info, map.info);
    println!(
        "LATENCY OccupancyGrid {SIDE}x{SIDE}, RustDDS -> a late-joining RustDDS participant: {:.1} MB in {:.1} ms from its start (a one-cell map on another topic: {:.1} ms)",
        map.data.len() as f64 / 1e6,
        got_big.1.as_secs_f64() * 1e3,
        got_small.1.as_secs_f64() * 1e3
    );
}

/// The first sample on `sub`, and how long after `since` it came (panics after PATIENCE).
async fn first_sample(
    sub: &ros2_client::Subscription<OccupancyGrid>,
    since: Instant,
    what: &str,
) -> (OccupancyGrid, Duration) {
    let stream = sub.async_stream();
    futures::pin_mut!(stream);
    let got = async {
        loop {
            if let Some(Ok((m, _))) = stream.next().await {
                return (m, since.elapsed());
            }
        }
    };
    match futures::future::select(Box::pin(got), smol::Timer::after(PATIENCE)).await {
        futures::future::Either::Left((got, _)) => got,
        futures::future::Either::Right(_) => panic!(
            "no {what} within {PATIENCE:?}; log:\n{}",
            common::log_tail(60)
        ),
    }
}
