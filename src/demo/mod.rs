//! `gpu_planning demo`: the bundled bags (one per node, the ones the replay tests use, built
//! into the binary) replayed into freshly started nodes over DDS, each on its own private
//! domain, on the CUDA backend when a device is usable and the CPU otherwise. It prints what
//! every node answered, with timings and the backend, checks every answer against the one
//! recorded in the bag, plans across nav2's depot map in costmap mode as a robot's planner
//! does (`robot.rs`), and draws pictures into an output folder.

use std::path::{Path as FsPath, PathBuf};

use clap::Args;

use crate::bag::replay::{nth_domain, replay_into_fresh_nodes, warm_up, Report};
use crate::bag::{cdr, Bag};
use crate::compute::{Backend, BackendKind};
use crate::error::{Error, Result};
use crate::polyline::{Gray, Problem};
use crate::ros::msg::geometry_msgs::Point;
use crate::ros::msg::gpu_planning_msgs::{
    ApspStatus, BuildCellGraphResponse, CellGraph, ExtractPolylineRequest, ExtractPolylineResponse,
    FindRotationPathResponse, KNearestResponse, Neighbors, ShortestPathRequest,
    ShortestPathResponse,
};
use crate::ros::msg::nav_msgs::{GetPlanResponse, OccupancyGrid};
use crate::ros::msg::sensor_msgs::Image;

mod robot;

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Folder for the pictures.
    #[arg(long, default_value = "demo-out")]
    pub out: PathBuf,
    #[arg(long, default_value = "auto")]
    pub backend: BackendKind,
    /// First DDS domain of the demo (each bag gets its own, from here on; a CUDA warm-up pass
    /// the five after those), kept apart from a robot's usual domain 0.
    #[arg(long, default_value_t = 142, value_parser = crate::ros::runtime::parse_domain_id)]
    pub domain_id: u16,
}

/// The bags of tests/data/bags, built in so that the demo runs from any folder.
const BUNDLED: [(&str, &[u8]); 5] = [
    (
        "lee_planner",
        include_bytes!("../../tests/data/bags/lee_planner/lee_planner_0.mcap"),
    ),
    (
        "apsp",
        include_bytes!("../../tests/data/bags/apsp/apsp_0.mcap"),
    ),
    (
        "polyline",
        include_bytes!("../../tests/data/bags/polyline/polyline_0.mcap"),
    ),
    (
        "cell_graph",
        include_bytes!("../../tests/data/bags/cell_graph/cell_graph_0.mcap"),
    ),
    (
        "nearest_neighbors",
        include_bytes!("../../tests/data/bags/nearest_neighbors/nearest_neighbors_0.mcap"),
    ),
];

/// The map (walls black, unknown grey), the cells within `radius` of an obstacle shaded pink
/// (where the robot's centre may not go), and the path in red.
fn draw_map(m: &OccupancyGrid, radius: f64, path: &[(f64, f64)], out: &FsPath) -> Result<()> {
    let (w, h, res) = (m.info.width, m.info.height, m.info.resolution as f64);
    let obstacle: Vec<bool> = m.data.iter().map(|&v| !(0..65).contains(&v)).collect();
    let d2 = crate::lee::clearance::cpu::squared_distances(w as usize, h as usize, &obstacle);
    let s = 4;
    let mut img = image::RgbImage::from_fn(w * s, h * s, |x, y| {
        // Image rows top-down, map y up.
        let (cx, cy) = (x / s, h - 1 - y / s);
        let i = (cy * w + cx) as usize;
        match m.data[i] {
            -1 => image::Rgb([150, 150, 170]),
            v if v >= 65 => image::Rgb([30, 30, 30]),
            _ if crate::lee::clearance::metres(d2[i], res) <= radius => image::Rgb([245, 200, 200]),
            _ => image::Rgb([235, 235, 230]),
        }
    });
    for &(x, y) in path {
        let (cx, cy) = ((x / res) as u32, (y / res) as u32);
        if cx < w && cy < h {
            for dy in 0..s {
                for dx in 0..s {
                    img.put_pixel(
                        cx * s + dx,
                        (h - 1 - cy) * s + dy,
                        image::Rgb([220, 30, 30]),
                    );
                }
            }
        }
    }
    img.save(out)
        .map_err(|e| Error::invalid(out.display().to_string(), e))
}

/// The messages a bag holds on `topic`, decoded.
fn inputs<T: serde::de::DeserializeOwned>(bag: &Bag, topic: &str) -> Result<Vec<T>> {
    bag.on(topic).map(|m| cdr::decode(topic, &m.data)).collect()
}

