//! Reader matches seen by every node of a participant. The nodes of one process share one DDS
//! participant, whose match events reach one node's spinner each; every node must still count
//! the readers of its own publishers (the lee planner decides by that count whether to make
//! the distance field, the cell graph node when to publish a held graph).

use std::time::{Duration, Instant};

use gpu_planning::ros::msg::std_msgs::Header;
use gpu_planning::ros::{qos, NodeContext, ParamsFile, RosArgs, RosRuntime};

use crate::common;

#[test]
fn every_node_of_a_participant_counts_its_publishers_readers() {
    const NODES: usize = 6;
    let domain = common::unique_domain();
    let server = RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let client_rt =
        RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let mut nodes = Vec::new();
    for i in 0..NODES {
        let mut ctx = NodeContext::new(&server, &format!("talker_{i}")).unwrap();
        let publisher = ctx
            .publisher::<Header>(&format!("/graph_matches/topic_{i}"), qos::map())
            .unwrap();
        assert_eq!(publisher.get_subscription_count(ctx.node()), 0);
        nodes.push((ctx, publisher));
    }
    let mut peer = NodeContext::new(&client_rt, "listener").unwrap();
    let _subs: Vec<_> = (0..NODES)
        .map(|i| {
            peer.subscription::<Header>(&format!("/graph_matches/topic_{i}"), qos::map())
                .unwrap()
        })
        .collect();
    let _a = common::run_in_background(&server);
    let _b = common::run_in_background(&client_rt);
    let counts = || -> Vec<usize> {
        nodes
            .iter()
            .map(|(ctx, p)| p.get_subscription_count(ctx.node()))
            .collect()
    };
    let start = Instant::now();
    while counts().contains(&0) && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(counts(), vec![1; NODES], "readers each node counts");
    // The waits see the matches too.
    smol::block_on(async {
        for (ctx, p) in &nodes {
            let wait = futures::future::select(
                Box::pin(p.wait_for_subscription(ctx.node())),
                Box::pin(smol::Timer::after(Duration::from_secs(5))),
            )
            .await;
            assert!(matches!(wait, futures::future::Either::Left(_)));
        }
    });
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}
