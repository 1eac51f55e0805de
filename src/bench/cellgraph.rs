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
    println!("| samples | l | implementation | classify ms | graph ms | total ms | wall ms | cells | edges | equal to the CPU |");
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
            for algorithm in [Algorithm::Hash, Algorithm::Tree, Algorithm::Heuristic] {
                if algorithm == Algorithm::Heuristic && n > o.heuristic_limit {
                    continue;
                }
                let cfg = Config {
                    algorithm,
                    ..Config::default()
                };
                let mut g = build(backend, &arr, &samples, &cfg)?; // warm-up: kernels compile
                let (mut best, mut wall) = (f64::INFINITY, 0.0);
                for _ in 0..o.reps.max(1) {
                    let s = Instant::now();
                    let r = build(backend, &arr, &samples, &cfg)?;
                    if r.classify_s + r.graph_s < best {
                        best = r.classify_s + r.graph_s;
                        wall = s.elapsed().as_secs_f64();
                        g = r;
                    }
                }
                let same = cpu
                    .as_ref()
                    .map(|c| (c.cells == g.cells && c.edges == g.edges).to_string())
                    .unwrap_or_else(|| "(no CPU run)".into());
                let name = match algorithm {
                    Algorithm::Hash => "cuda hash (default)".to_string(),
                    Algorithm::Tree => format!("cuda tree (r = {})", cfg.r),
                    Algorithm::Heuristic => format!("cuda heuristic (h = {})", cfg.h),
                };
                row(n, l, &name, &g, wall, &same);
            }
        }
    }
    Ok(())
}
