//! The goals of one action server, as rcl_action keeps them: their states, their results and
//! the result requests waiting for them, with rcl_action's cancel policy and nav2's
//! preemption (a new goal supersedes the running and waiting ones, as nav2's
//! SimpleActionServer lets it). No I/O here: the server ([`super::ActionServer`]) answers and
//! publishes what these calls return.

use std::time::{Duration, Instant};

use crate::cancel::CancelFlag;
use crate::ros::msg::action_msgs::{
    CancelCode, CancelGoalResponse, GoalInfo, GoalState, GoalStatus, GoalStatusArray,
};
use crate::ros::msg::builtin_interfaces::Time;
use crate::ros::msg::unique_identifier_msgs::Uuid;

/// How long a finished goal keeps its result (rcl_action's default `result_timeout`).
pub const RESULT_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// At most this many finished goals keep their results (the oldest go first): a path can be
/// megabytes, and a client that never asks must not grow the server without bound.
pub const KEPT_RESULTS: usize = 64;

/// At most this many bytes of results are kept, all finished goals together (the oldest go
/// first; the newest finished goal keeps its result whatever its size, so its client can still
/// fetch it): 64 paths of a long plan across a 4000 x 4000 costmap would hold hundreds of MB.
pub const KEPT_RESULT_BYTES: usize = 64 << 20;

/// The bytes a kept result holds in memory (for [`KEPT_RESULT_BYTES`]).
pub trait ResultBytes {
    fn result_bytes(&self) -> usize;
}

/// At most this many result requests wait for goals to end, all goals together; one more is
/// answered at once with STATUS_UNKNOWN (and the server says so in its log).
pub const MAX_WAITING_RESULTS: usize = 256;

struct Goal<R, W> {
    info: GoalInfo,
    state: GoalState,
    cancel: CancelFlag,
    result: Option<R>,
    /// Result requests that came before the goal ended.
    waiting: Vec<W>,
    ended: Option<Instant>,
    /// What its result holds ([`ResultBytes`]), once ended.
    bytes: usize,
    /// A newer goal superseded this one while it ran: it ends ABORTED.
    preempted: bool,
}

/// A goal that has ended: its state and result, and the result requests to answer with them.
pub struct Ended<R, W> {
    pub state: GoalState,
    pub result: R,
    pub waiting: Vec<W>,
}

/// What a result request gets.
pub enum Lookup<R> {
    /// The goal has ended (or is unknown: [`GoalState::Unknown`] and a default result).
    Now(GoalState, R),
    /// The goal runs or waits to: the request is kept until it ends.
    Later,
    /// Too many requests wait already ([`MAX_WAITING_RESULTS`]): answered now, unknown.
    Refused,
}

/// `R`: the action's result; `W`: how a waiting result request is named (its request id).
pub struct Goals<R, W> {
    goals: Vec<Goal<R, W>>,
}

impl<R: Clone + Default + ResultBytes, W> Default for Goals<R, W> {
    fn default() -> Self {
        Goals { goals: Vec::new() }
    }
}

impl<R: Clone + Default + ResultBytes, W> Goals<R, W> {
    fn find(&mut self, id: &Uuid) -> Option<&mut Goal<R, W>> {
        self.goals.iter_mut().find(|g| g.info.goal_id == *id)
    }

    /// Takes goal `id`, accepted at `stamp`: `Ok(true)` when it is new (to run), `Ok(false)`
    /// when it is a goal already accepted, sent again by a client that did not see its
    /// reply (replies are volatile: one written as discovery settles can be lost), which is
    /// acknowledged again and not run twice. The zero id is refused: CancelGoal reserves it
    /// for "every goal".
    pub fn accept(&mut self, id: Uuid, stamp: Time) -> Result<(Time, bool), String> {
        if id.is_zero() {
            return Err("goal_id is all zeros".into());
        }
        if let Some(g) = self.find(&id) {
            return Ok((g.info.stamp.clone(), false));
        }
        self.goals.push(Goal {
            info: GoalInfo {
                goal_id: id,
                stamp: stamp.clone(),
            },
            state: GoalState::Accepted,
            cancel: CancelFlag::new(),
            result: None,
            waiting: Vec::new(),
            ended: None,
            bytes: 0,
            preempted: false,
        });
        Ok((stamp, true))
    }

