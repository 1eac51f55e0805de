//! nav2's planner actions on the planner server's node: `compute_path_to_pose` and
//! `compute_path_through_poses`, as planner_server serves them to bt_navigator. Goals are
//! taken one at a time and a new goal preempts the running one (planner_server's simple
//! action server does the same: bt_navigator replans by sending goal after goal); each
//! succeeds with its path and planning_time, or is aborted with nav2's error code and message
//! (Jazzy's results; Humble's have no error fields). A cancelled or preempted goal stops its
//! planning within a few milliseconds (the CPU and GPU loops look at its flag) and publishes
//! nothing. Goals are rejected while the node is not active.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ros2_client::Message;

use crate::ros::msg::builtin_interfaces::Duration as RosDuration;
use crate::ros::msg::nav2_msgs::{
    ComputePathThroughPosesGoal, ComputePathToPoseGoal, EmptyFeedback, PlanResult,
};
use crate::ros::msg::nav_msgs::Path;

use crate::cancel::CancelFlag;
use crate::nodes::lifecycle::Lifecycle;
use crate::nodes::serve::within;
use crate::ros::action::ActionServer;
use crate::ros::live_params::Live;
use crate::ros::node_params::ServiceParams;

use super::failure::{Failure, Refusal};
use super::plan::{Query, SettingsFn};

/// What a goal asks for, as a [`Query`].
pub(super) trait PlanGoal: Message + Clone + Send + Sync + 'static {
    /// 200 (ComputePathToPose) or 300 (ComputePathThroughPoses).
    const CODE_BASE: u16;
    fn query(self, tolerance: f64, final_approach: bool) -> Query;
    /// The poses the goal asks the path to pass.
    fn poses(&self) -> usize {
        1
    }
}

impl PlanGoal for ComputePathToPoseGoal {
    const CODE_BASE: u16 = 200;
    fn query(self, tolerance: f64, final_approach: bool) -> Query {
        Query {
            start: self.use_start.then_some(self.start),
            goals: vec![self.goal],
            tolerance,
            final_approach,
            empty_when_unreachable: false,
        }
    }
}

impl PlanGoal for ComputePathThroughPosesGoal {
    const CODE_BASE: u16 = 300;
    fn poses(&self) -> usize {
        self.goals.len()
    }
    fn query(self, tolerance: f64, final_approach: bool) -> Query {
        Query {
            start: self.use_start.then_some(self.start),
            goals: self.goals,
            tolerance,
            final_approach,
            empty_when_unreachable: false,
        }
    }
}

fn duration(d: Duration) -> RosDuration {
    RosDuration {
        sec: i32::try_from(d.as_secs()).unwrap_or(i32::MAX),
        nanosec: d.subsec_nanos(),
    }
}

/// Serves `server` for node `node` until it stops: each goal becomes a query for `plan`,
/// stopped with TIMEOUT after the node's `request_timeout_s` (or by a cancel request).
pub(super) async fn serve<G, R, P, Fut>(
    server: ActionServer<G, R, EmptyFeedback>,
    node: &'static str,
    life: Arc<Lifecycle>,
    what: &'static str,
    settings: SettingsFn,
    limits: Live<ServiceParams>,
    plan: P,
) where
    G: PlanGoal,
    R: PlanResult,
    P: Fn(Query, CancelFlag) -> Fut,
    Fut: Future<Output = Result<Path, Failure>>,
{
    // As planner_server's action server while it is not active.
    // Goals run one at a time; those waiting are bounded as a service's pending requests are.
    // The bounds, tolerance and deadline in effect when a goal comes are the ones it gets.
    let admit = |goal: &G, queued: usize| {
        let max_viapoints = settings().max_viapoints as usize;
        let max_queued = limits.get().max_pending_requests as usize;
        admission(node, &life, goal, queued, max_viapoints, max_queued)
    };
    let execute = |goal: G, cancel: CancelFlag| {
        let p = settings();
        let (tolerance, final_approach) = (p.tolerance, p.final_approach);
        let work = plan(goal.query(tolerance, final_approach), cancel.clone());
        let limits = limits.get();
        async move {
            let began = Instant::now();
            // A cancel request stops the goal at once (it ends CANCELED): the work is raced
            // against its flag (the blocking plan runs on to its end, and is not published).
            let flag = cancel.clone();
            let work = async move {
                futures::pin_mut!(work);
                let stopped = flag.cancelled();
                futures::pin_mut!(stopped);
                match futures::future::select(work, stopped).await {
                    futures::future::Either::Left((r, _)) => Ok(r),
                    futures::future::Either::Right(_) => Err(crate::error::Error::Cancelled),
                }
            };
            let outcome = match within(limits.deadline(), limits.request_timeout_s, work).await {
                Ok(r) => r,
                Err(e) => {
                    cancel.cancel();
                    Err(Failure::from(e))
                }
            };
            let planning_time = duration(began.elapsed());
            match outcome {
                Ok(path) => Ok(R::from_parts(path, planning_time, 0, String::new())),
                Err(f) => {
                    let code = f.why.nav2_code(G::CODE_BASE);
                    if f.why == Refusal::Cancelled {
                        // Asked for (a cancel, or a newer goal): not a planning failure.
                        tracing::info!(
                            "{node}: {what}: stopped after {:.1} ms (canceled or preempted)",
                            began.elapsed().as_secs_f64() * 1e3
                        );
                    } else {
                        tracing::warn!("{node}: {what}: no path, error_code {code}: {f}");
                    }
                    Err(R::from_parts(
                        Path::default(),
                        planning_time,
                        code,
                        f.to_string(),
                    ))
                }
            }
        }
    };
    server.serve(admit, execute).await;
}

/// Whether a goal is taken: the node active, its poses within `max_viapoints`, fewer than
/// `max_queued` goals waiting.
fn admission<G: PlanGoal>(
    node: &str,
    life: &Lifecycle,
    goal: &G,
    queued: usize,
    max_viapoints: usize,
    max_queued: usize,
) -> std::result::Result<(), String> {
    match life.is_active() {
        true if goal.poses() > max_viapoints => Err(format!(
            "goals: {} poses is above max_viapoints ({max_viapoints})",
            goal.poses()
        )),
        true if queued >= max_queued => Err(format!(
            "overloaded: {queued} goals wait to run (max_pending_requests); try again later"
        )),
        true => Ok(()),
        false => Err(life.inactive_error(node).to_string()),
    }
}
