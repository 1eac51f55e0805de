//! Our nodes over real DDS on loopback: a second participant in the same process publishes a
//! map, subscribes to the status topic and calls the status service, as an rclcpp node would.

use std::time::{Duration, Instant};

use futures::StreamExt;
use gpu_planning::nodes::map_summary::fnv1a64;
use gpu_planning::ros::msg::gpu_planning_msgs::{GetStatus, GetStatusRequest, RuntimeStatus};
use gpu_planning::ros::msg::nav_msgs::OccupancyGrid;
use gpu_planning::ros::msg::std_msgs::Header;
use gpu_planning::ros::{qos, NodeContext, ParamsFile, RosArgs, RosRuntime};

use crate::common;

fn test_map(w: u32, h: u32, seed: u64) -> OccupancyGrid {
    let mut rng = gpu_planning::rng::XorShift::new(seed);
    let mut m = OccupancyGrid {
        header: Header {
            frame_id: "map".into(),
            ..Default::default()
        },
        data: (0..w * h)
            .map(|_| [-1i8, 0, 10, 64, 65, 100][(rng.next_u64() % 6) as usize])
            .collect(),
        ..Default::default()
    };
    m.header.stamp.sec = 1234;
    m.info.width = w;
    m.info.height = h;
    m.info.resolution = 0.05;
    m
}

fn expected_counts(m: &OccupancyGrid) -> (u32, u32, u32) {
    let free = m.data.iter().filter(|&&v| (0..65).contains(&v)).count() as u32;
    let occ = m.data.iter().filter(|&&v| v >= 65).count() as u32;
    let unk = m.data.iter().filter(|&&v| v < 0).count() as u32;
    (free, occ, unk)
}

#[test]
fn runtime_node_round_trip_over_dds() {
    let domain = common::unique_domain();
    let (args, _) = RosArgs::parse(&[
        "--ros-args",
        "-r",
        "__ns:=/robot",
        "-p",
        "backend:=cpu",
        "-p",
        "gpu_planning:status_period_s:=0.2",
    ])
    .unwrap();
    let server = RosRuntime::new(args, ParamsFile::default(), Some(domain)).unwrap();
    let started = gpu_planning::nodes::start_all(&server).unwrap();
    assert!(
        started.contains(&"/robot/gpu_planning".to_string()),
        "{started:?}"
    );

    let client_rt =
        RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let mut peer = NodeContext::new(&client_rt, "peer").unwrap();
    let map_pub = peer
        .publisher::<OccupancyGrid>("/robot/map", qos::map())
        .unwrap();
    let status_sub = peer
        .subscription::<RuntimeStatus>("/robot/gpu_planning/status", qos::result())
        .unwrap();
    let client = peer
        .client::<GetStatus>("/robot/gpu_planning/get_status")
        .unwrap();

    let map = test_map(37, 23, domain as u64);
    let (free, occ, unk) = expected_counts(&map);
    let checksum = fnv1a64(map.data.iter().map(|&v| v as u8));

    let _threads = common::run_in_background(&server);
    let _threads2 = common::run_in_background(&client_rt);

    let outcome = smol::block_on(async {
        // Transient local: the map reaches the node even if it matches after the write.
        map_pub.async_publish(map.clone()).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        let stream = status_sub.async_stream();
        futures::pin_mut!(stream);
        let status = loop {
            let next =
                futures::future::select(stream.next(), Box::pin(smol::Timer::at(deadline))).await;
            match next {
                futures::future::Either::Left((Some(Ok((s, _))), _)) if s.maps_received > 0 => {
                    break s
                }
                futures::future::Either::Left(_) => continue,
                futures::future::Either::Right(_) => panic!("no status with the map within 30 s"),
            }
        };
        // The status topic matching says nothing of the service's request and reply topics:
        // under emulation (the aarch64 tests run under qemu) they can match seconds later, and a
        // request written before its reader matched is not delivered (volatile).
        common::settle_discovery("get_status", client.wait_for_service(peer.node())).await;
        let mut reply = None;
        for _ in 0..15 {
            let attempt = futures::future::select(
                Box::pin(client.async_call_service(GetStatusRequest {
                    refresh_memory: true,
                })),
                Box::pin(smol::Timer::after(Duration::from_secs(2))),
            )
            .await;
            if let futures::future::Either::Left((Ok(r), _)) = attempt {
                reply = Some(r);
                break;
            }
        }
        let reply = reply.expect("no get_status response within 30 s");
        (status, reply.status)
    });
    server.shutdown().trigger();
    client_rt.shutdown().trigger();

    for s in [&outcome.0, &outcome.1] {
        assert_eq!(s.backend, "cpu");
        // Every node of the process, not only the runtime node.
        assert_eq!(s.nodes, started, "~/status nodes");
        assert_eq!((s.map_width, s.map_height), (37, 23));
        assert_eq!(
            (s.map_free, s.map_occupied, s.map_unknown),
            (free, occ, unk)
        );
        assert_eq!(s.map_checksum, checksum);
        assert_eq!(s.map_header, map.header);
        assert_eq!(s.maps_received, 1);
    }
}
