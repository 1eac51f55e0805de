//! One planning query as nav2 asks it: a start (given, or the robot's pose from TF) and one or
//! more goals (through each in order), brought into the map's frame, checked, planned, and
//! returned as poses that point along the path. A failure carries nav2's error code.

use crate::error::{Error, PathEnd, Result};

use crate::nodes::grid_convert::CellFrame;
use crate::ros::msg::builtin_interfaces::Time;
use crate::ros::msg::geometry_msgs::{Point, Pose, PoseStamped, Quaternion};
use crate::ros::tf::{Rigid, TfBuffer};

use super::failure::{Failure, Refusal};
use super::planner::{Ends, GridPlanner, MapState};

/// How poses reach the map's frame (the node's TF parameters).
#[derive(Debug, Clone)]
pub(crate) struct Frames {
    /// The planning frame of a map whose header has no frame_id.
    pub global_frame: String,
    pub robot_base_frame: String,
    pub transform_tolerance: f64,
}

/// What the server reads of its node's parameters, as they are when a query comes (several
/// are dynamic).
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub frames: Frames,
    /// Metres the actions may move a blocked or unreachable goal, or a blocked start.
    pub tolerance: f64,
    /// The last pose keeps the approach direction (use_final_approach_orientation).
    pub final_approach: bool,
    /// A compute_path_through_poses goal with more poses is rejected.
    pub max_viapoints: u32,
    /// ~/distance_field with every plan, even without a reader.
    pub publish_distance_field: bool,
    /// Paths go out smoothed, where the planner has costs to price a shortcut.
    pub smooth: bool,
}

/// The node's [`Settings`] as they are now.
pub(crate) type SettingsFn = std::sync::Arc<dyn Fn() -> Settings + Send + Sync>;

/// A query: from `start` (None: the robot's pose) through each of `goals`.
#[derive(Debug, Clone)]
pub(crate) struct Query {
    pub start: Option<PoseStamped>,
    pub goals: Vec<PoseStamped>,
    /// Metres a blocked or unreachable goal, or a start in the inflated zone, may move.
    pub tolerance: f64,
    /// The last pose keeps the approach direction instead of the goal's orientation.
    pub final_approach: bool,
    /// With no tolerance, an unreachable goal is an empty path in the map's frame (GetPlan
    /// and the topics, as they always were), not a NO_VALID_PATH failure (the actions).
    pub empty_when_unreachable: bool,
}

/// The poses of a query in the map's frame, ready for the blocking part.
pub(crate) struct Placed {
    start: Pose,
    goals: Vec<Pose>,
    tolerance: f64,
    final_approach: bool,
    empty_when_unreachable: bool,
}

fn map_frame<'a>(map: &'a MapState, frames: &'a Frames) -> &'a str {
    if map.frame_id.is_empty() {
        &frames.global_frame
    } else {
        &map.frame_id
    }
}

fn same_frame(a: &str, b: &str) -> bool {
    a.trim_start_matches('/') == b.trim_start_matches('/')
}

/// `p` in the map's frame: as it is when it names that frame (or none), else through the
/// latest transform, which must not be older than transform_tolerance.
fn in_map(
    what: &str,
    p: &PoseStamped,
    target: &str,
    tf: &TfBuffer,
    now: &Time,
    frames: &Frames,
) -> Result<Pose> {
    let source = &p.header.frame_id;
    if source.is_empty() || same_frame(source, target) {
        return Ok(p.pose.clone());
    }
    let l = tf
        .lookup_fresh(target, source, now, frames.transform_tolerance)
        .map_err(|e| Error::Transform(format!("{what}: {e}")))?;
    Ok(l.transform.then(&Rigid::from_pose(&p.pose)).to_pose())
}

/// Step one, on the caller's thread: every pose of `q` in the map's frame (the robot's from
/// `robot_base_frame` when the query has no start).
pub(crate) fn place(
    q: &Query,
    map: &MapState,
    tf: &TfBuffer,
    now: &Time,
    frames: &Frames,
) -> std::result::Result<Placed, Failure> {
    if !(q.tolerance.is_finite() && q.tolerance >= 0.0) {
        return Err(Error::invalid(
            "tolerance",
            format!(
                "{} is not a finite non-negative number of metres",
                q.tolerance
            ),
        )
        .into());
    }
    if q.goals.is_empty() {
        return Err(Failure::new(
            Refusal::NoGoals,
            Error::invalid("goals", "no goal given"),
        ));
    }
    let target = map_frame(map, frames);
    let start = match &q.start {
        Some(s) => in_map("start", s, target, tf, now, frames)?,
        None => tf
            .lookup_fresh(
                target,
                &frames.robot_base_frame,
                now,
                frames.transform_tolerance,
            )
            .map_err(|e| Error::Transform(format!("robot pose: {e}")))?
            .transform
            .to_pose(),
    };
    let goals = q
        .goals
        .iter()
        .map(|g| in_map("goal", g, target, tf, now, frames))
        .collect::<Result<Vec<_>>>()?;
    Ok(Placed {
        start,
        goals,
        tolerance: q.tolerance,
        final_approach: q.final_approach,
        empty_when_unreachable: q.empty_when_unreachable,
    })
}