/// What the replay recorded on `topic`, decoded.
fn outputs<T: serde::de::DeserializeOwned>(r: &Report, topic: &str) -> Result<Vec<T>> {
    r.recording
        .outputs
        .get(topic)
        .map(Vec::as_slice)
        .unwrap_or(&[])
        .iter()
        .map(|(_, b)| cdr::decode(topic, b))
        .collect()
}

/// Each call of `service` as (request, response, milliseconds).
fn calls<Q, R>(r: &Report, service: &str) -> Result<Vec<(Q, R, f64)>>
where
    Q: serde::de::DeserializeOwned,
    R: serde::de::DeserializeOwned,
{
    r.recording
        .calls
        .iter()
        .filter(|c| c.service == service)
        .map(|c| {
            Ok((
                cdr::decode(service, &c.request)?,
                cdr::decode(service, &c.response)?,
                (c.answered_ns - c.sent_ns) as f64 * 1e-6,
            ))
        })
        .collect()
}

fn at(p: &Point) -> String {
    format!("({:.2}, {:.2})", p.x, p.y)
}

fn lee(bag: &Bag, r: &Report, out: &FsPath) -> Result<Vec<String>> {
    use crate::ros::msg::nav_msgs::GetPlanRequest;
    let maps: Vec<OccupancyGrid> = inputs(bag, "/map")?;
    let mut lines = Vec::new();
    if let Some(m) = maps.first() {
        lines.push(format!(
            "{} x {} map of {} m cells; {} maps in all (the second adds a wall)",
            m.info.width,
            m.info.height,
            m.info.resolution,
            maps.len()
        ));
    }
    let plans = calls::<GetPlanRequest, GetPlanResponse>(r, "/lee_planner/get_plan")?;
    for (q, p, ms) in &plans {
        let (a, b) = (&q.start.pose.position, &q.goal.pose.position);
        lines.push(if p.plan.poses.is_empty() {
            format!(
                "get_plan {} -> {}: no path, as the recording expects (the log says why), {ms:.1} ms",
                at(a),
                at(b)
            )
        } else {
            format!(
                "get_plan {} -> {}: path of {} cells, {ms:.1} ms",
                at(a),
                at(b),
                p.plan.poses.len()
            )
        });
    }
    let paths: Vec<crate::ros::msg::nav_msgs::Path> = outputs(r, "/lee_planner/path")?;
    lines.push(format!(
        "~/path {} times (RViz goal_pose and get_plan), ~/distance_field and ~/markers with each",
        paths.len()
    ));
    // The last map (with the added wall) and the last path found: the detour.
    let last_plan = plans
        .iter()
        .rev()
        .find(|(_, p, _)| !p.plan.poses.is_empty());
    if let (Some(m), Some((_, p, _))) = (maps.last(), last_plan) {
        let path: Vec<(f64, f64)> = p
            .plan
            .poses
            .iter()
            .map(|p| (p.pose.position.x, p.pose.position.y))
            .collect();
        let radius = crate::bag::replay::DEMO_ROBOT_RADIUS;
        draw_map(m, radius, &path, &out.join("lee_path.png"))?;
    }
    let fields: Vec<OccupancyGrid> = outputs(r, "/lee_planner/distance_field")?;
    if let Some(f) = fields.last() {
        draw_field(f, &out.join("distance_field.png"))?;
    }
    Ok(lines)
}

fn apsp(r: &Report) -> Result<Vec<String>> {
    let mut lines = Vec::new();
    for st in outputs::<ApspStatus>(r, "/apsp/status")? {
        lines.push(if st.negative_cycle {
            format!(
                "graph of {} vertices: negative cycle through vertex {} (graph kept: the previous one)",
                st.vertex_count, st.negative_cycle_vertex
            )
        } else {
            format!(
                "graph of {} vertices, {} edges: solved on {} ({}) in {:.2} ms",
                st.vertex_count,
                st.edge_count,
                st.backend,
                st.memory_model,
                st.compute_time_s * 1e3
            )
        });
    }
    for (q, p, ms) in calls::<ShortestPathRequest, ShortestPathResponse>(r, "/apsp/shortest_path")?
    {
        if !p.success {
            lines.push(format!("shortest_path: refused, as expected: {}", p.error));
            continue;
        }
        let pairs: Vec<String> = (0..q.sources.len())
            .map(|i| {
                let hops = p.path_offsets[i + 1] - p.path_offsets[i];
                format!(
                    "{}->{}: {} ({} vertices)",
                    q.sources[i], q.targets[i], p.distances[i], hops
                )
            })
            .collect();
        lines.push(format!("shortest_path {ms:.1} ms: {}", pairs.join(", ")));
    }
    Ok(lines)
}

