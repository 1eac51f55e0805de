//! k-d tree benchmarks: the seed's case (16,777,216 random 4-D tuples: build split into sort,
//! dedupe and build; 1M exact 1-NN queries) and a 3-D case (1M points, 1M queries, k = 8);
//! the CPU builder and queries in the same run up to a size limit, results compared.
//! Build phases are timed on device-resident points; queries as device work (query sort and
//! search, by CUDA events, the copies apart: queued behind a hold so that they run back to back,
//! the device's own time, and launched as a call launches them), as the whole call a node makes (queries in
//! host memory to answers in fresh vectors), and as the whole call into page-locked answers
//! the caller keeps across calls (`DeviceTree::knn_into`); beside them the host's own share of
//! a call into fresh vectors (their pages mapped, then filled from the kept answers), timed
//! with no device work.
//! Every case is checked: the tree by its checker (and equal to the CPU's where the CPU runs),
//! the answers equal to the CPU's where it runs, and always a sample of queries equal to brute
//! force over every point.

use std::time::Instant;

use super::median;
use crate::compute::staging::host_vec;
use crate::compute::{Backend, BackendKind};
use crate::error::{Error, Result};
use crate::kdtree::gpu::{DeviceTree, PinnedKnn};
use crate::kdtree::{cpu, Metric, Points, Traversal};

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
    /// Queries checked against brute force over every point, in every case.
    #[arg(long, default_value_t = 200)]
    brute_sample: usize,
    /// Write the points and queries as .npy here (points_N_D.npy, queries_Q_D.npy, float32),
    /// for the peer scripts.
    #[arg(long)]
    npy_dir: Option<std::path::PathBuf>,
    /// Real point files (.pcd, .ply, .las, .laz) searched after the cases: every finite point is
    /// a point and a query (each point's neighbours, as normal estimation asks), at each k of
    /// --cloud-k. With --npy-dir, each file's finite points go there as cloud_STEM.npy.
    #[arg(long, value_delimiter = ',')]
    clouds: Vec<std::path::PathBuf>,
    #[arg(long, value_delimiter = ',', default_value = "1,8")]
    cloud_k: Vec<usize>,
    /// The device queries' traversals, each timed and checked (a row each): auto, plane,
    /// boxes.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "auto")]
    traversal: Vec<Traversal>,
}

