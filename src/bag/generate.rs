//! The bags under `tests/data/bags/`: one scenario per node (inputs on its topics, calls of its
//! services, bad requests among them), played into freshly started nodes on the CPU backend,
//! with everything recorded. The CPU is the reference that every GPU variant must equal, so
//! the outputs in these bags are what a replay on any backend must reproduce.

use std::path::Path;

use super::cdr;
use super::play::{self, PlayOptions, Recording, Step, TimedStep};
use super::qos::TopicQos;
use super::replay::{with_fresh_nodes, EVENT_SUFFIX};
use super::scenes::{cloud, demo_image, demo_map, pose};
use super::types::{self, stamp_of, Event};
use super::writer::BagWriter;
use crate::cellgraph::samples::shoemake;
use crate::cellgraph::Arrangement;
use crate::compute::Backend;
use crate::error::{Error, Result};
use crate::ros::msg::geometry_msgs::{Point, Pose, PoseArray, Quaternion};
use crate::ros::msg::gpu_planning_msgs::{
    BuildCellGraphRequest, ExtractPolylineRequest, FindRotationPathRequest, KNearestRequest,
    QuadricArrangement, RadiusSearchRequest, ShortestPathRequest, WeightedGraph,
};
use crate::ros::msg::nav_msgs::GetPlanRequest;
use crate::ros::msg::sensor_msgs::Image;
use crate::ros::msg::service_msgs::ServiceEventInfo;

/// 2026-01-01T00:00:00Z: bags start here, so regenerated inputs are byte for byte the same.
const EPOCH_NS: u64 = 1_767_225_600_000_000_000;

/// Who made the calls in these bags (16 bytes, as an rmw gid).
const CLIENT_GID: [u8; 16] = *b"gpu_planning_bag";

pub struct Scenario {
    pub name: &'static str,
    /// What it exercises, for `bag generate` to print.
    pub about: &'static str,
    pub steps: Vec<TimedStep>,
}

struct Builder {
    steps: Vec<TimedStep>,
    calls: i64,
}

impl Builder {
    fn new() -> Builder {
        Builder {
            steps: Vec::new(),
            calls: 0,
        }
    }

    fn publish<T: crate::ros::msg::RosMessage + serde::Serialize>(
        &mut self,
        t_s: f64,
        topic: &str,
        qos: TopicQos,
        msg: &T,
    ) -> Result<()> {
        self.steps.push(TimedStep {
            time_ns: EPOCH_NS + (t_s * 1e9) as u64,
            step: Step::Publish {
                topic: topic.into(),
                ty: format!("{}/msg/{}", T::PACKAGE, T::NAME),
                qos,
                cdr: cdr::encode(msg)?,
            },
        });
        Ok(())
    }

    fn call<S: crate::ros::msg::RosService>(
        &mut self,
        t_s: f64,
        service: &str,
        req: &S::Request,
    ) -> Result<()> {
        self.calls += 1;
        self.steps.push(TimedStep {
            time_ns: EPOCH_NS + (t_s * 1e9) as u64,
            step: Step::Call {
                service: service.into(),
                ty: format!("{}/srv/{}", S::PACKAGE, S::NAME),
                request: cdr::encode(req)?,
                client_gid: CLIENT_GID,
                sequence_number: self.calls,
            },
        });
        Ok(())
    }
}

fn quat(q: [f64; 4]) -> Quaternion {
    Quaternion {
        x: q[0],
        y: q[1],
        z: q[2],
        w: q[3],
    }
}

fn lee_planner() -> Result<Scenario> {
    use crate::ros::msg::nav_msgs::GetPlan;
    let mut b = Builder::new();
    let map = demo_map();
    b.publish(0.0, "/map", TopicQos::latched(), &map)?;
    b.publish(0.5, "/start_pose", TopicQos::default(), &pose(1.05, 1.05))?;
    b.publish(1.0, "/goal_pose", TopicQos::default(), &pose(18.05, 13.05))?;
    let across = GetPlanRequest {
        start: pose(0.55, 0.55),
        goal: pose(19.45, 14.45),
        tolerance: 0.0,
    };
    b.call::<GetPlan>(2.0, "/lee_planner/get_plan", &across)?;
    // A wall across the middle room, open only at its top: the path must climb above the
    // door in the right wall and come back down.
    let mut closed = map.clone();
    let w = closed.info.width as usize;
    for y in 0..141 {
        closed.data[y * w + 95] = 100;
    }
    b.publish(3.0, "/map", TopicQos::latched(), &closed)?;
    b.call::<GetPlan>(4.0, "/lee_planner/get_plan", &across)?;
    // A goal on a wall: an empty plan (GetPlan has no error field).
    let blocked = GetPlanRequest {
        goal: pose(6.05, 5.05),
        ..across
    };
    b.call::<GetPlan>(5.0, "/lee_planner/get_plan", &blocked)?;
    Ok(Scenario {
        name: "lee_planner",
        about: "a map, an RViz-style start and goal, GetPlan calls, a wall added, a goal on a wall",
        steps: b.steps,
    })
}