/// A planned path: poses in the map's frame, and the last segment's field when asked for.
pub(crate) struct Planned {
    pub poses: Vec<Pose>,
    pub labels: Option<Vec<u32>>,
    /// The backend that planned it: "cpu" when any segment was planned there.
    pub backend: &'static str,
}

/// The cell of `p`, which must be on the map as path end `end`.
fn cell(map: &MapState, end: PathEnd, p: &Point) -> std::result::Result<(i64, i64), Failure> {
    let code = match end {
        PathEnd::Start => Refusal::StartOffMap,
        PathEnd::Goal => Refusal::GoalOffMap,
    };
    let what = end.to_string();
    let c = map
        .frame
        .cell_of(p)
        .map_err(|e| Failure::new(code, e.under(format!("{what}."))))?;
    let (w, h) = (map.frame.width as i64, map.frame.height as i64);
    if c.0 < 0 || c.1 < 0 || c.0 >= w || c.1 >= h {
        return Err(Failure::new(
            code,
            Error::invalid(
                what,
                format!(
                    "({}, {}) m is outside the map (cell ({}, {}) of {w} x {h})",
                    p.x, p.y, c.0, c.1
                ),
            ),
        ));
    }
    Ok(c)
}

/// Step two, blocking: the path from the start through every goal. A blocked start is
/// planned from where the planner takes NavFn's ends ([`Ends::NavFn`]: costmap mode) and
/// otherwise escapes to the nearest open cell within the tolerance; a blocked or
/// unreachable goal is replaced by the reachable cell nearest to it within the tolerance.
/// Each moved end is logged.
pub(crate) fn solve(
    node: &str,
    map: &MapState,
    placed: &Placed,
    with_field: bool,
    smooth: bool,
) -> std::result::Result<Planned, Failure> {
    let tol = placed.tolerance;
    let mut s = cell(map, PathEnd::Start, &placed.start.position)?;
    if !map.planner.is_open(s) && tol > 0.0 && map.planner.ends() == Ends::Escape {
        if let Some((c, d)) = nearest(&map.frame, &placed.start.position, s, tol, |c| {
            map.planner.is_open(c)
        }) {
            tracing::info!(
                "{node}: start cell ({}, {}) is blocked; starting from ({}, {}), {d:.3} m away (tolerance {tol} m)",
                s.0, s.1, c.0, c.1
            );
            s = c;
        }
    }
    let mut cells: Vec<(u32, u32)> = Vec::new();
    // With `smooth`, each leg shortened on its own: the via-points stay on the path.
    let mut points: Vec<(f64, f64)> = Vec::new();
    let mut labels = None;
    let mut backend = "cuda";
    let last = placed.goals.len() - 1;
    for (i, goal) in placed.goals.iter().enumerate() {
        let g = cell(map, PathEnd::Goal, &goal.position)?;
        let field = with_field && i == last;
        let plan = match map.planner.plan(s, g, field) {
            Ok(p) if p.reachable => p,
            Err(e)
                if !matches!(
                    e,
                    Error::EndRefused {
                        end: PathEnd::Goal,
                        ..
                    }
                ) =>
            {
                return Err(e.into());
            }
            first => {
                let moved = if tol > 0.0 {
                    let reach = map.planner.reachable_from(s)?;
                    let w = map.frame.width as i64;
                    nearest(&map.frame, &goal.position, g, tol, |c| {
                        reach[(c.1 * w + c.0) as usize]
                    })
                } else {
                    None
                };
                let Some((c, d)) = moved else {
                    if placed.empty_when_unreachable && tol == 0.0 {
                        if let Ok(unreached) = first {
                            return Ok(Planned {
                                poses: Vec::new(),
                                labels: unreached.labels,
                                backend: unreached.backend,
                            });
                        }
                    }
                    return Err(match first {
                        Err(e) => match map.planner.ends() {
                            Ends::NavFn => navfn_goal_failure(e, tol, map.planner.as_ref(), g),
                            Ends::Escape => e.into(),
                        },
                        Ok(_) if tol > 0.0 => Failure::new(
                            Refusal::Unreachable,
                            Error::invalid(
                                "goal",
                                format!(
                                    "no cell reachable from the start within tolerance {tol} m of ({}, {})",
                                    goal.position.x, goal.position.y
                                ),
                            ),
                        ),
                        Ok(_) => Failure::new(
                            Refusal::Unreachable,
                            Error::invalid(
                                "goal",
                                format!("no path from cell ({}, {}) to ({}, {})", s.0, s.1, g.0, g.1),
                            ),
                        ),
                    });
                };
                tracing::info!(
                    "{node}: goal cell ({}, {}) is blocked or unreachable; planning to ({}, {}), {d:.3} m from the goal (tolerance {tol} m)",
                    g.0, g.1, c.0, c.1
                );
                map.planner.plan(s, c, field)?
            }
        };
        if plan.backend != "cuda" {
            backend = plan.backend;
        }
        let skip = usize::from(!cells.is_empty());
        if smooth {
            if let Some(leg) = map.planner.smooth(&plan.path) {
                points.extend(leg.into_iter().skip(skip));
            }
        }
        cells.extend(plan.path.iter().skip(skip));
        if let Some(&(x, y)) = plan.path.last() {
            s = (x as i64, y as i64);
        }
        if field {
            labels = plan.labels;
        }
    }
    let goal_orientation = placed
        .goals
        .last()
        .map(|g| g.orientation.clone())
        .unwrap_or_else(Quaternion::identity);
    let poses = if smooth && !points.is_empty() {
        oriented_points(&map.frame, &points, goal_orientation, placed.final_approach)
    } else {
        oriented(&map.frame, &cells, goal_orientation, placed.final_approach)
    };
    Ok(Planned {
        poses,
        labels,
        backend,
    })
}

