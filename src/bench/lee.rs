//! Lee benchmarks: every memory model and the CPU reference on the same grids, at several
//! sizes, random terrain (30 % of transitions blocked) and mazes. Every model's field and path
//! are compared with the CPU BFS and its descent; a difference stops the benchmark with an
//! error. Times are medians of `--reps` runs after a warm-up; the CPU and the sweep models
//! (one launch per wave) take the median of at most 3, as the table's header says.

use std::fmt::Write;

use super::lee_map::MAX_SIDE;
use super::try_median_ms as median;
use crate::compute::{Backend, BackendKind};
use crate::error::Result;
use crate::lee::gpu::{LongDescent, Schedule};
use crate::lee::synth::{maze, nearest_open, occupancy, random_terrain};
use crate::lee::{Config, Connectivity, Grid, MemoryModel, Planner};

/// `gpu_planning bench lee`: every memory model and the CPU BFS on random terrain and mazes.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[arg(long, value_delimiter = ',', default_value = "1000,4000")]
    sizes: Vec<u32>,
    #[arg(long, default_value_t = 10)]
    reps: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value = "auto")]
    backend: BackendKind,
    /// Skip sweep models on mazes above this many cells.
    #[arg(long, default_value_t = 1_000_000)]
    sweep_limit_cells: u64,
    /// Write the terrains as .npy here, for the peer scripts.
    #[arg(long)]
    npy_dir: Option<std::path::PathBuf>,
    /// CUDA memory models to run (the CPU reference always runs); bitwave-rounds,
    /// bitwave-queue, bitwave-portals and bitwave-portal-queue are bitwave on one schedule
    /// only (bitwave: the portals where their tables fit, their wave in one block where it
    /// fits one, else rounds, then the queue once rounds run narrow).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "global,texture,shared,bitwave"
    )]
    models: Vec<String>,
    /// Check against the CPU BFS without timing it (its row is left out).
    #[arg(long)]
    skip_cpu_timing: bool,
    /// Synthetic terrains to run: random, maze, occupancy.
    #[arg(long, value_delimiter = ',', default_value = "random,maze")]
    terrains: Vec<Terrain>,
    /// Also time the clearance transform for this robot radius (cells of 0.05 m) on the CPU
    /// and CUDA, flags checked equal (0: not timed).
    #[arg(long, default_value_t = 0.0)]
    robot_radius: f64,
    /// Plan on this map_server map instead of synthetic terrain (see bench::lee_map).
    #[arg(long)]
    map: Option<std::path::PathBuf>,
    /// With --map: upscale it this many times (nearest neighbour).
    #[arg(long, default_value_t = 1)]
    scale: u32,
    /// With --map: seeded random start/goal pairs in its largest free component.
    #[arg(long, default_value_t = 20)]
    pairs: usize,
    /// With --map: unit or costmap.
    #[arg(long, default_value = "unit")]
    cost_model: crate::lee::costmap::CostModel,
    /// With --map: 4 or 8 neighbours, or 0 for the planner node's default for the cost
    /// model (unit 4, costmap 8), as its `connectivity` parameter.
    #[arg(long, default_value_t = 0)]
    connectivity: u32,
    /// How CUDA descends the path: auto (the window walk up to `lee::gpu::long_path_from`
    /// moves, the tiles' pointer jumps beyond), or walk, tiles or jumps (over every cell) for
    /// every path.
    #[arg(long, default_value = "auto")]
    descent: Descent,
}

/// How `bench lee` descends paths on CUDA.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Descent {
    Auto,
    Walk,
    Tiles,
    Jumps,
}

impl Args {
    pub fn run(self) -> Result<()> {
        let backend = Backend::select(self.backend)?;
        if let Some(map) = self.map {
            let o = super::lee_map::MapOptions {
                map,
                scale: self.scale,
                pairs: self.pairs,
                cost_model: self.cost_model,
                connectivity: crate::lee::Connectivity::for_model(
                    self.connectivity,
                    self.cost_model == crate::lee::costmap::CostModel::Costmap,
                )?,
                robot_radius: self.robot_radius,
                seed: self.seed,
            };
            println!("{}", super::lee_map::run(&backend, &o)?);
            return Ok(());
        }
        let models = self
            .models
            .iter()
            .map(|m| match m.as_str() {
                "bitwave-rounds" => Ok((MemoryModel::Bitwave, Schedule::Rounds)),
                "bitwave-queue" => Ok((MemoryModel::Bitwave, Schedule::Queue)),
                "bitwave-portals" => Ok((MemoryModel::Bitwave, Schedule::Portals)),
                "bitwave-portal-queue" => Ok((MemoryModel::Bitwave, Schedule::PortalQueue)),
                m => m.parse().map(|model| (model, Schedule::Adaptive)),
            })
            .collect::<Result<Vec<(MemoryModel, Schedule)>>>()?;
        if let Some(&n) = self.sizes.iter().find(|&&n| !(2..=MAX_SIDE).contains(&n)) {
            return Err(crate::error::Error::invalid(
                "--sizes",
                format!("{n} is not a side of 2..={MAX_SIDE} cells"),
            ));
        }
        let options = Options {
            sizes: self.sizes,
            terrains: self.terrains,
            reps: self.reps,
            seed: self.seed,
            sweep_limit_cells: self.sweep_limit_cells,
            npy_dir: self.npy_dir,
            models,
            robot_radius: self.robot_radius,
            time_cpu: !self.skip_cpu_timing,
            descent: self.descent,
        };
        println!("{}", run(&backend, &options)?);
        Ok(())
    }
}