    /// Goals accepted and waiting to run.
    pub fn queued(&self) -> usize {
        self.goals
            .iter()
            .filter(|g| g.state == GoalState::Accepted)
            .count()
    }

    /// Starts goal `id`: its cancel flag, or `None` when it is no longer waiting to run
    /// (canceled in the queue, or expired).
    pub fn start(&mut self, id: &Uuid) -> Option<CancelFlag> {
        let g = self.find(id)?;
        if g.state != GoalState::Accepted {
            return None;
        }
        g.state = GoalState::Executing;
        Some(g.cancel.clone())
    }

    /// nav2's preemption by the newly accepted goal `by`: goals still waiting end ABORTED now
    /// (returned, to answer their result requests), the running one is told through its
    /// flag and ends ABORTED when its work stops (with an empty result, as nav2's
    /// SimpleActionServer terminates it). Goals being canceled end CANCELED as asked.
    pub fn preempt(&mut self, by: &Uuid, now: Instant) -> Vec<Ended<R, W>> {
        let mut ended = Vec::new();
        for g in &mut self.goals {
            if g.info.goal_id == *by {
                continue;
            }
            match g.state {
                GoalState::Accepted => ended.push(end(g, GoalState::Aborted, R::default(), now)),
                GoalState::Executing => {
                    g.preempted = true;
                    g.cancel.cancel();
                }
                _ => {}
            }
        }
        ended
    }

    /// Ends goal `id` with what its work returned: `Ok` succeeded; `Err` is CANCELED when a
    /// cancel was asked for, else ABORTED; a goal preempted while it ran is ABORTED with an
    /// empty result whatever its work returned. A goal that has ended already keeps its end
    /// (`None`).
    pub fn finish(
        &mut self,
        id: &Uuid,
        outcome: Result<R, R>,
        now: Instant,
    ) -> Option<Ended<R, W>> {
        let g = self.find(id)?;
        if g.state.is_terminal() {
            return None;
        }
        let (state, result) = match outcome {
            _ if g.preempted && g.state == GoalState::Executing => {
                (GoalState::Aborted, R::default())
            }
            Ok(r) => (GoalState::Succeeded, r),
            Err(r) if g.state == GoalState::Canceling => (GoalState::Canceled, r),
            Err(r) => (GoalState::Aborted, r),
        };
        Some(end(g, state, result, now))
    }

    /// Answers a result request `w` for goal `id`, or keeps it until the goal ends.
    pub fn result(&mut self, id: &Uuid, w: W) -> Lookup<R> {
        let waiting: usize = self.goals.iter().map(|g| g.waiting.len()).sum();
        match self.find(id) {
            None => Lookup::Now(GoalState::Unknown, R::default()),
            Some(g) => match (&g.result, g.state.is_terminal()) {
                (Some(r), true) => Lookup::Now(g.state, r.clone()),
                _ if waiting >= MAX_WAITING_RESULTS => Lookup::Refused,
                _ => {
                    g.waiting.push(w);
                    Lookup::Later
                }
            },
        }
    }

    /// rcl_action's cancel policy for `req`: zero id and zero stamp cancel every goal; a
    /// stamp, every goal accepted at or before it; an id, that goal. Goals still queued end
    /// CANCELED now (returned, to answer their result requests); running ones are told
    /// through their flags and end when their work stops.
    pub fn cancel(
        &mut self,
        req: &GoalInfo,
        now: Instant,
    ) -> (CancelGoalResponse, Vec<Ended<R, W>>) {
        let zero_stamp = req.stamp.sec == 0 && req.stamp.nanosec == 0;
        let at_or_before = |s: &Time| (s.sec, s.nanosec) <= (req.stamp.sec, req.stamp.nanosec);
        let mut code = CancelCode::None;
        if !req.goal_id.is_zero() {
            match self.goals.iter().find(|g| g.info.goal_id == req.goal_id) {
                None => code = CancelCode::UnknownGoalId,
                Some(g) if g.state.is_terminal() => code = CancelCode::GoalTerminated,
                Some(_) => {}
            }
        }
        let mut canceling = Vec::new();
        let mut ended = Vec::new();
        for g in &mut self.goals {
            let chosen = if req.goal_id.is_zero() {
                zero_stamp || at_or_before(&g.info.stamp)
            } else {
                g.info.goal_id == req.goal_id || (!zero_stamp && at_or_before(&g.info.stamp))
            };
            if !chosen || g.state.is_terminal() || g.state == GoalState::Canceling {
                continue;
            }
            canceling.push(g.info.clone());
            if g.state == GoalState::Accepted {
                ended.push(end(g, GoalState::Canceled, R::default(), now));
            } else {
                g.state = GoalState::Canceling;
                g.cancel.cancel();
            }
        }
        if canceling.is_empty() && code == CancelCode::None {
            // rclcpp_action: nothing to cancel is a rejected request.
            code = CancelCode::Rejected;
        }
        if !canceling.is_empty() {
            code = CancelCode::None;
        }
        let response = CancelGoalResponse {
            return_code: code as i8,
            goals_canceling: canceling,
        };
        (response, ended)
    }

