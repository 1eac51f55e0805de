//! `gpu_planning bench services`: every node's service called over DDS, end to end, as a client
//! on the robot's computer meets it. The nodes run in this process on one participant, the
//! client on another (RustDDS both sides, loopback), and each case is called one request at a
//! time: p50 / p99 round trip, calls per second, and where the time goes (inside the node: the
//! handler, with the computation and its message conversions, and the rest of the node's
//! serving; outside it: serialisation, DDS and the client). Each backend runs in turn on a
//! domain of its own, and every CUDA response is checked equal to the CPU backend's response to
//! the same request (the benchmark stops at a difference).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

use futures::StreamExt;
use ros2_client::{Client, Message};

use super::median;
use crate::bag::scenes::{cloud, pose};
use crate::cellgraph::arrangement::Arrangement;
use crate::compute::BackendKind;
use crate::error::{Error, Result};
use crate::nodes::timings;
use crate::ros::msg::geometry_msgs::Point;
use crate::ros::msg::gpu_planning_msgs::{
    ApspStatus, BuildCellGraph, BuildCellGraphRequest, ExtractPolyline, ExtractPolylineRequest,
    KNearest, KNearestRequest, QuadricArrangement, ShortestPath, ShortestPathRequest,
    WeightedGraph,
};
use crate::ros::msg::nav_msgs::{GetPlan, GetPlanRequest, OccupancyGrid};
use crate::ros::msg::sensor_msgs::{Image, PointCloud2};
use crate::ros::{qos, NodeContext, ParamsFile, RosArgs, RosRuntime};

/// `gpu_planning bench services`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Backends, one after the other; the first is the reference the others must equal.
    #[arg(long, value_delimiter = ',', default_value = "cpu,cuda")]
    backends: Vec<BackendKind>,
    /// Timed calls per case (after the warm-up calls).
    #[arg(long, default_value_t = 100)]
    calls: usize,
    /// Timed calls per case on the CPU backend.
    #[arg(long, default_value_t = 10)]
    cpu_calls: usize,
    #[arg(long, default_value_t = 3)]
    warmup: usize,
    /// Side of the square maps get_plan plans on (0.05 m cells, 20 % occupied at random).
    #[arg(long, value_delimiter = ',', default_value = "1000,4000")]
    map_sizes: Vec<u32>,
    /// Points of the cloud knn searches (3-D, uniform).
    #[arg(long, default_value_t = 1 << 20)]
    cloud_points: usize,
    #[arg(long, default_value_t = 10_000)]
    knn_queries: usize,
    #[arg(long, default_value_t = 1)]
    k: u32,
    /// Vertices of the graph shortest_path answers on (solved when it arrives).
    #[arg(long, default_value_t = 2000)]
    vertices: u32,
    /// Share of the vertex pairs of that graph that are edges (0.85 at 2000 vertices: a
    /// WeightedGraph of 3.4M edges, 41 MB).
    #[arg(long, default_value_t = 0.01)]
    graph_density: f64,
    /// Source-target pairs per shortest_path call.
    #[arg(long, default_value_t = 100)]
    pairs: u32,
    /// GUIDES:POINTS of extract, on a 1024 x 1024 image.
    #[arg(long, default_value = "8:1024")]
    extract: String,
    /// SAMPLES:CONSTRAINTS of build.
    #[arg(long, default_value = "44000:256")]
    build: String,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// First DDS domain (one per backend from here).
    #[arg(long, default_value_t = 91)]
    domain_id: u16,
}

/// One case's measurements on one backend.
struct Case {
    name: String,
    /// Round trips, ms.
    rtt: Vec<f64>,
    /// When each timed call was sent.
    sent: Vec<Instant>,
    samples: Vec<timings::Sample>,
    /// A digest of each response's payload, in call order.
    digests: Vec<u64>,
}

