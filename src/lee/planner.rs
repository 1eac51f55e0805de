//! The planner a node holds: the current grid (on the device when the backend is CUDA, uploaded
//! once per map) and queries that send only a start and a goal.

use serde::{Deserialize, Serialize};

use super::{cpu, gpu, path, Grid, UNREACHED};
use crate::compute::Backend;
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryModel {
    /// The seed's global-memory model: in-place sweeps over all cells.
    Global,
    /// The seed's shared-memory model: tiles + halo iterated to local convergence, all tiles
    /// per launch, launches until nothing changes.
    Shared,
    /// Global sweeps with the static masks read through a texture object.
    Texture,
    /// The default: 64 x 32-cell tiles as bit planes, one warp each running an exact
    /// multi-source BFS with shifts and shuffles; rounds run only the tiles whose border
    /// improved (kernels/lee.cu). Fastest measured (BENCHMARKS.md).
    #[default]
    Bitwave,
}

impl std::str::FromStr for MemoryModel {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "global" => Ok(Self::Global),
            "shared" => Ok(Self::Shared),
            "texture" => Ok(Self::Texture),
            "bitwave" => Ok(Self::Bitwave),
            other => Err(Error::invalid(
                "memory_model",
                format!("'{other}' is not one of bitwave, global, shared, texture"),
            )),
        }
    }
}

/// CUDA launch shape. Tiles of the sweep and shared models are block_x x block_y cells; bitwave
/// tiles are always 64 x 32 cells, one per warp, and block_x * block_y sets the threads per
/// block (rounded up to whole warps, at most 4, halved while a block would not fit an SM).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannerConfig {
    pub memory_model: MemoryModel,
    pub block_x: u32,
    pub block_y: u32,
}

impl Default for PlannerConfig {
    fn default() -> Self {
        PlannerConfig {
            memory_model: MemoryModel::Bitwave,
            block_x: 32,
            block_y: 32,
        }
    }
}

impl PlannerConfig {
    pub fn validate(&self) -> Result<()> {
        let threads = self.block_x as u64 * self.block_y as u64;
        if self.block_x == 0 || self.block_y == 0 || threads > 1024 {
            return Err(Error::invalid(
                "block_x x block_y",
                format!(
                    "{} x {} is not 1..=1024 threads",
                    self.block_x, self.block_y
                ),
            ));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub reachable: bool,
    /// Moves from start to goal (the start's label) when reachable.
    pub length: Option<u32>,
    /// Cells (x, y) from start to goal, both included; empty when unreachable.
    pub path: Vec<(u32, u32)>,
    /// The whole distance field from the goal, when asked for.
    pub labels: Option<Vec<u32>>,
}

/// A distance field, when a query asked for one.
type Labels = Option<Vec<u32>>;
/// A path's cells (x, y), start to goal.
type Cells = Vec<(u32, u32)>;

pub struct Planner {
    grid: Grid,
    config: PlannerConfig,
    device: Option<gpu::DeviceGrid>,
    /// One device query at a time: a query's field and path live in the device grid's
    /// scratch buffers from its launch to its download, so concurrent callers (a node's
    /// services and topics) take turns instead of reading each other's labels.
    device_turn: std::sync::Mutex<()>,
    /// Device out of memory (upload or query) computes on the CPU instead of failing.
    cpu_fallback: bool,
}

impl Planner {
    /// Takes the grid and, on CUDA, uploads it.
    pub fn new(backend: &Backend, grid: Grid, config: PlannerConfig) -> Result<Planner> {
        config.validate()?;
        let device = match backend {
            Backend::Cpu => None,
            Backend::Cuda(rt) => Some(gpu::DeviceGrid::upload(rt, &grid)?),
        };
        Ok(Planner {
            grid,
            config,
            device,
            device_turn: std::sync::Mutex::new(()),
            cpu_fallback: false,
        })
    }

    /// [`Planner::new`], but when the device has no room for the grid (at upload or in a
    /// later query) the CPU plans instead: the same answers, later.
    pub fn with_cpu_fallback(
        backend: &Backend,
        grid: Grid,
        config: PlannerConfig,
    ) -> Result<Planner> {
        config.validate()?;
        let device = match backend {
            Backend::Cpu => None,
            Backend::Cuda(rt) => match gpu::DeviceGrid::upload(rt, &grid) {
                Ok(d) => Some(d),
                Err(Error::OutOfMemory {
                    requested_bytes, ..
                }) => {
                    tracing::warn!(
                        "lee: the grid's {requested_bytes} bytes do not fit the device; \
                         planning on the CPU"
                    );
                    None
                }
                Err(e) => return Err(e),
            },
        };
        Ok(Planner {
            grid,
            config,
            device,
            device_turn: std::sync::Mutex::new(()),
            cpu_fallback: true,
        })
    }

    fn turn(&self) -> std::sync::MutexGuard<'_, ()> {
        self.device_turn.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    pub fn config(&self) -> &PlannerConfig {
        &self.config
    }

    pub fn backend_name(&self) -> &'static str {
        if self.device.is_some() {
            "cuda"
        } else {
            "cpu"
        }
    }

    /// Bitwave rounds of the last CUDA query (None on the CPU).
    pub fn last_rounds(&self) -> Option<u32> {
        self.device.as_ref().map(|d| d.last_rounds())
    }

    /// Wave numbers from `goal` over the whole grid.
    pub fn distance_field(&self, goal: (i64, i64)) -> Result<Vec<u32>> {
        let goal = self.grid.check_cell("goal", goal)?;
        match &self.device {
            None => Ok(cpu::distance_field(&self.grid, goal)),
            Some(d) => {
                let _turn = self.turn();
                d.compute(goal, &self.config)?;
                d.download_labels()
            }
        }
    }

    /// Computes the field from `goal` and waits for it, leaving it where it was computed (for
    /// benchmarks: the field without its download).
    pub fn compute_field(&self, goal: (i64, i64)) -> Result<()> {
        let goal = self.grid.check_cell("goal", goal)?;
        match &self.device {
            None => {
                std::hint::black_box(cpu::distance_field(&self.grid, goal));
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
        let start = self.grid.check_cell("start", start)?;
        let goal = self.grid.check_cell("goal", goal)?;
        let on_cpu = || {
            let labels = cpu::distance_field(&self.grid, goal);
            (path::descend(&self.grid, &labels, start), Some(labels))
        };
        let (path, labels) = match &self.device {
            None => on_cpu(),
            Some(d) => match self.plan_on_device(d, start, goal, with_field) {
                Err(Error::OutOfMemory {
                    requested_bytes, ..
                }) if self.cpu_fallback => {
                    tracing::warn!(
                        "lee: the query's {requested_bytes} bytes do not fit the device; \
                         planning on the CPU"
                    );
                    on_cpu()
                }
                other => other?,
            },
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
            path,
            labels: if with_field { labels } else { None },
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
        if with_field {
            d.compute(goal, &self.config)?;
            let labels = d.download_labels()?;
            Ok((path::descend(&self.grid, &labels, start), Some(labels)))
        } else {
            Ok((d.plan_path(goal, start, &self.config)?, None))
        }
    }
}
