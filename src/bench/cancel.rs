//! How soon a cancelled plan stops: a plan on a large maze runs under a cancel flag on its own
//! thread, the flag is cancelled `delay` after it started, and the time from the cancel to the
//! plan's return (`Error::Cancelled`) is what nav2's CancelGoal waits for the planner's work.
//! Each Lee memory model (unit costs) and the costmap planner, on the chosen backend.

use std::time::{Duration, Instant};

use crate::cancel::CancelFlag;
use crate::compute::{Backend, BackendKind};
use crate::error::{Error, Result};
use crate::lee::costmap::{CostParams, CostPlanner};
use crate::lee::synth::{maze, nearest_open};
use crate::lee::{Config, Connectivity, Grid, MemoryModel, Planner};

/// `gpu_planning bench cancel`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[arg(long, default_value = "cuda")]
    backend: BackendKind,
    /// Side of the square maze planned across (its field takes many launches or steps).
    #[arg(long, default_value_t = 4001)]
    size: u32,
    /// Milliseconds after a plan starts that it is cancelled, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "5,20")]
    delay_ms: Vec<u64>,
    /// The Lee memory models on CUDA (the CPU backend runs one BFS), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "bitwave")]
    models: Vec<MemoryModel>,
    /// Cancelled plans per planner and delay.
    #[arg(long, default_value_t = 5)]
    trials: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Largest maze side: its grid and field stay within a few GB.
const MAX_SIZE: u32 = 20_000;

/// One plan to a goal, as the bench runs it: Ok(()) when it ran to its end.
type Plan<'a> = Box<dyn Fn((i64, i64)) -> Result<()> + Sync + 'a>;

/// Cancels `plan` `delay` after it starts; Ok(Some(ms from the cancel to the return)) when it
/// ended cancelled, Ok(None) when it finished before the cancel.
fn cancelled_after(plan: &Plan, goal: (i64, i64), delay: Duration) -> Result<Option<f64>> {
    let flag = CancelFlag::new();
    let (result, ended) = std::thread::scope(|s| {
        let worker = s.spawn(|| {
            let r = flag.scope(|| plan(goal));
            (r, Instant::now())
        });
        std::thread::sleep(delay);
        let at = Instant::now();
        flag.cancel();
        let (r, ended) = worker
            .join()
            .map_err(|_| Error::Gpu("bench cancel: the plan's thread panicked".into()))?;
        Ok::<_, Error>((r, ended.saturating_duration_since(at)))
    })?;
    match result {
        Err(Error::Cancelled) => Ok(Some(ended.as_secs_f64() * 1e3)),
        Ok(()) => Ok(None),
        Err(e) => Err(e),
    }
}

impl Args {
    pub fn run(self) -> Result<()> {
        if self.size < 3 || self.size > MAX_SIZE {
            return Err(Error::invalid(
                "--size",
                format!("{} is outside 3..={MAX_SIZE}", self.size),
            ));
        }
        let backend = Backend::select(self.backend)?;
        let n = self.size;
        let heights = maze(n, n, self.seed);
        let open = |x, y| {
            nearest_open(&heights, n, x, y)
                .map(|(x, y)| (x as i64, y as i64))
                .ok_or_else(|| Error::invalid("--size", "the maze has no open cell"))
        };
        // Every plan to a goal of its own near the far corner (the planners keep the fields of
        // goals planned before): the timed plans' first, then the trials'.
        let start = open(0, 0)?;
        let trials = self.trials * self.delay_ms.len();
        let goals = (0..trials as u32 + 3)
            .map(|j| open(n - 1, (n - 1).saturating_sub(4 * j)))
            .collect::<Result<Vec<_>>>()?;
        let grid = |c| Grid::from_elevation(n, n, &heights, 1.0, c);
        let mut planners: Vec<(String, Plan)> = Vec::new();
        // The CPU backend runs one BFS whatever the memory model.
        let models = match backend {
            Backend::Cpu => &[MemoryModel::Bitwave][..],
            Backend::Cuda(_) => &self.models[..],
        };
        for &model in models {
            let config = Config {
                memory_model: model,
                ..Config::default()
            };
            let p = Planner::new(&backend, grid(Connectivity::Four)?, config)?;
            planners.push((
                format!("lee {model:?}"),
                Box::new(move |goal| p.plan(start, goal, false).map(|_| ())),
            ));
        }
        let values: Vec<u8> = (0..n as usize * n as usize)
            .map(|i| (i * 37 % 200) as u8)
            .collect();
        let costs = CostPlanner::new(
            &backend,
            grid(Connectivity::Eight)?,
            &values,
            &CostParams::default(),
        )?;
        planners.push((
            "costmap".into(),
            Box::new(move |goal| costs.plan(start, goal).map(|_| ())),
        ));
        println!(
            "{n} x {n} maze, {} backend: ms from the cancel to the plan's return, {} trials per delay",
            backend.name(),
            self.trials
        );
        println!("| planner | plan ms, uncancelled (two goals) | cancelled after ms | stop ms: median | max | finished first |");
        println!("|---|---:|---:|---:|---:|---:|");
        for (name, plan) in &planners {
            plan(goals[0])?; // warm-up: kernels compile, buffers come
            let mut whole = [0.0; 2];
            for (i, &g) in goals[1..3].iter().enumerate() {
                let t = Instant::now();
                plan(g)?;
                whole[i] = t.elapsed().as_secs_f64() * 1e3;
            }
            let whole = format!("{:.1} / {:.1}", whole[0], whole[1]);
            let mut next = goals[3..].iter();
            for &d in &self.delay_ms {
                let mut stops = Vec::new();
                let mut finished = 0;
                for _ in 0..self.trials {
                    let goal = *next
                        .next()
                        .ok_or_else(|| Error::Gpu("bench cancel: goals ran out".into()))?;
                    match cancelled_after(plan, goal, Duration::from_millis(d))? {
                        Some(ms) => stops.push(ms),
                        None => finished += 1,
                    }
                }
                let max = stops.iter().copied().fold(f64::NAN, f64::max);
                let median = if stops.is_empty() {
                    f64::NAN
                } else {
                    super::median(stops)
                };
                println!("| {name} | {whole} | {d} | {median:.2} | {max:.2} | {finished} |");
            }
        }
        Ok(())
    }
}
