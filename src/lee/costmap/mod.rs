//! Least-cost planning on nav2-style costmaps: every cell has a value 0..=255 with
//! nav2_costmap_2d's meaning (254 lethal, 253 inscribed, 255 unknown), cells of 253 and above
//! are blocked (255 unless unknown_is_free), entering a cell costs NavFn's integer
//! `neutral_cost + cost_factor * v / 100` (a diagonal `that * 141 / 100`), and the planner finds
//! the least total cost exactly: the CPU by Dijkstra ([`cpu`]), the device by tile relaxation
//! to the same fixed point ([`gpu`]). Among paths of equal cost the one returned is fixed by
//! the descent's rule ([`cpu::descend`]: at each cell the first direction, in DIRECTIONS order,
//! that stays on a least-cost path), so both backends return the same path.
//!
//! Maps without costs (OccupancyGrid, elevation) get nav2's inflation layer here, from the
//! exact distance transform of [`crate::lee::clearance`].

pub mod config;
pub mod cpu;
pub mod gpu;

pub use config::{CostModel, CostParams};

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::grid::Grid;
use crate::compute::Backend;
use crate::error::{Error, Result};
use crate::sync::lock;

/// A least-cost plan.
#[derive(Debug, Clone, PartialEq)]
pub struct CostPlan {
    pub reachable: bool,
    /// The total cost (sum of the step costs) when reachable.
    pub cost: Option<u64>,
    /// Cells (x, y) from start to goal, both included; empty when unreachable.
    pub path: Vec<(u32, u32)>,
}

/// The cell values of a map without costs: nav2's inflation layer from the exact distance to
/// the nearest obstacle cell (a cell that is not free).
pub fn inflation_values(
    backend: &Backend,
    grid: &Grid,
    resolution: f64,
    p: &CostParams,
) -> Result<Vec<u8>> {
    p.validate()?;
    crate::lee::clearance::check_map(grid, resolution)?;
    let d2 = crate::lee::clearance::squared_distances(backend, grid)?;
    let max_d2 = cpu::max_squared_distance(grid.width, grid.height);
    let table = cpu::inflation_table(resolution, p, max_d2, d2.len());
    Ok(cpu::values_from_d2(&d2, table.as_deref(), resolution, p))
}

/// The grid with every cell whose value blocks it (>= 253, or 255 unless unknown_is_free)
/// blocked as well.
pub fn block_values(grid: Grid, values: &[u8], p: &CostParams) -> Result<Grid> {
    if values.len() != grid.len() {
        return Err(Error::invalid(
            "costs",
            format!(
                "length {} differs from the grid's {} cells",
                values.len(),
                grid.len()
            ),
        ));
    }
    let blocked: Vec<bool> = values.iter().map(|&v| p.blocks(v)).collect();
    Ok(grid.with_blocked(&blocked, p.robot_radius))
}

/// The planner of one costmap: the grid (blocked cells already removed), the cells' straight
/// step costs, and on CUDA their device copies.
pub struct CostPlanner {
    grid: Grid,
    values: Vec<u8>,
    params: CostParams,
    enter: Vec<u32>,
    device: Option<gpu::DeviceCosts>,
    /// On the CPU, the last plan's goal and field: a plan to the same goal only descends it
    /// (nav2 replans to one goal again and again). The device keeps its own.
    last: Mutex<Option<GoalCosts>>,
    /// Plans answered from the previous plan's field.
    reused: AtomicU64,
}

/// A goal and the least total cost from every cell to it.
type GoalCosts = ((u32, u32), Arc<Vec<u64>>);

