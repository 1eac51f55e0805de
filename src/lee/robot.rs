//! The planner a robot holds over one map: built once from the map and the cost model's
//! settings (the clearance step for the robot's radius, or nav2's inflation costs), then asked
//! for many plans. The node, the CLI and `bench lee --map` all build it here, so a map planned
//! from any of them is the same planner with the same rules.
//!
//! Two cost models: `unit` counts moves, as the seed does, with cells within `robot_radius` of
//! an obstacle blocked ([`super::Planner`]); `costmap` minimises nav2's cell costs as NavFn
//! does ([`CostPlanner`]), and takes its ends by NavFn's rules (a blocked start is planned
//! from: NavFn clears the robot's own cell).

use super::costmap::{inflation_values, CostModel, CostParams, CostPlanner};
use super::{clearance, Config, Connectivity, Grid, Plan, Planner, UNREACHED};
use crate::compute::{fallback::device_or_cpu, Backend};
use crate::error::{PathEnd, Result};

/// What makes a map into a [`RobotPlanner`].
#[derive(Debug, Clone, PartialEq)]
pub struct RobotConfig {
    /// Moves or nav2's costs ([`CostModel`]).
    pub cost_model: CostModel,
    /// The wave's device variant (unit mode).
    pub planner: Config,
    /// Step and inflation costs (costmap mode); its `robot_radius` is the robot's in both
    /// modes.
    pub costs: CostParams,
    /// Device out of memory, in the map's clearance or costs, at its upload or in a later
    /// unit-mode plan, computes on the CPU instead of failing (the same answers, later).
    pub cpu_fallback: bool,
}

impl Default for RobotConfig {
    fn default() -> Self {
        RobotConfig {
            cost_model: CostModel::Unit,
            planner: Config::default(),
            costs: CostParams::default(),
            cpu_fallback: false,
        }
    }
}

impl RobotConfig {
    /// The device's answer or, on device out of memory with `cpu_fallback`, the CPU's
    /// ([`device_or_cpu`]).
    fn or_on_cpu<T>(
        &self,
        what: &str,
        device: impl FnOnce() -> Result<T>,
        cpu: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        Ok(device_or_cpu(self.cpu_fallback, what, device, cpu)?.0)
    }

    /// The moves of this cost model unless asked: `requested` 4 or 8, or 0 for the model's
    /// own ([`Connectivity::for_model`]).
    pub fn connectivity(&self, requested: u32) -> Result<Connectivity> {
        Connectivity::for_model(requested, self.cost_model == CostModel::Costmap)
    }
}

enum Kind {
    Unit(Box<Planner>),
    Costmap(Box<CostPlanner>),
}

/// One map's planner under one cost model, on its backend.
///
/// ```
/// use gpu_planning::compute::Backend;
/// use gpu_planning::lee::{Grid, RobotConfig, RobotPlanner};
///
/// // A 5 x 3 map with a wall in column 2, open in the bottom row.
/// let data: Vec<i8> = (0..15).map(|i| if i % 5 == 2 && i < 10 { 100 } else { 0 }).collect();
/// let config = RobotConfig::default(); // unit moves, 4-connected, no robot radius
/// let grid = Grid::from_occupancy(5, 3, &data, 65, false, config.connectivity(0)?)?;
/// let planner = RobotPlanner::new(&Backend::Cpu, grid, 0.05, &config)?;
/// let plan = planner.plan((0, 0), (4, 0), false)?;
/// assert_eq!(plan.cost, Some(8)); // down, across the open row, up
/// assert_eq!(plan.path.first(), Some(&(0, 0)));
/// # Ok::<(), gpu_planning::error::Error>(())
/// ```
pub struct RobotPlanner {
    kind: Kind,
}

