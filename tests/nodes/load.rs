//! Load: several clients fire bursts of ~/get_plan and ~/knn calls at once, with no retries,
//! while a peer keeps replacing the map and the cloud. Every call must be answered exactly
//! once, and every answer must equal the CPU reference on one whole map or cloud version: the
//! plan's frame_id names its map version, and a knn answer must equal one version's answer
//! (the versions' answers differ, which the test checks first). GPU_PLANNING_SOAK_ROUNDS=N
//! repeats the burst N times and prints the resident memory after each round.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gpu_planning::compute::Backend;
use gpu_planning::kdtree::cpu::{build as cpu_build, knn};
use gpu_planning::kdtree::{Metric, Points};
use gpu_planning::lee::{Config, Connectivity, Grid, Planner};
use gpu_planning::rng::XorShift;
use gpu_planning::ros::msg::geometry_msgs::{Point, Pose, PoseStamped, Quaternion};
use gpu_planning::ros::msg::gpu_planning_msgs::{KNearest, KNearestRequest, KNearestResponse};
use gpu_planning::ros::msg::nav_msgs::{GetPlan, GetPlanRequest, GetPlanResponse, OccupancyGrid};
use gpu_planning::ros::msg::sensor_msgs::PointCloud2;
use gpu_planning::ros::{qos, NodeContext, ParamsFile, RosArgs, RosRuntime};
use ros2_client::{Client, Message};

use crate::common;
use crate::nearest_neighbors_node::cloud;

const CLIENTS: usize = 4;
const CALLS: usize = 50;
const VERSIONS: usize = 4;
const PAIRS: usize = 8;
const QUERY_SETS: usize = 8;
const K: usize = 3;
const W: u32 = 320;
const H: u32 = 240;

struct MapVersion {
    msg: OccupancyGrid,
    /// Expected cells of each (start, goal) pair's path; empty when unreachable.
    paths: Vec<Vec<(u32, u32)>>,
}

/// A (start, goal) pair of cells.
type Pair = ((u32, u32), (u32, u32));

fn map_version(v: usize, pairs: &[Pair]) -> MapVersion {
    let mut rng = XorShift::new(1000 + v as u64);
    let mut data: Vec<i8> = (0..W * H)
        .map(|_| if rng.next_u64() % 100 < 28 { 100 } else { 0 })
        .collect();
    for &(s, g) in pairs {
        data[(s.1 * W + s.0) as usize] = 0;
        data[(g.1 * W + g.0) as usize] = 0;
    }
    let grid = Grid::from_occupancy(W, H, &data, 65, false, Connectivity::Four).unwrap();
    let planner = Planner::new(&Backend::Cpu, grid, Config::default()).unwrap();
    let paths = pairs
        .iter()
        .map(|&(s, g)| {
            let p = (s.0 as i64, s.1 as i64);
            let q = (g.0 as i64, g.1 as i64);
            planner.plan(p, q, false).unwrap().path
        })
        .collect();
    let mut msg = OccupancyGrid {
        data,
        ..Default::default()
    };
    msg.header.frame_id = format!("map_v{v}");
    msg.info.width = W;
    msg.info.height = H;
    msg.info.resolution = 1.0;
    msg.info.origin.orientation = Quaternion::identity();
    MapVersion { msg, paths }
}

fn pose(c: (u32, u32)) -> PoseStamped {
    PoseStamped {
        // Empty frame: whichever map is current.
        header: Default::default(),
        pose: Pose {
            position: Point {
                x: c.0 as f64 + 0.5,
                y: c.1 as f64 + 0.5,
                z: 0.0,
            },
            orientation: Quaternion::identity(),
        },
    }
}

type Rows = Vec<Vec<(f32, u32)>>;

fn rows(r: &KNearestResponse) -> Rows {
    let m = &r.neighbors;
    m.offsets
        .windows(2)
        .map(|w| {
            (w[0] as usize..w[1] as usize)
                .map(|i| (m.distances[i], m.indices[i]))
                .collect()
        })
        .collect()
}

/// Sends every request at once, then collects responses by request id (no retries): a
/// missing response is a lost request.
async fn burst<Q: Message + Clone + 'static, R: Message + 'static>(
    client: &Client<Q, R>,
    requests: Vec<Q>,
) -> Vec<Option<R>> {
    let mut ids = BTreeMap::new();
    for (i, q) in requests.into_iter().enumerate() {
        let id = client.async_send_request(q).await.expect("request sent");
        ids.insert(id, i);
    }
    let mut out: Vec<Option<R>> = (0..ids.len()).map(|_| None).collect();
    let mut left = ids.len();
    let give_up = Instant::now() + Duration::from_secs(180);
    while left > 0 && Instant::now() < give_up {
        match client.receive_response() {
            Ok(Some((id, r))) => {
                // Every client of a service reads every response (DDS topics); others' and
                // the warm-up's late ones are not ours.
                let Some(&i) = ids.get(&id) else {
                    continue;
                };
                assert!(out[i].is_none(), "request {i} answered twice");
                out[i] = Some(r);
                left -= 1;
            }
            Ok(None) => {
                smol::Timer::after(Duration::from_millis(2)).await;
            }
            Err(e) => panic!("response not decoded: {e:?}"),
        }
    }
    out
}

