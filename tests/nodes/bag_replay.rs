//! Each node's bag (tests/data/bags) replayed into freshly started nodes over DDS, with the
//! recorded timing: every output topic and every service response must equal the recording
//! (integers exactly, floats to 1e-6 relative; stamps, compute times and the backend name
//! aside). The bags were recorded on the CPU, so on the device this checks the CUDA variants
//! against the CPU through the whole ROS path.

use std::path::Path;

use gpu_planning::bag::replay::replay_into_fresh_nodes;
use gpu_planning::bag::Bag;
use gpu_planning::compute::testing::cuda_required;
use gpu_planning::compute::{Backend, BackendKind};

use crate::common;

fn replay(name: &str) {
    let backend = Backend::select(BackendKind::Auto).unwrap();
    if cuda_required() {
        assert!(
            matches!(backend, Backend::Cuda(_)),
            "GPU_PLANNING_REQUIRE_CUDA is set but the nodes would run on the CPU"
        );
    }
    // Test binaries packed for the GPU machine run from another checkout.
    let repo = std::env::var("GPU_PLANNING_REPO").unwrap_or(env!("CARGO_MANIFEST_DIR").into());
    let path = Path::new(&repo).join("tests/data/bags").join(name);
    let bag = Bag::open(&path).unwrap();
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