/// A refused goal as NavFn fails it: GOAL_OCCUPIED when lethal with no tolerance, otherwise
/// NO_VALID_PATH (NavFn finds no reachable point within the tolerance).
fn navfn_goal_failure(e: Error, tol: f64, planner: &dyn GridPlanner, g: (i64, i64)) -> Failure {
    match e {
        Error::EndRefused {
            end: PathEnd::Goal, ..
        } if tol == 0.0 && planner.is_lethal(g) => Failure::new(Refusal::GoalBlocked, e),
        Error::EndRefused {
            end: PathEnd::Goal,
            reason,
        } => Failure::new(
            Refusal::Unreachable,
            Error::invalid(
                "goal",
                format!("no path: {reason}, and no cell reachable from the start within tolerance {tol} m"),
            ),
        ),
        other => other.into(),
    }
}

/// The cell within `tol` metres of `p` (cell `at`) whose centre is nearest to it among those
/// `ok` accepts (ties: the smaller row, then column), and that distance.
fn nearest(
    f: &CellFrame,
    p: &Point,
    at: (i64, i64),
    tol: f64,
    ok: impl Fn((i64, i64)) -> bool,
) -> Option<((i64, i64), f64)> {
    let (w, h) = (f.width as i64, f.height as i64);
    // No wider than the map: a tolerance of 3.4e38 m (GetPlan's float allows it) made the
    // cell count saturate and the +1 wrap, and the tolerance was ignored.
    let r = (tol / f.resolution).ceil().min(w.max(h) as f64) as i64 + 1;
    let mut best: Option<((i64, i64), f64)> = None;
    for y in (at.1 - r).max(0)..=(at.1 + r).min(h - 1) {
        for x in (at.0 - r).max(0)..=(at.0 + r).min(w - 1) {
            let c = f.centre(x as u32, y as u32);
            let d = (c.x - p.x).hypot(c.y - p.y);
            if d <= tol && best.is_none_or(|(_, bd)| d < bd) && ok((x, y)) {
                best = Some(((x, y), d));
            }
        }
    }
    best
}

/// A rotation of `yaw` about z.
fn yaw_quaternion(yaw: f64) -> Quaternion {
    Quaternion {
        x: 0.0,
        y: 0.0,
        z: (yaw / 2.0).sin(),
        w: (yaw / 2.0).cos(),
    }
}

