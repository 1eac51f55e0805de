//! Floyd–Warshall benchmarks: every GPU memory model and the CPU solvers on the same random
//! graphs (the seed's 15 % and 85 % densities), timed on the device without transfers.
//! Every row is checked before it is printed: its distances equal the reference's (the CPU
//! blocked solver where it runs, else the first CUDA model) and its successors are consistent
//! (each first hop is an edge whose weight plus the hop's own distance is the pair's distance),
//! which with equal distances proves every path; a failed check stops the benchmark.

use std::time::Instant;

use super::median;
use crate::apsp::gpu::DeviceMatrices;
use crate::apsp::graph::padded;
use crate::apsp::synth::random_dense;
use crate::apsp::weight::INT_INF;
use crate::apsp::{finish, padded_size, run as run_model};
use crate::apsp::{Config, MemoryModel};
use crate::compute::{Backend, BackendKind};
use crate::error::{Error, Result};

/// `gpu_planning bench apsp`: every memory model and the CPU solvers on random graphs.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[arg(long, value_delimiter = ',', default_value = "500,2000,8192")]
    sizes: Vec<usize>,
    #[arg(long, value_delimiter = ',', default_value = "0.15,0.85")]
    densities: Vec<f64>,
    #[arg(long, default_value_t = 5)]
    reps: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value = "auto")]
    backend: BackendKind,
    /// Run the per-k models and `blocked` only up to this n.
    #[arg(long, default_value_t = 8192)]
    slow_limit: usize,
    /// Run the CPU blocked solver up to this n (the textbook loop to a quarter of it).
    #[arg(long, default_value_t = 2000)]
    cpu_limit: usize,
    /// Also time tiled shapes, as TILE:THREAD_TILE pairs (e.g. 32:4,64:8).
    #[arg(long, value_delimiter = ',')]
    shapes: Vec<String>,
    /// Write each start matrix as .npy here (apsp_N_DENSITY.npy, int32, 0x3fffffff for no
    /// edge), for the peer scripts.
    #[arg(long)]
    npy_dir: Option<std::path::PathBuf>,
}

impl Args {
    pub fn run(self) -> Result<()> {
        let backend = Backend::select(self.backend)?;
        let shapes = self
            .shapes
            .iter()
            .map(|s| super::harness::parse_pair_u32("--shapes", s))
            .collect::<Result<Vec<_>>>()?;
        let options = Options {
            sizes: self.sizes,
            densities: self.densities,
            reps: self.reps,
            seed: self.seed,
            slow_limit: self.slow_limit,
            cpu_limit: self.cpu_limit,
            shapes,
            npy_dir: self.npy_dir,
        };
        run(&backend, &options)?;
        Ok(())
    }
}

pub struct Options {
    pub sizes: Vec<usize>,
    pub densities: Vec<f64>,
    pub reps: usize,
    pub seed: u64,
    /// Per-k models and `blocked` run only up to this n (they take seconds beyond).
    pub slow_limit: usize,
    /// CPU blocked (rayon) runs up to this n, the textbook loop up to a quarter of it.
    pub cpu_limit: usize,
    /// Extra (tile, thread_tile) shapes of the tiled model to time.
    pub shapes: Vec<(u32, u32)>,
    /// Where to write the start matrices for the peers (None: not written).
    pub npy_dir: Option<std::path::PathBuf>,
}

/// Successors consistent with distances: for every reached pair (i, j), i != j, the first hop
/// s = h[i][j] has an edge i -> s in the start matrix with w(i, s) + d[s][j] = d[i][j]. The first
/// offending pair, if any.
fn inconsistent_successor(
    start: &[i32],
    np: usize,
    d: &[i32],
    h: &[u32],
    n: usize,
) -> Option<(usize, usize)> {
    use rayon::prelude::*;
    (0..n).into_par_iter().find_map_any(|i| {
        (0..n).find_map(|j| {
            let dij = d[i * n + j];
            if i == j || dij >= INT_INF {
                return None;
            }
            let s = h[i * n + j] as usize;
            let ok = s < n && start[i * np + s] < INT_INF && {
                let w = start[i * np + s] as i64;
                w + d[s * n + j] as i64 == dij as i64
            };
            (!ok).then_some((i, j))
        })
    })
}

