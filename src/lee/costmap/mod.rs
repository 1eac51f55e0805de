//! Least-cost planning on nav2-style costmaps: every cell has a value 0..=255 with
//! nav2_costmap_2d's meaning (254 lethal, 253 inscribed, 255 unknown), cells of 253 and above
//! are blocked (255 unless unknown_is_free), entering a cell costs NavFn's integer
//! `neutral_cost + cost_factor * v / 100` (a diagonal `that * 141 / 100`), and the planner finds
//! the least total cost exactly: the reference by Dijkstra ([`cpu`]), the CPU backend by a
//! bucket-queue A* from the goal that stops once the start's least-cost paths are settled
//! ([`search`]), the device by tile relaxation to the same fixed point ([`gpu`]). Among paths
//! of equal cost the one returned is fixed by the descent's rule ([`cpu::descend`]: at each
//! cell the first direction, in DIRECTIONS order, that stays on a least-cost path), so every
//! backend returns the same path.
//!
//! Maps without costs (OccupancyGrid, elevation) get nav2's inflation layer here, from the
//! exact distance transform of [`crate::lee::clearance`].

pub mod config;
pub mod cpu;
pub mod gpu;
pub mod search;
pub mod smooth;

pub use config::{CostModel, CostParams};

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use super::grid::{Grid, DIRECTIONS};
use crate::compute::{fallback::device_or_cpu, Backend};
use crate::error::{Error, PathEnd, Result};
use crate::sync::lock;
pub use cpu::CellPath;

/// A least-cost plan.
#[derive(Debug, Clone, PartialEq)]
pub struct CostPlan {
    /// Whether any path joins the ends.
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
    /// On the CPU, the searches of the last goals: a plan to a kept search's goal takes it
    /// (with the same start too it only descends, as when nav2 replans while the robot
    /// stands); taken out while a plan runs, so other plans never wait. The device keeps its
    /// own field.
    searches: Mutex<Vec<search::GoalSearch>>,
    /// The largest straight step cost, which sizes a search's bucket queue.
    max_enter: u32,
    /// Each cell's step cost and move mask in one word, as the search reads them.
    words: Vec<u32>,
    /// The search's lower bound on costs (from the cheapest cell's step).
    heuristic: search::Heuristic,
    /// Plans to the goal of the plan before them: on the device its field answers them; on
    /// the CPU its search's memory (and, with the same start, its answer).
    reused: AtomicU64,
}

/// Searches kept for the next plans: one per planning thread a node runs at once.
const KEPT_SEARCHES: usize = 2;

impl CostPlanner {
    /// `values` are the cells' cost values; cells they block are blocked in the grid here.
    pub fn new(backend: &Backend, grid: Grid, values: &[u8], p: &CostParams) -> Result<Self> {
        Self::build(backend, grid, values, p, false)
    }

    /// [`CostPlanner::new`], but when the device has no room for the costs the CPU plans
    /// instead ([`device_or_cpu`]): the same answers, later.
    pub fn with_cpu_fallback(
        backend: &Backend,
        grid: Grid,
        values: &[u8],
        p: &CostParams,
    ) -> Result<Self> {
        Self::build(backend, grid, values, p, true)
    }

    fn build(
        backend: &Backend,
        grid: Grid,
        values: &[u8],
        p: &CostParams,
        cpu_fallback: bool,
    ) -> Result<Self> {
        p.validate()?;
        let grid = block_values(grid, values, p)?;
        let enter = cpu::enter_costs(values, p);
        let max_enter = enter.iter().copied().max().unwrap_or(0);
        let min_enter = enter.iter().copied().min().unwrap_or(0);
        let heuristic = search::Heuristic::new(grid.connectivity.directions(), min_enter);
        let device = match backend {
            Backend::Cpu => None,
            Backend::Cuda(rt) => {
                let upload = || gpu::DeviceCosts::upload(rt, &grid, &enter, &heuristic).map(Some);
                device_or_cpu(cpu_fallback, "lee: the costmap", upload, || Ok(None))?.0
            }
        };
        // The CPU backend's search reads the cells' words; the device has its own copies.
        let words = match device {
            None => search::cell_words(&grid, &enter),
            Some(_) => Vec::new(),
        };
        Ok(CostPlanner {
            grid,
            values: values.to_vec(),
            params: *p,
            enter,
            device,
            searches: Mutex::new(Vec::new()),
            max_enter,
            words,
            heuristic,
            reused: AtomicU64::new(0),
        })
    }

    /// The cells' cost values it plans on.
    pub fn values(&self) -> &[u8] {
        &self.values
    }