/// Cell centres, each pose facing the next cell; the last one takes the goal's orientation,
/// or with `final_approach` the direction it arrived from (NavFn's and Smac's
/// use_final_approach_orientation). A path's steps go to neighbouring cells, whose headings
/// are eight: each is found once, not with an atan2, a sine and a cosine per pose (on a path
/// of thousands of cells those were a good part of the handler's time).
fn oriented(
    frame: &CellFrame,
    cells: &[(u32, u32)],
    goal: Quaternion,
    final_approach: bool,
) -> Vec<Pose> {
    let points = frame.centres(cells);
    let steps: Vec<Quaternion> = (0..9)
        .map(|k| yaw_quaternion(frame.step_yaw((k % 3) as f64 - 1.0, (k / 3) as f64 - 1.0)))
        .collect();
    let heading = |i: usize, j: usize| {
        let (dx, dy) = (
            cells[j].0 as i64 - cells[i].0 as i64,
            cells[j].1 as i64 - cells[i].1 as i64,
        );
        if dx.abs() <= 1 && dy.abs() <= 1 && (dx, dy) != (0, 0) {
            steps[((dy + 1) * 3 + dx + 1) as usize].clone()
        } else {
            let (a, b) = (&points[i], &points[j]);
            yaw_quaternion((b.y - a.y).atan2(b.x - a.x))
        }
    };
    facing(&points, heading, goal, final_approach)
}

/// Points in cell units (a smooth path), each pose facing the next point; the last one as in
/// [`oriented`].
fn oriented_points(
    frame: &CellFrame,
    points: &[(f64, f64)],
    goal: Quaternion,
    final_approach: bool,
) -> Vec<Pose> {
    let world = frame.points(points);
    let heading = |i: usize, j: usize| {
        let (dx, dy) = (points[j].0 - points[i].0, points[j].1 - points[i].1);
        yaw_quaternion(frame.step_yaw(dx, dy))
    };
    facing(&world, heading, goal, final_approach)
}