fn apsp() -> Result<Scenario> {
    use crate::ros::msg::gpu_planning_msgs::ShortestPath;
    let mut b = Builder::new();
    let g = crate::apsp::synth::random_graph(300, 0.02, 1, 100, 20, 3);
    let crate::apsp::Weights::Int(w) = &g.weights else {
        return Err(Error::invalid("graph", "expected integer weights"));
    };
    let mut graph = WeightedGraph {
        vertex_count: g.vertices,
        edge_from: g.from.clone(),
        edge_to: g.to.clone(),
        integer_weights: w.clone(),
        ..Default::default()
    };
    graph.header.frame_id = "graph".into();
    b.publish(0.0, "/apsp/graph", TopicQos::latched(), &graph)?;
    let pairs = ShortestPathRequest {
        sources: vec![0, 10, 200, 299, 5],
        targets: vec![299, 150, 7, 0, 5],
    };
    b.call::<ShortestPath>(1.0, "/apsp/shortest_path", &pairs)?;
    // A negative cycle 1 -> 2 -> 3 -> 1: reported; the previous graph keeps answering.
    let cycle = WeightedGraph {
        vertex_count: 5,
        edge_from: vec![0, 1, 2, 3, 3],
        edge_to: vec![1, 2, 3, 1, 4],
        integer_weights: vec![1, 2, -5, 1, 1],
        ..Default::default()
    };
    b.publish(2.0, "/apsp/graph", TopicQos::latched(), &cycle)?;
    b.call::<ShortestPath>(3.0, "/apsp/shortest_path", &pairs)?;
    // Float weights: solved in f32.
    let n = 40u32;
    let from: Vec<u32> = (0..n).flat_map(|i| [i, i]).collect();
    let to: Vec<u32> = (0..n)
        .flat_map(|i| [(i + 1) % n, (i * 7 + 3) % n])
        .collect();
    let weights: Vec<f32> = (0..2 * n).map(|i| 0.25 + (i % 9) as f32 * 0.5).collect();
    let floats = WeightedGraph {
        vertex_count: n,
        edge_from: from,
        edge_to: to,
        weights,
        ..Default::default()
    };
    b.publish(4.0, "/apsp/graph", TopicQos::latched(), &floats)?;
    let float_pairs = ShortestPathRequest {
        sources: vec![0, 17, 39],
        targets: vec![39, 3, 0],
    };
    b.call::<ShortestPath>(5.0, "/apsp/shortest_path", &float_pairs)?;
    // A vertex out of range: an error naming it.
    let bad = ShortestPathRequest {
        sources: vec![0],
        targets: vec![n],
    };
    b.call::<ShortestPath>(6.0, "/apsp/shortest_path", &bad)?;
    Ok(Scenario {
        name: "apsp",
        about: "an integer graph, a graph with a negative cycle, a float graph, paths, a vertex out of range",
        steps: b.steps,
    })
}

fn polyline() -> Result<Scenario> {
    use crate::ros::msg::gpu_planning_msgs::ExtractPolyline;
    let mut b = Builder::new();
    let gray = demo_image();
    let mut img = Image {
        height: gray.height,
        width: gray.width,
        encoding: "mono8".into(),
        step: gray.width,
        data: gray.data.iter().map(|&v| v as u8).collect(),
        ..Default::default()
    };
    img.header.frame_id = "camera".into();
    b.publish(0.0, "/polyline/image", TopicQos::default(), &img)?;
    let point = |x, y| Point { x, y, z: 0.0 };
    let req = ExtractPolylineRequest {
        a: point(5.0, 42.0),
        b: point(315.0, 197.0),
        guides: 8,
        points_per_guide: 64,
        half_width: 30.0,
        max_angle: 25f64.to_radians(),
    };
    b.call::<ExtractPolyline>(1.0, "/polyline/extract", &req)?;
    let tight = ExtractPolylineRequest {
        guides: 6,
        points_per_guide: 48,
        max_angle: 8f64.to_radians(),
        ..req.clone()
    };
    b.call::<ExtractPolyline>(2.0, "/polyline/extract", &tight)?;
    let off = ExtractPolylineRequest {
        a: point(-3.0, 42.0),
        ..req
    };
    b.call::<ExtractPolyline>(3.0, "/polyline/extract", &off)?;
    Ok(Scenario {
        name: "polyline",
        about: "a mono8 image, two extractions (25 and 8 degrees), an end off the image",
        steps: b.steps,
    })
}

