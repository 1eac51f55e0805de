//! k-d tree benchmarks: the seed's case (16,777,216 random 4-D tuples: build split into sort,
//! dedupe and build; 1M exact 1-NN queries) and a 3-D case (1M points, 1M queries, k = 8);
//! the CPU builder and queries in the same run up to a size limit, results compared.
//! Build phases are timed on device-resident points; queries as device work (query sort and
//! search) and as the whole call (Morton codes on the host, upload, download of the results).

use std::time::Instant;

use crate::compute::{Backend, BackendKind};
use crate::error::{Error, Result};
use crate::kdtree::gpu::DeviceTree;
use crate::kdtree::{cpu, Metric, Points};

/// `gpu_planning bench kdtree`: build phases and exact kNN queries, CUDA against the CPU.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// POINTS:DIMS:K cases.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "16777216:4:1,1048576:3:8"
    )]
    cases: Vec<String>,
    #[arg(long, default_value_t = 1 << 20)]
    queries: usize,
    #[arg(long, default_value_t = 3)]
    reps: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value = "auto")]
    backend: BackendKind,
    /// The CPU builds and queries only up to this many points.
    #[arg(long, default_value_t = 1 << 20)]
    cpu_limit: usize,
}

impl Args {
    pub fn run(self) -> Result<()> {
        let backend = Backend::select(self.backend)?;
        let cases = self
            .cases
            .iter()
            .map(|c| {
                let v: Vec<usize> = c.split(':').filter_map(|x| x.parse().ok()).collect();
                match v[..] {
                    [n, d, k] => Ok((n, d, k)),
                    _ => Err(crate::error::Error::invalid(
                        "--cases",
                        format!("'{c}' is not POINTS:DIMS:K"),
                    )),
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let options = Options {
            cases,
            queries: self.queries,
            reps: self.reps,
            seed: self.seed,
            cpu_limit: self.cpu_limit,
        };
        run(&backend, &options)
    }
}

pub struct Options {
    /// (points, dims, k) cases; 1M queries each.
    pub cases: Vec<(usize, usize, usize)>,
    pub queries: usize,
    pub reps: usize,
    pub seed: u64,
    /// The CPU builds and queries only up to this many points.
    pub cpu_limit: usize,
}

fn uniform(n: usize, dims: usize, seed: u64) -> Result<Points> {
    use rayon::prelude::*;
    let c: Vec<f32> = (0..n * dims)
        .into_par_iter()
        .map(|i| {
            let r = crate::cellgraph::samples::splitmix64(seed ^ (i as u64).wrapping_mul(0x9e37));
            (r >> 40) as f32 / (1u64 << 24) as f32
        })
        .collect();
    Points::new(dims, c)
}

pub fn run(backend: &Backend, o: &Options) -> Result<()> {
    let Backend::Cuda(rt) = backend else {
        return Err(Error::invalid(
            "backend",
            "the k-d tree benchmark needs CUDA",
        ));
    };
    println!("| points | dims | k | implementation | sort ms | dedupe ms | build ms | total build ms | {} queries ms | equal to the CPU |", o.queries);
    println!("|---:|---:|---:|---|---:|---:|---:|---:|---:|---|");
    for &(n, dims, k) in &o.cases {
        let p = uniform(n, dims, o.seed)?;
        let q = uniform(o.queries, dims, o.seed ^ 0x51)?;
        let cpu = if n <= o.cpu_limit {
            let s = Instant::now();
            let t = cpu::build(&p);
            let b = s.elapsed().as_secs_f64() * 1e3;
            let s = Instant::now();
            let r = cpu::knn(&t, &q.coords, k, Metric::Euclidean)?;
            let qm = s.elapsed().as_secs_f64() * 1e3;
            println!("| {n} | {dims} | {k} | cpu (rayon) | | | | {b:.0} | {qm:.0} | (reference) |");
            Some((t, r))
        } else {
            None
        };
        let (dev, _) = DeviceTree::build(rt, &p)?; // warm-up: kernels compile
        drop(dev);
        let mut best: Option<(DeviceTree, crate::kdtree::gpu::BuildTimes)> = None;
        for _ in 0..o.reps.max(1) {
            let (dev, t) = DeviceTree::build(rt, &p)?;
            let total = t.sort_ms + t.dedupe_ms + t.build_ms;
            if best
                .as_ref()
                .is_none_or(|(_, b)| total < b.sort_ms + b.dedupe_ms + b.build_ms)
            {
                best = Some((dev, t));
            }
        }
        let Some((dev, t)) = best else { continue };
        if let Err((count, at)) = dev.check()? {
            return Err(Error::invalid(
                "kdtree",
                format!("device tree fails the checker: {count} positions, e.g. {at}"),
            ));
        }
        let (mut qms, mut dms) = (Vec::new(), Vec::new());
        let mut r = dev.knn(&q.coords, k, Metric::Euclidean)?;
        for _ in 0..o.reps.max(1) {
            let s = Instant::now();
            let rows = dev.knn_timed(&q.coords, k, Metric::Euclidean)?;
            qms.push(s.elapsed().as_secs_f64() * 1e3);
            dms.push(rows.device_ms);
            if cpu.is_some() {
                r = rows.nested();
            }
        }
        qms.sort_by(f64::total_cmp);
        dms.sort_by(f64::total_cmp);
        let same = cpu
            .as_ref()
            .map(|(ct, cr)| -> Result<String> {
                Ok((dev.download(p.len())? == *ct && r == *cr).to_string())
            })
            .transpose()?
            .unwrap_or_else(|| "(no CPU run; checker passed)".into());
        println!(
            "| {n} | {dims} | {k} | cuda | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} ({:.1} with transfers) | {same} |",
            t.sort_ms,
            t.dedupe_ms,
            t.build_ms,
            t.sort_ms + t.dedupe_ms + t.build_ms,
            dms[dms.len() / 2],
            qms[qms.len() / 2]
        );
    }
    Ok(())
}
