//! lee_planner as nav2's planner_server over DDS: the robot's pose from /tf and /tf_static
//! (GetPlan with an empty start frame, goal_pose alone, a goal in another frame, a stale
//! transform), and the actions compute_path_to_pose / compute_path_through_poses with a path
//! checked against the CPU planner and one answer for every error code (Jazzy's results), and
//! Humble's results.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use gpu_planning::compute::Backend;
use gpu_planning::lee::{Config, Connectivity, Grid, Planner};
use gpu_planning::ros::msg::builtin_interfaces::Time;
use gpu_planning::ros::msg::geometry_msgs::{
    Point, Pose, PoseStamped, Quaternion, Transform, TransformStamped, Vector3,
};
use gpu_planning::ros::msg::nav2_msgs::{
    humble, jazzy, ComputePathThroughPosesGoal, ComputePathToPoseGoal, EmptyFeedback,
};
use gpu_planning::ros::msg::nav_msgs::{GetPlan, GetPlanRequest, MapMetaData, OccupancyGrid, Path};
use gpu_planning::ros::msg::std_msgs::Header;
use gpu_planning::ros::msg::tf2_msgs::TFMessage;
use gpu_planning::ros::{qos, NodeContext, ParamsFile, RosArgs, RosRuntime};
use ros2_client::action::ActionClient;
use ros2_client::action_msgs::{CancelGoalResponseEnum, GoalStatusEnum};
use ros2_client::{Message, Publisher};

use crate::bad_input::{call, log_tail, logged, runtimes};
use crate::common;

const RES: f64 = 0.5;
const W: u32 = 20;
const H: u32 = 12;

/// 20 x 12 cells of 0.5 m: a closed pocket (walls x 15..=18, y 1..=4; inside unreachable) and
/// a solid block (x 5..=7, y 5..=9).
fn cells() -> Vec<i8> {
    let mut d = vec![0i8; (W * H) as usize];
    for y in 0..H {
        for x in 0..W {
            let pocket_wall = (15..=18).contains(&x)
                && (1..=4).contains(&y)
                && (x == 15 || x == 18 || y == 1 || y == 4);
            let block = (5..=7).contains(&x) && (5..=9).contains(&y);
            if pocket_wall || block {
                d[(y * W + x) as usize] = 100;
            }
        }
    }
    d
}

pub(crate) fn map() -> OccupancyGrid {
    OccupancyGrid {
        header: Header {
            stamp: Time::default(),
            frame_id: "map".into(),
        },
        info: MapMetaData {
            resolution: RES as f32,
            width: W,
            height: H,
            origin: Pose {
                position: Point::default(),
                orientation: Quaternion::identity(),
            },
            ..Default::default()
        },
        data: cells(),
    }
}

/// The CPU planner's cells from `s` to `g`.
pub(crate) fn expected(s: (i64, i64), g: (i64, i64)) -> Vec<(u32, u32)> {
    let grid = Grid::from_occupancy(W, H, &cells(), 65, false, Connectivity::Four).unwrap();
    let p = Planner::new(&Backend::Cpu, grid, Config::default()).unwrap();
    let plan = p.plan(s, g, false).unwrap();
    assert!(plan.reachable);
    plan.path
}

pub(crate) fn centre(c: (u32, u32)) -> (f64, f64) {
    ((c.0 as f64 + 0.5) * RES, (c.1 as f64 + 0.5) * RES)
}

pub(crate) fn positions(p: &Path) -> Vec<(f64, f64)> {
    p.poses
        .iter()
        .map(|p| (p.pose.position.x, p.pose.position.y))
        .collect()
}

fn yaw(q: &Quaternion) -> f64 {
    (2.0 * (q.w * q.z + q.x * q.y)).atan2(1.0 - 2.0 * (q.y * q.y + q.z * q.z))
}

fn pose(x: f64, y: f64, frame: &str, yaw: f64) -> PoseStamped {
    PoseStamped {
        header: Header {
            frame_id: frame.into(),
            ..Default::default()
        },
        pose: Pose {
            position: Point { x, y, z: 0.0 },
            orientation: Quaternion {
                x: 0.0,
                y: 0.0,
                z: (yaw / 2.0).sin(),
                w: (yaw / 2.0).cos(),
            },
        },
    }
}

fn transform(parent: &str, child: &str, stamp: Time, x: f64, y: f64) -> TransformStamped {
    TransformStamped {
        header: Header {
            stamp,
            frame_id: parent.into(),
        },
        child_frame_id: child.into(),
        transform: Transform {
            translation: Vector3 { x, y, z: 0.0 },
            rotation: Quaternion::identity(),
        },
    }
}