impl RobotPlanner {
    /// A map without costs (occupancy or elevation): unit mode blocks the cells within
    /// `robot_radius` of an obstacle; costmap mode gives the cells nav2's inflation costs.
    /// `resolution` is metres per cell.
    pub fn new(
        backend: &Backend,
        grid: Grid,
        resolution: f64,
        config: &RobotConfig,
    ) -> Result<RobotPlanner> {
        let cpu = &Backend::Cpu;
        let kind = match config.cost_model {
            CostModel::Costmap => {
                let values = config.or_on_cpu(
                    "lee: the inflation costs",
                    || inflation_values(backend, &grid, resolution, &config.costs),
                    || inflation_values(cpu, &grid, resolution, &config.costs),
                )?;
                cost_kind(backend, grid, values, config)?
            }
            CostModel::Unit => {
                let r = config.costs.robot_radius;
                let grid = clearance::inflate_by(grid, resolution, r, |g| {
                    config.or_on_cpu(
                        "lee: the robot's clearance",
                        || clearance::blocked(backend, g, resolution, r),
                        || clearance::blocked(cpu, g, resolution, r),
                    )
                })?;
                Kind::Unit(Box::new(unit_planner(backend, grid, config)?))
            }
        };
        Ok(RobotPlanner { kind })
    }

    /// A nav2 costmap's values (`width` x `height`, row-major), inflated already by nav2:
    /// costmap mode plans on them as they are; unit mode takes the values that block a robot
    /// (>= 253, and 255 unless `unknown_is_free`) as obstacles and applies `robot_radius` as
    /// on any map.
    pub fn from_costmap(
        backend: &Backend,
        (width, height): (u32, u32),
        values: Vec<u8>,
        resolution: f64,
        connectivity: Connectivity,
        config: &RobotConfig,
    ) -> Result<RobotPlanner> {
        match config.cost_model {
            CostModel::Costmap => {
                let all_free = vec![0i8; values.len()];
                let grid = Grid::from_occupancy(width, height, &all_free, 101, true, connectivity)?;
                Ok(RobotPlanner {
                    kind: cost_kind(backend, grid, values, config)?,
                })
            }
            CostModel::Unit => {
                let occupied: Vec<i8> = values
                    .iter()
                    .map(|&v| if config.costs.blocks(v) { 100 } else { 0 })
                    .collect();
                let grid = Grid::from_occupancy(width, height, &occupied, 65, false, connectivity)?;
                RobotPlanner::new(backend, grid, resolution, config)
            }
        }
    }

    /// The cost model it plans by.
    pub fn cost_model(&self) -> CostModel {
        match self.kind {
            Kind::Unit(_) => CostModel::Unit,
            Kind::Costmap(_) => CostModel::Costmap,
        }
    }

