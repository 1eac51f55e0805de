//! `use_sim_time` as rclcpp has it: with the parameter, a node's clock is the last time on
//! `/clock`, so a plan and the runtime status carry simulation time; without it, wall time.
//! A polyline result carries the stamp of the image it was computed from.

use std::time::Duration;

use gpu_planning::ros::msg::builtin_interfaces::Time;
use gpu_planning::ros::msg::geometry_msgs::{Point, Pose, PoseStamped, Quaternion};
use gpu_planning::ros::msg::gpu_planning_msgs::{GetStatus, GetStatusRequest};
use gpu_planning::ros::msg::nav_msgs::{GetPlan, GetPlanRequest, OccupancyGrid};
use gpu_planning::ros::msg::rosgraph_msgs::Clock;
use gpu_planning::ros::msg::std_msgs::Header;
use gpu_planning::ros::{qos, NodeContext, ParamsFile, RosArgs, RosRuntime};

use crate::bad_input::call;
use crate::common;

fn pose(x: f64, y: f64) -> PoseStamped {
    PoseStamped {
        header: Header {
            frame_id: "map".into(),
            ..Default::default()
        },
        pose: Pose {
            position: Point { x, y, z: 0.0 },
            orientation: Quaternion::identity(),
        },
    }
}

fn open_map() -> OccupancyGrid {
    let mut m = OccupancyGrid {
        data: vec![0; 16],
        ..Default::default()
    };
    m.header.frame_id = "map".into();
    m.info.width = 4;
    m.info.height = 4;
    m.info.resolution = 1.0;
    m.info.origin.orientation = Quaternion::identity();
    m
}

/// Starts lee_planner and the runtime node with `use_sim_time`, returns the plan and status
/// stamps seen once the nodes have heard `clock` (or after 20 tries without it).
fn stamps(use_sim_time: bool, clock: Time) -> (Time, Time) {
    let domain = common::unique_domain();
    let (args, _) = RosArgs::parse(&[
        "--ros-args".to_string(),
        "-p".to_string(),
        "backend:=cpu".to_string(),
        "-p".to_string(),
        format!("use_sim_time:={use_sim_time}"),
    ])
    .unwrap();
    let server = RosRuntime::new(args, ParamsFile::default(), Some(domain)).unwrap();
    gpu_planning::nodes::start(&server, &["lee_planner", "gpu_planning"]).unwrap();
    let client_rt =
        RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let mut peer = NodeContext::new(&client_rt, "sim").unwrap();
    let clock_pub = peer.publisher::<Clock>("/clock", qos::sensor()).unwrap();
    let map_pub = peer.publisher::<OccupancyGrid>("/map", qos::map()).unwrap();
    let plan = peer.client::<GetPlan>("/lee_planner/get_plan").unwrap();
    let status = peer
        .client::<GetStatus>("/gpu_planning/get_status")
        .unwrap();
    let _a = common::run_in_background(&server);
    let _b = common::run_in_background(&client_rt);
    let got = smol::block_on(async {
        common::settle_discovery("get_plan", plan.wait_for_service(peer.node())).await;
        map_pub.async_publish(open_map()).await.unwrap();
        let mut last = (Time::default(), Time::default());
        for _ in 0..40 {
            // Best effort and volatile, as a simulator publishes it: send it every round.
            let _ = clock_pub.publish(Clock {
                clock: clock.clone(),
            });
            smol::Timer::after(Duration::from_millis(100)).await;
            let req = GetPlanRequest {
                start: pose(0.5, 0.5),
                goal: pose(3.5, 3.5),
                tolerance: 0.0,
            };
            let p = call(&plan, req).await.plan;
            let s = call(
                &status,
                GetStatusRequest {
                    refresh_memory: false,
                },
            )
            .await
            .status;
            last = (p.header.stamp, s.header.stamp);
            if !p.poses.is_empty() && last.0 == clock && last.1 == clock {
                break;
            }
        }
        last
    });
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
    got
}

#[test]
fn use_sim_time_stamps_outputs_with_the_clock_topic() {
    let sim = Time {
        sec: 4242,
        nanosec: 7,
    };
    let (plan, status) = stamps(true, sim.clone());
    assert_eq!(plan, sim, "the plan's stamp is /clock's time");
    assert_eq!(status, sim, "the runtime status's stamp is /clock's time");

    // Without the parameter the same /clock is ignored: wall time (after 2020).
    let (plan, status) = stamps(false, sim);
    assert!(plan.sec > 1_577_836_800, "{plan:?}");
    assert!(status.sec > 1_577_836_800, "{status:?}");
}
