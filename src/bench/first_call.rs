//! First calls against warm ones: each algorithm's first call in a fresh process, then the
//! median of three after one more, as a node's services meet them. With `--prepare`, every module the
//! nodes compile when they start is compiled first (what a node does before it reports its
//! kernels ready); without it, the first call pays for whatever the caches do not hold (run it
//! with `GPU_PLANNING_KERNEL_CACHE=off` for NVRTC on every first call, as before issue 20).

use std::time::Instant;

use crate::compute::warmup::{prepare_all, Module};
use crate::compute::{Backend, BackendKind};
use crate::error::{Error, Result};

/// `gpu_planning bench first-call`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Compile every node's start-up modules before the first calls.
    #[arg(long)]
    prepare: bool,
    #[arg(long, default_value = "cuda")]
    backend: BackendKind,
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Every module the six nodes prepare when they start with their default parameters.
pub fn node_modules() -> Vec<Module> {
    let nn = crate::nodes::nearest_neighbors::NearestNeighborsParams::default();
    let apsp = crate::nodes::apsp::ApspParams::default().solver_config();
    [
        crate::lee::gpu::modules(),
        crate::lee::costmap::gpu::modules(),
        crate::lee::clearance::gpu::modules(),
        crate::apsp::gpu::modules(&apsp),
        crate::cellgraph::gpu::modules(),
        crate::polyline::gpu::modules(),
        crate::kdtree::gpu::modules(nn.k as usize, nn.knn_traversal),
    ]
    .concat()
}

type Call<'a> = Box<dyn FnMut() -> Result<()> + 'a>;

impl Args {
    pub fn run(self) -> Result<()> {
        let backend = Backend::select(self.backend)?;
        if self.prepare {
            if let Backend::Cuda(rt) = &backend {
                let t = Instant::now();
                let compiled = prepare_all(rt, "bench", &node_modules());
                println!(
                    "start-up compile: {} modules ({compiled} by NVRTC, the rest from the disk cache) in {:.0} ms",
                    node_modules().len(),
                    t.elapsed().as_secs_f64() * 1e3
                );
            }
        }
        let seed = self.seed;
        let b = &backend;
        // Inputs are made before any timing.
        let heights = crate::lee::synth::random_terrain(1000, 1000, 0.3, seed);
        let grid = crate::lee::Grid::from_elevation(
            1000,
            1000,
            &heights,
            1.0,
            crate::lee::Connectivity::Four,
        )?;
        let open = |x, y| crate::lee::synth::nearest_open(&heights, 1000, x, y).unwrap_or((0, 0));
        let (s, g) = (open(0, 0), open(500, 500));
        let int_graph = crate::apsp::synth::random_graph(2000, 0.01, 1, 100, 0, seed);
        let float_graph = crate::apsp::synth::to_float(&int_graph);
        let apsp_config = crate::nodes::apsp::ApspParams::default().solver_config();
        let cloud = super::kdtree::uniform(1 << 20, 3, seed)?;
        let queries = super::kdtree::uniform(10_000, 3, seed ^ 0x51)?;
        let arr = crate::cellgraph::arrangement::Arrangement::random(256, seed);
        let samples = crate::cellgraph::samples::shoemake(44_000, seed);
        let gray: Vec<f64> = {
            let mut rng = crate::rng::XorShift::new(seed);
            (0..512 * 512)
                .map(|_| (rng.next_u64() % 256) as f64)
                .collect()
        };
        let grad = crate::polyline::Gradient::sobel(&crate::polyline::Gray::new(512, 512, gray)?);
        let problem = crate::polyline::Problem {
            a: (20.0, 256.0),
            b: (492.0, 265.0),
            guides: 8,
            points: 512,
            half_width: 60.0,
            max_angle: 30f64.to_radians(),
        };
        // The planner takes its map when the map arrives, before any get_plan (as the node).
        let planner = crate::lee::Planner::new(b, grid, Default::default())?;
        let mut calls: Vec<(&str, Call)> = vec![
            (
                "get_plan, 1000² random terrain (field, path)",
                Box::new(|| {
                    planner.forget_field();
                    planner.plan((s.0 as i64, s.1 as i64), (g.0 as i64, g.1 as i64), false)?;
                    Ok(())
                }),
            ),
            (
                "shortest_path solve, n = 2000, integer weights",
                Box::new(|| crate::apsp::solve(b, &int_graph, &apsp_config).map(|_| ())),
            ),
            (
                "shortest_path solve, n = 2000, float weights",
                Box::new(|| crate::apsp::solve(b, &float_graph, &apsp_config).map(|_| ())),
            ),
            (
                "knn: build 1M 3-D points, 10K queries, k = 1",
                Box::new(|| {
                    let config = crate::kdtree::IndexConfig::default();
                    crate::kdtree::Index::build(b, &cloud, config)?
                        .knn(&queries.coords, 1)
                        .map(|_| ())
                }),
            ),
            (
                "cell graph build, 44,000 x 256 (hash)",
                Box::new(|| {
                    crate::cellgraph::build(b, &arr, &samples, &Default::default()).map(|_| ())
                }),
            ),
            (
                "extract, 8 x 512 on a 512² image",
                Box::new(|| crate::polyline::solve(b, &grad, &problem).map(|_| ())),
            ),
        ];
        println!(
            "backend {}, {}; the first call, then the median of 3 after one more",
            backend.name(),
            if self.prepare {
                "node start-up modules compiled first"
            } else {
                "nothing compiled before the first call"
            }
        );
        println!("| call | first ms | warm ms | first / warm |");
        println!("|---|---:|---:|---:|");
        for (what, call) in calls.iter_mut() {
            let t = Instant::now();
            call()?;
            let first = t.elapsed().as_secs_f64() * 1e3;
            let warm = super::try_median_ms(3, &mut *call)?;
            if warm <= 0.0 {
                return Err(Error::Gpu(format!("{what}: no warm time")));
            }
            println!("| {what} | {first:.2} | {warm:.2} | {:.2}x |", first / warm);
        }
        Ok(())
    }
}
