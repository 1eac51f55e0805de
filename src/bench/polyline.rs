//! Polyline benchmarks: the seed's table (guides x points per guide) on a random image, CUDA
//! against the CPU DP (rayon) in the same run, same inputs.

use std::time::Instant;

use crate::compute::{Backend, BackendKind};
use crate::error::Result;
use crate::polyline::cpu::solve;
use crate::polyline::gpu::DeviceGradient;
use crate::polyline::{Gradient, Gray, Problem};

/// `gpu_planning bench polyline`: the seed's guides x points table, CUDA against the CPU DP.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// GUIDES:POINTS pairs.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "5:128,5:256,5:512,5:1024,8:128,8:256,8:512,8:1024,32:2048"
    )]
    shapes: Vec<String>,
    #[arg(long, default_value_t = 5)]
    reps: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value = "auto")]
    backend: BackendKind,
    /// Run the CPU DP only up to this many points per guide.
    #[arg(long, default_value_t = 512)]
    cpu_limit: u32,
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
            shapes,
            reps: self.reps,
            seed: self.seed,
            cpu_limit: self.cpu_limit,
        };
        run(&backend, &options)
    }
}

pub struct Options {
    /// (guides, points per guide) pairs.
    pub shapes: Vec<(u32, u32)>,
    pub reps: usize,
    pub seed: u64,
    /// The CPU DP runs only up to this many points per guide.
    pub cpu_limit: u32,
}

pub fn run(backend: &Backend, o: &Options) -> Result<()> {
    let n = 1024u32;
    let mut rng = crate::rng::XorShift::new(o.seed);
    let data = (0..n * n).map(|_| (rng.next_u64() % 256) as f64).collect();
    let grad = Gradient::sobel(&Gray::new(n, n, data)?);
    // The default best-first scan, and the scan over all predecessors it replaces.
    let devs = match backend {
        Backend::Cuda(rt) => vec![
            (DeviceGradient::upload(rt, &grad)?, "cuda (best-first)"),
            (
                DeviceGradient::upload(rt, &grad)?.with_sort_limit(0),
                "cuda (full scan)",
            ),
        ],
        Backend::Cpu => vec![],
    };
    println!(
        "median of {} runs after a warm-up; the CPU: one run; a GPU result that differs from the CPU's (score bits, indices) stops the benchmark; \
         ms: the whole call (layers up, the DP, the path back), device ms: its launches by CUDA events",
        o.reps.max(1)
    );
    println!(
        "| guides x points | implementation | ms | device ms | whole / device | score | check |"
    );
    println!("|---|---|---:|---:|---:|---:|---|");
    for &(m, d) in &o.shapes {
        let p = Problem {
            a: (40.0, 512.0),
            b: (984.0, 530.0),
            guides: m,
            points: d,
            half_width: 120.0,
            max_angle: 30f64.to_radians(),
        };
        let cpu = if d <= o.cpu_limit {
            let s = Instant::now();
            let r = solve(&grad, &p)?;
            let ms = s.elapsed().as_secs_f64() * 1e3;
            println!(
                "| {m} x {d} | cpu DP (rayon) | {ms:.1} | - | - | {:.3} | (reference) |",
                r.score
            );
            Some(r)
        } else {
            None
        };
        for (dev, name) in &devs {
            let mut r = dev.solve(&p)?; // warm-up: compiles the kernels on first use
            let (mut t, mut device) = (Vec::new(), Vec::new());
            for _ in 0..o.reps.max(1) {
                let s = Instant::now();
                r = dev.solve(&p)?;
                t.push(s.elapsed().as_secs_f64() * 1e3);
            }
            // The device's part apart, in calls of their own (the events are not free).
            for _ in 0..o.reps.max(1) {
                device.push(dev.solve_timed(&p)?.1);
            }
            let same = match &cpu {
                Some(c) if c.score.to_bits() == r.score.to_bits() && c.indices == r.indices => {
                    "score bits and indices equal the CPU's"
                }
                Some(_) => {
                    return Err(crate::Error::Gpu(format!(
                        "polyline {m} x {d}: {name} differs from the CPU DP"
                    )))
                }
                None => "(no CPU run)",
            };
            let (whole, device) = (super::median(t), super::median(device));
            println!(
                "| {m} x {d} | {name} | {whole:.2} | {device:.2} | {:.2}x | {:.3} | {same} |",
                whole / device.max(1e-9),
                r.score
            );
        }
    }
    Ok(())
}