fn cell_graph() -> Result<Scenario> {
    use crate::ros::msg::gpu_planning_msgs::{BuildCellGraph, FindRotationPath};
    let mut b = Builder::new();
    let samples = PoseArray {
        poses: shoemake(3000, 3)
            .into_iter()
            .map(|q| Pose {
                orientation: quat(q),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    b.publish(0.0, "/cell_graph/samples", TopicQos::latched(), &samples)?;
    let arr = Arrangement::random(10, 5);
    let constraints = QuadricArrangement {
        count: arr.len() as u32,
        coefficients: arr.coefficients.iter().flatten().copied().collect(),
        ..Default::default()
    };
    b.publish(
        0.5,
        "/cell_graph/constraints",
        TopicQos::latched(),
        &constraints,
    )?;
    let q = shoemake(2, 9);
    let find = FindRotationPathRequest {
        start: quat(q[0]),
        goal: quat(q[1]),
    };
    b.call::<FindRotationPath>(1.5, "/cell_graph/find_path", &find)?;
    for (t, algorithm) in [(2.5, "tree"), (3.5, "heuristic")] {
        let req = BuildCellGraphRequest {
            constraints: QuadricArrangement {
                count: 12,
                coefficients: Arrangement::random(12, 8)
                    .coefficients
                    .iter()
                    .flatten()
                    .copied()
                    .collect(),
                ..Default::default()
            },
            sample_count: 5000,
            seed: 4,
            algorithm: algorithm.into(),
            ..Default::default()
        };
        b.call::<BuildCellGraph>(t, "/cell_graph/build", &req)?;
    }
    b.call::<FindRotationPath>(4.5, "/cell_graph/find_path", &find)?;
    Ok(Scenario {
        name: "cell_graph",
        about: "samples and 10 quadrics on topics, builds by tree and heuristic, rotation paths",
        steps: b.steps,
    })
}

fn nearest_neighbors() -> Result<Scenario> {
    use crate::ros::msg::gpu_planning_msgs::{KNearest, RadiusSearch};
    let mut b = Builder::new();
    let mut rng = crate::rng::XorShift::new(21);
    let mut unit = move || (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
    let mut pts: Vec<[f32; 3]> = (0..5000)
        .map(|_| [unit() * 10.0, unit() * 10.0, unit()])
        .collect();
    // Duplicates answer with their first copy's index.
    pts[4000] = pts[17];
    b.publish(
        0.0,
        "/nearest_neighbors/cloud",
        TopicQos::latched(),
        &cloud(&pts),
    )?;
    let orientations = PoseArray {
        poses: shoemake(1000, 12)
            .into_iter()
            .map(|q| Pose {
                orientation: quat(q),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    b.publish(
        0.3,
        "/nearest_neighbors/orientations",
        TopicQos::latched(),
        &orientations,
    )?;
    let queries: Vec<[f32; 3]> = (0..20)
        .map(|_| [unit() * 10.0, unit() * 10.0, unit()])
        .collect();
    b.publish(
        1.0,
        "/nearest_neighbors/queries",
        TopicQos::default(),
        &cloud(&queries),
    )?;
    let knn = KNearestRequest {
        dimensions: 3,
        points: vec![
            5.0, 5.0, 0.5, 1.0, 9.0, 0.0, pts[17][0], pts[17][1], pts[17][2],
        ],
        k: 5,
    };
    b.call::<KNearest>(2.0, "/nearest_neighbors/knn", &knn)?;
    let rot: Vec<f32> = shoemake(4, 13)
        .iter()
        .flatten()
        .map(|&v| v as f32)
        .collect();
    let knn4 = KNearestRequest {
        dimensions: 4,
        points: rot,
        k: 3,
    };
    b.call::<KNearest>(2.5, "/nearest_neighbors/knn", &knn4)?;
    let radius = RadiusSearchRequest {
        dimensions: 3,
        points: vec![2.0, 2.0, 0.5, 8.0, 1.0, 0.2],
        radius: 0.3,
        max_count: 0,
    };
    b.call::<RadiusSearch>(3.0, "/nearest_neighbors/radius", &radius)?;
    let bad = KNearestRequest {
        dimensions: 3,
        points: vec![1.0, 2.0, 3.0],
        k: 0,
    };
    b.call::<KNearest>(3.5, "/nearest_neighbors/knn", &bad)?;
    Ok(Scenario {
        name: "nearest_neighbors",
        about: "a cloud with a duplicate, orientations, a query cloud, 3-D and SO(3) knn, a radius search, k = 0",
        steps: b.steps,
    })
}

pub fn scenarios() -> Result<Vec<Scenario>> {
    Ok(vec![
        lee_planner()?,
        apsp()?,
        polyline()?,
        cell_graph()?,
        nearest_neighbors()?,
    ])
}

const MARKERS: &str = "visualization_msgs/msg/MarkerArray";

/// Output topics and types a scenario's node publishes.
fn outputs(name: &str) -> Vec<(String, String)> {
    let pairs: &[(&str, &str)] = match name {
        "lee_planner" => &[
            ("/lee_planner/path", "nav_msgs/msg/Path"),
            ("/lee_planner/distance_field", "nav_msgs/msg/OccupancyGrid"),
            ("/lee_planner/markers", MARKERS),
        ],
        "apsp" => &[("/apsp/status", "gpu_planning_msgs/msg/ApspStatus")],
        "polyline" => &[
            ("/polyline/polyline", "nav_msgs/msg/Path"),
            ("/polyline/markers", MARKERS),
        ],
        "cell_graph" => &[
            ("/cell_graph/cell_graph", "gpu_planning_msgs/msg/CellGraph"),
            ("/cell_graph/markers", MARKERS),
        ],
        "nearest_neighbors" => &[(
            "/nearest_neighbors/neighbors",
            "gpu_planning_msgs/msg/Neighbors",
        )],
        _ => &[],
    };
    pairs
        .iter()
        .map(|(t, ty)| (t.to_string(), ty.to_string()))
        .collect()
}

/// Writes inputs, calls (request and response events) and outputs into a bag at `dir`.
fn write(dir: &Path, s: &Scenario, rec: &Recording) -> Result<()> {
    let mut w = BagWriter::create(dir)?;
    let base = s.steps.first().map_or(EPOCH_NS, |t| t.time_ns);
    let mut events: Vec<(u64, String, String, Vec<u8>)> = Vec::new();
    for c in &rec.calls {
        let srv = types::service(&c.ty)
            .ok_or_else(|| Error::invalid(&c.service, format!("unknown service {}", c.ty)))?;
        let topic = format!("{}{EVENT_SUFFIX}", c.service);
        for (kind, at, request, response) in [
            (
                ServiceEventInfo::REQUEST_SENT,
                c.sent_ns,
                Some(c.request.clone()),
                None,
            ),
            (
                ServiceEventInfo::RESPONSE_RECEIVED,
                c.answered_ns,
                None,
                Some(c.response.clone()),
            ),
        ] {
            let info = ServiceEventInfo {
                event_type: kind,
                stamp: stamp_of(base + at),
                client_gid: c.client_gid,
                sequence_number: c.sequence_number,
            };
            let bytes = srv.encode_event(&Event {
                info,
                request,
                response,
            })?;
            events.push((base + at, topic.clone(), srv.event_name(), bytes));
        }
    }
    let mut all: Vec<(u64, String, String, TopicQos, Vec<u8>)> = Vec::new();
    for t in &s.steps {
        if let Step::Publish {
            topic,
            ty,
            qos,
            cdr,
        } = &t.step
        {
            all.push((t.time_ns, topic.clone(), ty.clone(), *qos, cdr.clone()));
        }
    }
    for (at, topic, ty, bytes) in events {
        all.push((at, topic, ty, TopicQos::default(), bytes));
    }
    for (topic, ty) in outputs(s.name) {
        for (at, bytes) in rec.outputs.get(&topic).map(Vec::as_slice).unwrap_or(&[]) {
            all.push((
                base + at,
                topic.clone(),
                ty.clone(),
                TopicQos::latched(),
                bytes.clone(),
            ));
        }
    }
    all.sort_by_key(|m| m.0);
    for (at, topic, ty, qos, bytes) in &all {
        w.add_topic(topic, ty, *qos)?;
        w.write(topic, *at, bytes)?;
    }
    w.finish()?;
    Ok(())
}

/// Generates the bags named (all when empty) under `out`, each played into fresh nodes on the
/// CPU backend, on `domain_id` and the domains after it.
pub fn generate(out: &Path, names: &[String], domain_id: u16) -> Result<()> {
    for (i, s) in scenarios()?.into_iter().enumerate() {
        if !names.is_empty() && !names.iter().any(|n| n == s.name) {
            continue;
        }
        let domain = super::replay::nth_domain(domain_id, i);
        let rec = with_fresh_nodes(&Backend::Cpu, domain, |player| {
            play::play(
                player,
                &s.steps,
                &PlayOptions {
                    rate: 1.0,
                    record: outputs(s.name),
                    expect: Default::default(),
                    after: vec![],
                },
            )
        })?;
        let dir = out.join(s.name);
        if dir.exists() {
            std::fs::remove_dir_all(&dir)
                .map_err(|e| Error::invalid(dir.display().to_string(), e))?;
        }
        write(&dir, &s, &rec)?;
        println!(
            "{}: {} ({} steps, {} calls, {} outputs)",
            dir.display(),
            s.about,
            s.steps.len(),
            rec.calls.len(),
            rec.outputs.values().map(Vec::len).sum::<usize>()
        );
    }
    Ok(())
}
