//! In costmap mode lee_planner stands in for NavFn, so its ends follow NavFn's rules
//! (nav2_navfn_planner's createPlan and makePlan): a start the costs block is planned from, as
//! NavFn clears the robot's cell (NO_VALID_PATH when no move leads out of it), and a goal is
//! GOAL_OCCUPIED only when it is lethal with no tolerance; a blocked goal with nothing reachable
//! within the tolerance is NO_VALID_PATH.

use ros2_client::action_msgs::GoalStatusEnum;

use crate::common;
use crate::nav2_planner::{beside_planner, centre, goal_of, map, run_goal, JazzyToPose};

/// The map's solid block spans cells x 5..=7, y 5..=9: (6, 7) is lethal with lethal
/// neighbours all round, (5, 7) is lethal with free cells to its west.
const BLOCK_CENTRE: (f64, f64) = (3.25, 3.75);
const BLOCK_EDGE: (f64, f64) = (2.75, 3.75);
const OPEN: (f64, f64) = (0.75, 0.75);

fn params(tolerance: f64) -> String {
    // robot_radius below half a cell: no cell is inscribed, only obstacles block.
    format!(
        "lee_planner:\n  ros__parameters:\n    cost_model: costmap\n    robot_radius: 0.2\n    \
         inflation_radius: 1.0\n    tolerance: {tolerance}\n"
    )
}

/// Runs `check` against a planner on the test map with `tolerance`.
fn with_planner(tolerance: f64, check: impl AsyncFnOnce(&JazzyToPose)) {
    let (server, client_rt, mut peer, map_pub) =
        beside_planner(&params(tolerance), "navfn_ends_peer");
    let to_pose: JazzyToPose = peer
        .action_client("/compute_path_to_pose", "nav2_msgs", "ComputePathToPose")
        .unwrap();
    smol::block_on(async {
        map_pub.async_publish(map()).await.unwrap();
        // The map is in once an open pair plans.
        let mut planned = false;
        for _ in 0..100 {
            let (st, _) = run_goal(&to_pose, goal_of(OPEN, (9.75, 0.25), true)).await;
            if st == GoalStatusEnum::Succeeded {
                planned = true;
                break;
            }
            smol::Timer::after(std::time::Duration::from_millis(100)).await;
        }
        assert!(planned, "no plan on the test map");
        check(&to_pose).await;
    });
    common::assert_device_did_the_work(&server, &["lee_planner"]);
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}

async fn aborted_with(c: &JazzyToPose, start: (f64, f64), goal: (f64, f64), code: u16) {
    let (st, r) = run_goal(c, goal_of(start, goal, true)).await;
    assert_eq!(
        (st, r.error_code),
        (GoalStatusEnum::Aborted, code),
        "{start:?} -> {goal:?}: {}",
        r.error_msg
    );
    assert!(r.path.poses.is_empty());
}

/// A path from the lethal edge of the block: it starts at that cell's centre and leaves it
/// at once, never to enter a lethal cell again.
async fn planned_from_the_block_edge(c: &JazzyToPose) {
    let (st, r) = run_goal(c, goal_of(BLOCK_EDGE, OPEN, true)).await;
    assert_eq!(st, GoalStatusEnum::Succeeded, "{}", r.error_msg);
    let first = &r.path.poses[0].pose.position;
    assert_eq!((first.x, first.y), centre((5, 7)));
    let last = &r.path.poses.last().unwrap().pose.position;
    assert_eq!((last.x, last.y), centre((1, 1)));
    for p in &r.path.poses[1..] {
        let (x, y) = (p.pose.position.x / 0.5, p.pose.position.y / 0.5);
        assert!(
            !((5.0..8.0).contains(&x) && (5.0..10.0).contains(&y)),
            "the path re-enters the block at ({x}, {y}) cells"
        );
    }
}

#[test]
fn costmap_mode_ends_follow_navfn_with_no_tolerance() {
    with_planner(0.0, async |c| {
        planned_from_the_block_edge(c).await;
        // Boxed in by lethal cells: no move leads out.
        aborted_with(c, BLOCK_CENTRE, OPEN, 208).await;
        // A lethal goal with no tolerance.
        aborted_with(c, OPEN, BLOCK_CENTRE, 206).await;
        // Free but closed off (the pocket's inside).
        aborted_with(c, OPEN, (8.25, 1.25), 208).await;
    });
}

#[test]
fn costmap_mode_ends_follow_navfn_with_a_tolerance() {
    with_planner(0.5, async |c| {
        planned_from_the_block_edge(c).await;
        // A lethal goal with nothing reachable within 0.5 m: NavFn finds no point to plan to.
        aborted_with(c, OPEN, BLOCK_CENTRE, 208).await;
        // Within 0.5 m of the block's edge lies a free cell: planned to it.
        let (st, r) = run_goal(c, goal_of(OPEN, BLOCK_EDGE, true)).await;
        assert_eq!(st, GoalStatusEnum::Succeeded, "{}", r.error_msg);
        let last = &r.path.poses.last().unwrap().pose.position;
        assert_eq!((last.x, last.y), centre((4, 7)));
    });
}