/// A synthetic terrain of `bench lee`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Terrain {
    /// Random elevation, 30 % of transitions blocked.
    Random,
    /// A maze of one-cell corridors (the worst case of a wave).
    Maze,
    /// An occupancy grid with 20 % of its cells occupied at random (`bench services`'s maps).
    Occupancy,
}

impl Terrain {
    fn name(self) -> &'static str {
        match self {
            Terrain::Random => "random",
            Terrain::Maze => "maze",
            Terrain::Occupancy => "occupancy",
        }
    }
}

pub struct Options {
    pub sizes: Vec<u32>,
    pub terrains: Vec<Terrain>,
    pub reps: usize,
    pub seed: u64,
    /// Sweep-based models (global, texture, shared) need one pass per wave; on mazes above
    /// this many cells they are skipped (the table says so).
    pub sweep_limit_cells: u64,
    /// Where to write the terrains as .npy for the peers (None: not written).
    pub npy_dir: Option<std::path::PathBuf>,
    /// CUDA memory models to run, in this order, with bitwave's schedule.
    pub models: Vec<(MemoryModel, Schedule)>,
    /// Time the clearance transform for this radius (0: not timed).
    pub robot_radius: f64,
    /// Time the CPU BFS too (it is the reference either way).
    pub time_cpu: bool,
    /// How CUDA descends the paths.
    pub descent: Descent,
}

/// Rows timing the clearance transform (distance transform + flags, from the host grid to
/// host flags, as a node computes it once per map) on the CPU and CUDA, checked equal.
fn clearance_rows(
    out: &mut String,
    backend: &Backend,
    grid: &Grid,
    label: &str,
    radius: f64,
    reps: usize,
) -> Result<()> {
    use crate::lee::clearance::blocked;
    let res = 0.05;
    let mut want = Vec::new();
    let cpu = median(reps.clamp(1, 3), || {
        want = blocked(&Backend::Cpu, grid, res, radius)?;
        Ok(())
    })?;
    let _ = writeln!(
        out,
        "| {label} | clearance {radius} m, cpu (rayon), whole call | {cpu:.3} | | | |"
    );
    if let Backend::Cuda(_) = backend {
        let mut got = Vec::new();
        let ms = median(reps, || {
            got = blocked(backend, grid, res, radius)?;
            Ok(())
        })?;
        if got != want {
            return Err(crate::Error::Gpu(format!(
                "{label}: clearance flags differ from the CPU's"
            )));
        }
        let _ = writeln!(
            out,
            "| {label} | clearance {radius} m, cuda, whole call (upload, transform, flags back) | {ms:.3} | | | equal to the CPU's |"
        );
    }
    Ok(())
}