impl CostPlanner {
    /// `values` are the cells' cost values; cells they block are blocked in the grid here.
    pub fn new(backend: &Backend, grid: Grid, values: &[u8], p: &CostParams) -> Result<Self> {
        p.validate()?;
        let grid = block_values(grid, values, p)?;
        let enter = cpu::enter_costs(values, p);
        let device = match backend {
            Backend::Cpu => None,
            Backend::Cuda(rt) => Some(gpu::DeviceCosts::upload(rt, &grid, &enter)?),
        };
        Ok(CostPlanner {
            grid,
            values: values.to_vec(),
            params: *p,
            enter,
            device,
            last: Mutex::new(None),
            reused: AtomicU64::new(0),
        })
    }

    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    pub fn backend_name(&self) -> &'static str {
        if self.device.is_some() {
            "cuda"
        } else {
            "cpu"
        }
    }

    /// Checks that `p` is on the map and not blocked by its value; `what` names it. A cell
    /// blocked for the robot's radius is named as such by the grid.
    pub fn check_cell(&self, what: &str, p: (i64, i64)) -> Result<(u32, u32)> {
        let (w, h) = (self.grid.width as i64, self.grid.height as i64);
        if p.0 >= 0 && p.1 >= 0 && p.0 < w && p.1 < h {
            let v = self.values[(p.1 * w + p.0) as usize];
            let radius_zone = v == config::INSCRIBED && self.params.robot_radius > 0.0;
            if self.params.blocks(v) && !radius_zone {
                let kind = match v {
                    config::LETHAL => "lethal",
                    config::INSCRIBED => "inscribed",
                    config::NO_INFORMATION => "unknown",
                    _ => "blocked",
                };
                return Err(Error::invalid(
                    what,
                    format!("({}, {}) has cost {v} ({kind}), which blocks it", p.0, p.1),
                ));
            }
        }
        self.grid.check_cell(what, p)
    }

    /// The least total cost from every cell to `goal`.
    pub fn cost_field(&self, goal: (i64, i64)) -> Result<Vec<u64>> {
        let goal = self.check_cell("goal", goal)?;
        match &self.device {
            None => Ok(cpu::cost_field(&self.grid, &self.enter, goal)),
            Some(d) => d.field(goal),
        }
    }

    /// How many plans reused the field of the plan before them (same goal).
    pub fn fields_reused(&self) -> u64 {
        self.reused.load(Ordering::Relaxed)
    }

    /// Tile launches of the last field computed on the device (None on the CPU).
    pub fn last_launches(&self) -> Option<u32> {
        self.device.as_ref().map(|d| d.last_launches())
    }

    /// The field to `goal` on the host: the last plan's when it had the same goal.
    fn host_field_to(&self, goal: (u32, u32)) -> Arc<Vec<u64>> {
        if let Some((at, field)) = lock(&self.last).as_ref() {
            if *at == goal {
                self.reused.fetch_add(1, Ordering::Relaxed);
                return field.clone();
            }
        }
        // Computed outside the lock, so plans to other goals do not wait on it.
        let field = Arc::new(cpu::cost_field(&self.grid, &self.enter, goal));
        *lock(&self.last) = Some((goal, field.clone()));
        field
    }

    /// A least-cost path from `start` to `goal` (the tie rule in the module's header). On the
    /// device the field stays there and only the path comes back.
    pub fn plan(&self, start: (i64, i64), goal: (i64, i64)) -> Result<CostPlan> {
        let s = self.check_cell("start", start)?;
        let g = self.check_cell("goal", goal)?;
        let found = match &self.device {
            Some(d) => {
                let (found, reused) = d.plan(g, s)?;
                if reused {
                    self.reused.fetch_add(1, Ordering::Relaxed);
                }
                found
            }
            None => {
                let field = self.host_field_to(g);
                cpu::descend(&self.grid, &self.enter, &field, s)
                    .map(|path| (path, field[self.grid.index(s.0, s.1)]))
            }
        };
        Ok(match found {
            Some((path, cost)) => CostPlan {
                reachable: true,
                cost: Some(cost),
                path,
            },
            None => CostPlan {
                reachable: false,
                cost: None,
                path: Vec::new(),
            },
        })
    }
}