    /// Drops finished goals past [`RESULT_TIMEOUT`], then the oldest finished ones beyond
    /// [`KEPT_RESULTS`] or [`KEPT_RESULT_BYTES`] (never the newest finished one).
    pub fn expire(&mut self, now: Instant) {
        self.goals.retain(|g| {
            g.ended
                .is_none_or(|t| now.duration_since(t) < RESULT_TIMEOUT)
        });
        // Ended goals by age, newest first: keep while both budgets allow.
        let mut ended: Vec<(Instant, usize)> = self
            .goals
            .iter()
            .enumerate()
            .filter_map(|(i, g)| g.ended.map(|t| (t, i)))
            .collect();
        ended.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
        let mut keep = vec![true; self.goals.len()];
        let mut bytes = 0usize;
        for (k, &(_, i)) in ended.iter().enumerate() {
            bytes = bytes.saturating_add(self.goals[i].bytes);
            if k > 0 && (k >= KEPT_RESULTS || bytes > KEPT_RESULT_BYTES) {
                keep[i] = false;
            }
        }
        let mut i = 0;
        self.goals.retain(|_| {
            i += 1;
            keep[i - 1]
        });
    }

    /// The `_action/status` message: every goal still kept, in the order accepted.
    pub fn status(&self) -> GoalStatusArray {
        GoalStatusArray {
            status_list: self
                .goals
                .iter()
                .map(|g| GoalStatus {
                    goal_info: g.info.clone(),
                    status: g.state as i8,
                })
                .collect(),
        }
    }
}