/// Prints the table row by row (long runs show progress) and returns it.
pub fn run(backend: &Backend, o: &Options) -> Result<String> {
    let mut out = String::new();
    let emit = |out: &mut String, line: String| {
        println!("{line}");
        out.push_str(&line);
        out.push('\n');
    };
    emit(
        &mut out,
        format!(
            "median of {} runs (the per-k models, blocked and the CPU: 1 run); checked: distances equal the reference's, successors consistent",
            o.reps.max(1)
        ),
    );
    emit(
        &mut out,
        "| n | density | implementation | compute ms | check |".into(),
    );
    emit(&mut out, "|---:|---:|---|---:|---|".into());
    for &n in &o.sizes {
        for &density in &o.densities {
            let mut reference: Option<(String, Vec<i32>)> = None;
            if let Some(dir) = &o.npy_dir {
                let (d0, _) = random_dense(n, n, density, o.seed);
                let name = format!("apsp_{n}_{:.0}.npy", density * 100.0);
                super::write_npy(dir, &name, &[n, n], &d0)?;
            }
            let mut models: Vec<(String, Backend, Config)> = Vec::new();
            if n <= o.cpu_limit {
                models.push((
                    "cpu blocked (rayon)".into(),
                    Backend::Cpu,
                    Config::default(),
                ));
            }
            if let Backend::Cuda(_) = backend {
                for m in [
                    MemoryModel::Tiled,
                    MemoryModel::Blocked,
                    MemoryModel::Shared,
                    MemoryModel::Coalesced,
                    MemoryModel::Linear,
                ] {
                    if m != MemoryModel::Tiled && n > o.slow_limit {
                        continue;
                    }
                    let c = Config {
                        memory_model: m,
                        ..Config::default()
                    };
                    models.push((format!("cuda {}", m.name()), backend.clone(), c));
                }
                for &(tile, thread_tile) in &o.shapes {
                    let c = Config {
                        tile,
                        thread_tile,
                        ..Config::default()
                    };
                    c.validate()?;
                    models.push((
                        format!("cuda tiled, tile {tile}, {thread_tile}x{thread_tile} per thread"),
                        backend.clone(),
                        c,
                    ));
                }
            }
            if n <= o.cpu_limit / 4 {
                let c = Config {
                    memory_model: MemoryModel::Linear,
                    ..Config::default()
                };
                models.push(("cpu textbook".into(), Backend::Cpu, c));
            }
            for (label, b, config) in models {
                let np = padded_size(n, &config).max(padded(n, 1));
                let (d0, h0) = random_dense(n, np, density, o.seed);
                let reps = if matches!(b, Backend::Cpu) || config.memory_model != MemoryModel::Tiled
                {
                    1
                } else {
                    o.reps
                };
                let mut times = Vec::new();
                let mut result = None;
                for _ in 0..reps + usize::from(!matches!(b, Backend::Cpu)) {
                    let (mut d, mut h) = (d0.clone(), h0.clone());
                    match &b {
                        Backend::Cuda(rt) => {
                            let mut m = DeviceMatrices::upload(rt, &d, &h, np)?;
                            m.synchronize()?;
                            let s = Instant::now();
                            m.solve(&config)?;
                            m.synchronize()?;
                            times.push(s.elapsed().as_secs_f64() * 1e3);
                            m.download(&mut d, &mut h)?;
                        }
                        Backend::Cpu => {
                            let s = Instant::now();
                            run_model(&b, &mut d, &mut h, np, &config)?;
                            times.push(s.elapsed().as_secs_f64() * 1e3);
                        }
                    }
                    result = Some(finish(d, h, n, np));
                }
                if !matches!(b, Backend::Cpu) {
                    times.remove(0); // the first run compiled the kernels
                }
                let (dist, succ) = result.unwrap_or_default();
                if let Some((i, j)) = inconsistent_successor(&d0, np, &dist, &succ, n) {
                    return Err(Error::Gpu(format!(
                        "apsp n {n}: {label}: successor of ({i}, {j}) is not on a shortest path"
                    )));
                }
                let same = match &reference {
                    None => {
                        reference = Some((label.clone(), dist));
                        "reference; successors consistent".to_string()
                    }
                    Some((by, r)) if *r == dist => {
                        format!("distances equal {by}'s; successors consistent")
                    }
                    Some((by, _)) => {
                        return Err(Error::Gpu(format!(
                            "apsp n {n}: {label}: distances differ from {by}'s"
                        )))
                    }
                };
                let compute = median(times);
                emit(
                    &mut out,
                    format!(
                        "| {n} | {:.0} % | {label} | {compute:.2} | {same} |",
                        density * 100.0,
                    ),
                );
                if matches!(b, Backend::Cuda(_)) && config == Config::default() {
                    let row = whole_solve(&b, n, density, o, &config, &reference, compute)?;
                    emit(&mut out, row);
                }
            }
        }
    }
    Ok(out)
}

/// The default model's whole solve as a node meets it: the graph as an edge list in host
/// memory to the solution in host memory (`apsp::solve`: validation, the edges' upload and
/// the start matrices built from them on the device, the solve, the download, the cropped
/// results, the cycle checks), its distances
/// checked against the reference's; a row of the table.
fn whole_solve(
    b: &Backend,
    n: usize,
    density: f64,
    o: &Options,
    config: &Config,
    reference: &Option<(String, Vec<i32>)>,
    compute: f64,
) -> Result<String> {
    let (d0, _) = random_dense(n, n, density, o.seed);
    let (mut from, mut to, mut w) = (Vec::new(), Vec::new(), Vec::new());
    for (c, &x) in d0.iter().enumerate() {
        let (i, j) = (c / n, c % n);
        if i != j && x < INT_INF {
            from.push(i as u32);
            to.push(j as u32);
            w.push(x);
        }
    }
    let graph = crate::apsp::Graph {
        vertices: n as u32,
        from,
        to,
        weights: crate::apsp::Weights::Int(w),
    };
    let mut solution = None;
    let mut times = Vec::new();
    for _ in 0..o.reps.max(1) + 1 {
        let s = Instant::now();
        solution = Some(crate::apsp::solve(b, &graph, config)?);
        times.push(s.elapsed().as_secs_f64() * 1e3);
    }
    times.remove(0);
    let whole = median(times);
    let same = match (reference, solution.map(|s| s.distances)) {
        (Some((by, r)), Some(crate::apsp::Distances::Int(d))) if *r == d => {
            format!("distances equal {by}'s")
        }
        _ => {
            return Err(Error::Gpu(format!(
                "apsp n {n}: the whole solve's distances differ from the reference's"
            )))
        }
    };
    Ok(format!(
        "| {n} | {:.0} % | cuda {}, whole solve: {} edges in host memory to the solution in host memory ({:.1}x the compute) | {whole:.2} | {same} |",
        density * 100.0,
        config.memory_model.name(),
        graph.from.len(),
        whole / compute.max(1e-9),
    ))
}