impl Args {
    pub fn run(self) -> Result<()> {
        let backend = Backend::select(self.backend)?;
        // `--cases ''` runs only the --clouds.
        let cases = self
            .cases
            .iter()
            .filter(|c| !c.is_empty())
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
            brute_sample: self.brute_sample,
            npy_dir: self.npy_dir,
            clouds: self.clouds,
            cloud_k: self.cloud_k,
            traversals: self.traversal,
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
    /// Queries checked against brute force in every case.
    pub brute_sample: usize,
    /// Where to write the inputs for the peers (None: not written).
    pub npy_dir: Option<std::path::PathBuf>,
    /// Real point files, searched against themselves at each of `cloud_k`.
    pub clouds: Vec<std::path::PathBuf>,
    pub cloud_k: Vec<usize>,
    /// The device queries' traversals, a row each.
    pub traversals: Vec<Traversal>,
}

pub(super) fn uniform(n: usize, dims: usize, seed: u64) -> Result<Points> {
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
    println!(
        "build: the fastest of {} (after a warm-up); queries: median of {}; checked as the last column says",
        o.reps.max(1),
        o.reps.max(1)
    );
    println!("| points | dims | k | implementation | sort ms | dedupe ms | build ms | total build ms | {} queries ms | check |", o.queries);
    println!("|---:|---:|---:|---|---:|---:|---:|---:|---:|---|");
    for &(n, dims, k) in &o.cases {
        let p = uniform(n, dims, o.seed)?;
        let q = uniform(o.queries, dims, o.seed ^ 0x51)?;
        if let Some(dir) = &o.npy_dir {
            super::write_npy(
                dir,
                &format!("points_{n}_{dims}.npy"),
                &[n, dims],
                &p.coords,
            )?;
            let name = format!("queries_{}_{dims}.npy", o.queries);
            super::write_npy(dir, &name, &[o.queries, dims], &q.coords)?;
        }
        bench_case(rt, o, &format!("{n} | {dims} | {k}"), &p, &q, k)?;
    }
    if !o.clouds.is_empty() {
        cloud_cases(rt, o)?;
    }
    Ok(())
}

/// One case: the CPU's build and answers (up to `cpu_limit` points), the device's build (the
/// fastest of `reps`) and queries (the median), every answer checked; a row per backend whose
/// first columns are `cols`.
fn bench_case(
    rt: &std::sync::Arc<crate::compute::cuda::CudaRuntime>,
    o: &Options,
    cols: &str,
    p: &Points,
    q: &Points,
    k: usize,
) -> Result<()> {
    let n = p.len();
    let cpu = if n <= o.cpu_limit {
        let s = Instant::now();
        let t = cpu::build(p);
        let b = s.elapsed().as_secs_f64() * 1e3;
        let s = Instant::now();
        let r = cpu::knn(&t, &q.coords, k, Metric::Euclidean)?;
        let qm = s.elapsed().as_secs_f64() * 1e3;
        println!("| {cols} | cpu (rayon) | | | | {b:.0} | {qm:.0} | (reference) |");
        Some((t, r))
    } else {
        None
    };
    let (dev, _) = DeviceTree::build(rt, p)?; // warm-up: kernels compile
    drop(dev);
    let mut best: Option<(DeviceTree, crate::kdtree::gpu::BuildTimes)> = None;
    for _ in 0..o.reps.max(1) {
        let (dev, t) = DeviceTree::build(rt, p)?;
        let total = t.sort_ms + t.dedupe_ms + t.build_ms;
        if best
            .as_ref()
            .is_none_or(|(_, b)| total < b.sort_ms + b.dedupe_ms + b.build_ms)
        {
            best = Some((dev, t));
        }
    }
    let Some((dev, t)) = best else {
        return Ok(());
    };
    if let Err((count, at)) = dev.check()? {
        return Err(Error::invalid(
            "kdtree",
            format!("device tree fails the checker: {count} positions, e.g. {at}"),
        ));
    }
    // The tree once; each traversal's answers below.
    if let Some((ct, _)) = &cpu {
        if dev.download(p.len())? != *ct {
            return Err(Error::invalid(
                "kdtree",
                format!("{cols}: the device tree differs from the CPU's"),
            ));
        }
    }
    for &traversal in &o.traversals {
        dev.set_traversal(traversal);
        let label = match traversal.for_k(k) {
            Traversal::Boxes => "cuda, boxes",
            _ => "cuda, plane",
        };
        // Per rep: the phases apart (synchronised, for the device's own time), the whole call as
        // a node makes it, and the whole call into kept page-locked answers, all checked below.
        let [mut phased, mut dms, mut ums, mut wms, mut whole, mut pinned_ms]: [Vec<f64>; 6] =
            Default::default();
        // The host's own share of a call into fresh vectors, with no device work beside it:
        // the answers' pages mapped (`map_ms`), and mapped then filled from the kept
        // page-locked answers (`host_ms`).
        let [mut map_ms, mut host_ms]: [Vec<f64>; 2] = Default::default();
        // The device's own time: its work queued behind a hold, run back to back (`dms` has
        // each launch start when the host issues it, as in a call).
        let mut held_ms: Vec<f64> = Vec::new();
        let call = |dev: &DeviceTree| dev.knn_rows(&q.coords, k, Metric::Euclidean);
        let mut rows = call(&dev)?;
        // The whole call into page-locked answers kept across calls (grown by this first call).
        let mut pinned = PinnedKnn::new();
        dev.knn_into(&q.coords, k, Metric::Euclidean, &mut pinned)?;
        for _ in 0..o.reps.max(1) {
            let s = Instant::now();
            let (apart, t) = dev.knn_timed(&q.coords, k, Metric::Euclidean, false)?;
            phased.push(s.elapsed().as_secs_f64() * 1e3);
            let (ahead, th) = dev.knn_timed(&q.coords, k, Metric::Euclidean, true)?;
            held_ms.push(th.device_ms);
            dms.push(t.device_ms);
            ums.push(t.upload_ms);
            wms.push(t.download_ms);
            let s = Instant::now();
            let got = call(&dev)?;
            whole.push(s.elapsed().as_secs_f64() * 1e3);
            // The last call's answers are freed outside the clock (unmapping them takes time
            // the call itself does not).
            rows = got;
            let s = Instant::now();
            dev.knn_into(&q.coords, k, Metric::Euclidean, &mut pinned)?;
            pinned_ms.push(s.elapsed().as_secs_f64() * 1e3);
            let s = Instant::now();
            let fresh = pinned.to_rows()?;
            host_ms.push(s.elapsed().as_secs_f64() * 1e3);
            let s = Instant::now();
            let pages = (
                host_vec::<f32>(fresh.distances.len()),
                host_vec::<u32>(fresh.indices.len()),
            );
            map_ms.push(s.elapsed().as_secs_f64() * 1e3);
            drop(pages);
            if apart != rows || ahead != rows || fresh != rows {
                return Err(Error::invalid(
                    "kdtree",
                    format!("{cols}: the whole calls' answers differ from the timed call's"),
                ));
            }
        }
        let r = rows.nested();
        let sample = o.brute_sample.min(q.len());
        for i in 0..sample {
            // Spread over the whole query set (queries are answered in Morton order).
            let qi = i * q.len() / sample.max(1);
            if r[qi] != crate::kdtree::brute::knn_distinct(p, q.point(qi), k) {
                return Err(Error::invalid(
                    "kdtree",
                    format!("{cols}: query {qi} differs from brute force"),
                ));
            }
        }
        let mut same = format!("tree checker passed; {sample} queries equal brute force");
        if let Some((_, cr)) = &cpu {
            if r != *cr {
                return Err(Error::invalid(
                    "kdtree",
                    format!("{cols}: answers differ from the CPU's"),
                ));
            }
            same.push_str("; tree and every answer equal the CPU's");
        }
        let device = median(held_ms);
        println!(
            "| {cols} | {label} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} (launched as a call issues them {:.2}; whole call {:.2}, {:.2}x; into kept page-locked answers {:.2}, {:.2}x; phases apart {:.2}: upload {:.2}, download {:.2}; the host alone into fresh vectors {:.2}, {:.2}x, of which mapping {:.2}) | {same} |",
            t.sort_ms,
            t.dedupe_ms,
            t.build_ms,
            t.sort_ms + t.dedupe_ms + t.build_ms,
            device,
            median(dms),
            median(whole.clone()),
            median(whole) / device,
            median(pinned_ms.clone()),
            median(pinned_ms) / device,
            median(phased),
            median(ums),
            median(wms),
            median(host_ms.clone()),
            median(host_ms) / device,
            median(map_ms)
        );
    }
    Ok(())
}

/// The --clouds: each file's finite points against themselves, a table of their own.
fn cloud_cases(rt: &std::sync::Arc<crate::compute::cuda::CudaRuntime>, o: &Options) -> Result<()> {
    println!();
    println!("| cloud | points | k | implementation | sort ms | dedupe ms | build ms | total build ms | queries (the points) ms | check |");
    println!("|---|---:|---:|---|---:|---:|---:|---:|---:|---|");
    for path in &o.clouds {
        let (dims, coords) = crate::kdtree::io::read_points(path)?;
        let p = Points::new(dims, crate::kdtree::FiniteRows::new(dims, coords).coords)?;
        let name = path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some(dir) = &o.npy_dir {
            let stem = path.file_stem().unwrap_or_default().to_string_lossy();
            super::write_npy(
                dir,
                &format!("cloud_{stem}.npy"),
                &[p.len(), dims],
                &p.coords,
            )?;
        }
        for &k in &o.cloud_k {
            bench_case(rt, o, &format!("{name} | {} | {k}", p.len()), &p, &p, k)?;
        }
    }
    Ok(())
}
