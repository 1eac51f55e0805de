//! Primitive benchmarks: radix sort of (u64, u32) pairs, exclusive scan and compaction, on the
//! GPU (device-resident data, CUDA events) against the CPU (rayon) in the same run, with the
//! device's measured copy bandwidth as the yardstick. Every GPU output is checked before its
//! row is printed: sorted pairs equal the CPU's stable sort (keys and values, so order and
//! stability), the scan and the compaction equal the CPU's; a difference stops the benchmark.

use std::fmt::Write;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::CudaSlice;

use crate::bench::median_ms;
use crate::compute::cuda::gpu_err;
use crate::compute::primitives::cpu;
use crate::compute::primitives::gpu::{Primitives, SortConfig, SortMethod};
use crate::compute::{Backend, BackendKind, CudaRuntime};
use crate::error::Result;
use crate::rng::XorShift;

/// `gpu_planning bench primitives`: radix sort, scan and compaction, CUDA against rayon.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[arg(long, default_value_t = 1 << 24)]
    n: usize,
    #[arg(long, default_value_t = 10)]
    reps: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value = "auto")]
    backend: BackendKind,
    /// Also time one-sweep sort shapes, as ITEMS:BLOCKS pairs (e.g. 12:3,16:2).
    #[arg(long, value_delimiter = ',')]
    sweep: Vec<String>,
    /// Write the inputs as .npy here (keys.npy u64, small.npy u32, flags.npy u8), for the peer
    /// scripts.
    #[arg(long)]
    npy_dir: Option<std::path::PathBuf>,
}

impl Args {
    pub fn run(self) -> Result<()> {
        let backend = Backend::select(self.backend)?;
        let sweep = self
            .sweep
            .iter()
            .map(|s| parse_sort_config(s))
            .collect::<Result<Vec<_>>>()?;
        let options = Options {
            n: self.n,
            reps: self.reps,
            seed: self.seed,
            sweep,
            npy_dir: self.npy_dir,
        };
        println!("{}", run(&backend, &options)?);
        Ok(())
    }
}

fn parse_sort_config(s: &str) -> Result<SortConfig> {
    let bad = || crate::error::Error::invalid("--sweep", format!("'{s}' is not ITEMS:BLOCKS"));
    let (items, blocks) = s.split_once(':').ok_or_else(bad)?;
    Ok(SortConfig {
        items_per_thread: items.parse().map_err(|_| bad())?,
        min_blocks_per_sm: blocks.parse().map_err(|_| bad())?,
    })
}

pub struct Options {
    pub n: usize,
    pub reps: usize,
    pub seed: u64,
    /// Also time these sort shapes (one-sweep), to tune SortConfig's defaults.
    pub sweep: Vec<SortConfig>,
    /// Where to write the inputs for the peers (None: not written).
    pub npy_dir: Option<std::path::PathBuf>,
}

fn mismatch(what: &str) -> crate::Error {
    crate::Error::Gpu(format!("benchmark: {what} differs from the CPU's"))
}