fn polyline(bag: &Bag, r: &Report, out: &FsPath) -> Result<Vec<String>> {
    let mut lines = Vec::new();
    let images: Vec<Image> = inputs(bag, "/polyline/image")?;
    let results = calls::<ExtractPolylineRequest, ExtractPolylineResponse>(r, "/polyline/extract")?;
    if let Some(img) = images.first() {
        lines.push(format!(
            "{} x {} {} image",
            img.width, img.height, img.encoding
        ));
    }
    for (q, p, ms) in &results {
        lines.push(if p.success {
            format!(
                "extract {} guides x {} points, {:.0} degrees: score {:.0}, feasible {}, {} vertices, {ms:.1} ms",
                q.guides,
                q.points_per_guide,
                q.max_angle.to_degrees(),
                p.score,
                p.feasible,
                p.points.len()
            )
        } else {
            format!("extract refused, as expected: {}", p.error)
        });
    }
    if let (Some(img), Some((q, p, _))) = (images.first(), results.first()) {
        let gray = Gray {
            width: img.width,
            height: img.height,
            data: img.data.iter().map(|&v| v as f64).collect(),
        };
        let problem = Problem {
            a: (q.a.x, q.a.y),
            b: (q.b.x, q.b.y),
            guides: q.guides,
            points: q.points_per_guide,
            half_width: q.half_width,
            max_angle: q.max_angle,
        };
        let line = crate::polyline::Polyline {
            feasible: p.feasible,
            points: p.points.iter().map(|p| (p.x, p.y)).collect(),
            indices: vec![],
            score: p.score,
        };
        crate::polyline::draw::draw(&gray, &problem, &line, &out.join("polyline.png"))?;
    }
    Ok(lines)
}

fn cell_graph(r: &Report) -> Result<Vec<String>> {
    let mut lines = Vec::new();
    for g in outputs::<CellGraph>(r, "/cell_graph/cell_graph")? {
        lines.push(format!(
            "{} quadrics over {} samples: {} cells, {} edges ({}, {:.1} ms)",
            g.constraint_count,
            g.sample_count,
            g.sample_counts.len(),
            g.edge_from.len(),
            g.algorithm,
            g.compute_time_s * 1e3
        ));
    }
    let builds = calls::<
        crate::ros::msg::gpu_planning_msgs::BuildCellGraphRequest,
        BuildCellGraphResponse,
    >(r, "/cell_graph/build")?;
    lines.push(format!(
        "~/build called {} times (graphs above)",
        builds.len()
    ));
    for (_, p, ms) in calls::<
        crate::ros::msg::gpu_planning_msgs::FindRotationPathRequest,
        FindRotationPathResponse,
    >(r, "/cell_graph/find_path")?
    {
        lines.push(format!(
            "find_path: reachable {}, through {} cells, {ms:.1} ms",
            p.reachable,
            p.cells.len()
        ));
    }
    Ok(lines)
}

fn nearest(r: &Report) -> Result<Vec<String>> {
    let mut lines = Vec::new();
    for n in outputs::<Neighbors>(r, "/nearest_neighbors/neighbors")? {
        lines.push(format!(
            "~/queries -> ~/neighbors: {} queries, k = {}",
            n.offsets.len().saturating_sub(1),
            n.k
        ));
    }
    for (q, p, ms) in calls::<crate::ros::msg::gpu_planning_msgs::KNearestRequest, KNearestResponse>(
        r,
        "/nearest_neighbors/knn",
    )? {
        if !p.success {
            lines.push(format!("knn refused, as expected: {}", p.error));
            continue;
        }
        let n = &p.neighbors;
        let (lo, hi) = (n.offsets[0] as usize, n.offsets[1] as usize);
        lines.push(format!(
            "knn {}-D, k = {}: first query's neighbours {:?} at {:?}, {ms:.1} ms",
            q.dimensions,
            q.k,
            &n.indices[lo..hi],
            &n.distances[lo..hi]
        ));
    }
    Ok(lines)
}