fn end<R: Clone + ResultBytes, W>(
    g: &mut Goal<R, W>,
    state: GoalState,
    result: R,
    now: Instant,
) -> Ended<R, W> {
    g.state = state;
    g.bytes = result.result_bytes();
    g.result = Some(result.clone());
    g.ended = Some(now);
    Ended {
        state,
        result,
        waiting: std::mem::take(&mut g.waiting),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test result of `n` is `n` bytes.
    impl ResultBytes for u32 {
        fn result_bytes(&self) -> usize {
            *self as usize
        }
    }

    fn id(n: u8) -> Uuid {
        Uuid { uuid: [n; 16] }
    }

    fn at(sec: i32) -> Time {
        Time { sec, nanosec: 0 }
    }

    fn states(g: &Goals<u32, u32>) -> Vec<(u8, i8)> {
        g.status()
            .status_list
            .iter()
            .map(|s| (s.goal_info.goal_id.uuid[0], s.status))
            .collect()
    }

    #[test]
    fn a_goal_runs_and_its_result_answers_early_and_late_requests() {
        let mut g = Goals::<u32, u32>::default();
        let now = Instant::now();
        g.accept(id(1), at(5)).unwrap();
        assert!(matches!(g.result(&id(1), 10), Lookup::Later));
        let flag = g.start(&id(1)).unwrap();
        assert!(!flag.is_cancelled());
        assert_eq!(states(&g), vec![(1, GoalState::Executing as i8)]);
        let ended = g.finish(&id(1), Ok(7), now).unwrap();
        assert_eq!(
            (ended.state, ended.result, ended.waiting),
            (GoalState::Succeeded, 7, vec![10])
        );
        assert!(matches!(
            g.result(&id(1), 11),
            Lookup::Now(GoalState::Succeeded, 7)
        ));
        assert!(matches!(
            g.result(&id(9), 12),
            Lookup::Now(GoalState::Unknown, 0)
        ));
        // An ended goal keeps its end and result.
        assert!(g.finish(&id(1), Ok(8), now).is_none());
        assert!(matches!(
            g.result(&id(1), 13),
            Lookup::Now(GoalState::Succeeded, 7)
        ));
    }

    #[test]
    fn a_goal_sent_again_is_acknowledged_again_and_the_zero_id_refused() {
        let mut g = Goals::<u32, u32>::default();
        assert_eq!(g.accept(id(1), at(1)).unwrap(), (at(1), true));
        assert_eq!(g.accept(id(1), at(2)).unwrap(), (at(1), false));
        assert_eq!(states(&g), vec![(1, GoalState::Accepted as i8)]);
        assert!(g.accept(id(0), at(2)).unwrap_err().contains("zeros"));
    }

    #[test]
    fn cancel_follows_rcl_action_policy() {
        let now = Instant::now();
        let mut g = Goals::<u32, u32>::default();
        for (n, s) in [(1, 10), (2, 20), (3, 30)] {
            g.accept(id(n), at(s)).unwrap();
        }
        let running = g.start(&id(1)).unwrap();
        g.result(&id(2), 5);
        // By id: an unknown goal.
        let (r, ended) = g.cancel(
            &GoalInfo {
                goal_id: id(9),
                stamp: at(0),
            },
            now,
        );
        assert_eq!(
            (r.return_code, r.goals_canceling.len(), ended.len()),
            (2, 0, 0)
        );
        // By stamp: goals 1 and 2 (accepted at or before 20); 2 waits in the queue and ends
        // at once with its waiting result request, 1 runs and is told.
        let (r, ended) = g.cancel(
            &GoalInfo {
                goal_id: id(0),
                stamp: at(20),
            },
            now,
        );
        assert_eq!(r.return_code, 0);
        assert_eq!(r.goals_canceling.len(), 2);
        assert_eq!(ended.len(), 1);
        assert_eq!(
            (ended[0].state, ended[0].waiting.clone()),
            (GoalState::Canceled, vec![5])
        );
        assert!(running.is_cancelled());
        assert!(g.start(&id(2)).is_none(), "a canceled goal never starts");
        let e = g.finish(&id(1), Err(0), now).unwrap();
        assert_eq!(e.state, GoalState::Canceled);
        // By id: a goal that has ended.
        let (r, _) = g.cancel(
            &GoalInfo {
                goal_id: id(1),
                stamp: at(0),
            },
            now,
        );
        assert_eq!(r.return_code, 3);
        // Everything: only goal 3 is left to cancel.
        let (r, ended) = g.cancel(
            &GoalInfo {
                goal_id: id(0),
                stamp: at(0),
            },
            now,
        );
        assert_eq!(
            (r.return_code, r.goals_canceling.len(), ended.len()),
            (0, 1, 1)
        );
        // Nothing left: rejected.
        let (r, _) = g.cancel(
            &GoalInfo {
                goal_id: id(0),
                stamp: at(0),
            },
            now,
        );
        assert_eq!(r.return_code, 1);
        assert_eq!(
            states(&g),
            vec![(1, 5), (2, 5), (3, 5)],
            "every goal CANCELED in the status"
        );
    }

    #[test]
    fn a_new_goal_preempts_the_running_and_waiting_ones() {
        let now = Instant::now();
        let mut g = Goals::<u32, u32>::default();
        g.accept(id(1), at(1)).unwrap();
        let running = g.start(&id(1)).unwrap();
        g.accept(id(2), at(2)).unwrap();
        g.result(&id(2), 20);
        assert!(g.preempt(&id(2), now).is_empty(), "nothing waited before 2");
        assert!(running.is_cancelled(), "the running goal is told");
        g.accept(id(3), at(3)).unwrap();
        let ended = g.preempt(&id(3), now);
        assert_eq!(ended.len(), 1, "goal 2 waited: it ends now");
        assert_eq!(
            (ended[0].state, ended[0].result, ended[0].waiting.clone()),
            (GoalState::Aborted, 0, vec![20])
        );
        assert!(g.start(&id(2)).is_none(), "a superseded goal never starts");
        // The preempted goal's work succeeded after all: it is still ABORTED, no result.
        let e = g.finish(&id(1), Ok(9), now).unwrap();
        assert_eq!((e.state, e.result), (GoalState::Aborted, 0));
        // A goal being canceled ends CANCELED, not preempted.
        let flag = g.start(&id(3)).unwrap();
        let all = GoalInfo {
            goal_id: id(0),
            stamp: at(0),
        };
        g.cancel(&all, now);
        g.accept(id(4), at(4)).unwrap();
        g.preempt(&id(4), now);
        assert!(flag.is_cancelled());
        let e = g.finish(&id(3), Err(5), now).unwrap();
        assert_eq!(e.state, GoalState::Canceled);
    }

    #[test]
    fn waiting_result_requests_are_bounded() {
        let mut g = Goals::<u32, u32>::default();
        g.accept(id(1), at(1)).unwrap();
        for w in 0..MAX_WAITING_RESULTS as u32 {
            assert!(matches!(g.result(&id(1), w), Lookup::Later));
        }
        assert!(matches!(g.result(&id(1), 9999), Lookup::Refused));
        g.start(&id(1)).unwrap();
        let e = g.finish(&id(1), Ok(1), Instant::now()).unwrap();
        assert_eq!(e.waiting.len(), MAX_WAITING_RESULTS);
        assert!(matches!(
            g.result(&id(1), 1),
            Lookup::Now(GoalState::Succeeded, 1)
        ));
    }

    #[test]
    fn a_failure_without_cancel_aborts() {
        let mut g = Goals::<u32, u32>::default();
        g.accept(id(1), at(1)).unwrap();
        g.start(&id(1)).unwrap();
        let e = g.finish(&id(1), Err(3), Instant::now()).unwrap();
        assert_eq!((e.state, e.result), (GoalState::Aborted, 3));
    }

    #[test]
    fn finished_goals_expire_by_age_and_count() {
        let t0 = Instant::now();
        let mut g = Goals::<u32, u32>::default();
        let n = KEPT_RESULTS as u8 + 3;
        for k in 1..=n {
            g.accept(id(k), at(k.into())).unwrap();
            g.start(&id(k)).unwrap();
            g.finish(&id(k), Ok(k.into()), t0).unwrap();
        }
        g.accept(id(200), at(500)).unwrap();
        g.expire(t0);
        let kept = states(&g);
        assert_eq!(kept.len(), KEPT_RESULTS + 1);
        assert_eq!(kept[0].0, 4, "the oldest three results went first");
        g.expire(t0 + RESULT_TIMEOUT);
        assert_eq!(states(&g), vec![(200, 1)], "a queued goal never expires");
    }

    #[test]
    fn kept_results_are_bounded_in_bytes_and_the_newest_is_kept_whatever_its_size() {
        let t0 = Instant::now();
        let mut g = Goals::<u32, u32>::default();
        let quarter = (KEPT_RESULT_BYTES / 4) as u32;
        // Six results of a quarter of the budget each, a second apart: the newest four fit.
        for k in 1..=6u8 {
            let t = t0 + Duration::from_secs(k.into());
            g.accept(id(k), at(k.into())).unwrap();
            g.start(&id(k)).unwrap();
            g.finish(&id(k), Ok(quarter), t).unwrap();
        }
        g.accept(id(100), at(100)).unwrap();
        g.expire(t0 + Duration::from_secs(7));
        let ids: Vec<u8> = states(&g).iter().map(|s| s.0).collect();
        assert_eq!(
            ids,
            vec![3, 4, 5, 6, 100],
            "the two oldest results went first"
        );
        // A result bigger than the whole budget is kept alone, as the newest.
        g.start(&id(100)).unwrap();
        let huge = (KEPT_RESULT_BYTES + 1) as u32;
        g.finish(&id(100), Ok(huge), t0 + Duration::from_secs(8))
            .unwrap();
        g.expire(t0 + Duration::from_secs(9));
        assert_eq!(
            states(&g).iter().map(|s| s.0).collect::<Vec<_>>(),
            vec![100]
        );
        assert!(matches!(g.result(&id(100), 1), Lookup::Now(GoalState::Succeeded, r) if r == huge));
    }
}
