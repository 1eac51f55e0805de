//! Cell graph benchmarks: the seed's n = 44,000 and 1M / 4M samples with l = 64, 256, 1024;
//! every algorithm where it finishes in reasonable time, classification and graph separately,
//! the CPU in the same run on the same inputs. Times are the build's own (classification;
//! cells and edges; inputs already on the device), best of `reps` after a warm-up; `wall` is
//! the whole call (normalising, upload, download of cells and edges).

use std::time::Instant;

use crate::cellgraph::samples::shoemake;
use crate::cellgraph::{build, Algorithm, Arrangement, CellGraph, Config};
use crate::compute::{Backend, BackendKind};
use crate::error::Result;

/// `gpu_planning bench cellgraph`: every algorithm on Shoemake samples and random
/// arrangements, and the CPU.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[arg(long, value_delimiter = ',', default_value = "44000,1000000,4000000")]
    samples: Vec<usize>,
    #[arg(long, value_delimiter = ',', default_value = "64,256,1024")]
    constraints: Vec<usize>,
    #[arg(long, default_value_t = 3)]
    reps: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value = "auto")]
    backend: BackendKind,
    /// Run the CPU only up to this many samples.
    #[arg(long, default_value_t = 1_000_000)]
    cpu_limit: usize,
    /// Run the O(n^2) heuristic only up to this many samples.
    #[arg(long, default_value_t = 44_000)]
    heuristic_limit: usize,
}

impl Args {
    pub fn run(self) -> Result<()> {
        let backend = Backend::select(self.backend)?;
        let options = Options {
            samples: self.samples,
            constraints: self.constraints,
            reps: self.reps,
            seed: self.seed,
            cpu_limit: self.cpu_limit,
            heuristic_limit: self.heuristic_limit,
        };
        run(&backend, &options)
    }
}

pub struct Options {
    pub samples: Vec<usize>,
    pub constraints: Vec<usize>,
    pub reps: usize,
    pub seed: u64,
    /// The CPU runs only up to this many samples.
    pub cpu_limit: usize,
    /// The O(n^2) heuristic runs only up to this many samples.
    pub heuristic_limit: usize,
}

fn row(n: usize, l: usize, what: &str, g: &CellGraph, wall_s: f64, same: &str) {
    println!(
        "| {n} | {l} | {what} | {:.1} | {:.1} | {:.1} | {:.1} | {} | {} | {same} |",
        g.classify_s * 1e3,
        g.graph_s * 1e3,
        (g.classify_s + g.graph_s) * 1e3,
        wall_s * 1e3,
        g.cells.len(),
        g.edges.len()
    );
}

pub fn run(backend: &Backend, o: &Options) -> Result<()> {
    println!(
        "median of {} runs after a warm-up (by total device time; wall is that run's); the CPU: one run; cells and edges checked against the CPU's, or the GPU hash's above the CPU limit",
        o.reps.max(1)
    );
    println!("| samples | l | implementation | classify ms | graph ms | total ms | wall ms | cells | edges | check |");
    println!("|---:|---:|---|---:|---:|---:|---:|---:|---:|---|");
    for &n in &o.samples {
        let samples = shoemake(n, o.seed);
        for &l in &o.constraints {
            let arr = Arrangement::random(l, o.seed ^ l as u64);
            let cpu = if n <= o.cpu_limit {
                let cfg = Config::default();
                let s = Instant::now();
                let g = build(&Backend::Cpu, &arr, &samples, &cfg)?;
                let wall = s.elapsed().as_secs_f64();
                row(n, l, "cpu hash (rayon)", &g, wall, "(reference)");
                Some(g)
            } else {
                None
            };
            let Backend::Cuda(_) = backend else { continue };
            let mut reference = cpu.map(|g| ("the CPU's", g));
            for algorithm in [Algorithm::Hash, Algorithm::Tree, Algorithm::Heuristic] {
                if algorithm == Algorithm::Heuristic && n > o.heuristic_limit {
                    continue;
                }
                let cfg = Config {
                    algorithm,
                    ..Config::default()
                };
                build(backend, &arr, &samples, &cfg)?; // warm-up: kernels compile
                let mut runs = Vec::new();
                for _ in 0..o.reps.max(1) {
                    let s = Instant::now();
                    let r = build(backend, &arr, &samples, &cfg)?;
                    runs.push((s.elapsed().as_secs_f64(), r));
                }
                // The median run by device time (the lower middle one for an even count).
                runs.sort_by(|a, b| {
                    (a.1.classify_s + a.1.graph_s).total_cmp(&(b.1.classify_s + b.1.graph_s))
                });
                let (wall, g) = runs.swap_remove((runs.len() - 1) / 2);
                let same = match &reference {
                    Some((by, c)) if c.cells == g.cells && c.edges == g.edges => {
                        format!("equal to {by}")
                    }
                    Some((by, _)) => {
                        return Err(crate::Error::Gpu(format!(
                            "cell graph {n} x {l}: {algorithm:?} differs from {by}"
                        )))
                    }
                    None => "(reference)".to_string(),
                };
                let name = match algorithm {
                    Algorithm::Hash => "cuda hash (default)".to_string(),
                    Algorithm::Tree => format!("cuda tree (r = {})", cfg.r),
                    Algorithm::Heuristic => format!("cuda heuristic (h = {})", cfg.h),
                };
                row(n, l, &name, &g, wall, &same);
                if reference.is_none() {
                    reference = Some(("the GPU hash's", g));
                }
            }
        }
    }
    Ok(())
}
