//! A latched topic delivers its one sample to every reader, however late it joins: reliable,
//! transient-local, keep last 1 (`qos::map()`, as map_server publishes /map), published once,
//! never again. Readers join in two waves, each from a participant of its own: a first before
//! the publish and a second after it, so both the live path and the durable history are
//! exercised. A loss here is the transport's, and nothing retries it away.

use std::time::{Duration, Instant};

use futures::StreamExt;
use gpu_planning::ros::msg::nav_msgs::OccupancyGrid;
use gpu_planning::ros::{qos, NodeContext, ParamsFile, RosArgs, RosRuntime};

use crate::common;

const READERS_PER_WAVE: usize = 4;

fn map(seed: u8) -> OccupancyGrid {
    let mut m = OccupancyGrid::default();
    m.header.frame_id = "map".into();
    m.info.width = 7;
    m.info.height = 5;
    m.info.resolution = 0.05;
    m.data = (0..35)
        .map(|i| ((i * 13 + seed as i32) % 101) as i8)
        .collect();
    m
}

struct Reader {
    rt: RosRuntime,
    _node: NodeContext,
    sub: ros2_client::Subscription<OccupancyGrid>,
}

fn reader(domain: u16, i: usize) -> Reader {
    let rt = RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let mut node = NodeContext::new(&rt, &format!("reader_{i}")).unwrap();
    let sub = node
        .subscription::<OccupancyGrid>("/latched_map", qos::map())
        .unwrap();
    Reader {
        rt,
        _node: node,
        sub,
    }
}

/// The one sample `r` takes within `limit`, or None.
fn received(r: &Reader, limit: Duration) -> Option<OccupancyGrid> {
    smol::block_on(async {
        let s = r.sub.async_stream();
        futures::pin_mut!(s);
        match futures::future::select(Box::pin(s.next()), Box::pin(smol::Timer::after(limit))).await
        {
            futures::future::Either::Left((Some(Ok((m, _))), _)) => Some(m),
            _ => None,
        }
    })
}

#[test]
fn one_latched_publish_reaches_every_reader_early_or_late() {
    let domain = common::unique_domain();
    let publisher_rt =
        RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let mut publisher_node = NodeContext::new(&publisher_rt, "map_server").unwrap();
    let map_pub = publisher_node
        .publisher::<OccupancyGrid>("/latched_map", qos::map())
        .unwrap();
    let _p = common::run_in_background(&publisher_rt);

    let early: Vec<Reader> = (0..READERS_PER_WAVE).map(|i| reader(domain, i)).collect();
    let _e: Vec<_> = early
        .iter()
        .map(|r| common::run_in_background(&r.rt))
        .collect();
    let sent = map(3);
    // Published once, whether or not the early readers are matched yet: a reliable
    // transient-local writer delivers it when they match.
    map_pub.publish(sent.clone()).unwrap();
    let late: Vec<Reader> = (READERS_PER_WAVE..2 * READERS_PER_WAVE)
        .map(|i| reader(domain, i))
        .collect();
    let _l: Vec<_> = late
        .iter()
        .map(|r| common::run_in_background(&r.rt))
        .collect();

    let until = Instant::now() + Duration::from_secs(20);
    let mut missing = Vec::new();
    for (i, r) in early.iter().chain(&late).enumerate() {
        let left = until.saturating_duration_since(Instant::now());
        match received(r, left) {
            Some(m) => assert_eq!(m, sent, "reader {i} took another map"),
            None => missing.push(i),
        }
    }
    assert!(
        missing.is_empty(),
        "readers {missing:?} of {} never received the latched map within 20 s; log:\n{}",
        2 * READERS_PER_WAVE,
        common::log_tail(60)
    );
    for r in early.iter().chain(&late) {
        r.rt.shutdown().trigger();
    }
    publisher_rt.shutdown().trigger();
}