/// Every pose but the last faces the next one; the last has `last_yaw`.
fn assert_oriented(p: &Path, last_yaw: f64) {
    let n = p.poses.len();
    for i in 0..n {
        let a = &p.poses[i].pose;
        let want = if i + 1 < n {
            let b = &p.poses[i + 1].pose.position;
            (b.y - a.position.y).atan2(b.x - a.position.x)
        } else {
            last_yaw
        };
        assert!(
            (yaw(&a.orientation) - want).abs() < 1e-9,
            "pose {i} of {n}: yaw {} not {want}",
            yaw(&a.orientation)
        );
    }
}

/// The node's parameters where a goal must be planned to exactly (no tolerance).
const EXACT_GOALS: &str = "lee_planner:\n  ros__parameters:\n    tolerance: 0.0\n";

/// The planner node started from `params` and a peer named `name` beside it, on a domain of
/// their own, both runtimes' executors running: the node's runtime, the peer's, the peer and its
/// `/map` publisher.
pub(crate) fn beside_planner(
    params: &str,
    name: &str,
) -> (
    RosRuntime,
    RosRuntime,
    NodeContext,
    Publisher<OccupancyGrid>,
) {
    let (server, client_rt) = runtimes(params);
    // Detached: each runs its runtime's executor until the runtime shuts down.
    let _ = common::run_in_background(&server);
    let _ = common::run_in_background(&client_rt);
    let mut peer = NodeContext::new(&client_rt, name).unwrap();
    let map_pub = peer.publisher::<OccupancyGrid>("/map", qos::map()).unwrap();
    (server, client_rt, peer, map_pub)
}