/// One call retried until it is answered: used only before the burst, to let discovery settle.
async fn warm_up<Q: Message + Clone + 'static, R: Message + 'static>(
    client: &Client<Q, R>,
    q: Q,
    ok: impl Fn(&R) -> bool,
) {
    for _ in 0..100 {
        let attempt = futures::future::select(
            Box::pin(client.async_call_service(q.clone())),
            Box::pin(smol::Timer::after(Duration::from_secs(1))),
        )
        .await;
        if let futures::future::Either::Left((Ok(r), _)) = attempt {
            if ok(&r) {
                return;
            }
            // Answered, but the map or cloud has not arrived (or is still being uploaded).
            smol::Timer::after(Duration::from_millis(100)).await;
        }
    }
    panic!("no useful answer within 100 s of warm-up");
}

fn resident_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

#[test]
fn bursts_of_calls_while_inputs_change_are_all_answered_and_right() {
    let rounds: usize = gpu_planning::env::SOAK_ROUNDS
        .get()
        .ok_or(())
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let domain = common::unique_domain();
    let params = ParamsFile::parse(&format!(
        "nearest_neighbors:\n  ros__parameters:\n    k: {K}\n"
    ))
    .unwrap();
    let server = RosRuntime::new(RosArgs::default(), params, Some(domain)).unwrap();
    gpu_planning::nodes::start(&server, &["lee_planner", "nearest_neighbors"]).unwrap();
    let client_rt =
        RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let mut peer = NodeContext::new(&client_rt, "load_peer").unwrap();
    let map_pub = peer.publisher::<OccupancyGrid>("/map", qos::map()).unwrap();
    let cloud_pub = peer
        .publisher::<PointCloud2>("/nearest_neighbors/cloud", qos::map())
        .unwrap();
    let plan_clients: Vec<Client<GetPlanRequest, GetPlanResponse>> = (0..CLIENTS)
        .map(|_| peer.client::<GetPlan>("/lee_planner/get_plan").unwrap())
        .collect();
    let knn_clients: Vec<Client<KNearestRequest, KNearestResponse>> = (0..CLIENTS)
        .map(|_| peer.client::<KNearest>("/nearest_neighbors/knn").unwrap())
        .collect();
    let _a = common::run_in_background(&server);
    let _b = common::run_in_background(&client_rt);

    // Inputs and their CPU answers, for every version.
    let mut rng = XorShift::new(gpu_planning::compute::testing::seed(0));
    let mut cell = |m: u32| (rng.next_u64() % m as u64) as u32;
    let pairs: Vec<_> = (0..PAIRS)
        .map(|_| ((cell(W), cell(H)), (cell(W), cell(H))))
        .collect();
    let maps: Vec<MapVersion> = (0..VERSIONS).map(|v| map_version(v, &pairs)).collect();
    let mut rng = XorShift::new(gpu_planning::compute::testing::seed(7));
    let mut unit = move || (rng.next_u64() % 10_000) as f32 / 100.0;
    let clouds: Vec<Vec<[f32; 3]>> = (0..VERSIONS)
        .map(|_| (0..3000).map(|_| [unit(), unit(), unit()]).collect())
        .collect();
    let query_sets: Vec<Vec<f32>> = (0..QUERY_SETS)
        .map(|_| (0..3 * 40).map(|_| unit()).collect())
        .collect();
    let knn_expected: Vec<Vec<Rows>> = clouds
        .iter()
        .map(|c| {
            let flat: Vec<f32> = c.iter().flatten().copied().collect();
            let tree = cpu_build(&Points::new(3, flat).unwrap());
            query_sets
                .iter()
                .map(|q| {
                    knn(&tree, q, K, Metric::Euclidean)
                        .unwrap()
                        .into_iter()
                        .map(|r| r.into_iter().collect())
                        .collect()
                })
                .collect()
        })
        .collect();
    for (v, answers) in knn_expected.iter().enumerate().skip(1) {
        for (q, a) in answers.iter().enumerate() {
            assert_ne!(
                knn_expected[0][q], *a,
                "clouds 0 and {v} answer query set {q} alike: the check would be blind"
            );
        }
    }

    smol::block_on(async {
        for c in &plan_clients {
            common::settle_discovery("get_plan", c.wait_for_service(peer.node())).await;
        }
        for c in &knn_clients {
            common::settle_discovery("knn", c.wait_for_service(peer.node())).await;
        }
        map_pub.async_publish(maps[0].msg.clone()).await.unwrap();
        cloud_pub.async_publish(cloud(&clouds[0])).await.unwrap();
        let plan_req = |i: usize| GetPlanRequest {
            start: pose(pairs[i % PAIRS].0),
            goal: pose(pairs[i % PAIRS].1),
            tolerance: 0.0,
        };
        let knn_req = |i: usize| KNearestRequest {
            dimensions: 3,
            points: query_sets[i % QUERY_SETS].clone(),
            k: K as u32,
        };
        for c in &plan_clients {
            warm_up(c, plan_req(0), |r| !r.plan.header.frame_id.is_empty()).await;
        }
        for c in &knn_clients {
            warm_up(c, knn_req(0), |r| r.success).await;
        }

        let mut rss = vec![resident_kib()];
        for round in 0..rounds {
            // The churn: a new map and a new cloud every 20 ms until the burst is answered.
            let done = Arc::new(AtomicBool::new(false));
            let churn = {
                let done = done.clone();
                let (map_pub, cloud_pub, maps, clouds) = (&map_pub, &cloud_pub, &maps, &clouds);
                async move {
                    let mut published = 0usize;
                    while !done.load(Ordering::Acquire) {
                        let v = (published + 1) % VERSIONS;
                        map_pub.async_publish(maps[v].msg.clone()).await.unwrap();
                        cloud_pub.async_publish(cloud(&clouds[v])).await.unwrap();
                        published += 1;
                        smol::Timer::after(Duration::from_millis(20)).await;
                    }
                    published
                }
            };
            let started = Instant::now();
            let plans =
                futures::future::join_all(plan_clients.iter().enumerate().map(|(c, client)| {
                    burst(client, (0..CALLS).map(|i| plan_req(c + i)).collect())
                }));
            let knns =
                futures::future::join_all(knn_clients.iter().enumerate().map(|(c, client)| {
                    burst(client, (0..CALLS).map(|i| knn_req(c + i)).collect())
                }));
            let calls = async {
                let r = futures::future::join(plans, knns).await;
                done.store(true, Ordering::Release);
                r
            };
            let ((plans, knns), published) = futures::future::join(calls, churn).await;
            let took = started.elapsed();

            let mut versions_seen = [0usize; VERSIONS];
            for (c, answers) in plans.iter().enumerate() {
                for (i, a) in answers.iter().enumerate() {
                    let a = a
                        .as_ref()
                        .unwrap_or_else(|| panic!("get_plan client {c} call {i} lost"));
                    let frame = &a.plan.header.frame_id;
                    let v: usize = frame
                        .strip_prefix("map_v")
                        .and_then(|v| v.parse().ok())
                        .unwrap_or_else(|| panic!("plan in frame '{frame}': no map version"));
                    versions_seen[v] += 1;
                    let got: Vec<(u32, u32)> = a
                        .plan
                        .poses
                        .iter()
                        .map(|p| (p.pose.position.x as u32, p.pose.position.y as u32))
                        .collect();
                    assert_eq!(
                        got,
                        maps[v].paths[(c + i) % PAIRS],
                        "client {c} call {i}: plan differs from the CPU's on map version {v}"
                    );
                    assert!(a.plan.poses.iter().all(|p| p.header.frame_id == *frame));
                }
            }
            for (c, answers) in knns.iter().enumerate() {
                for (i, a) in answers.iter().enumerate() {
                    let a = a
                        .as_ref()
                        .unwrap_or_else(|| panic!("knn client {c} call {i} lost"));
                    assert!(a.success, "knn client {c} call {i}: {}", a.error);
                    let q = (c + i) % QUERY_SETS;
                    let got = rows(a);
                    assert!(
                        (0..VERSIONS).any(|v| knn_expected[v][q] == got),
                        "knn client {c} call {i}: the answer is no cloud version's"
                    );
                }
            }
            rss.push(resident_kib());
            eprintln!(
                "load round {round}: {} get_plan + {} knn calls answered and right in {:.2} s \
                 while {published} map + cloud versions were published; plans per map \
                 version {versions_seen:?}; resident {} MiB",
                CLIENTS * CALLS,
                CLIENTS * CALLS,
                took.as_secs_f64(),
                rss.last().unwrap_or(&0) / 1024
            );
        }
        eprintln!("load: resident KiB before and after each round: {rss:?}");
        // A soak (many rounds) must not grow once warm: rounds after the fifth add at most
        // 32 MiB in all (allocator noise), where a leak of one sample per call adds ~30 MiB
        // per round.
        if rounds >= 10 {
            let grown = rss[rounds].saturating_sub(rss[5]);
            assert!(
                grown < 32 * 1024,
                "resident memory grew {grown} KiB over rounds 5..{rounds}: {rss:?}"
            );
        }
    });
    common::assert_device_did_the_work(&server, &["lee_planner", "nearest_neighbors"]);
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}