    /// The grid planned on (cells the costs block are blocked in it).
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// The smooth path along `cells` (a plan's grid path on this map), in cell units
    /// ([`smooth`]).
    pub fn smooth(&self, cells: &[(u32, u32)]) -> Vec<(f64, f64)> {
        let costs = smooth::Costs {
            width: self.grid.width,
            free: &self.grid.free,
            enter: &self.enter,
        };
        smooth::densify(cells, &smooth::shorten(&costs, cells))
    }

    /// Where plans run: "cuda" while the costs are on the device, else "cpu".
    pub fn backend_name(&self) -> &'static str {
        if self.device.is_some() {
            "cuda"
        } else {
            "cpu"
        }
    }

    /// Checks that `p` is on the map and not blocked by its value; `what` names it. A cell
    /// blocked for the robot's radius is named as such by the grid.
    pub fn check_cell(&self, end: PathEnd, p: (i64, i64)) -> Result<(u32, u32)> {
        if let Some(i) = self.grid_index(p) {
            let v = self.values[i];
            let radius_zone = v == config::INSCRIBED && self.params.robot_radius > 0.0;
            if self.params.blocks(v) && !radius_zone {
                let kind = match v {
                    config::LETHAL => "lethal",
                    config::INSCRIBED => "inscribed",
                    config::NO_INFORMATION => "unknown",
                    _ => "blocked",
                };
                return Err(Error::EndRefused {
                    end,
                    reason: format!("({}, {}) has cost {v} ({kind}), which blocks it", p.0, p.1),
                });
            }
        }
        self.grid.check_cell(end, p)
    }

    /// Whether `c` is a cell whose value is nav2's LETHAL (254).
    pub fn is_lethal(&self, c: (i64, i64)) -> bool {
        self.grid_index(c)
            .is_some_and(|i| self.values[i] == config::LETHAL)
    }

    /// The moves out of `start` as if it were free, each with its step cost, in DIRECTIONS
    /// order: into a cell a path may enter, a diagonal only past two such cells (the rule
    /// between free cells).
    fn exits(&self, start: (u32, u32)) -> Vec<(u64, (u32, u32))> {
        let (w, h) = (self.grid.width as i64, self.grid.height as i64);
        let free = |x: i64, y: i64| {
            x >= 0 && y >= 0 && x < w && y < h && self.grid.free[(y * w + x) as usize]
        };
        let (x, y) = (start.0 as i64, start.1 as i64);
        DIRECTIONS
            .iter()
            .enumerate()
            .take(self.grid.connectivity.directions())
            .filter_map(|(k, &(dx, dy))| {
                let (nx, ny) = (x + dx as i64, y + dy as i64);
                let passes = dx == 0 || dy == 0 || (free(nx, y) && free(x, ny));
                (free(nx, ny) && passes).then(|| {
                    let n = (nx as u32, ny as u32);
                    (cpu::step(k, self.enter[self.grid.index(n.0, n.1)]), n)
                })
            })
            .collect()
    }

    /// For a start on the map that is blocked, the moves out of it (NavFn's rule, below); None
    /// for a start that is open or off the map.
    fn robot_cell_exits(&self, start: (i64, i64)) -> Option<Vec<(u64, (u32, u32))>> {
        let i = self.grid_index(start)?;
        if self.grid.free[i] {
            return None;
        }
        Some(self.exits((start.0 as u32, start.1 as u32)))
    }

    /// A least-cost plan from the robot's cell, as NavFn plans: a start its cost blocks is
    /// taken as free (NavFn clears the robot's cell: the robot stands there), so the path
    /// leaves it by the move that costs least in total (ties: the first in DIRECTIONS order,
    /// the descent's rule) and is unreachable when no move leads to the goal. Any other start
    /// is planned as [`Self::plan`] plans it.
    pub fn plan_from_robot_cell(&self, start: (i64, i64), goal: (i64, i64)) -> Result<CostPlan> {
        let Some(exits) = self.robot_cell_exits(start) else {
            return self.plan(start, goal);
        };
        self.check_cell(PathEnd::Goal, goal)?;
        let s = (start.0 as u32, start.1 as u32);
        let mut best = CostPlan {
            reachable: false,
            cost: None,
            path: Vec::new(),
        };
        for (step, n) in exits {
            let from_n = self.plan((n.0 as i64, n.1 as i64), goal)?;
            let Some(rest) = from_n.cost else { continue };
            let total = step + rest;
            if best.cost.is_none_or(|b| total < b) {
                best = CostPlan {
                    reachable: true,
                    cost: Some(total),
                    path: std::iter::once(s).chain(from_n.path).collect(),
                };
            }
        }
        Ok(best)
    }

    /// Per cell: reachable from the robot's cell `start` by NavFn's rule (see
    /// [`Self::plan_from_robot_cell`]; moves are symmetric, so also: can reach it).
    pub fn reachable_from_robot_cell(&self, start: (i64, i64)) -> Result<Vec<bool>> {
        let Some(exits) = self.robot_cell_exits(start) else {
            return Ok(self
                .cost_field(start)?
                .into_iter()
                .map(|c| c != cpu::UNREACHED_COST)
                .collect());
        };
        let mut reach = vec![false; self.grid.len()];
        if let Some(i) = self.grid_index(start) {
            reach[i] = true;
        }
        for (_, n) in exits {
            if reach[self.grid.index(n.0, n.1)] {
                continue;
            }
            let field = self.cost_field((n.0 as i64, n.1 as i64))?;
            for (r, c) in reach.iter_mut().zip(field) {
                *r |= c != cpu::UNREACHED_COST;
            }
        }
        Ok(reach)
    }

    fn grid_index(&self, c: (i64, i64)) -> Option<usize> {
        let (w, h) = (self.grid.width as i64, self.grid.height as i64);
        (c.0 >= 0 && c.1 >= 0 && c.0 < w && c.1 < h).then(|| (c.1 * w + c.0) as usize)
    }

    /// The least total cost from every cell to `goal`.
    pub fn cost_field(&self, goal: (i64, i64)) -> Result<Vec<u64>> {
        let goal = self.check_cell(PathEnd::Goal, goal)?;
        match &self.device {
            None => Ok(cpu::cost_field(&self.grid, &self.enter, goal)),
            Some(d) => d.field(goal),
        }
    }

    /// How many plans descended a field computed before them: on the device, any plan to the
    /// goal of the plan before it; on the CPU, whose search stops once the start is settled, a
    /// plan with the ends of a kept search (a new start is a new search).
    pub fn fields_reused(&self) -> u64 {
        self.reused.load(Ordering::Relaxed)
    }

    /// Tile rounds of the last field computed on the device (None on the CPU).
    pub fn last_rounds(&self) -> Option<u32> {
        self.device.as_ref().map(|d| d.last_rounds())
    }

    /// A path from `start` to `goal` by the CPU backend's search, with its cost.
    fn host_plan(&self, start: (u32, u32), goal: (u32, u32)) -> Result<Option<CellPath>> {
        if !search::GoalSearch::fits(self.grid.len(), self.max_enter) {
            // Step costs far beyond nav2's on a huge grid: the reference, whose costs are u64.
            let field = cpu::cost_field(&self.grid, &self.enter, goal);
            return Ok(cpu::descend(&self.grid, &self.enter, &field, start)
                .map(|path| (path, field[self.grid.index(start.0, start.1)])));
        }
        let (s, g) = (
            self.grid.index(start.0, start.1) as u32,
            self.grid.index(goal.0, goal.1) as u32,
        );
        let mut search = {
            let mut kept = lock(&self.searches);
            match kept.iter().position(|k| k.goal() == Some(g)) {
                Some(i) => kept.swap_remove(i),
                // A new goal takes the oldest search's memory once as many are kept as run.
                None if kept.len() >= KEPT_SEARCHES => kept.remove(0),
                None => search::GoalSearch::new(self.grid.len(), self.max_enter),
            }
        };
        let settled = search.settle(self.grid.width, self.heuristic, &self.words, g, s);
        if let Ok(true) = settled {
            self.reused.fetch_add(1, Ordering::Relaxed);
        }
        let found = settled.map(|_| {
            search
                .descend(&self.grid, &self.enter, s)
                .map(|path| (path, search.cost(s as usize)))
        });
        {
            // Kept for its memory even when a cancel cut it short (it then holds no ends).
            let mut kept = lock(&self.searches);
            kept.push(search);
            if kept.len() > KEPT_SEARCHES {
                kept.remove(0);
            }
        }
        found
    }

    /// A least-cost path from `start` to `goal` (the tie rule in the module's header). On the
    /// device the field stays there and only the path comes back.
    pub fn plan(&self, start: (i64, i64), goal: (i64, i64)) -> Result<CostPlan> {
        let s = self.check_cell(PathEnd::Start, start)?;
        let g = self.check_cell(PathEnd::Goal, goal)?;
        let found = match &self.device {
            Some(d) => {
                let (found, reused) = d.plan(g, s)?;
                if reused {
                    self.reused.fetch_add(1, Ordering::Relaxed);
                }
                found
            }
            None => self.host_plan(s, g)?,
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