/// Wave numbers (0..100, from the goal) blue to yellow, unreached and blocked cells dark, as
/// the map lies (y up).
fn draw_field(f: &OccupancyGrid, out: &FsPath) -> Result<()> {
    let (w, h) = (f.info.width, f.info.height);
    let s = 4;
    let img = image::RgbImage::from_fn(w * s, h * s, |x, y| {
        let (cx, cy) = (x / s, h - 1 - y / s);
        match f.data.get((cy * w + cx) as usize).copied().unwrap_or(-1) {
            v if v < 0 => image::Rgb([25, 25, 35]),
            v => {
                let t = v as f32 / 100.0;
                // Every tenth of the range a darker band: the wave fronts.
                let shade = if v % 10 == 0 { 0.7 } else { 1.0 };
                image::Rgb([
                    ((40.0 + 215.0 * t) * shade) as u8,
                    ((60.0 + 170.0 * t) * shade) as u8,
                    ((200.0 * (1.0 - t)) * shade) as u8,
                ])
            }
        }
    });
    img.save(out)
        .map_err(|e| Error::invalid(out.display().to_string(), e))
}

/// Replays each bag into its own nodes on its own domain (from `first_domain`), one thread
/// each: about as long as the longest bag (6 s of recorded time).
fn replay_all(bags: &[(&str, Bag)], backend: &Backend, first_domain: u16) -> Vec<Result<Report>> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = bags
            .iter()
            .enumerate()
            .map(|(i, (_, bag))| {
                let backend = backend.clone();
                let domain = nth_domain(first_domain, i);
                scope.spawn(move || replay_into_fresh_nodes(bag, &backend, domain, 1.0))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::invalid("demo", "a replay thread panicked")))
            })
            .collect()
    })
}

pub fn run(a: DemoArgs) -> Result<()> {
    std::fs::create_dir_all(&a.out).map_err(|e| Error::invalid(a.out.display().to_string(), e))?;
    let backend = Backend::select(a.backend)?;
    let bags: Vec<(&str, Bag)> = BUNDLED
        .iter()
        .map(|(name, bytes)| Ok((*name, Bag::from_mcap_bytes(name, bytes)?)))
        .collect::<Result<_>>()?;
    println!(
        "gpu_planning demo: {} bundled bags (tests/data/bags) replayed into the nodes over DDS, backend {}, domains {}..{}",
        bags.len(),
        backend.name(),
        a.domain_id,
        nth_domain(a.domain_id, bags.len() - 1)
    );
    if matches!(backend, Backend::Cuda(_)) {
        // NVRTC compiles each kernel module on its first use in a process (seconds for all of
        // them, one at a time): a first pass compiles them, so that the recorded timing,
        // which assumes answers within a second, holds for the pass that counts.
        let t = std::time::Instant::now();
        let first = nth_domain(a.domain_id, bags.len());
        std::thread::scope(|scope| {
            let handles: Vec<_> = bags
                .iter()
                .enumerate()
                .map(|(i, (_, bag))| {
                    let backend = backend.clone();
                    scope.spawn(move || warm_up(&backend, bag, nth_domain(first, i)))
                })
                .collect();
            for h in handles {
                h.join()
                    .unwrap_or_else(|_| Err(Error::invalid("demo", "a warm-up thread panicked")))?;
            }
            Ok::<(), Error>(())
        })?;
        println!(
            "warm-up: a first pass over the bags compiled the CUDA kernels ({:.1} s)",
            t.elapsed().as_secs_f64()
        );
    }
    let reports = replay_all(&bags, &backend, a.domain_id);
    let mut differing = 0;
    for ((name, bag), report) in bags.iter().zip(reports) {
        let report = report?;
        let lines = match *name {
            "lee_planner" => lee(bag, &report, &a.out)?,
            "apsp" => apsp(&report)?,
            "polyline" => polyline(bag, &report, &a.out)?,
            "cell_graph" => cell_graph(&report)?,
            _ => nearest(&report)?,
        };
        println!("{name}:");
        for l in lines {
            println!("  {l}");
        }
        if report.mismatches.is_empty() {
            println!("  every output and response equals the recording");
        } else {
            differing += 1;
            for m in &report.mismatches {
                println!("  DIFFERS from the recording: {m}");
            }
        }
    }
    println!("robot planner (lee_planner's costmap mode, as a nav2 user runs it):");
    for l in robot::plan(&backend, &a.out)? {
        println!("  {l}");
    }
    println!(
        "pictures: {}, {}, {} and {}",
        a.out.join("costmap_path.png").display(),
        a.out.join("lee_path.png").display(),
        a.out.join("distance_field.png").display(),
        a.out.join("polyline.png").display()
    );
    if differing > 0 {
        return Err(Error::invalid(
            "demo",
            format!("{differing} nodes answered differently from their bags"),
        ));
    }
    Ok(())
}