/// Runs the benchmark and returns a Markdown table.
pub fn run(backend: &Backend, o: &Options) -> Result<String> {
    let mut rng = XorShift::new(o.seed);
    let keys: Vec<u64> = (0..o.n).map(|_| rng.next_u64()).collect();
    let values: Vec<u32> = (0..o.n as u32).collect();
    let small: Vec<u32> = (0..o.n).map(|_| (rng.next_u64() % 4) as u32).collect();
    let flags: Vec<u8> = (0..o.n).map(|_| (rng.next_u64() & 1) as u8).collect();
    if let Some(dir) = &o.npy_dir {
        super::write_npy(dir, "keys.npy", &[o.n], &keys)?;
        super::write_npy(dir, "small.npy", &[o.n], &small)?;
        super::write_npy(dir, "flags.npy", &[o.n], &flags)?;
    }
    // The references every GPU output is compared with.
    let sorted_ref = cpu::sort_pairs_parallel(&keys, &values);
    let scan_ref = cpu::exclusive_scan(&small).0;
    let compact_ref = cpu::compact(&values, &flags);

    let mut rows: Vec<(String, String, f64, String)> = Vec::new();
    let mut pairs: Vec<(u64, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
    let cpu_unstable = median_ms(o.reps.min(3), || {
        pairs.copy_from_slice(
            &keys
                .iter()
                .copied()
                .zip(values.iter().copied())
                .collect::<Vec<_>>(),
        );
        rayon::slice::ParallelSliceMut::par_sort_unstable_by_key(&mut pairs[..], |p| p.0);
    });
    rows.push((
        "sort pairs".into(),
        "cpu rayon par_sort_unstable".into(),
        cpu_unstable,
        String::new(),
    ));
    let cpu_stable = median_ms(o.reps.min(3), || {
        std::hint::black_box(cpu::sort_pairs_parallel(&keys, &values));
    });
    rows.push((
        "sort pairs".into(),
        "cpu rayon par_sort (stable, incl. copy)".into(),
        cpu_stable,
        String::new(),
    ));
    let cpu_scan = median_ms(o.reps.min(3), || {
        std::hint::black_box(cpu::exclusive_scan(&small));
    });
    rows.push((
        "exclusive scan u32".into(),
        "cpu sequential".into(),
        cpu_scan,
        String::new(),
    ));
    let cpu_compact = median_ms(o.reps.min(3), || {
        std::hint::black_box(cpu::compact(&values, &flags));
    });
    rows.push((
        "compact u32".into(),
        "cpu sequential".into(),
        cpu_compact,
        String::new(),
    ));

    let mut copy_gbs = None;
    if let Backend::Cuda(rt) = backend {
        let p = Primitives::new(rt)?;
        // Copy bandwidth: device-to-device memcpy of the key array, bytes read + written.
        let src = rt.upload(&keys)?;
        let mut dst = rt.alloc_zeros::<u64>(o.n)?;
        let copy_ms = gpu_median_ms(rt, o.reps, |_| {
            rt.stream().memcpy_dtod(&src, &mut dst).map_err(gpu_err)
        })?;
        let gbs = 2.0 * (o.n * 8) as f64 / (copy_ms * 1e6);
        copy_gbs = Some(gbs);
        rows.push((
            "copy (d2d memcpy)".into(),
            "cuda".into(),
            copy_ms,
            format!("{gbs:.0} GB/s"),
        ));

        let k_dev = rt.upload(&keys)?;
        let v_dev = rt.upload(&values)?;
        let mut k: CudaSlice<u64> = rt.alloc_zeros(o.n)?;
        let mut v: CudaSlice<u32> = rt.alloc_zeros(o.n)?;
        for (method, label, pass_bytes) in [
            (SortMethod::Onesweep, "cuda radix one-sweep", 24),
            (
                SortMethod::Queued,
                "cuda radix one-sweep, queued (every digit, no read-back)",
                24,
            ),
            (SortMethod::ThreeKernel, "cuda radix 3-kernel", 32),
        ] {
            let mut passes = 0;
            let sort_ms = gpu_median_ms(rt, o.reps, |timed| {
                // Restore the unsorted input outside the timed region.
                let s = rt.stream();
                s.memcpy_dtod(&k_dev, &mut k).map_err(gpu_err)?;
                s.memcpy_dtod(&v_dev, &mut v).map_err(gpu_err)?;
                timed.start()?;
                passes = p.sort_pairs_with(&mut k, &mut v, o.n, method)?;
                Ok(())
            })?;
            // Bytes per digit pass: one-sweep reads and writes the pairs (24n); three-kernel
            // also reads the keys in its upsweep (32n). Plus one read of the keys for the
            // digit histograms.
            let bytes = (passes * pass_bytes + 8) as f64 * o.n as f64;
            let eff = bytes / (sort_ms * 1e6);
            rows.push((
                "sort pairs".into(),
                format!("{label} ({passes} passes)"),
                sort_ms,
                format!(
                    "{eff:.0} GB/s effective = {:.0} % of copy",
                    100.0 * eff / gbs
                ),
            ));
            if rt.download(&k, o.n)? != sorted_ref.0 || rt.download(&v, o.n)? != sorted_ref.1 {
                return Err(mismatch(label));
            }
        }

        for &config in &o.sweep {
            let tuned = Primitives::with_config(rt, config)?;
            let mut passes = 0;
            let sort_ms = gpu_median_ms(rt, o.reps, |timed| {
                let s = rt.stream();
                s.memcpy_dtod(&k_dev, &mut k).map_err(gpu_err)?;
                s.memcpy_dtod(&v_dev, &mut v).map_err(gpu_err)?;
                timed.start()?;
                passes = tuned.sort_pairs_with(&mut k, &mut v, o.n, SortMethod::Onesweep)?;
                Ok(())
            })?;
            if rt.download(&k, o.n)? != sorted_ref.0 || rt.download(&v, o.n)? != sorted_ref.1 {
                return Err(mismatch("a swept sort shape"));
            }
            let eff = (passes * 24 + 8) as f64 * o.n as f64 / (sort_ms * 1e6);
            rows.push((
                "sort pairs (sweep)".into(),
                format!(
                    "one-sweep, {} keys/thread, {} blocks/SM",
                    config.items_per_thread, config.min_blocks_per_sm
                ),
                sort_ms,
                format!("{eff:.0} GB/s = {:.0} % of copy", 100.0 * eff / gbs),
            ));
        }

        let s_dev = rt.upload(&small)?;
        let mut s: CudaSlice<u32> = rt.alloc_zeros(o.n)?;
        let scan_ms = gpu_median_ms(rt, o.reps, |timed| {
            rt.stream().memcpy_dtod(&s_dev, &mut s).map_err(gpu_err)?;
            timed.start()?;
            p.exclusive_scan_in_place(&mut s, o.n)
        })?;
        if rt.download(&s, o.n)? != scan_ref {
            return Err(mismatch("the exclusive scan"));
        }
        let eff = 8.0 * o.n as f64 / (scan_ms * 1e6);
        rows.push((
            "exclusive scan u32".into(),
            "cuda".into(),
            scan_ms,
            format!("{eff:.0} GB/s (read+write)"),
        ));

        let f_dev = rt.upload(&flags)?;
        let mut kept = None;
        let compact_ms = gpu_median_ms(rt, o.reps, |timed| {
            timed.start()?;
            kept = Some(p.compact(&v_dev, &f_dev, o.n)?);
            Ok(())
        })?;
        let compacted = match kept {
            Some((out, count)) => rt.download(&out, count)?,
            None => Vec::new(),
        };
        if compacted != compact_ref {
            return Err(mismatch("the compaction"));
        }
        rows.push((
            "compact u32".into(),
            "cuda (incl. count read-back)".into(),
            compact_ms,
            String::new(),
        ));
    }

    let mut out = String::new();
    let _ = writeln!(
        out,
        "n = {} pairs, median of {} runs (CPU rows: of {}), seed {}; every GPU output equal to the CPU's",
        o.n,
        o.reps.max(1),
        o.reps.clamp(1, 3),
        o.seed
    );
    if let Backend::Cuda(rt) = backend {
        let _ = writeln!(
            out,
            "device: {} ({}), NVRTC {}.{}",
            rt.info().name,
            rt.info().arch(),
            rt.info().nvrtc_version.0,
            rt.info().nvrtc_version.1
        );
    }
    if let Some(g) = copy_gbs {
        let _ = writeln!(out, "measured copy bandwidth: {g:.0} GB/s");
    }
    let _ = writeln!(
        out,
        "\n| operation | implementation | ms | throughput |\n|---|---|---:|---|"
    );
    for (op, imp, ms, note) in rows {
        let _ = writeln!(out, "| {op} | {imp} | {ms:.3} | {note} |");
    }
    Ok(out)
}

/// Lets a timed closure start the clock after its untimed set-up.
pub struct Timed<'a> {
    rt: &'a CudaRuntime,
    start: &'a cudarc::driver::CudaEvent,
}

impl Timed<'_> {
    pub fn start(&self) -> Result<()> {
        self.start.record(self.rt.stream()).map_err(gpu_err)
    }
}

/// Median of `reps` GPU timings by CUDA events; the closure calls `start()` when the timed
/// part begins (or not at all, timing everything).
fn gpu_median_ms<F>(rt: &CudaRuntime, reps: usize, mut f: F) -> Result<f64>
where
    F: FnMut(&Timed) -> Result<()>,
{
    let ctx = rt.context();
    let start = ctx
        .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
        .map_err(gpu_err)?;
    let stop = ctx
        .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
        .map_err(gpu_err)?;
    let mut times = Vec::new();
    for i in 0..=reps.max(1) {
        start.record(rt.stream()).map_err(gpu_err)?;
        f(&Timed { rt, start: &start })?;
        stop.record(rt.stream()).map_err(gpu_err)?;
        stop.synchronize().map_err(gpu_err)?;
        if i > 0 {
            times.push(f64::from(start.elapsed_ms(&stop).map_err(gpu_err)?));
        }
    }
    Ok(super::median(times))
}
