//! Lee wave planning on grids: wave numbers (BFS distances in moves) from a goal over cells
//! whose transitions are limited by occupancy or elevation steps, and the path that descends
//! them from a start. The CPU BFS in [`cpu`] is the reference; every GPU memory model in
//! [`gpu`] must return identical labels.

#![warn(missing_docs)]

pub mod clearance;
pub mod cli;
pub mod config;
pub mod costmap;
pub mod cpu;
pub mod gpu;
pub mod grid;
pub mod io;
pub mod robot;
pub mod synth;

pub use config::{Config, MemoryModel};
pub use grid::{opposite, Connectivity, Grid, DIRECTIONS, UNREACHED};
pub use robot::{RobotConfig, RobotPlanner};

use crate::compute::{fallback::device_or_cpu, Backend};
use crate::error::{Error, PathEnd, Result};

// The dispatch: the planner a node holds, the current grid (on the device when the backend is
// CUDA, uploaded once per map) and queries that send only a start and a goal.

/// A plan's answer.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Whether any path joins the ends.
    pub reachable: bool,
    /// Moves from start to goal (the start's label) when reachable.
    pub length: Option<u32>,
    /// The path's total cost when reachable: its moves in unit mode, the sum of its step
    /// costs in costmap mode ([`robot::RobotPlanner`]).
    pub cost: Option<u64>,
    /// Cells (x, y) from start to goal, both included; empty when unreachable.
    pub path: Vec<(u32, u32)>,
    /// The whole distance field from the goal, when asked for.
    pub labels: Option<Vec<u32>>,
    /// The backend that computed it ([`Backend::name`]): "cpu" on a CUDA planner after a
    /// device out-of-memory.
    pub backend: &'static str,
}

/// Plans are answers: equal when their paths, lengths and fields are, whichever backend
/// computed them (the GPU's are checked equal to the CPU's that way).
impl PartialEq for Plan {
    fn eq(&self, other: &Plan) -> bool {
        (
            self.reachable,
            self.length,
            self.cost,
            &self.path,
            &self.labels,
        ) == (
            other.reachable,
            other.length,
            other.cost,
            &other.path,
            &other.labels,
        )
    }
}

/// A distance field, when a query asked for one.
type Labels = Option<Vec<u32>>;
/// A path's cells (x, y), start to goal.
type Cells = Vec<(u32, u32)>;
/// A goal and its whole field.
type GoalField = ((u32, u32), std::sync::Arc<Vec<u32>>);

/// What a device grid can build before its first query: bitwave's portal tables, so that no
/// request waits for them.
fn prepare(device: Option<&gpu::DeviceGrid>, config: &Config) -> Result<()> {
    if let (Some(d), Some(mib)) = (device, config.portal_table_mib) {
        d.set_portal_table_mib(mib);
    }
    build_portal_tables(device, config)
}

/// Bitwave's portal tables, built now under the device grid's cap (see [`prepare`]).
fn build_portal_tables(device: Option<&gpu::DeviceGrid>, config: &Config) -> Result<()> {
    match device {
        Some(d) if config.memory_model == MemoryModel::Bitwave => d.prepare_portals().map(|_| ()),
        _ => Ok(()),
    }
}

/// The unit-mode planner of one grid: the Lee wave from each goal, on the CPU or the
/// device, and the descent from each start ([`RobotPlanner`] wraps it for robots).
pub struct Planner {
    grid: Grid,
    config: Config,
    device: Option<gpu::DeviceGrid>,
    /// One device query at a time: a query's field and path live in the device grid's
    /// scratch buffers from its launch to its download, so concurrent callers (a node's
    /// services and topics) take turns instead of reading each other's labels.
    device_turn: std::sync::Mutex<()>,
    /// Device out of memory (upload or query) computes on the CPU instead of failing.
    cpu_fallback: bool,
    /// The last field computed on the CPU and its goal: a query to the same goal only
    /// descends it (the device keeps its own last field the same way).
    cpu_field: std::sync::Mutex<Option<GoalField>>,
    /// Queries answered from the previous query's field (only their descent ran).
    reused: std::sync::atomic::AtomicU64,
}

