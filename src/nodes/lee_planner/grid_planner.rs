//! The Lee planner as the planner server's [`GridPlanner`]: costmap mode takes its ends as
//! NavFn does, unit mode escapes a blocked start.

use crate::error::Result;
use crate::lee::{Plan, RobotPlanner};
use crate::nodes::planner_server::{Ends, GridPlanner};

impl GridPlanner for RobotPlanner {
    fn backend_name(&self) -> &'static str {
        RobotPlanner::backend_name(self)
    }

    fn ends(&self) -> Ends {
        match self.navfn_ends() {
            Some(_) => Ends::NavFn,
            None => Ends::Escape,
        }
    }

    fn is_open(&self, c: (i64, i64)) -> bool {
        RobotPlanner::is_open(self, c)
    }

    fn is_lethal(&self, c: (i64, i64)) -> bool {
        self.navfn_ends().is_some_and(|costs| costs.is_lethal(c))
    }

    fn reachable_from(&self, start: (i64, i64)) -> Result<Vec<bool>> {
        RobotPlanner::reachable_from(self, start)
    }

    fn plan(&self, start: (i64, i64), goal: (i64, i64), with_field: bool) -> Result<Plan> {
        RobotPlanner::plan(self, start, goal, with_field)
    }

    fn smooth(&self, cells: &[(u32, u32)]) -> Option<Vec<(f64, f64)>> {
        RobotPlanner::smooth(self, cells)
    }

    fn cost_values(&self) -> Option<&[u8]> {
        RobotPlanner::cost_values(self)
    }
}
