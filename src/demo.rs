//! `gpu_planning demo`: the nodes of this package started in-process on a private DDS domain,
//! fed demo inputs made here by a peer node over DDS (as a robot's drivers would), every
//! service called once; what each node produced is printed with timings and the backend, and
//! pictures go to an output folder. Nothing to download: the inputs are generated.

use std::path::{Path as FsPath, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;
use futures::StreamExt;

use crate::cellgraph::samples::shoemake;
use crate::cellgraph::Arrangement;
use crate::compute::{Backend, BackendKind};
use crate::error::{Error, Result};
use crate::polyline::{Gray, Problem};
use crate::ros::msg::geometry_msgs::{Point, Pose, PoseStamped, Quaternion};
use crate::ros::msg::gpu_planning::{
    ApspStatus, BuildCellGraph, BuildCellGraphRequest, ExtractPolyline, ExtractPolylineRequest,
    FindRotationPath, FindRotationPathRequest, KNearest, KNearestRequest, QuadricArrangement,
    ShortestPath, ShortestPathRequest, WeightedGraph,
};
use crate::ros::msg::nav_msgs::{GetPlan, GetPlanRequest, OccupancyGrid};
use crate::ros::msg::sensor_msgs::{Image, PointCloud2, PointField};
use crate::ros::msg::std_msgs::Header;
use crate::ros::{qos, NodeContext, ParamsFile, RosArgs, RosRuntime};

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Folder for the pictures.
    #[arg(long, default_value = "demo-out")]
    pub out: PathBuf,
    #[arg(long, default_value = "auto")]
    pub backend: BackendKind,
    /// DDS domain of the demo (kept apart from a robot's usual domain 0).
    #[arg(long, default_value_t = 142)]
    pub domain_id: u16,
}

async fn timeout<T>(what: &str, s: u64, f: impl std::future::Future<Output = T>) -> Result<T> {
    match futures::future::select(
        Box::pin(f),
        Box::pin(smol::Timer::after(Duration::from_secs(s))),
    )
    .await
    {
        futures::future::Either::Left((v, _)) => Ok(v),
        futures::future::Either::Right(_) => Err(Error::invalid(
            what,
            format!("no answer within {s} s over DDS"),
        )),
    }
}

/// A service call retried until answered (requests sent before discovery matched are lost)
/// and until `done` accepts the answer (a node may not have its input yet).
async fn call<Q, R>(
    what: &str,
    client: &ros2_client::Client<Q, R>,
    req: Q,
    done: impl Fn(&R) -> bool,
) -> Result<R>
where
    Q: ros2_client::Message + Clone + 'static,
    R: ros2_client::Message + 'static,
{
    let started = Instant::now();
    let mut last = None;
    while started.elapsed() < Duration::from_secs(60) {
        if let Ok(Ok(r)) = timeout(what, 2, client.async_call_service(req.clone())).await {
            if done(&r) {
                return Ok(r);
            }
            last = Some(r);
            smol::Timer::after(Duration::from_millis(100)).await;
        }
    }
    match last {
        Some(r) => Ok(r),
        None => Err(Error::invalid(what, "no answer within 60 s over DDS")),
    }
}

/// A 200 x 150 map of 0.1 m cells: rooms and walls with doors, some unknown cells.
pub fn demo_map() -> OccupancyGrid {
    let (w, h) = (200u32, 150u32);
    let mut data = vec![0i8; (w * h) as usize];
    for y in 0..h {
        for x in 0..w {
            let wall = (x == 60 && !(20..35).contains(&y))
                || (x == 130 && !(110..125).contains(&y))
                || (y == 75 && x < 60 && !(25..40).contains(&x))
                || ((x as i32 - 95).pow(2) + (y as i32 - 40).pow(2) < 15 * 15);
            if wall {
                data[(y * w + x) as usize] = 100;
            } else if (160..175).contains(&x) && (20..40).contains(&y) {
                data[(y * w + x) as usize] = -1;
            }
        }
    }
    let mut m = OccupancyGrid {
        data,
        ..Default::default()
    };
    m.header.frame_id = "map".into();
    m.info.width = w;
    m.info.height = h;
    m.info.resolution = 0.1;
    m.info.origin.orientation = Quaternion::identity();
    m
}

/// A 320 x 240 grey image: a bright band crossing noise.
pub fn demo_image() -> Gray {
    let (w, h) = (320u32, 240u32);
    let mut rng = crate::bench::XorShift::new(7);
    let data = (0..h)
        .flat_map(|y| (0..w).map(move |x| (x, y)))
        .map(|(x, y)| {
            let band = ((y as f64 - (40.0 + 0.5 * x as f64 + 12.0 * (x as f64 / 40.0).sin())).abs()
                < 4.0) as u8 as f64;
            60.0 + 120.0 * band + (rng.next_u64() % 40) as f64
        })
        .collect();
    Gray {
        width: w,
        height: h,
        data,
    }
}