    /// The backend plans run on ([`Backend::name`]): "cpu" after a device out-of-memory at
    /// the upload.
    pub fn backend_name(&self) -> &'static str {
        match &self.kind {
            Kind::Unit(p) => p.backend_name(),
            Kind::Costmap(planner) => planner.backend_name(),
        }
    }

    /// The grid plans run on: in unit mode with the robot's clearance blocked.
    pub fn grid(&self) -> &Grid {
        match &self.kind {
            Kind::Unit(p) => p.grid(),
            Kind::Costmap(planner) => planner.grid(),
        }
    }

    /// The cells' cost values (costmap mode).
    pub fn cost_values(&self) -> Option<&[u8]> {
        match &self.kind {
            Kind::Unit(_) => None,
            Kind::Costmap(planner) => Some(planner.values()),
        }
    }

    /// The unit-mode planner (its device knobs and counters, for benchmarks).
    pub fn unit(&self) -> Option<&Planner> {
        match &self.kind {
            Kind::Unit(p) => Some(p),
            Kind::Costmap(_) => None,
        }
    }

    /// The costmap planner when ends follow NavFn's rules (costmap mode): a blocked start is
    /// planned from, and a goal is GOAL_OCCUPIED only when lethal with no tolerance. None in
    /// unit mode, where a blocked start is an error.
    pub fn navfn_ends(&self) -> Option<&CostPlanner> {
        match &self.kind {
            Kind::Unit(_) => None,
            Kind::Costmap(planner) => Some(planner),
        }
    }

    /// Whether a path may start at `c`: on the map, free, outside the robot's radius, not
    /// blocked by its cost.
    pub fn is_open(&self, c: (i64, i64)) -> bool {
        match &self.kind {
            Kind::Unit(p) => p.grid().check_cell(PathEnd::Start, c).is_ok(),
            Kind::Costmap(planner) => planner.check_cell(PathEnd::Start, c).is_ok(),
        }
    }

    /// Per cell: reachable from `start` (moves are symmetric, so also: can reach it); in
    /// costmap mode from a blocked start too, by NavFn's rule.
    pub fn reachable_from(&self, start: (i64, i64)) -> Result<Vec<bool>> {
        Ok(match &self.kind {
            Kind::Unit(p) => p
                .distance_field(start)?
                .into_iter()
                .map(|l| l != UNREACHED)
                .collect(),
            Kind::Costmap(planner) => planner.reachable_from_robot_cell(start)?,
        })
    }

    /// The smooth path along a plan's cells, in cell units (costmap mode: its costs price the
    /// shortcuts; None in unit mode).
    pub fn smooth(&self, cells: &[(u32, u32)]) -> Option<Vec<(f64, f64)>> {
        match &self.kind {
            Kind::Unit(_) => None,
            Kind::Costmap(planner) => Some(planner.smooth(cells)),
        }
    }

    /// Plans this cost model's field to `goal` was computed from without recomputing it.
    pub fn fields_reused(&self) -> u64 {
        match &self.kind {
            Kind::Unit(p) => p.fields_reused(),
            Kind::Costmap(planner) => planner.fields_reused(),
        }
    }

    /// Tile rounds of the last costmap field on the device (costmap mode, CUDA).
    pub fn last_rounds(&self) -> Option<u32> {
        self.navfn_ends().and_then(CostPlanner::last_rounds)
    }

    /// A path from `start` to `goal` and its cost (moves in unit mode); with `with_field`, in
    /// unit mode, the wave-number field too.
    pub fn plan(&self, start: (i64, i64), goal: (i64, i64), with_field: bool) -> Result<Plan> {
        match &self.kind {
            Kind::Unit(p) => p.plan(start, goal, with_field),
            Kind::Costmap(planner) => {
                let c = planner.plan_from_robot_cell(start, goal)?;
                Ok(Plan {
                    reachable: c.reachable,
                    length: (!c.path.is_empty()).then(|| c.path.len() as u32 - 1),
                    cost: c.cost,
                    path: c.path,
                    labels: None,
                    backend: planner.backend_name(),
                })
            }
        }
    }
}

fn unit_planner(backend: &Backend, grid: Grid, config: &RobotConfig) -> Result<Planner> {
    if config.cpu_fallback {
        Planner::with_cpu_fallback(backend, grid, config.planner)
    } else {
        Planner::new(backend, grid, config.planner)
    }
}