impl Planner {
    /// Takes the grid and, on CUDA, uploads it.
    pub fn new(backend: &Backend, grid: Grid, config: Config) -> Result<Planner> {
        config.validate()?;
        let device = match backend {
            Backend::Cpu => None,
            Backend::Cuda(rt) => Some(gpu::DeviceGrid::upload(rt, &grid)?),
        };
        prepare(device.as_ref(), &config)?;
        Ok(Planner {
            grid,
            config,
            device,
            device_turn: std::sync::Mutex::new(()),
            cpu_fallback: false,
            cpu_field: std::sync::Mutex::new(None),
            reused: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// [`Planner::new`], but when the device has no room for the grid (at upload or in a
    /// later query) the CPU plans instead: the same answers, later.
    pub fn with_cpu_fallback(backend: &Backend, grid: Grid, config: Config) -> Result<Planner> {
        config.validate()?;
        let device = match backend {
            Backend::Cpu => None,
            Backend::Cuda(rt) => {
                let upload = || gpu::DeviceGrid::upload(rt, &grid).map(Some);
                device_or_cpu(true, "lee: the grid", upload, || Ok(None))?.0
            }
        };
        prepare(device.as_ref(), &config)?;
        Ok(Planner {
            grid,
            config,
            device,
            device_turn: std::sync::Mutex::new(()),
            cpu_fallback: true,
            cpu_field: std::sync::Mutex::new(None),
            reused: std::sync::atomic::AtomicU64::new(0),
        })
    }

    fn turn(&self) -> std::sync::MutexGuard<'_, ()> {
        self.device_turn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The grid it plans on.
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// Its device variant.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Where plans run: "cuda" while the grid is on the device, else "cpu".
    pub fn backend_name(&self) -> &'static str {
        if self.device.is_some() {
            "cuda"
        } else {
            "cpu"
        }
    }

    /// How many queries reused the field of the query before them (same goal, same map).
    pub fn fields_reused(&self) -> u64 {
        self.reused.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn count_reuse(&self) {
        self.reused
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// The CPU field from `goal`: the cached one when the last query had the same goal.
    fn cpu_labels(&self, goal: (u32, u32)) -> Result<std::sync::Arc<Vec<u32>>> {
        let cache = || self.cpu_field.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((g, labels)) = cache().as_ref() {
            if *g == goal {
                self.count_reuse();
                return Ok(labels.clone());
            }
        }
        // Computed outside the lock: concurrent queries to other goals run in parallel.
        // A wave cut short by a cancel is neither used nor kept.
        let labels = std::sync::Arc::new(cpu::try_distance_field(&self.grid, goal)?);
        *cache() = Some((goal, labels.clone()));
        Ok(labels)
    }

    /// On CUDA, paths longer than `moves` are descended as [`Planner::set_long_descent`]
    /// says, shorter ones by the window walk (default [`gpu::long_path_from`] of the grid);
    /// every descent gives the CPU's path. For tests and benchmarks that run each descent;
    /// nothing on the CPU.
    pub fn set_long_path_from(&self, moves: u32) {
        if let Some(d) = &self.device {
            d.set_long_path_from(moves);
        }
    }

    /// On CUDA, how paths longer than [`Planner::set_long_path_from`]'s bound are descended
    /// (default [`gpu::LongDescent::Tiles`]); both give the CPU's path. For tests and
    /// benchmarks; nothing on the CPU.
    pub fn set_long_descent(&self, how: gpu::LongDescent) {
        if let Some(d) = &self.device {
            d.set_long_descent(how);
        }
    }

    /// On CUDA, bitwave's schedule from now on (default [`gpu::Schedule::from_env`]); every
    /// schedule gives the CPU's field. For tests and benchmarks that run either; nothing on the CPU.
    pub fn set_bitwave_schedule(&self, schedule: gpu::Schedule) {
        if let Some(d) = &self.device {
            d.set_schedule(schedule);
        }
    }

    /// On CUDA, the memory bitwave's portal tables may take from now on, in MiB (default
    /// `GPU_PLANNING_LEE_PORTAL_MIB`, else 1024 or a sixteenth of the device; 0: none); the
    /// tables are built again at once.
    pub fn set_portal_table_mib(&self, mib: u64) -> Result<()> {
        // Not `prepare`: the config's own cap would replace this one.
        self.device.as_ref().map_or(Ok(()), |d| {
            d.set_portal_table_mib(mib);
            build_portal_tables(Some(d), &self.config)
        })
    }

    /// Bitwave rounds of the last CUDA query (None on the CPU).
    pub fn last_rounds(&self) -> Option<u32> {
        self.device.as_ref().map(|d| d.last_rounds())
    }

    /// Tiles the last CUDA query ran on bitwave's work queue (None on the CPU).
    pub fn last_tile_runs(&self) -> Option<u32> {
        self.device.as_ref().map(|d| d.last_tile_runs())
    }

    /// Whether the last CUDA query's wave went over bitwave's portals (None on the CPU).
    pub fn last_used_portals(&self) -> Option<bool> {
        self.device.as_ref().map(|d| d.last_used_portals())
    }

    /// Whether the last CUDA query's portal wave ran in one block (None on the CPU).
    pub fn last_used_portal_block(&self) -> Option<bool> {
        self.device.as_ref().map(|d| d.last_used_portal_block())
    }

    /// How long building bitwave's portal tables took on CUDA, in µs (None on the CPU, 0
    /// when not built: another memory model or schedule, or tables over the cap).
    pub fn portal_build_us(&self) -> Option<u64> {
        self.device.as_ref().map(|d| d.portal_build_us())
    }

    /// Wave numbers from `goal` over the whole grid.
    pub fn distance_field(&self, goal: (i64, i64)) -> Result<Vec<u32>> {
        let goal = self.grid.check_cell(PathEnd::Goal, goal)?;
        match &self.device {
            None => cpu::try_distance_field(&self.grid, goal),
            Some(d) => {
                let _turn = self.turn();
                d.compute(goal, &self.config)?;
                d.download_labels()
            }
        }
    }

    /// Forgets the last field (host and device), so that the next query computes its own (for
    /// benchmarks of whole queries; nodes keep the field for replans to the same goal).
    pub fn forget_field(&self) {
        *self.cpu_field.lock().unwrap_or_else(|p| p.into_inner()) = None;
        if let Some(d) = &self.device {
            d.forget_field();
        }
    }

    /// Computes the field from `goal` and waits for it, leaving it where it was computed (for
    /// benchmarks: the field without its download).
    pub fn compute_field(&self, goal: (i64, i64)) -> Result<()> {
        let goal = self.grid.check_cell(PathEnd::Goal, goal)?;
        match &self.device {
            None => {
                std::hint::black_box(cpu::try_distance_field(&self.grid, goal)?);
                Ok(())
            }
            Some(d) => {
                let _turn = self.turn();
                d.compute(goal, &self.config)?;
                d.synchronize()
            }
        }
    }

    /// A shortest path from `start` to `goal`; with `with_field`, also the distance field.
    pub fn plan(&self, start: (i64, i64), goal: (i64, i64), with_field: bool) -> Result<Plan> {
        let start = self.grid.check_cell(PathEnd::Start, start)?;
        let goal = self.grid.check_cell(PathEnd::Goal, goal)?;
        let on_cpu = || {
            let labels = self.cpu_labels(goal)?;
            let path = cpu::descend(&self.grid, &labels, start);
            Ok::<_, Error>((path, with_field.then(|| labels.to_vec())))
        };
        let (backend, (path, labels)) = match &self.device {
            None => ("cpu", on_cpu()?),
            Some(d) => {
                let (plan, ran) = device_or_cpu(
                    self.cpu_fallback,
                    "lee: the query",
                    || self.plan_on_device(d, start, goal, with_field),
                    on_cpu,
                )?;
                (ran, plan)
            }
        };
        let path = path.unwrap_or_default();
        let length = (!path.is_empty()).then(|| path.len() as u32 - 1);
        debug_assert!(labels.as_ref().is_none_or(|l| {
            let s = l[self.grid.index(start.0, start.1)];
            (s == UNREACHED) == path.is_empty()
        }));
        Ok(Plan {
            reachable: !path.is_empty(),
            length,
            cost: length.map(u64::from),
            path,
            labels: if with_field { labels } else { None },
            backend,
        })
    }

    fn plan_on_device(
        &self,
        d: &gpu::DeviceGrid,
        start: (u32, u32),
        goal: (u32, u32),
        with_field: bool,
    ) -> Result<(Option<Cells>, Labels)> {
        let _turn = self.turn();
        let reuse = d.field_goal() == Some(goal);
        if reuse {
            self.count_reuse();
        }
        if with_field {
            if !reuse {
                d.compute(goal, &self.config)?;
            }
            let labels = d.download_labels()?;
            Ok((cpu::descend(&self.grid, &labels, start), Some(labels)))
        } else if reuse {
            Ok((d.descend(goal, start)?, None))
        } else {
            Ok((d.plan_path(goal, start, &self.config)?, None))
        }
    }
}