pub(crate) fn pose(x: f64, y: f64) -> PoseStamped {
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

pub(crate) fn cloud(points: &[[f32; 3]]) -> PointCloud2 {
    let field = |name: &str, offset| PointField {
        name: name.into(),
        offset,
        datatype: PointField::FLOAT32,
        count: 1,
    };
    PointCloud2 {
        height: 1,
        width: points.len() as u32,
        fields: vec![field("x", 0), field("y", 4), field("z", 8)],
        point_step: 12,
        row_step: 12 * points.len() as u32,
        data: points
            .iter()
            .flat_map(|p| p.iter().flat_map(|v| v.to_le_bytes()))
            .collect(),
        ..Default::default()
    }
}

fn draw_map(m: &OccupancyGrid, path: &[(f64, f64)], out: &FsPath) -> Result<()> {
    let (w, h, res) = (m.info.width, m.info.height, m.info.resolution as f64);
    let s = 4;
    let mut img = image::RgbImage::from_fn(w * s, h * s, |x, y| {
        // Image rows top-down, map y up.
        let (cx, cy) = (x / s, h - 1 - y / s);
        match m.data[(cy * w + cx) as usize] {
            -1 => image::Rgb([150, 150, 170]),
            v if v >= 65 => image::Rgb([30, 30, 30]),
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

pub fn run(a: DemoArgs) -> Result<()> {
    std::fs::create_dir_all(&a.out).map_err(|e| Error::invalid(a.out.display().to_string(), e))?;
    let backend = Backend::select(a.backend)?;
    let (args, _) = RosArgs::parse(&[
        "--ros-args".to_string(),
        "-p".to_string(),
        format!("backend:={}", backend.name()),
        "-p".to_string(),
        "cell_graph:sample_count:=20000".to_string(),
    ])?;
    let server = RosRuntime::new(args, ParamsFile::default(), Some(a.domain_id))?;
    let nodes = crate::nodes::start_all(&server)?;
    let peer_rt = RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(a.domain_id))?;
    let mut peer = NodeContext::new(&peer_rt, "demo_peer")?;
    println!(
        "gpu_planning demo: backend {}, DDS domain {}, nodes {}",
        backend.name(),
        a.domain_id,
        nodes.join(" ")
    );
    let map_pub = peer.publisher::<OccupancyGrid>("/map", qos::map())?;
    let plan = peer.client::<GetPlan>("/lee_planner/get_plan")?;
    let graph_pub = peer.publisher::<WeightedGraph>("/apsp/graph", qos::map())?;
    let status_sub = peer.subscription::<ApspStatus>("/apsp/status", qos::map())?;
    let sp = peer.client::<ShortestPath>("/apsp/shortest_path")?;
    let image_pub = peer.publisher::<Image>("/polyline/image", qos::map())?;
    let extract = peer.client::<ExtractPolyline>("/polyline/extract")?;
    let cg = peer.client::<BuildCellGraph>("/cell_graph/build")?;
    let rot = peer.client::<FindRotationPath>("/cell_graph/find_path")?;
    let cloud_pub = peer.publisher::<PointCloud2>("/nearest_neighbors/cloud", qos::map())?;
    let knn = peer.client::<KNearest>("/nearest_neighbors/knn")?;
    for rt in [&server, &peer_rt] {
        let (ex, sd) = (rt.executor().clone(), rt.shutdown().clone());
        std::thread::spawn(move || smol::block_on(ex.run(sd.wait())));
    }
    let result = smol::block_on(async {
        // Lee wave planner.
        let map = demo_map();
        map_pub
            .async_publish(map.clone())
            .await
            .map_err(|e| Error::invalid("map", format!("{e:?}")))?;
        let t = Instant::now();
        let req = GetPlanRequest {
            start: pose(0.55, 0.55),
            goal: pose(19.45, 14.45),
            tolerance: 0.0,
        };
        let r = call("lee_planner/get_plan", &plan, req, |r| {
            !r.plan.poses.is_empty()
        })
        .await?;
        let path: Vec<(f64, f64)> = r
            .plan
            .poses
            .iter()
            .map(|p| (p.pose.position.x, p.pose.position.y))
            .collect();
        println!(
            "lee_planner: {} x {} map, path of {} cells from (0.55, 0.55) to (19.45, 14.45) m ({:.0} ms, DDS discovery included)",
            map.info.width,
            map.info.height,
            path.len(),
            t.elapsed().as_secs_f64() * 1e3
        );
        draw_map(&map, &path, &a.out.join("lee_path.png"))?;

        // Floyd–Warshall.
        let g = crate::apsp::synth::random_graph(300, 0.02, 1, 100, 20, 3);
        let crate::apsp::Weights::Int(w) = &g.weights else {
            return Err(Error::invalid("graph", "demo graph has float weights"));
        };
        let mut msg = WeightedGraph {
            vertex_count: g.vertices,
            edge_from: g.from.clone(),
            edge_to: g.to.clone(),
            integer_weights: w.clone(),
            ..Default::default()
        };
        msg.header.frame_id = "graph".into();
        graph_pub
            .async_publish(msg)
            .await
            .map_err(|e| Error::invalid("graph", format!("{e:?}")))?;
        let s = status_sub.async_stream();
        futures::pin_mut!(s);
        let status = timeout("apsp/status", 60, s.next()).await?;
        if let Some(Ok((st, _))) = status {
            println!(
                "apsp: {} vertices, {} edges solved on {} ({}) in {:.1} ms",
                st.vertex_count,
                st.edge_count,
                st.backend,
                st.memory_model,
                st.compute_time_s * 1e3
            );
        }
        let req = ShortestPathRequest {
            sources: vec![0, 10, 200],
            targets: vec![299, 150, 7],
        };
        let r = call("apsp/shortest_path", &sp, req.clone(), |r| r.success).await?;
        for i in 0..req.sources.len() {
            let p = &r.path_vertices[r.path_offsets[i] as usize..r.path_offsets[i + 1] as usize];
            println!(
                "  {} -> {}: distance {}, {} vertices",
                req.sources[i],
                req.targets[i],
                r.distances[i],
                p.len()
            );
        }

        // Polyline.
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
        image_pub
            .async_publish(img)
            .await
            .map_err(|e| Error::invalid("image", format!("{e:?}")))?;
        let problem = Problem {
            a: (5.0, 42.0),
            b: (315.0, 197.0),
            guides: 8,
            points: 128,
            half_width: 30.0,
            max_angle: 25f64.to_radians(),
        };
        let req = ExtractPolylineRequest {
            a: Point {
                x: problem.a.0,
                y: problem.a.1,
                z: 0.0,
            },
            b: Point {
                x: problem.b.0,
                y: problem.b.1,
                z: 0.0,
            },
            guides: problem.guides,
            points_per_guide: problem.points,
            half_width: problem.half_width,
            max_angle: problem.max_angle,
        };
        let t = Instant::now();
        let r = call("polyline/extract", &extract, req, |r| r.success).await?;
        println!(
            "polyline: {} x {} image, 8 guides x 128 points, 25 degrees: score {:.0}, feasible {} ({:.0} ms over DDS)",
            gray.width,
            gray.height,
            r.score,
            r.feasible,
            t.elapsed().as_secs_f64() * 1e3
        );
        let line = crate::polyline::Polyline {
            feasible: r.feasible,
            points: r.points.iter().map(|p| (p.x, p.y)).collect(),
            indices: vec![],
            score: r.score,
        };
        crate::polyline::draw::draw(&gray, &problem, &line, &a.out.join("polyline.png"))?;

        // Cell graph.
        let arr = Arrangement::random(24, 5);
        let req = BuildCellGraphRequest {
            constraints: QuadricArrangement {
                count: arr.len() as u32,
                coefficients: arr.coefficients.iter().flatten().copied().collect(),
                ..Default::default()
            },
            sample_count: 200_000,
            seed: 1,
            ..Default::default()
        };
        let r = call("cell_graph/build", &cg, req, |r| r.success).await?;
        println!(
            "cell_graph: 24 quadrics, 200000 Shoemake samples: {} cells, {} edges ({}, {:.1} ms)",
            r.graph.sample_counts.len(),
            r.graph.edge_from.len(),
            r.graph.algorithm,
            r.graph.compute_time_s * 1e3
        );
        let q = shoemake(2, 9);
        let quat = |q: [f64; 4]| Quaternion {
            x: q[0],
            y: q[1],
            z: q[2],
            w: q[3],
        };
        let r = call(
            "cell_graph/find_path",
            &rot,
            FindRotationPathRequest {
                start: quat(q[0]),
                goal: quat(q[1]),
            },
            |r| r.success,
        )
        .await?;
        println!(
            "  rotation path: reachable {}, {} cells{}",
            r.reachable,
            r.cells.len(),
            if r.success {
                String::new()
            } else {
                format!(" ({})", r.error)
            }
        );

        // Nearest neighbours.
        let mut rng = crate::bench::XorShift::new(11);
        let mut unit = move || (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        let pts: Vec<[f32; 3]> = (0..100_000)
            .map(|_| [unit() * 10.0, unit() * 10.0, unit()])
            .collect();
        cloud_pub
            .async_publish(cloud(&pts))
            .await
            .map_err(|e| Error::invalid("cloud", format!("{e:?}")))?;
        let req = KNearestRequest {
            dimensions: 3,
            points: vec![5.0, 5.0, 0.5, 1.0, 9.0, 0.0],
            k: 3,
        };
        let r = call("nearest_neighbors/knn", &knn, req, |r| r.success).await?;
        let n = &r.neighbors;
        for qi in 0..2 {
            let (lo, hi) = (n.offsets[qi] as usize, n.offsets[qi + 1] as usize);
            println!(
                "nearest_neighbors: query {qi} of a 100000-point cloud: indices {:?}, distances {:?}",
                &n.indices[lo..hi],
                &n.distances[lo..hi]
            );
        }
        Ok(())
    });
    server.shutdown().trigger();
    peer_rt.shutdown().trigger();
    result?;
    println!(
        "pictures: {} and {}",
        a.out.join("lee_path.png").display(),
        a.out.join("polyline.png").display()
    );
    Ok(())
}
