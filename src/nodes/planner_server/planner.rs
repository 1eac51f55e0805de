//! The seam between the planner server (nav2's side: ends, tolerance, frames, error codes,
//! actions) and a grid planner. The server plans only through [`GridPlanner`]; the Lee
//! planner (`nodes/lee_planner/grid_planner.rs`) is one implementation of it, and another
//! grid planner would be one more file.

use crate::error::Result;
use crate::lee::Plan;
use crate::nodes::grid_convert::CellFrame;

/// How a planner takes a blocked start and refuses a goal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ends {
    /// As NavFn: a blocked start is planned from (NavFn clears the robot's cell), and a goal
    /// is GOAL_OCCUPIED only when lethal with no tolerance (else NO_VALID_PATH).
    NavFn,
    /// A blocked start escapes to the nearest open cell within the tolerance (else
    /// START_OCCUPIED); a blocked goal is GOAL_OCCUPIED.
    Escape,
}

/// What the planner server asks of the planner of one map. Cells are (x, y) on the map's
/// grid; a plan's path runs start to goal, both included.
pub(crate) trait GridPlanner: Send + Sync {
    /// Where plans run ("cpu" or "cuda").
    fn backend_name(&self) -> &'static str;
    /// How it takes ends ([`Ends`]).
    fn ends(&self) -> Ends;
    /// Whether a path may start at `c`.
    fn is_open(&self, c: (i64, i64)) -> bool;
    /// Whether `c` is lethal (an obstacle, not merely costly or inflated).
    fn is_lethal(&self, c: (i64, i64)) -> bool;
    /// Per cell: reachable from `start`.
    fn reachable_from(&self, start: (i64, i64)) -> Result<Vec<bool>>;
    /// A path from `start` to `goal`; with `with_field`, its field too where it has one.
    fn plan(&self, start: (i64, i64), goal: (i64, i64), with_field: bool) -> Result<Plan>;
    /// The path along `cells` shortened where its costs allow, in cell units; None where the
    /// planner has no costs to price a shortcut.
    fn smooth(&self, cells: &[(u32, u32)]) -> Option<Vec<(f64, f64)>>;
    /// The cells' cost values, where it plans on costs (published on `~/costmap`).
    fn cost_values(&self) -> Option<&[u8]>;
}

/// One map, replaced whole: a query holds its own Arc, so it never sees a half-updated grid.
pub(crate) struct MapState {
    /// The map's planner, as the planner server sees it.
    pub planner: Box<dyn GridPlanner>,
    pub frame: CellFrame,
    pub frame_id: String,
}