impl Args {
    pub fn run(self) -> Result<()> {
        let (guides, points) = super::harness::parse_pair_u32("--extract", &self.extract)?;
        let (samples, constraints) = super::harness::parse_pair_u32("--build", &self.build)?;
        let inputs = Inputs::new(&self, (guides, points), (samples, constraints))?;
        timings::record(true);
        println!(
            "one request at a time; medians and p99 over the timed calls after {} warm-up calls; in node = request taken up by the node to response handed to the writer; request = its way from the client's call to the node, response = the rest outside the node (the answer's way back, the client's decoding); handler = the service's own work (compute and message conversions); every response equal to the {} backend's",
            self.warmup, self.backends[0]
        );
        println!("| backend | service | case | calls | p50 ms | p99 ms | max ms | calls/s | handler p50 / p99 ms | in node p50 ms | outside the node p50 / p99 ms | of that: request / response p50 ms |");
        println!("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        let mut reference: Option<Vec<Case>> = None;
        for (i, &kind) in self.backends.iter().enumerate() {
            let calls = if kind == BackendKind::Cpu {
                self.cpu_calls
            } else {
                self.calls
            };
            let (cases, delivered) =
                run_backend(kind, self.domain_id + i as u16, &inputs, self.warmup, calls)?;
            for c in &cases {
                print_row(kind, c);
            }
            println!(
                "({kind}: each input in use this long after its first publication: {})",
                delivered.join(", ")
            );
            match &reference {
                None => reference = Some(cases),
                Some(r) => compare(r, &cases, kind)?,
            }
        }
        timings::record(false);
        Ok(())
    }
}

fn print_row(kind: BackendKind, c: &Case) {
    let pct = |mut v: Vec<f64>, q: f64| {
        v.sort_by(f64::total_cmp);
        v.get(((v.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    let handler: Vec<f64> = c.samples.iter().map(|s| s.handler_ms).collect();
    let in_node = median(c.samples.iter().map(|s| s.in_node_ms).collect());
    // Call by call (the node records one sample per call, in order), what DDS and the client
    // took: the round trip less the time in the node.
    let outside: Vec<f64> = c
        .rtt
        .iter()
        .zip(&c.samples)
        .map(|(r, s)| r - s.in_node_ms)
        .collect();
    // Of that, the request's way: sent by the client to taken up by the node (one process,
    // one clock); the rest is the response's way back and the client's decoding.
    let request: Vec<f64> = c
        .sent
        .iter()
        .zip(&c.samples)
        .map(|(t, s)| s.received.saturating_duration_since(*t).as_secs_f64() * 1e3)
        .collect();
    let response: Vec<f64> = outside.iter().zip(&request).map(|(o, q)| o - q).collect();
    let rtt = median(c.rtt.clone());
    let mean = c.rtt.iter().sum::<f64>() / c.rtt.len().max(1) as f64;
    let (service, case) = c.name.split_once(' ').unwrap_or((&c.name, ""));
    println!(
        "| {kind} | {service} | {case} | {} | {rtt:.2} | {:.2} | {:.2} | {:.0} | {:.2} / {:.2} | {in_node:.2} | {:.2} / {:.2} | {:.2} / {:.2} |",
        c.rtt.len(),
        pct(c.rtt.clone(), 0.99),
        pct(c.rtt.clone(), 1.0),
        1e3 / mean.max(1e-9),
        median(handler.clone()),
        pct(handler, 0.99),
        median(outside.clone()),
        pct(outside, 0.99),
        median(request),
        median(response),
    );
}

fn compare(reference: &[Case], other: &[Case], kind: BackendKind) -> Result<()> {
    for (r, o) in reference.iter().zip(other) {
        let n = r.digests.len().min(o.digests.len());
        if let Some(i) = (0..n).find(|&i| r.digests[i] != o.digests[i]) {
            return Err(Error::Gpu(format!(
                "{}: call {i} on {kind} differs from the reference backend's response",
                r.name
            )));
        }
    }
    Ok(())
}

/// Every request and topic input, made once before any backend runs.
struct Inputs {
    maps: Vec<(OccupancyGrid, Vec<GetPlanRequest>)>,
    cloud: PointCloud2,
    knn: KNearestRequest,
    graph: WeightedGraph,
    pairs: ShortestPathRequest,
    image: Image,
    extract: ExtractPolylineRequest,
    build: BuildCellGraphRequest,
}

/// Goals per map, cycled through so that each call plans to a goal other than the last one.
const GOALS: usize = 8;

impl Inputs {
    fn new(a: &Args, (guides, points): (u32, u32), (samples, l): (u32, u32)) -> Result<Inputs> {
        let mut rng = crate::rng::XorShift::new(a.seed);
        let maps = a
            .map_sizes
            .iter()
            .map(|&side| {
                let cells = side as usize * side as usize;
                let mut data: Vec<i8> = (0..cells)
                    .map(|_| if rng.next_u64() % 100 < 20 { 100 } else { 0 })
                    .collect();
                let res = 0.05;
                let at = |c: u32| (c as f64 + 0.5) * res;
                let start = (side / 10, side / 10);
                let mut reqs = Vec::new();
                for g in 0..GOALS as u32 {
                    let goal = (side / 2 + g * side / 20, side - side / 10 - g * side / 40);
                    for (x, y) in [start, goal] {
                        data[(y * side + x) as usize] = 0;
                    }
                    reqs.push(GetPlanRequest {
                        start: pose(at(start.0), at(start.1)),
                        goal: pose(at(goal.0), at(goal.1)),
                        tolerance: 0.0,
                    });
                }
                let mut m = OccupancyGrid {
                    data,
                    ..Default::default()
                };
                m.header.frame_id = "map".into();
                m.info.width = side;
                m.info.height = side;
                m.info.resolution = res as f32;
                m.info.origin.orientation = crate::ros::msg::geometry_msgs::Quaternion::identity();
                (m, reqs)
            })
            .collect();
        let cloud_pts = super::kdtree::uniform(a.cloud_points, 3, a.seed)?;
        let pts: Vec<[f32; 3]> = cloud_pts
            .coords
            .chunks_exact(3)
            .map(|c| [c[0], c[1], c[2]])
            .collect();
        let queries = super::kdtree::uniform(a.knn_queries, 3, a.seed ^ 0x51)?;
        let g = crate::apsp::synth::random_graph(a.vertices, a.graph_density, 1, 100, 0, a.seed);
        let crate::apsp::Weights::Int(w) = &g.weights else {
            return Err(Error::invalid("graph", "expected integer weights"));
        };
        let graph = WeightedGraph {
            vertex_count: g.vertices,
            edge_from: g.from.clone(),
            edge_to: g.to.clone(),
            integer_weights: w.clone(),
            ..Default::default()
        };
        let n = a.vertices.max(1);
        let (sources, targets) = (0..a.pairs)
            .map(|i| ((i * 37) % n, (i * 101 + 7) % n))
            .unzip();
        let side = 1024u32;
        let data = (0..side * side)
            .map(|i| {
                let (x, y) = ((i % side) as f64, (i / side) as f64);
                let band = ((x - 512.0 - 80.0 * (y / 150.0).sin()).abs() < 5.0) as u8;
                40 + 150 * band + (rng.next_u64() % 50) as u8
            })
            .collect();
        let image = Image {
            width: side,
            height: side,
            encoding: "mono8".into(),
            step: side,
            data,
            ..Default::default()
        };
        let arr = Arrangement::random(l as usize, a.seed);
        let build = BuildCellGraphRequest {
            constraints: QuadricArrangement {
                count: l,
                coefficients: arr.coefficients.iter().flatten().copied().collect(),
                ..Default::default()
            },
            sample_count: samples,
            seed: a.seed,
            ..Default::default()
        };
        Ok(Inputs {
            maps,
            cloud: cloud(&pts),
            knn: KNearestRequest {
                dimensions: 3,
                points: queries.coords,
                k: a.k,
            },
            graph,
            pairs: ShortestPathRequest { sources, targets },
            image,
            extract: ExtractPolylineRequest {
                a: Point {
                    x: 512.0,
                    y: 8.0,
                    z: 0.0,
                },
                b: Point {
                    x: 512.0,
                    y: 1015.0,
                    z: 0.0,
                },
                guides,
                points_per_guide: points,
                half_width: 120.0,
                max_angle: 30f64.to_radians(),
            },
            build,
        })
    }
}

fn digest(parts: impl Hash) -> u64 {
    let mut h = DefaultHasher::new();
    parts.hash(&mut h);
    h.finish()
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// The nodes on `kind` in this process, a client on a participant of its own, every case.
fn run_backend(
    kind: BackendKind,
    domain: u16,
    inputs: &Inputs,
    warmup: usize,
    calls: usize,
) -> Result<(Vec<Case>, Vec<String>)> {
    let mut args = RosArgs::default();
    args.params
        .push(("backend".into(), serde_yaml::Value::from(kind.to_string())));
    let server = RosRuntime::new(args, ParamsFile::default(), Some(domain))?;
    crate::nodes::start_all(&server)?;
    let client_rt = RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain))?;
    let threads: Vec<_> = [(&server, 4), (&client_rt, 2)]
        .into_iter()
        .flat_map(|(rt, n)| {
            (0..n).map(|_| {
                let (ex, sd) = (rt.executor().clone(), rt.shutdown().clone());
                std::thread::spawn(move || smol::block_on(ex.run(sd.wait())))
            })
        })
        .collect();
    let result = smol::block_on(cases(&client_rt, inputs, warmup, calls));
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
    for t in threads {
        let _ = t.join();
    }
    result
}

/// The timed cases, and how long each input took to be in use (for the table's footnote).
async fn cases(
    rt: &RosRuntime,
    inputs: &Inputs,
    warmup: usize,
    calls: usize,
) -> Result<(Vec<Case>, Vec<String>)> {
    let mut peer = NodeContext::new(rt, "bench_services")?;
    let map_pub = peer.publisher::<OccupancyGrid>("/map", qos::map())?;
    let plan = peer.client::<GetPlan>("/lee_planner/get_plan")?;
    let cloud_pub = peer.publisher::<PointCloud2>("/nearest_neighbors/cloud", qos::map())?;
    let knn = peer.client::<KNearest>("/nearest_neighbors/knn")?;
    let graph_pub = peer.publisher::<WeightedGraph>("/apsp/graph", qos::map())?;
    let status = peer.subscription::<ApspStatus>("/apsp/status", qos::map())?;
    let sp = peer.client::<ShortestPath>("/apsp/shortest_path")?;
    let image_pub = peer.publisher::<Image>("/polyline/image", qos::map())?;
    let extract = peer.client::<ExtractPolyline>("/polyline/extract")?;
    let build = peer.client::<BuildCellGraph>("/cell_graph/build")?;
    // A missed match is not fatal: the first calls below are retried until answered.
    let ten = Duration::from_secs(10);
    within(ten, plan.wait_for_service(peer.node())).await;
    within(ten, knn.wait_for_service(peer.node())).await;
    within(ten, sp.wait_for_service(peer.node())).await;
    within(ten, extract.wait_for_service(peer.node())).await;
    within(ten, build.wait_for_service(peer.node())).await;
    let mut out = Vec::new();
    let mut delivered = Vec::new();
    for (map, reqs) in &inputs.maps {
        map_pub.async_publish(map.clone()).await.map_err(dds)?;
        let side = map.info.width;
        // The planner has this map once a plan comes back non-empty.
        let ms = ready(
            "get_plan",
            &plan,
            reqs[0].clone(),
            |r| !r.plan.poses.is_empty(),
            || {
                let _ = map_pub.publish(map.clone());
            },
        )
        .await?;
        delivered.push(format!("map {side}x{side} {ms:.0} ms"));
        out.push(
            timed(
                format!("get_plan {side}x{side}, {GOALS} goals in turn"),
                "lee_planner: ~/get_plan",
                &plan,
                |i| reqs[i % reqs.len()].clone(),
                |r| {
                    let p: Vec<(u64, u64)> = r
                        .plan
                        .poses
                        .iter()
                        .map(|p| (p.pose.position.x.to_bits(), p.pose.position.y.to_bits()))
                        .collect();
                    if p.is_empty() {
                        return Err("empty plan".to_string());
                    }
                    Ok(digest(p))
                },
                warmup,
                calls,
            )
            .await?,
        );
    }
    cloud_pub
        .async_publish(inputs.cloud.clone())
        .await
        .map_err(dds)?;
    let knn_ms = ready(
        "knn",
        &knn,
        inputs.knn.clone(),
        |r| r.success,
        || {
            let _ = cloud_pub.publish(inputs.cloud.clone());
        },
    )
    .await?;
    delivered.push(format!(
        "cloud {} points {knn_ms:.0} ms",
        inputs.cloud.width
    ));
    out.push(
        timed(
            format!(
                "knn {} points, {} queries, k = {}",
                inputs.cloud.width,
                inputs.knn.points.len() / 3,
                inputs.knn.k
            ),
            "nearest_neighbors: ~/knn",
            &knn,
            |_| inputs.knn.clone(),
            |r| {
                if !r.success {
                    return Err(r.error.clone());
                }
                let d: Vec<u32> = r.neighbors.distances.iter().map(|x| x.to_bits()).collect();
                Ok(digest((&r.neighbors.indices, d, &r.neighbors.offsets)))
            },
            warmup,
            calls,
        )
        .await?,
    );
    // What the node's subscription does to the message before the solve: its CDR decode,
    // timed here on the same bytes (the numbers' sequences are read in one piece each).
    let bytes = ros2_client::dds::rustdds::cdr_encoding::to_vec::<
        WeightedGraph,
        byteorder::LittleEndian,
    >(&inputs.graph)
    .map_err(|e| Error::Ros(format!("WeightedGraph: {e}")))?;
    let decoded = Instant::now();
    let (copy, _) = ros2_client::dds::rustdds::cdr_encoding::from_bytes::<
        WeightedGraph,
        byteorder::LittleEndian,
    >(&bytes)
    .map_err(|e| Error::Ros(format!("WeightedGraph: {e}")))?;
    let decode_ms = decoded.elapsed().as_secs_f64() * 1e3;
    if copy.edge_from.len() != inputs.graph.edge_from.len() {
        return Err(Error::Ros("WeightedGraph: the decode lost edges".into()));
    }
    let sent = Instant::now();
    graph_pub
        .async_publish(inputs.graph.clone())
        .await
        .map_err(dds)?;
    let statuses = status.async_stream();
    futures::pin_mut!(statuses);
    loop {
        let s = within(Duration::from_secs(600), statuses.next())
            .await
            .flatten()
            .ok_or_else(|| Error::Ros("no apsp status within 600 s".into()))?
            .map_err(dds)?
            .0;
        if s.vertex_count == inputs.graph.vertex_count {
            if !s.error.is_empty() {
                return Err(Error::Ros(format!("apsp: {}", s.error)));
            }
            delivered.push(format!(
                "graph of {} edges ({:.1} MB) {:.1} ms from publication to its status, of which \
                 the node's solve {:.1} ms (its CDR decode, timed here: {decode_ms:.1} ms)",
                inputs.graph.edge_from.len(),
                bytes.len() as f64 / 1e6,
                sent.elapsed().as_secs_f64() * 1e3,
                s.compute_time_s * 1e3
            ));
            break;
        }
    }
    out.push(
        timed(
            format!(
                "shortest_path n = {}, {} pairs",
                inputs.graph.vertex_count,
                inputs.pairs.sources.len()
            ),
            "apsp: ~/shortest_path",
            &sp,
            |_| inputs.pairs.clone(),
            |r| {
                if !r.success {
                    return Err(r.error.clone());
                }
                Ok(digest((
                    bits(&r.distances),
                    &r.path_offsets,
                    &r.path_vertices,
                )))
            },
            warmup,
            calls,
        )
        .await?,
    );
    image_pub
        .async_publish(inputs.image.clone())
        .await
        .map_err(dds)?;
    let extract_ms = ready(
        "extract",
        &extract,
        inputs.extract.clone(),
        |r| r.success,
        || {
            let _ = image_pub.publish(inputs.image.clone());
        },
    )
    .await?;
    delivered.push(format!("image {extract_ms:.0} ms"));
    out.push(
        timed(
            format!(
                "extract {} x {}, 1024x1024 image",
                inputs.extract.guides, inputs.extract.points_per_guide
            ),
            "polyline: ~/extract",
            &extract,
            |_| inputs.extract.clone(),
            |r| {
                if !r.success {
                    return Err(r.error.clone());
                }
                let p: Vec<(u64, u64)> = r
                    .points
                    .iter()
                    .map(|p| (p.x.to_bits(), p.y.to_bits()))
                    .collect();
                Ok(digest((p, r.score.to_bits(), r.feasible)))
            },
            warmup,
            calls,
        )
        .await?,
    );
    // One seed for every call (the node makes the samples once and keeps them, as for every
    // rebuild over its `sample_count` samples), then a new seed each call (made every time).
    let seeded = |i: usize| BuildCellGraphRequest {
        seed: inputs.build.seed.wrapping_add(1 + i as u64),
        ..inputs.build.clone()
    };
    for fresh in [false, true] {
        let what = if fresh {
            "a new seed each call"
        } else {
            "one seed"
        };
        out.push(
            timed(
                format!(
                    "build {} x {}, {what}",
                    inputs.build.sample_count, inputs.build.constraints.count
                ),
                "cell_graph: ~/build",
                &build,
                |i| {
                    if fresh {
                        seeded(i)
                    } else {
                        inputs.build.clone()
                    }
                },
                |r| {
                    if !r.success {
                        return Err(r.error.clone());
                    }
                    let g = &r.graph;
                    Ok(digest((
                        &g.cells,
                        &g.sample_counts,
                        &g.representatives,
                        &g.edge_from,
                        &g.edge_to,
                        &g.edge_bits,
                    )))
                },
                warmup,
                calls,
            )
            .await?,
        );
    }
    Ok((out, delivered))
}

fn dds(e: impl std::fmt::Debug) -> Error {
    Error::Ros(format!("DDS: {e:?}"))
}

/// `f` or None after `limit`.
async fn within<T>(limit: Duration, f: impl std::future::Future<Output = T>) -> Option<T> {
    match futures::future::select(Box::pin(f), Box::pin(smol::Timer::after(limit))).await {
        futures::future::Either::Left((v, _)) => Some(v),
        futures::future::Either::Right(_) => None,
    }
}

/// Calls until `done` holds (the node has its input) and returns how long that took (ms) from
/// the input's first publication: a request or a topic sample sent before discovery settled can be
/// lost, so the input is published again when 2 s pass without a usable answer (60 s at most).
/// Sooner would pile a 16 MB input's copies onto the link still repairing the first.
async fn ready<Req, Resp>(
    what: &str,
    client: &Client<Req, Resp>,
    req: Req,
    done: impl Fn(&Resp) -> bool,
    resend: impl Fn(),
) -> Result<f64>
where
    Req: Message + Clone + 'static,
    Resp: Message + 'static,
{
    let t = Instant::now();
    let mut sent = Instant::now();
    while t.elapsed() < Duration::from_secs(60) {
        if let Some(Ok(r)) = within(
            Duration::from_secs(5),
            client.async_call_service(req.clone()),
        )
        .await
        {
            if done(&r) {
                return Ok(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        if sent.elapsed() >= Duration::from_secs(2) {
            resend();
            sent = Instant::now();
        }
        smol::Timer::after(Duration::from_millis(20)).await;
    }
    Err(Error::Ros(format!("{what}: no usable answer within 60 s")))
}

/// `warmup` then `calls` calls, one at a time; each response checked and digested.
#[allow(clippy::too_many_arguments)]
async fn timed<Req, Resp>(
    name: String,
    service: &str,
    client: &Client<Req, Resp>,
    request: impl Fn(usize) -> Req,
    check: impl Fn(&Resp) -> std::result::Result<u64, String>,
    warmup: usize,
    calls: usize,
) -> Result<Case>
where
    Req: Message + Clone + 'static,
    Resp: Message + 'static,
{
    let mut case = Case {
        name,
        rtt: Vec::with_capacity(calls),
        sent: Vec::with_capacity(calls),
        samples: vec![],
        digests: Vec::with_capacity(calls),
    };
    for i in 0..warmup + calls {
        if i == warmup {
            let _ = timings::take(service);
        }
        let req = request(i);
        let t = Instant::now();
        let r = within(Duration::from_secs(120), client.async_call_service(req))
            .await
            .ok_or_else(|| Error::Ros(format!("{}: call {i} unanswered in 120 s", case.name)))?
            .map_err(dds)?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let d = check(&r).map_err(|e| Error::Ros(format!("{}: call {i}: {e}", case.name)))?;
        if i >= warmup {
            case.rtt.push(ms);
            case.sent.push(t);
            case.digests.push(d);
        }
    }
    case.samples = timings::take(service);
    Ok(case)
}