#[test]
fn robot_pose_from_tf_starts_get_plan_and_goal_pose_and_stale_tf_is_named() {
    let (server, client_rt, mut peer, map_pub) = beside_planner(EXACT_GOALS, "tf_peer");
    let static_pub = peer
        .publisher::<TFMessage>("/tf_static", qos::tf_static())
        .unwrap();
    let tf_pub = Arc::new(peer.publisher::<TFMessage>("/tf", qos::tf()).unwrap());
    let goal_pub = peer
        .publisher::<PoseStamped>("/goal_pose", qos::map())
        .unwrap();
    let path_sub = peer
        .subscription::<Path>("/lee_planner/path", qos::result())
        .unwrap();
    let client = peer.client::<GetPlan>("/lee_planner/get_plan").unwrap();
    // map -> odom static (1.0, 0.5); odom -> base_link moving at (1.0, 0.75) with fresh
    // stamps: the robot at (2.0, 1.25) in map, cell (4, 2).
    let live = Arc::new(AtomicBool::new(true));
    let ticker = {
        let (tf_pub, live) = (tf_pub.clone(), live.clone());
        std::thread::spawn(move || {
            while live.load(Ordering::Relaxed) {
                let t = transform("odom", "base_link", Time::now(), 1.0, 0.75);
                let _ = tf_pub.publish(TFMessage {
                    transforms: vec![t],
                });
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    smol::block_on(async {
        common::settle_discovery("service", client.wait_for_service(peer.node())).await;
        map_pub.async_publish(map()).await.unwrap();
        let statics = TFMessage {
            transforms: vec![transform("map", "odom", Time::default(), 1.0, 0.5)],
        };
        static_pub.async_publish(statics).await.unwrap();
        // A goal in odom: (5.0, 3.0) there is (6.0, 3.5) in map, cell (12, 7).
        let want: Vec<(f64, f64)> = expected((4, 2), (12, 7)).into_iter().map(centre).collect();
        let req = GetPlanRequest {
            start: pose(0.0, 0.0, "", 0.0),
            goal: pose(5.0, 3.0, "odom", 1.0),
            tolerance: 0.0,
        };
        let mut got = Path::default();
        for _ in 0..100 {
            got = call(&client, req.clone()).await.plan;
            if !got.poses.is_empty() {
                break;
            }
            smol::Timer::after(Duration::from_millis(100)).await;
        }
        assert_eq!(positions(&got), want, "GetPlan from the robot's pose");
        assert_oriented(&got, 1.0);

        // goal_pose alone (no start_pose ever sent): from the robot's pose.
        let g = pose(9.75, 0.25, "map", -0.5);
        let want: Vec<(f64, f64)> = expected((4, 2), (19, 0)).into_iter().map(centre).collect();
        let s = path_sub.async_stream();
        futures::pin_mut!(s);
        let mut seen = false;
        for _ in 0..50 {
            goal_pub.async_publish(g.clone()).await.unwrap();
            let until = Instant::now() + Duration::from_millis(300);
            loop {
                let next = async { s.next().await.and_then(|r| r.ok()) };
                let timeout = async {
                    smol::Timer::at(until).await;
                    None
                };
                match smol::future::or(next, timeout).await {
                    Some((p, _)) if positions(&p) == want => {
                        assert_oriented(&p, -0.5);
                        seen = true;
                        break;
                    }
                    Some(_) => continue,
                    None => break,
                }
            }
            if seen {
                break;
            }
        }
        assert!(
            seen,
            "goal_pose alone never planned from the robot's pose: {}",
            crate::bad_input::log_tail(30)
        );

        // The robot's transform stops: after transform_tolerance (0.3 s) it is stale.
        live.store(false, Ordering::Relaxed);
        smol::Timer::after(Duration::from_millis(800)).await;
        assert!(call(&client, req.clone()).await.plan.poses.is_empty());
        let line = logged(&[
            "robot pose",
            "'map' -> 'base_link'",
            "s old, above transform_tolerance 0.3 s",
        ])
        .await;
        assert!(line.contains("get_plan"), "{line}");
        // An unknown frame is named.
        let mut odd = req.clone();
        odd.start = pose(1.0, 1.0, "gripper", 0.0);
        assert!(call(&client, odd).await.plan.poses.is_empty());
        logged(&["start: no transform from 'gripper' to 'map': frame 'gripper' unknown"]).await;
    });
    let _ = ticker.join();
    common::assert_device_did_the_work(&server, &["lee_planner"]);
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}

/// A goal_pose that comes before the first map (a bag's map still being built when its goal
/// arrives) waits for the map and is planned on it, not refused and lost.
#[test]
fn goal_pose_before_the_first_map_waits_for_it() {
    let (server, client_rt, mut peer, map_pub) = beside_planner(EXACT_GOALS, "early_goal_peer");
    let start_pub = peer
        .publisher::<PoseStamped>("/start_pose", qos::map())
        .unwrap();
    let goal_pub = peer
        .publisher::<PoseStamped>("/goal_pose", qos::map())
        .unwrap();
    let path_sub = peer
        .subscription::<Path>("/lee_planner/path", qos::result())
        .unwrap();
    // Cells (1, 1) to (13, 9); the goal's x, y name it in the node's log line.
    let (start, goal) = (pose(0.75, 0.75, "map", 0.0), pose(6.75, 4.75, "map", 0.25));
    let want: Vec<(f64, f64)> = expected((1, 1), (13, 9)).into_iter().map(centre).collect();
    smol::block_on(async {
        // Until one goal is known to wait (sent before discovery settles, one is lost; before
        // the start, one is refused).
        let waiting = "goal_pose (6.75, 4.75) waits for the first map";
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            start_pub.async_publish(start.clone()).await.unwrap();
            smol::Timer::after(Duration::from_millis(50)).await;
            goal_pub.async_publish(goal.clone()).await.unwrap();
            smol::Timer::after(Duration::from_millis(100)).await;
            let seen = {
                let text = crate::bad_input::logs()
                    .lock()
                    .unwrap_or_else(|p| p.into_inner());
                String::from_utf8_lossy(&text).contains(waiting)
            };
            if seen {
                break;
            }
            assert!(
                Instant::now() < until,
                "no goal waited for the map within 30 s: {}",
                log_tail(30)
            );
        }
        // The start is read when the goal is planned: sent on, in case the goal's writer was
        // matched before the start's.
        for _ in 0..10 {
            start_pub.async_publish(start.clone()).await.unwrap();
            smol::Timer::after(Duration::from_millis(100)).await;
        }
        let s = path_sub.async_stream();
        futures::pin_mut!(s);
        map_pub.async_publish(map()).await.unwrap();
        let next = async { s.next().await.and_then(|r| r.ok()) };
        let timeout = async {
            smol::Timer::after(Duration::from_secs(20)).await;
            None
        };
        let Some((p, _)) = smol::future::or(next, timeout).await else {
            panic!("the waiting goal was never planned: {}", log_tail(30));
        };
        assert_eq!(positions(&p), want, "the waiting goal's path");
        assert_oriented(&p, 0.25);
    });
    common::assert_device_did_the_work(&server, &["lee_planner"]);
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}

/// Sends `goal` until the server accepts it (a goal sent before discovery settles is lost),
/// then asks for its result.
pub(crate) async fn run_goal<G, R>(
    c: &ActionClient<G, R, EmptyFeedback>,
    goal: G,
) -> (GoalStatusEnum, R)
where
    G: Message + Clone + 'static,
    R: Message + Clone + 'static,
{
    for _ in 0..30 {
        let send = futures::future::select(
            Box::pin(c.async_send_goal(goal.clone())),
            Box::pin(smol::Timer::after(Duration::from_secs(2))),
        )
        .await;
        let futures::future::Either::Left((Ok((id, accepted)), _)) = send else {
            continue;
        };
        assert!(accepted.accepted, "goal rejected");
        for _ in 0..10 {
            let result = futures::future::select(
                Box::pin(c.async_request_result(id)),
                Box::pin(smol::Timer::after(Duration::from_secs(3))),
            )
            .await;
            if let futures::future::Either::Left((Ok(r), _)) = result {
                return r;
            }
        }
        panic!("no result for an accepted goal within 30 s");
    }
    panic!("goal not accepted within 60 s; log:\n{}", log_tail(40));
}

/// Runs `goal` until it succeeds (its input may still be in flight): the first result, or
/// None after 100 tries 100 ms apart.
async fn first_success<G, R>(c: &ActionClient<G, R, EmptyFeedback>, goal: G) -> Option<R>
where
    G: Message + Clone + 'static,
    R: Message + Clone + 'static,
{
    for _ in 0..100 {
        let (st, r) = run_goal(c, goal.clone()).await;
        if st == GoalStatusEnum::Succeeded {
            return Some(r);
        }
        smol::Timer::after(Duration::from_millis(100)).await;
    }
    None
}

pub(crate) fn goal_of(
    start: (f64, f64),
    goal: (f64, f64),
    use_start: bool,
) -> ComputePathToPoseGoal {
    ComputePathToPoseGoal {
        goal: pose(goal.0, goal.1, "map", 0.25),
        start: pose(start.0, start.1, "map", 0.0),
        planner_id: String::new(),
        use_start,
    }
}

pub(crate) type JazzyToPose =
    ActionClient<ComputePathToPoseGoal, jazzy::ComputePathToPoseResult, EmptyFeedback>;

#[test]
fn compute_path_actions_answer_paths_and_every_error_code() {
    let (server, client_rt, mut peer, map_pub) = beside_planner(
        "lee_planner:\n  ros__parameters:\n    tolerance: 0.0\n    max_viapoints: 2\n",
        "bt_navigator_stand_in",
    );
    let to_pose: JazzyToPose = peer
        .action_client("/compute_path_to_pose", "nav2_msgs", "ComputePathToPose")
        .unwrap();
    let through: ActionClient<
        ComputePathThroughPosesGoal,
        jazzy::ComputePathThroughPosesResult,
        EmptyFeedback,
    > = peer
        .action_client(
            "/compute_path_through_poses",
            "nav2_msgs",
            "ComputePathThroughPoses",
        )
        .unwrap();
    smol::block_on(async {
        // Before any map: UNKNOWN (200), aborted, with the reason.
        let (st, r) = run_goal(&to_pose, to_pose_goal_ok()).await;
        assert_eq!(
            (st, r.error_code),
            (GoalStatusEnum::Aborted, 200),
            "{}",
            r.error_msg
        );
        assert!(
            r.error_msg.contains("no map received yet"),
            "{}",
            r.error_msg
        );

        map_pub.async_publish(map()).await.unwrap();
        let ok = first_success(&to_pose, to_pose_goal_ok()).await;
        let r = ok.expect("no path once the map was sent");
        assert_eq!(r.error_code, 0);
        assert_eq!(r.error_msg, "");
        let want: Vec<(f64, f64)> = expected((1, 1), (12, 10)).into_iter().map(centre).collect();
        assert_eq!(positions(&r.path), want);
        assert_oriented(&r.path, 0.25);
        assert_eq!(r.path.header.frame_id, "map");

        // One goal for each error code ComputePathToPose has.
        let cases = [
            (goal_of((-3.0, 1.0), (6.25, 5.25), true), 203, "start"),
            (goal_of((0.75, 0.75), (6.25, 50.0), true), 204, "goal"),
            (
                goal_of((3.25, 3.25), (6.25, 5.25), true),
                205,
                "start: (6, 6)",
            ),
            (
                goal_of((0.75, 0.75), (3.25, 3.25), true),
                206,
                "goal: (6, 6)",
            ),
            (goal_of((0.75, 0.75), (8.25, 1.25), true), 208, "no path"),
            (goal_of((0.0, 0.0), (6.25, 5.25), false), 202, "robot pose"),
        ];
        for (goal, code, text) in cases {
            let (st, r) = run_goal(&to_pose, goal).await;
            assert_eq!(st, GoalStatusEnum::Aborted, "code {code}");
            assert_eq!(r.error_code, code, "{}", r.error_msg);
            assert!(r.error_msg.contains(text), "{code}: {}", r.error_msg);
            assert!(r.path.poses.is_empty());
        }

        // Through two goals, in order; none is NO_VIAPOINTS_GIVEN (309).
        let via = ComputePathThroughPosesGoal {
            goals: vec![pose(9.75, 0.25, "map", 0.0), pose(0.75, 5.75, "map", 2.0)],
            start: pose(0.75, 0.75, "map", 0.0),
            planner_id: String::new(),
            use_start: true,
        };
        let (st, r) = run_goal(&through, via.clone()).await;
        assert_eq!(
            (st, r.error_code),
            (GoalStatusEnum::Succeeded, 0),
            "{}",
            r.error_msg
        );
        let mut cells = expected((1, 1), (19, 0));
        cells.extend(expected((19, 0), (1, 11)).into_iter().skip(1));
        let want: Vec<(f64, f64)> = cells.into_iter().map(centre).collect();
        assert_eq!(positions(&r.path), want);
        assert_oriented(&r.path, 2.0);
        // More poses than max_viapoints: rejected, so neither the path nor a kept result
        // grows with what a client sends.
        let three = ComputePathThroughPosesGoal {
            goals: vec![via.goals[0].clone(); 3],
            ..via.clone()
        };
        let (_, accepted) = through.async_send_goal(three).await.unwrap();
        assert!(
            !accepted.accepted,
            "a goal of 3 poses above max_viapoints 2 was accepted"
        );
        logged(&["goals: 3 poses is above max_viapoints (2)"]).await;
        let none = ComputePathThroughPosesGoal {
            goals: vec![],
            ..via
        };
        let (st, r) = run_goal(&through, none).await;
        assert_eq!(
            (st, r.error_code),
            (GoalStatusEnum::Aborted, 309),
            "{}",
            r.error_msg
        );
    });
    common::assert_device_did_the_work(&server, &["lee_planner"]);
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}

fn to_pose_goal_ok() -> ComputePathToPoseGoal {
    goal_of((0.75, 0.75), (6.25, 5.25), true)
}

/// TIMEOUT (207): a plan past `request_timeout_s` is stopped and answered as nav2 does.
#[test]
fn compute_path_to_pose_past_its_deadline_is_timeout() {
    let params = "lee_planner:\n  ros__parameters:\n    request_timeout_s: 0.000001\n";
    let (server, client_rt, mut peer, map_pub) = beside_planner(params, "deadline_peer");
    let to_pose: JazzyToPose = peer
        .action_client("/compute_path_to_pose", "nav2_msgs", "ComputePathToPose")
        .unwrap();
    smol::block_on(async {
        map_pub.async_publish(map()).await.unwrap();
        let mut last = None;
        for _ in 0..100 {
            let (st, r) = run_goal(&to_pose, to_pose_goal_ok()).await;
            if r.error_code != 200 {
                last = Some((st, r));
                break;
            }
            smol::Timer::after(Duration::from_millis(100)).await;
        }
        let (st, r) = last.expect("the map never arrived");
        assert_eq!(
            (st, r.error_code),
            (GoalStatusEnum::Aborted, 207),
            "{}",
            r.error_msg
        );
        assert!(r.error_msg.contains("request_timeout_s"), "{}", r.error_msg);
    });
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}

/// The actions answer every RMW's clients on the default `service_mapping`: a client that
/// writes rmw_cyclonedds's request header (ros2-client's `cyclone` mapping) gets its plan, and
/// its cancel requests are answered as rcl_action's policy says.
#[test]
fn compute_path_actions_answer_cyclone_clients_and_cancel_requests() {
    let (server, _) = runtimes(EXACT_GOALS);
    let client_rt = RosRuntime::new(
        RosArgs::default(),
        ParamsFile::parse("cyclone_peer:\n  ros__parameters:\n    service_mapping: cyclone\n")
            .unwrap(),
        Some(server.domain_id()),
    )
    .unwrap();
    let _a = common::run_in_background(&server);
    let _b = common::run_in_background(&client_rt);
    let mut peer = NodeContext::new(&client_rt, "cyclone_peer").unwrap();
    assert_eq!(peer.service_mapping(), ros2_client::ServiceMapping::Cyclone);
    let map_pub = peer.publisher::<OccupancyGrid>("/map", qos::map()).unwrap();
    let to_pose: JazzyToPose = peer
        .action_client("/compute_path_to_pose", "nav2_msgs", "ComputePathToPose")
        .unwrap();
    smol::block_on(async {
        map_pub.async_publish(map()).await.unwrap();
        let ok = first_success(&to_pose, to_pose_goal_ok()).await;
        let r = ok.expect("no path for a client with rmw_cyclonedds's header");
        let want: Vec<(f64, f64)> = expected((1, 1), (12, 10)).into_iter().map(centre).collect();
        assert_eq!(positions(&r.path), want);

        // Cancel: an unknown goal, then a finished one.
        let unknown = ros2_client::action_msgs::GoalId::new_random();
        let c = to_pose
            .async_cancel_goal(unknown, ros2_client::builtin_interfaces::Time::ZERO)
            .await
            .unwrap();
        assert_eq!(c.return_code, CancelGoalResponseEnum::UnknownGoal);
        let (id, accepted) = to_pose.async_send_goal(to_pose_goal_ok()).await.unwrap();
        assert!(accepted.accepted);
        let (st, _) = to_pose.async_request_result(id).await.unwrap();
        assert_eq!(st, GoalStatusEnum::Succeeded);
        let c = to_pose
            .async_cancel_goal(id, ros2_client::builtin_interfaces::Time::ZERO)
            .await
            .unwrap();
        assert_eq!(c.return_code, CancelGoalResponseEnum::GoalTerminated);
        assert!(c.goals_canceling.is_empty());
        // A goal sent again (its reply lost) is acknowledged again, with its first stamp,
        // and not run again: its result stays the first one's.
        let again = to_pose
            .goal_client()
            .async_call_service(ros2_client::action::SendGoalRequest {
                goal_id: id,
                goal: to_pose_goal_ok(),
            })
            .await
            .unwrap();
        assert!(again.accepted);
        assert_eq!(again.stamp, accepted.stamp);
        let (st, _) = to_pose.async_request_result(id).await.unwrap();
        assert_eq!(st, GoalStatusEnum::Succeeded);

        // Two goals on a large map, the second canceled at once: it is still queued behind
        // the first (then it ends CANCELED without running), runs, or has run
        // (GOAL_TERMINATED); the cancel response, its end and the status topic agree.
        map_pub.async_publish(open_map(2500)).await.unwrap();
        let far = goal_of((0.25, 0.25), (2499.0 * RES, 2499.0 * RES), true);
        let arrived = first_success(&to_pose, far.clone()).await;
        assert!(arrived.is_some(), "no path on the large map");
        let mut sent = Vec::new();
        for _ in 0..2 {
            let (id, accepted) = to_pose.async_send_goal(far.clone()).await.unwrap();
            assert!(accepted.accepted);
            sent.push(id);
        }
        let c = to_pose
            .async_cancel_goal(sent[1], ros2_client::builtin_interfaces::Time::ZERO)
            .await
            .unwrap();
        let (st, _) = to_pose.async_request_result(sent[1]).await.unwrap();
        match c.return_code {
            CancelGoalResponseEnum::None => {
                assert_eq!(c.goals_canceling.len(), 1);
                assert_eq!(c.goals_canceling[0].goal_id, sent[1]);
                // Canceled in the queue, or stopped while it ran: a goal told "canceling"
                // ends CANCELED, never with a path.
                assert_eq!(st, GoalStatusEnum::Canceled);
            }
            CancelGoalResponseEnum::GoalTerminated => assert_eq!(st, GoalStatusEnum::Succeeded),
            other => panic!("cancel of an accepted goal answered {other:?}"),
        }
        // The second goal preempted the first (as nav2's action server lets it), unless the
        // first had ended before it came: ABORTED with no path, or SUCCEEDED.
        let (first, r) = to_pose.async_request_result(sent[0]).await.unwrap();
        match first {
            GoalStatusEnum::Aborted => assert!(r.path.poses.is_empty()),
            GoalStatusEnum::Succeeded => assert!(!r.path.poses.is_empty()),
            other => panic!("the first of two goals ended {other:?}"),
        }
        // A running goal canceled: it stops at once and ends CANCELED (it used to run to
        // its end and succeed, its path published), unless it had ended already.
        let (running, accepted) = to_pose.async_send_goal(far.clone()).await.unwrap();
        assert!(accepted.accepted);
        smol::Timer::after(Duration::from_millis(20)).await;
        let c = to_pose
            .async_cancel_goal(running, ros2_client::builtin_interfaces::Time::ZERO)
            .await
            .unwrap();
        let (ran, r) = to_pose.async_request_result(running).await.unwrap();
        match c.return_code {
            CancelGoalResponseEnum::None => {
                assert_eq!(ran, GoalStatusEnum::Canceled);
                assert!(r.path.poses.is_empty());
            }
            CancelGoalResponseEnum::GoalTerminated => assert_eq!(ran, GoalStatusEnum::Succeeded),
            other => panic!("cancel of a running goal answered {other:?}"),
        }
        // The status topic lists every goal the server keeps, the canceled one as such.
        let want = st;
        let mut seen = None;
        for _ in 0..100 {
            while let Ok(Some(s)) = to_pose.receive_status() {
                seen = s
                    .status_list
                    .iter()
                    .find(|g| g.goal_info.goal_id == sent[1])
                    .map(|g| g.status);
            }
            if seen == Some(want) {
                break;
            }
            smol::Timer::after(Duration::from_millis(50)).await;
        }
        assert_eq!(
            seen,
            Some(want),
            "the second goal's state on _action/status"
        );

        // Replanning as bt_navigator does: goal after goal, each to a new goal pose. Every
        // goal but the last is preempted (ABORTED, no path) unless it ended first; the last
        // succeeds with its path.
        let mut replans = Vec::new();
        for k in 0..4 {
            let g = goal_of((0.25, 0.25), ((2499 - k) as f64 * RES, 2499.0 * RES), true);
            let (id, accepted) = to_pose.async_send_goal(g).await.unwrap();
            assert!(accepted.accepted, "replan {k} refused");
            replans.push(id);
        }
        let mut preempted = 0;
        for (k, id) in replans.iter().enumerate() {
            let (st, r) = to_pose.async_request_result(*id).await.unwrap();
            match st {
                GoalStatusEnum::Aborted if k < 3 => {
                    assert!(r.path.poses.is_empty(), "a preempted goal has no path");
                    preempted += 1;
                }
                GoalStatusEnum::Succeeded => assert!(!r.path.poses.is_empty()),
                other => panic!("replan {k} ended {other:?}"),
            }
        }
        eprintln!("replans: {preempted} of 3 preempted");
    });
    common::assert_device_did_the_work(&server, &["lee_planner"]);
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}

/// `n` x `n` free cells of [`RES`].
fn open_map(n: u32) -> OccupancyGrid {
    let mut m = map();
    m.info.width = n;
    m.info.height = n;
    m.data = vec![0; (n * n) as usize];
    m
}

/// `ros_distro: humble`: Humble's results (no error fields) on the wire. The distribution is
/// process-wide, so the planner runs in a process of its own.
#[test]
fn humble_results_carry_the_path_and_abort_without_error_fields() {
    let domain = common::unique_domain();
    let _server = common::NodesProcess::start(domain, "lee_planner", &["-p", "ros_distro:=humble"]);
    let client_rt =
        RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let _b = common::run_in_background(&client_rt);
    let mut peer = NodeContext::new(&client_rt, "humble_peer").unwrap();
    let map_pub = peer.publisher::<OccupancyGrid>("/map", qos::map()).unwrap();
    let to_pose: ActionClient<
        ComputePathToPoseGoal,
        humble::ComputePathToPoseResult,
        EmptyFeedback,
    > = peer
        .action_client("/compute_path_to_pose", "nav2_msgs", "ComputePathToPose")
        .unwrap();
    let jazzy_client: ActionClient<
        ComputePathToPoseGoal,
        jazzy::ComputePathToPoseResult,
        EmptyFeedback,
    > = peer
        .action_client("/compute_path_to_pose", "nav2_msgs", "ComputePathToPose")
        .unwrap();
    smol::block_on(async {
        map_pub.async_publish(map()).await.unwrap();
        let ok = first_success(&to_pose, to_pose_goal_ok()).await;
        let r = ok.expect("no path on Humble's results");
        let want: Vec<(f64, f64)> = expected((1, 1), (12, 10)).into_iter().map(centre).collect();
        assert_eq!(positions(&r.path), want);
        let (st, r) = run_goal(&to_pose, goal_of((0.75, 0.75), (6.25, 50.0), true)).await;
        assert_eq!(st, GoalStatusEnum::Aborted);
        assert!(r.path.poses.is_empty());
        // Jazzy's result (error_code and error_msg after the planning time) does not decode
        // from what a Humble planner sends; it would from a Jazzy one.
        let (id, accepted) = jazzy_client
            .async_send_goal(to_pose_goal_ok())
            .await
            .unwrap();
        assert!(accepted.accepted);
        let got = futures::future::select(
            Box::pin(jazzy_client.async_request_result(id)),
            Box::pin(smol::Timer::after(Duration::from_secs(3))),
        )
        .await;
        if let futures::future::Either::Left((Ok((st, r)), _)) = got {
            panic!(
                "a Humble planner sent Jazzy's result: {st:?}, error_code {}",
                r.error_code
            );
        }
    });
    client_rt.shutdown().trigger();
}

/// As nav2's lifecycle_manager drives planner_server: the node starts unconfigured (refusing
/// plans and rejecting goals), is configured and activated through ~/change_state, announces
/// each step on ~/transition_event, keeps a bond heartbeat while active and breaks it when
/// deactivated; a transition the state does not allow is refused.
#[test]
fn lifecycle_manager_configures_activates_and_bonds_with_the_planner() {
    use gpu_planning::ros::msg::bond::Status;
    use gpu_planning::ros::msg::lifecycle_msgs::{
        ChangeState, ChangeStateRequest, EmptyRequest, GetAvailableTransitions, GetState,
        Transition, TransitionEvent,
    };
    let params = "lee_planner:\n  ros__parameters:\n    start_active: false\n";
    let (server, client_rt, mut peer, map_pub) =
        beside_planner(params, "lifecycle_manager_stand_in");
    let get_state = peer.client::<GetState>("/lee_planner/get_state").unwrap();
    let change = peer
        .client::<ChangeState>("/lee_planner/change_state")
        .unwrap();
    let available = peer
        .client::<GetAvailableTransitions>("/lee_planner/get_available_transitions")
        .unwrap();
    let plan = peer.client::<GetPlan>("/lee_planner/get_plan").unwrap();
    let to_pose: JazzyToPose = peer
        .action_client("/compute_path_to_pose", "nav2_msgs", "ComputePathToPose")
        .unwrap();
    let events = peer
        .subscription::<TransitionEvent>("/lee_planner/transition_event", qos::service())
        .unwrap();
    let bond = peer
        .subscription::<Status>("/bond", qos::service())
        .unwrap();
    let empty = EmptyRequest::default();
    let step = |id: u8| ChangeStateRequest {
        transition: Transition {
            id,
            label: String::new(),
        },
    };
    smol::block_on(async {
        map_pub.async_publish(map()).await.unwrap();
        let s = call(&get_state, empty.clone()).await.current_state;
        assert_eq!((s.id, s.label.as_str()), (1, "unconfigured"));
        let ids: Vec<u8> = call(&available, empty.clone())
            .await
            .available_transitions
            .iter()
            .map(|d| d.transition.id)
            .collect();
        assert_eq!(ids, vec![1, 5]);
        // Not active: plans refused, goals rejected.
        let req = GetPlanRequest {
            start: pose(0.75, 0.75, "map", 0.0),
            goal: pose(6.25, 5.25, "map", 0.0),
            tolerance: 0.0,
        };
        assert!(call(&plan, req.clone()).await.plan.poses.is_empty());
        logged(&["get_plan", "lee_planner is unconfigured, not active"]).await;
        let mut rejected = false;
        for _ in 0..30 {
            let send = futures::future::select(
                Box::pin(to_pose.async_send_goal(to_pose_goal_ok())),
                Box::pin(smol::Timer::after(Duration::from_secs(2))),
            )
            .await;
            if let futures::future::Either::Left((Ok((_, r)), _)) = send {
                rejected = !r.accepted;
                break;
            }
        }
        assert!(rejected, "a goal to an unconfigured planner was accepted");
        // Activate before configuring: refused.
        assert!(!call(&change, step(3)).await.success);
        assert!(call(&change, step(1)).await.success);
        assert_eq!(call(&get_state, empty.clone()).await.current_state.id, 2);
        let by_label = ChangeStateRequest {
            transition: Transition {
                id: 0,
                label: "activate".into(),
            },
        };
        assert!(call(&change, by_label).await.success);
        assert_eq!(call(&get_state, empty.clone()).await.current_state.id, 3);
        // Events: activate, then its success into active.
        let ev = events.async_stream();
        futures::pin_mut!(ev);
        let mut seen = Vec::new();
        while !seen.contains(&(30, 13, 3)) {
            let next = async { ev.next().await.and_then(|r| r.ok()) };
            let timeout = async {
                smol::Timer::after(Duration::from_secs(10)).await;
                None
            };
            let Some((e, _)) = smol::future::or(next, timeout).await else {
                panic!("transition events seen: {seen:?}");
            };
            seen.push((e.transition.id, e.start_state.id, e.goal_state.id));
        }
        assert!(seen.contains(&(3, 2, 13)), "{seen:?}");
        // The bond: heartbeats with the node's name while active.
        let b = bond.async_stream();
        futures::pin_mut!(b);
        let beat = loop {
            let (s, _) = b.next().await.unwrap().unwrap();
            if s.id == "lee_planner" {
                break s;
            }
        };
        assert!(beat.active);
        assert_eq!((beat.heartbeat_timeout, beat.heartbeat_period), (4.0, 0.1));
        assert!(!beat.instance_id.is_empty());
        // Active: it plans.
        let want: Vec<(f64, f64)> = expected((1, 1), (12, 10)).into_iter().map(centre).collect();
        let mut got = Path::default();
        for _ in 0..50 {
            got = call(&plan, req.clone()).await.plan;
            if !got.poses.is_empty() {
                break;
            }
            smol::Timer::after(Duration::from_millis(100)).await;
        }
        assert_eq!(positions(&got), want);
        // Deactivated: the bond is broken (active false) and plans are refused again.
        assert!(call(&change, step(4)).await.success);
        let broken = loop {
            let (s, _) = b.next().await.unwrap().unwrap();
            if s.id == "lee_planner" && !s.active {
                break s;
            }
        };
        assert_eq!(broken.instance_id, beat.instance_id);
        assert!(call(&plan, req).await.plan.poses.is_empty());
    });
    common::assert_device_did_the_work(&server, &["lee_planner"]);
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}
