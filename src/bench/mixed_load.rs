//! Mixed load: a planner's get_plan latency alone, then while all-pairs solves (n = 8192,
//! device-resident) and 4M-sample cell graphs run back to back beside it, in one process, as
//! the nodes share one GPU. The planner runs on a stream of its own at `--planner-priority`,
//! the load on another at 0 (each node's own stream, `gpu_priority`); `--shared-stream` puts
//! both on one stream, as every node was before. Every path is checked against the CPU's.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::compute::{Backend, CudaRuntime};
use crate::error::{Error, Result};

/// `gpu_planning bench mixed-load`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Side of the planner's random-terrain grid.
    #[arg(long, default_value_t = 4000)]
    size: u32,
    /// get_plan calls timed alone and again under load.
    #[arg(long, default_value_t = 200)]
    calls: usize,
    /// Vertices of the all-pairs solves of the load.
    #[arg(long, default_value_t = 8192)]
    apsp_n: usize,
    /// Samples of the cell graphs of the load (256 constraints).
    #[arg(long, default_value_t = 4_000_000)]
    cellgraph_samples: usize,
    /// The planner's gpu_priority (the load runs at 0).
    #[arg(long, default_value_t = crate::nodes::lee_planner::LEE_GPU_PRIORITY)]
    planner_priority: u32,
    /// Planner and load on one stream (no priorities): the layout before nodes had their own.
    #[arg(long)]
    shared_stream: bool,
    /// What runs beside the planner: both kinds of work in turn, or one of them alone (to see
    /// which one a tail comes from).
    #[arg(long, value_enum, default_value_t = Load::Both)]
    load: Load,
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// The work `bench mixed-load` runs beside the planner.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Load {
    /// An all-pairs solve, then a cell graph, in turn.
    Both,
    /// All-pairs solves only.
    Apsp,
    /// Cell graphs only.
    Cellgraph,
}

/// (p50, p99, max) of latencies in ms.
fn percentiles(mut t: Vec<f64>) -> (f64, f64, f64) {
    t.sort_by(f64::total_cmp);
    let at = |q: f64| t[((t.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.99), at(1.0))
}

impl Args {
    pub fn run(self) -> Result<()> {
        let rt = CudaRuntime::shared()?;
        let (planner_rt, load_rt) = if self.shared_stream {
            let one = rt.with_priority(0)?;
            (one.clone(), one)
        } else {
            (
                rt.with_priority(self.planner_priority)?,
                rt.with_priority(0)?,
            )
        };
        let n = self.size;
        let heights = crate::lee::synth::random_terrain(n, n, 0.3, self.seed);
        let grid =
            crate::lee::Grid::from_elevation(n, n, &heights, 1.0, crate::lee::Connectivity::Four)?;
        let open = |x, y| crate::lee::synth::nearest_open(&heights, n, x, y).unwrap_or((0, 0));
        let (s, g) = (open(n / 8, n / 8), open(n / 2, n / 2));
        let (s, g) = ((s.0 as i64, s.1 as i64), (g.0 as i64, g.1 as i64));
        let want = crate::lee::Planner::new(&Backend::Cpu, grid.clone(), Default::default())?
            .plan(s, g, false)?
            .path;
        let planner =
            crate::lee::Planner::new(&Backend::Cuda(planner_rt.clone()), grid, Default::default())?;
        let plan_once = || -> Result<f64> {
            planner.forget_field();
            let t = Instant::now();
            let p = planner.plan(s, g, false)?;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            if p.path != want {
                return Err(Error::Gpu(
                    "mixed load: a path differs from the CPU's".into(),
                ));
            }
            Ok(ms)
        };
        for _ in 0..5 {
            plan_once()?;
        }
        let alone: Vec<f64> = (0..self.calls)
            .map(|_| plan_once())
            .collect::<Result<_>>()?;

        // The load: device-resident APSP solves and whole cell-graph builds, back to back.
        let np = self.apsp_n.div_ceil(64) * 64;
        let (d, h) = crate::apsp::synth::random_dense(self.apsp_n, np, 0.05, self.seed);
        let mut m = crate::apsp::gpu::DeviceMatrices::upload(&load_rt, &d, &h, np)?;
        drop((d, h));
        let apsp_config = crate::nodes::apsp::ApspParams::default().solver_config();
        let arr = crate::cellgraph::arrangement::Arrangement::random(256, self.seed);
        let samples = crate::cellgraph::samples::shoemake(self.cellgraph_samples, self.seed);
        let load_backend = Backend::Cuda(load_rt.clone());
        let load = self.load;
        // One round of the load: (solves, graphs) it ran.
        let round = |m: &mut crate::apsp::gpu::DeviceMatrices<_>| -> Result<(usize, usize)> {
            let mut ran = (0, 0);
            if load != Load::Cellgraph {
                m.solve(&apsp_config)?;
                m.synchronize()?;
                ran.0 = 1;
            }
            if load != Load::Apsp {
                crate::cellgraph::build(&load_backend, &arr, &samples, &Default::default())?;
                ran.1 = 1;
            }
            Ok(ran)
        };
        // The load's kernels loaded and its buffers' sizes seen once before any timing, as a
        // node has them from its start-up compile on: a first use in the timed window stalls
        // the planner for a module load, which is not the load's steady cost.
        round(&mut m)?;
        let stop = Arc::new(AtomicBool::new(false));
        let (mut under, solves, graphs) = std::thread::scope(|scope| -> Result<_> {
            let load = {
                let (stop, round) = (stop.clone(), &round);
                scope.spawn(move || -> Result<(usize, usize)> {
                    let (mut solves, mut graphs) = (0, 0);
                    while !stop.load(Ordering::Relaxed) {
                        let (s, g) = round(&mut m)?;
                        solves += s;
                        graphs += g;
                    }
                    Ok((solves, graphs))
                })
            };
            // Let the load start before timing.
            std::thread::sleep(std::time::Duration::from_millis(300));
            let under: Result<Vec<f64>> = (0..self.calls).map(|_| plan_once()).collect();
            stop.store(true, Ordering::Relaxed);
            let (solves, graphs) = load
                .join()
                .map_err(|_| Error::Gpu("mixed load: the load thread panicked".into()))??;
            Ok((under?, solves, graphs))
        })?;
        let (a50, a99, amax) = percentiles(alone);
        let (u50, u99, umax) = percentiles(std::mem::take(&mut under));
        println!(
            "get_plan on a {n}² random grid (fresh field + path each call, {} calls, paths equal the CPU's); {}",
            self.calls,
            if self.shared_stream {
                "planner and load on one stream".to_string()
            } else {
                format!(
                    "planner stream gpu_priority {} (CUDA {}), load stream 0",
                    self.planner_priority,
                    planner_rt.priority()
                )
            }
        );
        println!("| get_plan | p50 ms | p99 ms | max ms |");
        println!("|---|---:|---:|---:|");
        println!("| alone | {a50:.2} | {a99:.2} | {amax:.2} |");
        println!(
            "| under load ({solves} APSP n = {} solves, {graphs} cell graphs of {} x 256 meanwhile) | {u50:.2} | {u99:.2} | {umax:.2} |",
            self.apsp_n, self.cellgraph_samples
        );
        println!("p99 under load / alone: {:.2}x", u99 / a99);
        Ok(())
    }
}