/// The costmap planner over `values`, on the CPU when the device has no room for it and
/// `cpu_fallback` allows.
fn cost_kind(backend: &Backend, grid: Grid, values: Vec<u8>, config: &RobotConfig) -> Result<Kind> {
    let planner = if config.cpu_fallback {
        CostPlanner::with_cpu_fallback(backend, grid, &values, &config.costs)?
    } else {
        CostPlanner::new(backend, grid, &values, &config.costs)?
    };
    Ok(Kind::Costmap(Box::new(planner)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 9 x 7 room with one wall and a gap: both cost models plan through the gap, a costmap
    /// plan's cost is NavFn's sum and a unit plan's is its moves.
    #[test]
    fn both_cost_models_plan_through_the_gap() {
        let (w, h) = (9u32, 7u32);
        let data: Vec<i8> = (0..w * h)
            .map(|i| {
                let (x, y) = (i % w, i / w);
                if x == 4 && y != 3 {
                    100
                } else {
                    0
                }
            })
            .collect();
        for model in [CostModel::Unit, CostModel::Costmap] {
            let config = RobotConfig {
                cost_model: model,
                ..RobotConfig::default()
            };
            let c = config.connectivity(0).unwrap();
            let grid = Grid::from_occupancy(w, h, &data, 65, false, c).unwrap();
            let p = RobotPlanner::new(&Backend::Cpu, grid, 0.05, &config).unwrap();
            assert_eq!(p.cost_model(), model);
            let plan = p.plan((0, 3), (8, 3), false).unwrap();
            assert!(plan.path.contains(&(4, 3)), "{model:?}: {:?}", plan.path);
            match model {
                CostModel::Unit => assert_eq!(plan.cost, Some(8)),
                CostModel::Costmap => {
                    assert!(plan.cost > Some(8 * 50), "{model:?}: {:?}", plan.cost);
                    assert_eq!(p.cost_values().map(<[u8]>::len), Some((w * h) as usize));
                }
            }
        }
    }

    /// A start on an obstacle's edge: costmap mode plans from it (NavFn's rule), unit mode
    /// refuses it as blocked.
    #[test]
    fn a_blocked_start_is_planned_from_in_costmap_mode_only() {
        let (w, h) = (10u32, 6u32);
        let data: Vec<i8> = (0..w * h)
            .map(|i| if i % w == 2 { 100 } else { 0 })
            .collect();
        for model in [CostModel::Unit, CostModel::Costmap] {
            let config = RobotConfig {
                cost_model: model,
                ..RobotConfig::default()
            };
            let c = config.connectivity(0).unwrap();
            let grid = Grid::from_occupancy(w, h, &data, 65, false, c).unwrap();
            let p = RobotPlanner::new(&Backend::Cpu, grid, 0.05, &config).unwrap();
            assert!(!p.is_open((2, 3)));
            let plan = p.plan((2, 3), (8, 3), false);
            match model {
                CostModel::Unit => assert!(plan.is_err(), "{plan:?}"),
                CostModel::Costmap => {
                    let plan = plan.unwrap();
                    assert_eq!(plan.path.first(), Some(&(2, 3)));
                    assert_eq!(plan.path.last(), Some(&(8, 3)));
                    assert!(!plan.path[1..].contains(&(2, 3)));
                }
            }
        }
    }

    /// The same costmap values, as nav2 sends them, plan the same in costmap mode as the
    /// values this planner computed.
    #[test]
    fn a_costmap_as_sent_plans_as_the_values_computed_here() {
        let (w, h) = (12u32, 10u32);
        let data: Vec<i8> = (0..w * h)
            .map(|i| if i % 7 == 3 && i / w != 4 { 100 } else { 0 })
            .collect();
        let config = RobotConfig {
            cost_model: CostModel::Costmap,
            costs: CostParams {
                robot_radius: 0.05,
                inflation_radius: 0.3,
                ..CostParams::default()
            },
            ..RobotConfig::default()
        };
        let c = config.connectivity(0).unwrap();
        let grid = Grid::from_occupancy(w, h, &data, 65, false, c).unwrap();
        let here = RobotPlanner::new(&Backend::Cpu, grid, 0.1, &config).unwrap();
        let values = here.cost_values().unwrap().to_vec();
        let sent =
            RobotPlanner::from_costmap(&Backend::Cpu, (w, h), values, 0.1, c, &config).unwrap();
        for (s, g) in [((0, 0), (11, 9)), ((0, 9), (11, 0)), ((5, 4), (0, 0))] {
            assert_eq!(
                here.plan(s, g, false).unwrap(),
                sent.plan(s, g, false).unwrap()
            );
        }
    }
}