pub fn run(backend: &Backend, o: &Options) -> Result<String> {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "medians of {} runs after a warm-up (cpu and sweep models: of {}); fields and paths equal the CPU's; CUDA descent: {}",
        o.reps.max(1),
        o.reps.clamp(1, 3),
        match o.descent {
            Descent::Auto => "the window walk, the tiles' pointer jumps for long paths",
            Descent::Walk => "the window walk for every path",
            Descent::Tiles => "the tiles' pointer jumps for every path",
            Descent::Jumps => "pointer jumps over every cell for every path",
        }
    );
    let _ = writeln!(
        out,
        "| terrain | size | implementation | field ms | path on that field ms | field + path ms | path length |"
    );
    let _ = writeln!(out, "|---|---|---|---:|---:|---:|---:|");
    for &n in &o.sizes {
        for terrain in &o.terrains {
            let heights = match terrain {
                Terrain::Random => random_terrain(n, n, 0.3, o.seed),
                Terrain::Maze => maze(n, n, o.seed),
                Terrain::Occupancy => occupancy(n, n, 0.2, o.seed),
            };
            let terrain = terrain.name();
            if let Some(dir) = &o.npy_dir {
                let bytes = crate::lee::io::npy::write_f32_2d(n, n, &heights);
                super::write_file(dir, &format!("{terrain}_{n}.npy"), &bytes)?;
            }
            let grid = Grid::from_elevation(n, n, &heights, 1.0, Connectivity::Four)?;
            if o.robot_radius > 0.0 {
                let label = format!("{terrain} | {n}²");
                clearance_rows(&mut out, backend, &grid, &label, o.robot_radius, o.reps)?;
            }
            let goal = nearest_open(&heights, n, n / 2, n / 2).unwrap_or((0, 0));
            let start = nearest_open(&heights, n, 0, 0).unwrap_or((0, 0));
            let (g, s) = (
                (goal.0 as i64, goal.1 as i64),
                (start.0 as i64, start.1 as i64),
            );
            // Every timed variant is checked against this before its row is written.
            let reference = crate::lee::cpu::distance_field(&grid, goal);
            let reference_path = crate::lee::cpu::descend(&grid, &reference, start);
            // The wave's depth (its last level) bounds any level-by-level field from below:
            // field time / depth is the cost of one level on the critical path.
            let depth = reference
                .iter()
                .copied()
                .filter(|&l| l != crate::lee::UNREACHED)
                .max()
                .unwrap_or(0);
            let mut runs: Vec<(String, Backend, Config, Schedule)> = Vec::new();
            if o.time_cpu {
                runs.push((
                    "cpu BFS (reference)".into(),
                    Backend::Cpu,
                    Config::default(),
                    Schedule::Adaptive,
                ));
            }
            if let Backend::Cuda(_) = backend {
                for &(model, schedule) in &o.models {
                    let config = Config {
                        memory_model: model,
                        ..Config::default()
                    };
                    let label = match (model, schedule) {
                        (MemoryModel::Bitwave, Schedule::Rounds) => "cuda bitwave-rounds".into(),
                        (MemoryModel::Bitwave, Schedule::Queue) => "cuda bitwave-queue".into(),
                        (MemoryModel::Bitwave, Schedule::Portals) => "cuda bitwave-portals".into(),
                        (MemoryModel::Bitwave, Schedule::PortalQueue) => {
                            "cuda bitwave-portal-queue".into()
                        }
                        _ => format!("cuda {model:?}").to_lowercase(),
                    };
                    runs.push((label, backend.clone(), config, schedule));
                }
            }
            for (label, b, config, schedule) in runs {
                let sweeps =
                    !matches!(b, Backend::Cpu) && config.memory_model != MemoryModel::Bitwave;
                if sweeps && terrain == "maze" && (n as u64 * n as u64) > o.sweep_limit_cells {
                    let _ = writeln!(out, "| {terrain} | {n}² | {label} | not run: one pass per wave, ~{}k waves | | | |", n as u64 * n as u64 / 2000);
                    continue;
                }
                let reps = if sweeps || matches!(b, Backend::Cpu) {
                    o.reps.min(3)
                } else {
                    o.reps
                };
                let planner = Planner::new(&b, grid.clone(), config)?;
                planner.set_bitwave_schedule(schedule);
                match o.descent {
                    Descent::Auto => {}
                    Descent::Walk => planner.set_long_path_from(u32::MAX),
                    Descent::Tiles => planner.set_long_path_from(0),
                    Descent::Jumps => {
                        planner.set_long_path_from(0);
                        planner.set_long_descent(LongDescent::Jumps);
                    }
                }
                let field = median(reps, || planner.compute_field(g))?;
                // The descent alone: the query finds the field for its goal in place.
                let descent = median(reps, || {
                    planner.plan(s, g, false)?;
                    Ok(())
                })?;
                let mut plan = None;
                let both = median(reps, || {
                    planner.forget_field();
                    plan = Some(planner.plan(s, g, false)?);
                    Ok(())
                })?;
                let length = plan.as_ref().and_then(|p| p.length);
                let path = plan.map(|p| p.path).filter(|p| !p.is_empty());
                if path != reference_path {
                    return Err(crate::Error::Gpu(format!(
                        "{terrain} {n}²: {label} path differs from the CPU descent"
                    )));
                }
                let len = length
                    .map(|l| l.to_string())
                    .unwrap_or_else(|| "unreachable".into());
                if planner.distance_field(g)? != reference {
                    return Err(crate::Error::Gpu(format!(
                        "{terrain} {n}²: {label} labels differ from the CPU BFS"
                    )));
                }
                let runs = if planner.last_used_portals() == Some(true) {
                    // The tables are built once per map, by the first query (the warm-up).
                    let build = planner.portal_build_us().unwrap_or(0) as f64 / 1e3;
                    let place = if planner.last_used_portal_block() == Some(true) {
                        "in one block"
                    } else {
                        "on the queue"
                    };
                    format!("portal tile runs {place}; tables built once in {build:.2} ms")
                } else {
                    "queued tile runs".to_string()
                };
                let label = match (planner.last_rounds(), planner.last_tile_runs()) {
                    (Some(r), Some(q)) if config.memory_model == MemoryModel::Bitwave => {
                        match (r, q) {
                            (r, 0) => format!("{label} ({r} rounds)"),
                            (0, q) => format!("{label} ({q} {runs})"),
                            (r, q) => format!("{label} ({r} rounds, {q} {runs})"),
                        }
                    }
                    _ => label,
                };
                let label = if matches!(b, Backend::Cpu) || depth == 0 {
                    label
                } else {
                    let per_level = field * 1e6 / depth as f64;
                    format!("{label}; {per_level:.0} ns per level, {depth} levels deep")
                };
                let _ = writeln!(
                    out,
                    "| {terrain} | {n}² | {label} | {field:.3} | {descent:.3} | {both:.3} | {len} |"
                );
            }
        }
    }
    Ok(out)
}
