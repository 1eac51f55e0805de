//! Bursts from one client: every request of a burst far beyond the reader's history gets an
//! answer (a plan, an overload error, an accepted or rejected goal), counted by the client.
//! Requests used to be lost in silence when a burst outran the request reader's history.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use gpu_planning::ros::msg::nav_msgs::{GetPlan, GetPlanRequest, OccupancyGrid};
use gpu_planning::ros::{qos, NodeContext};
use ros2_client::{Client, Message};

use crate::bad_input::{call_until, pose, runtimes};
use crate::common;
use crate::nav2_planner::{goal_of, map, JazzyToPose};

/// Sends `n` requests made by `send` as fast as the writer takes them, taking answers
/// meanwhile and after; once the answers stop for 10 s (or all came), the answers to the
/// requests sent, one per request.
fn burst<Q: Message + 'static, R: Message + 'static>(
    c: &Client<Q, R>,
    n: usize,
    mut send: impl FnMut() -> Option<i64>,
) -> Vec<R> {
    let mut sent = BTreeSet::new();
    let mut answered = std::collections::BTreeMap::new();
    let take = |answered: &mut std::collections::BTreeMap<i64, R>| {
        while let Ok(Some((id, r))) = c.receive_response() {
            answered.insert(id.sequence_number, r);
        }
    };
    while sent.len() < n {
        match send() {
            Some(id) => {
                sent.insert(id);
            }
            None => std::thread::sleep(Duration::from_millis(1)),
        }
        take(&mut answered);
    }
    let mut last = Instant::now();
    while answered.len() < n && last.elapsed() < Duration::from_secs(10) {
        let before = answered.len();
        take(&mut answered);
        if answered.len() > before {
            last = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    answered
        .into_iter()
        .filter(|(id, _)| sent.contains(id))
        .map(|(_, r)| r)
        .collect()
}

/// 3000 get_plan requests and 3000 goals at once from one client, to a planner that computes
/// one request at a time and queues at most 100: every request is answered, most of them with
/// the overload refusal (GetPlan's is an empty path), and every goal accepted or rejected.
#[test]
fn every_request_and_goal_of_a_burst_is_answered() {
    let (server, client_rt) = runtimes(
        "lee_planner:\n  ros__parameters:\n    max_concurrent_requests: 1\n    max_pending_requests: 100\n",
    );
    let _a = common::run_in_background(&server);
    let _b = common::run_in_background(&client_rt);
    let mut peer = NodeContext::new(&client_rt, "burst_client").unwrap();
    let map_pub = peer.publisher::<OccupancyGrid>("/map", qos::map()).unwrap();
    let plan = peer.client::<GetPlan>("/lee_planner/get_plan").unwrap();
    let to_pose: JazzyToPose = peer
        .action_client("/compute_path_to_pose", "nav2_msgs", "ComputePathToPose")
        .unwrap();
    let req = GetPlanRequest {
        start: pose(0.75, 0.75, "map"),
        goal: pose(6.25, 5.25, "map"),
        tolerance: 0.0,
    };
    smol::block_on(async {
        map_pub.async_publish(map()).await.unwrap();
        call_until(&plan, req.clone(), |r| !r.plan.poses.is_empty(), || {})
            .await
            .expect("a plan before the burst");
    });
    const N: usize = 3000;
    let answers = burst(&plan, N, || {
        plan.send_request(req.clone())
            .ok()
            .map(|id| id.sequence_number)
    });
    assert_eq!(
        answers.len(),
        N,
        "get_plan: {} of {N} requests answered",
        answers.len()
    );
    let planned = answers.iter().filter(|r| !r.plan.poses.is_empty()).count();
    assert!(planned > 0, "no request of the burst was planned");
    let goals = to_pose.goal_client();
    let answers = burst(goals, N, || {
        to_pose
            .send_goal(goal_of((0.75, 0.75), (6.25, 5.25), true))
            .ok()
            .map(|(id, _)| id.sequence_number)
    });
    assert_eq!(
        answers.len(),
        N,
        "send_goal: {} of {N} goals answered",
        answers.len()
    );
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}
