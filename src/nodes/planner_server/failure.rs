//! Why a query got no path, typed once, and the one table from it to nav2's error codes.

use crate::error::{Error, PathEnd};

/// Why a query got no path, in the planner server's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Anything else (the node inactive, no map yet, a bad tolerance, the device): UNKNOWN.
    Unknown,
    /// A pose could not be brought into the map's frame.
    Transform,
    StartOffMap,
    GoalOffMap,
    /// The start's cell is blocked, and no open cell lies within the tolerance.
    StartBlocked,
    /// The goal's cell is blocked (NavFn's rule: lethal, with no tolerance).
    GoalBlocked,
    /// No path to the goal, nor to any cell within the tolerance of it.
    Unreachable,
    /// ComputePathThroughPoses with an empty list of goals.
    NoGoals,
    /// Stopped by a cancel request or a newer goal.
    Cancelled,
    /// Past the node's `request_timeout_s`.
    TimedOut,
}

impl Refusal {
    /// nav2's error code in an action whose codes count from `base` (ComputePathToPose from
    /// 200, ComputePathThroughPoses from 300). nav2 has no code of its own for a cancelled
    /// plan: planner_server answers it as TIMEOUT, and so does this.
    pub(crate) fn nav2_code(self, base: u16) -> u16 {
        base + match self {
            Refusal::Unknown => 0,
            Refusal::Transform => 2,
            Refusal::StartOffMap => 3,
            Refusal::GoalOffMap => 4,
            Refusal::StartBlocked => 5,
            Refusal::GoalBlocked => 6,
            Refusal::Cancelled | Refusal::TimedOut => 7,
            Refusal::Unreachable => 8,
            Refusal::NoGoals => 9,
        }
    }
}

/// A query's failure: why, and the error that says it (field and value) for the log and the
/// action result's message.
#[derive(Debug)]
pub(crate) struct Failure {
    pub why: Refusal,
    pub error: Error,
}

impl Failure {
    pub(crate) fn new(why: Refusal, error: Error) -> Failure {
        Failure { why, error }
    }
}

/// An error as the planner server takes it when nothing more is known: a planner's refusal of
/// an end is that end blocked.
impl From<Error> for Failure {
    fn from(error: Error) -> Failure {
        let why = match &error {
            Error::Transform(_) => Refusal::Transform,
            Error::EndRefused {
                end: PathEnd::Start,
                ..
            } => Refusal::StartBlocked,
            Error::EndRefused {
                end: PathEnd::Goal, ..
            } => Refusal::GoalBlocked,
            Error::Cancelled => Refusal::Cancelled,
            Error::DeadlineExceeded { .. } => Refusal::TimedOut,
            _ => Refusal::Unknown,
        };
        Failure { why, error }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_has_nav2s_code_in_both_actions() {
        // nav2_msgs' ComputePathToPose and ComputePathThroughPoses constants.
        let table = [
            (Refusal::Unknown, 200),
            (Refusal::Transform, 202),
            (Refusal::StartOffMap, 203),
            (Refusal::GoalOffMap, 204),
            (Refusal::StartBlocked, 205),
            (Refusal::GoalBlocked, 206),
            (Refusal::Cancelled, 207),
            (Refusal::TimedOut, 207),
            (Refusal::Unreachable, 208),
        ];
        for (why, code) in table {
            assert_eq!(why.nav2_code(200), code, "{why:?}");
            assert_eq!(why.nav2_code(300), code + 100, "{why:?}");
        }
        assert_eq!(Refusal::NoGoals.nav2_code(300), 309);
    }

    #[test]
    fn errors_are_classified_by_what_they_say() {
        let refused = |end| Error::EndRefused {
            end,
            reason: "blocked".into(),
        };
        let cases = [
            (Error::Transform("x".into()), Refusal::Transform),
            (refused(PathEnd::Start), Refusal::StartBlocked),
            (refused(PathEnd::Goal), Refusal::GoalBlocked),
            (Error::Cancelled, Refusal::Cancelled),
            (Error::invalid("map", "no map"), Refusal::Unknown),
        ];
        for (e, why) in cases {
            assert_eq!(Failure::from(e).why, why);
        }
    }
}
