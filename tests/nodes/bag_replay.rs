//! Each node's bag (tests/data/bags) replayed into freshly started nodes over DDS, with the
//! recorded timing: every output topic and every service response must equal the recording
//! (integers exactly, floats to 1e-6 relative; stamps, compute times and the backend name
//! aside). The bags were recorded on the CPU, so on the device this checks the CUDA variants
//! against the CPU through the whole ROS path.

use std::path::Path;

use gpu_planning::bag::record::{parse_topic, record};
use gpu_planning::bag::replay::replay_into_fresh_nodes;
use gpu_planning::bag::{compare, types, Bag};
use gpu_planning::compute::testing::cuda_required;
use gpu_planning::compute::{Backend, BackendKind};
use gpu_planning::ros::{ParamsFile, RosArgs, RosRuntime};

use crate::common;

fn bag_dir(name: &str) -> std::path::PathBuf {
    // Test binaries packed for the GPU machine run from another checkout.
    let repo = gpu_planning::testing::repo();
    Path::new(&repo).join("tests/data/bags").join(name)
}

fn replay(name: &str) {
    let backend = Backend::select(BackendKind::Auto).unwrap();
    if cuda_required() {
        assert!(
            matches!(backend, Backend::Cuda(_)),
            "GPU_PLANNING_REQUIRE_CUDA is set but the nodes would run on the CPU"
        );
    }
    let bag = Bag::open(&bag_dir(name)).unwrap();
    let report = replay_into_fresh_nodes(&bag, &backend, common::unique_domain(), 1.0).unwrap();
    eprintln!("{name} on {}: {:?}", backend.name(), report.lines);
    assert!(
        report.mismatches.is_empty(),
        "{name} on {}: {:#?}",
        backend.name(),
        report.mismatches
    );
    assert!(!report.lines.is_empty());
}

#[test]
fn lee_planner_bag_replays_exactly() {
    replay("lee_planner");
}

#[test]
fn apsp_bag_replays_exactly() {
    replay("apsp");
}

#[test]
fn polyline_bag_replays_exactly() {
    replay("polyline");
}

#[test]
fn cell_graph_bag_replays_exactly() {
    replay("cell_graph");
}

#[test]
fn nearest_neighbors_bag_replays_exactly() {
    replay("nearest_neighbors");
}

/// `bag record` on the same domain as a replay writes what the nodes published: the same
/// statuses as the bag holds, and the graphs byte for byte.
#[test]
fn record_writes_what_a_replay_makes() {
    let domain = common::unique_domain();
    let bag = Bag::open(&bag_dir("apsp")).unwrap();
    let out = std::env::temp_dir().join(format!("gpu_planning_record_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let rt = RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let _bg = common::run_in_background(&rt);
    let topics = ["/apsp/status", "/apsp/graph"].map(|t| parse_topic(t).unwrap());
    let player = {
        let bag = bag.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_secs(1));
            let backend = Backend::select(BackendKind::Auto).unwrap();
            replay_into_fresh_nodes(&bag, &backend, domain, 1.0).unwrap()
        })
    };
    let n = record(&rt, &out, &topics, Some(std::time::Duration::from_secs(12))).unwrap();
    rt.shutdown().trigger();
    let report = player.join().unwrap();
    assert!(report.mismatches.is_empty(), "{:?}", report.mismatches);
    assert_eq!(n, 6, "3 graphs and 3 statuses");
    let got = Bag::open(&out).unwrap();
    assert_eq!(
        got.topics["/apsp/graph"].ty,
        "gpu_planning_msgs/msg/WeightedGraph"
    );
    let graphs = |b: &Bag| {
        b.on("/apsp/graph")
            .map(|m| m.data.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(graphs(&got), graphs(&bag));
    let status = |b: &Bag| {
        b.on("/apsp/status")
            .map(|m| types::to_json("gpu_planning_msgs/msg/ApspStatus", "status", &m.data).unwrap())
            .collect::<Vec<_>>()
    };
    let (want, have) = (status(&bag), status(&got));
    assert_eq!(want.len(), have.len());
    for (w, h) in want.iter().zip(&have) {
        assert!(compare::differences(w, h, 5).is_empty(), "{w} vs {h}");
    }
    assert!(parse_topic("/nowhere").is_err());
    assert!(parse_topic("/x:std_msgs/msg/String").is_err());
    std::fs::remove_dir_all(&out).unwrap();
}

/// std_msgs/msg/String, which this package does not mirror: declared here as a subscriber
/// of a robot's own topic would.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct StdString {
    data: String,
}

impl ros2_client::Message for StdString {}

impl gpu_planning::ros::msg::RosType for StdString {
    fn ros_type() -> String {
        "std_msgs/String".into()
    }
}

impl gpu_planning::ros::msg::RosMessage for StdString {
    const PACKAGE: &'static str = "std_msgs";
    const NAME: &'static str = "String";
    fn fields() -> Vec<(&'static str, String)> {
        vec![("data", "string".into())]
    }
}

/// `bag play` of a bag `ros2 bag record` made (tests/data/ros2_bags/talker: std_msgs/String
/// on /topic, rcl_interfaces/Log on /rosout), whose types this package does not mirror: each
/// message goes out as its recorded bytes under its own type name and QoS, and a subscriber of
/// that type receives every one, in order.
#[test]
fn bag_play_publishes_types_this_package_does_not_mirror() {
    use futures::StreamExt;
    use gpu_planning::bag::play::{play, PlayOptions};
    use gpu_planning::bag::qos::TopicQos;
    use gpu_planning::ros::NodeContext;

    let dir = gpu_planning::testing::repo().join("tests/data/ros2_bags/talker");
    let bag = Bag::open(&dir).unwrap();
    let want: Vec<String> = bag
        .on("/topic")
        .map(|m| {
            gpu_planning::bag::cdr::decode::<StdString>("/topic", &m.data)
                .unwrap()
                .data
        })
        .collect();
    assert_eq!(want.len(), 10);
    assert!(want[0].starts_with("Hello, world!"), "{want:?}");
    let steps = gpu_planning::bag::replay::steps(&bag).unwrap();
    assert_eq!(steps.len(), 20, "both topics are played");

    let domain = common::unique_domain();
    let sub_rt = RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let mut ctx = NodeContext::new(&sub_rt, "listener").unwrap();
    // The recorded publisher offered reliable + volatile; a reliable reader matches it.
    let sub = ctx
        .subscription::<StdString>("/topic", TopicQos::default().profile())
        .unwrap();
    let _s = common::run_in_background(&sub_rt);
    let player = RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let _p = common::run_in_background(&player);
    let received = std::thread::spawn(move || {
        smol::block_on(async {
            let s = sub.async_stream();
            futures::pin_mut!(s);
            let mut got = Vec::new();
            while got.len() < 10 {
                let next = smol::future::or(async { s.next().await.map(|r| r.ok()) }, async {
                    smol::Timer::after(std::time::Duration::from_secs(30)).await;
                    None
                });
                match next.await {
                    Some(Some((m, _))) => got.push(m.data),
                    _ => break,
                }
            }
            got
        })
    });
    let rec = play(
        &player,
        &steps,
        &PlayOptions {
            rate: 0.0,
            record: vec![],
            expect: Default::default(),
            after: vec![],
        },
    )
    .unwrap();
    assert!(rec.calls.is_empty());
    let got = received.join().unwrap();
    player.shutdown().trigger();
    sub_rt.shutdown().trigger();
    assert_eq!(got, want);
}