/// Poses at `positions`, each facing the next by `heading(i, i + 1)`; the last one takes
/// `goal`, or with `final_approach` the heading it arrived with.
fn facing(
    positions: &[Point],
    heading: impl Fn(usize, usize) -> Quaternion,
    goal: Quaternion,
    final_approach: bool,
) -> Vec<Pose> {
    let n = positions.len();
    positions
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let orientation = if i + 1 < n {
                heading(i, i + 1)
            } else if final_approach && n > 1 {
                heading(n - 2, n - 1)
            } else {
                goal.clone()
            };
            Pose {
                position: p.clone(),
                orientation,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A second grid planner in a few lines, planned through by the server's own `solve`:
    /// every cell open but column 0 of row 0, paths along x then along y, no field, no costs.
    struct Manhattan;

    impl GridPlanner for Manhattan {
        fn backend_name(&self) -> &'static str {
            "cpu"
        }
        fn ends(&self) -> Ends {
            Ends::Escape
        }
        fn is_open(&self, c: (i64, i64)) -> bool {
            c != (0, 0)
        }
        fn is_lethal(&self, _: (i64, i64)) -> bool {
            false
        }
        fn reachable_from(&self, _: (i64, i64)) -> Result<Vec<bool>> {
            Ok(vec![true; 100])
        }
        fn plan(&self, s: (i64, i64), g: (i64, i64), _: bool) -> Result<crate::lee::Plan> {
            let mut path = vec![(s.0 as u32, s.1 as u32)];
            let (mut x, mut y) = s;
            while (x, y) != g {
                if x != g.0 {
                    x += (g.0 - x).signum();
                } else {
                    y += (g.1 - y).signum();
                }
                path.push((x as u32, y as u32));
            }
            Ok(crate::lee::Plan {
                reachable: true,
                length: Some(path.len() as u32 - 1),
                cost: Some(path.len() as u64 - 1),
                path,
                labels: None,
                backend: "cpu",
            })
        }
        fn smooth(&self, _: &[(u32, u32)]) -> Option<Vec<(f64, f64)>> {
            None
        }
        fn cost_values(&self) -> Option<&[u8]> {
            None
        }
    }

    /// The server's side works with any planner: a blocked start escapes within the
    /// tolerance (the planner says `Ends::Escape`), legs join at a via-point, and the poses
    /// are the planner's cells.
    #[test]
    fn the_server_plans_through_any_grid_planner() {
        let frame = CellFrame {
            origin: Pose::default(),
            resolution: 1.0,
            width: 10,
            height: 10,
        };
        let map = MapState {
            planner: Box::new(Manhattan),
            frame,
            frame_id: "map".into(),
        };
        let at = |x: f64, y: f64| Pose {
            position: Point { x, y, z: 0.0 },
            orientation: Quaternion::identity(),
        };
        let placed = Placed {
            start: at(0.5, 0.5),
            goals: vec![at(3.5, 0.5), at(3.5, 2.5)],
            tolerance: 1.0,
            final_approach: false,
            empty_when_unreachable: false,
        };
        let planned = solve("test", &map, &placed, false, false).unwrap();
        let cells: Vec<(f64, f64)> = planned
            .poses
            .iter()
            .map(|p| (p.position.x, p.position.y))
            .collect();
        // (0, 0) is blocked: the start moves to the nearest open cell, (1, 0) before (0, 1).
        let want = [(1.5, 0.5), (2.5, 0.5), (3.5, 0.5), (3.5, 1.5), (3.5, 2.5)];
        assert_eq!(cells, want);
        assert_eq!(planned.backend, "cpu");
        // Without a tolerance the blocked start is the planner's to refuse; Manhattan plans
        // from it anyway, so the path starts there.
        let exact = Placed {
            tolerance: 0.0,
            ..placed
        };
        let planned = solve("test", &map, &exact, false, false).unwrap();
        assert_eq!(planned.poses[0].position.x, 0.5);
    }

    /// Any finite tolerance searches at most the whole map: 3.4e38 m finds the nearest open
    /// cell as 1e6 m does.
    #[test]
    fn a_huge_tolerance_searches_the_whole_map() {
        let frame = CellFrame {
            origin: Pose::default(),
            resolution: 0.05,
            width: 40,
            height: 30,
        };
        let goal = Point {
            x: 0.125,
            y: 0.125,
            z: 0.0,
        };
        let open = |c: (i64, i64)| c == (37, 28);
        for tol in [1e6, 3.4e38, f64::MAX] {
            let found = nearest(&frame, &goal, (2, 2), tol, open);
            assert_eq!(found.map(|f| f.0), Some((37, 28)), "tolerance {tol}");
        }
        assert_eq!(nearest(&frame, &goal, (2, 2), 0.5, open), None);
    }

    /// The eight step headings stand for the atan2 of each step between cell centres, in a
    /// turned frame too, and a step that is not to a neighbour (two legs joined at a goal the
    /// tolerance moved) still faces the next cell.
    #[test]
    fn headings_face_the_next_cell_in_a_turned_frame() {
        let (yaw, res) = (0.7f64, 0.05);
        let frame = CellFrame {
            origin: Pose {
                position: Point {
                    x: -3.0,
                    y: 2.0,
                    z: 0.0,
                },
                orientation: yaw_quaternion(yaw),
            },
            resolution: res,
            width: 100,
            height: 100,
        };
        let mut cells = vec![(50u32, 50u32)];
        for (dx, dy) in [
            (1, 0),
            (1, 1),
            (0, 1),
            (-1, 1),
            (-1, 0),
            (-1, -1),
            (0, -1),
            (1, -1),
        ] {
            let &(x, y) = cells.last().unwrap();
            cells.push(((x as i64 + dx) as u32, (y as i64 + dy) as u32));
        }
        cells.push((60, 53));
        let goal = yaw_quaternion(-2.0);
        for final_approach in [false, true] {
            let poses = oriented(&frame, &cells, goal.clone(), final_approach);
            assert_eq!(poses.len(), cells.len());
            for (i, pose) in poses.iter().enumerate() {
                let c = frame.centre(cells[i].0, cells[i].1);
                assert_eq!(
                    (pose.position.x, pose.position.y),
                    (c.x, c.y),
                    "pose {i}'s position"
                );
                let (a, b) = match i + 1 < cells.len() {
                    true => (i, i + 1),
                    false if final_approach => (i - 1, i),
                    false => {
                        assert_eq!(pose.orientation, goal, "the last pose takes the goal's");
                        continue;
                    }
                };
                let (p, q) = (
                    frame.centre(cells[a].0, cells[a].1),
                    frame.centre(cells[b].0, cells[b].1),
                );
                let want = yaw_quaternion((q.y - p.y).atan2(q.x - p.x));
                let got = &pose.orientation;
                assert!(
                    (got.z - want.z).abs() < 1e-12 && (got.w - want.w).abs() < 1e-12,
                    "pose {i} faces {got:?}, the step's atan2 {want:?}"
                );
            }
        }
    }
}
