//! Whatever arrives on the wire reaches the CDR decoder before any node code: truncated,
//! bit-flipped and random payloads of every type a node reads (topics and service requests)
//! must decode to a value or an error, never a panic or an allocation abort (a flipped length
//! prefix claims gigabytes).

use gpu_planning::ros::msg::geometry_msgs::{PoseArray, PoseStamped};
use gpu_planning::ros::msg::gpu_planning_msgs::{
    BuildCellGraphRequest, ExtractPolylineRequest, FindRotationPathRequest, GetStatusRequest,
    KNearestRequest, QuadricArrangement, RadiusSearchRequest, ShortestPathRequest, WeightedGraph,
};
use gpu_planning::ros::msg::grid_map_msgs::GridMap;
use gpu_planning::ros::msg::nav_msgs::{GetPlanRequest, OccupancyGrid};
use gpu_planning::ros::msg::sensor_msgs::{Image, PointCloud2};
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde::Serialize;

type Le = byteorder::LittleEndian;

fn encode<T: Serialize>(v: &T) -> Vec<u8> {
    ros2_client::dds::rustdds::cdr_encoding::to_vec::<T, Le>(v).unwrap()
}

/// Decodes, and re-encodes what decoded: a value that came through must be usable.
fn survive<T: Serialize + DeserializeOwned>(bytes: &[u8]) {
    if let Ok(v) = ros2_client::dds::rustdds::cdr_encoding::from_bytes::<T, Le>(bytes) {
        let _ = encode(&v.0);
    }
}

fn mangle<T: Serialize + DeserializeOwned + Default>(
    sample: &T,
    cut: usize,
    flips: &[(usize, u8)],
    junk: &[u8],
) {
    let valid = encode(sample);
    survive::<T>(&valid[..cut.min(valid.len())]);
    let mut b = valid.clone();
    for &(i, x) in flips {
        let n = b.len();
        if n > 0 {
            b[i % n] ^= x;
        }
    }
    survive::<T>(&b);
    // A valid prefix followed by junk, and junk alone.
    let mut tail = valid[..valid.len() / 2].to_vec();
    tail.extend_from_slice(junk);
    survive::<T>(&tail);
    survive::<T>(junk);
}

fn samples() -> (OccupancyGrid, PointCloud2, Image, WeightedGraph) {
    let mut map = OccupancyGrid::default();
    map.header.frame_id = "map".into();
    map.info.width = 3;
    map.info.height = 2;
    map.data = vec![0, 100, -1, 0, 0, 50];
    let cloud = PointCloud2 {
        height: 1,
        width: 2,
        point_step: 12,
        row_step: 24,
        data: vec![7; 24],
        ..Default::default()
    };
    let image = Image {
        height: 2,
        width: 2,
        encoding: "mono8".into(),
        step: 2,
        data: vec![1, 2, 3, 4],
        ..Default::default()
    };
    let graph = WeightedGraph {
        vertex_count: 3,
        edge_from: vec![0, 1],
        edge_to: vec![1, 2],
        weights: vec![1.0, 2.5],
        vertex_names: vec!["a".into(), "b".into(), "c".into()],
        ..Default::default()
    };
    (map, cloud, image, graph)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn node_inputs_survive_garbage(
        cut in 0usize..200,
        flips in proptest::collection::vec((any::<usize>(), 1u8..=255), 1..6),
        junk in proptest::collection::vec(any::<u8>(), 0..300),
    ) {
        let (map, cloud, image, graph) = samples();
        mangle(&map, cut, &flips, &junk);
        mangle(&cloud, cut, &flips, &junk);
        mangle(&image, cut, &flips, &junk);
        mangle(&graph, cut, &flips, &junk);
        mangle(&GridMap::default(), cut, &flips, &junk);
        mangle(&PoseStamped::default(), cut, &flips, &junk);
        mangle(&PoseArray::default(), cut, &flips, &junk);
        mangle(&QuadricArrangement::default(), cut, &flips, &junk);
        mangle(&GetPlanRequest::default(), cut, &flips, &junk);
        mangle(&KNearestRequest::default(), cut, &flips, &junk);
        mangle(&RadiusSearchRequest::default(), cut, &flips, &junk);
        mangle(&ShortestPathRequest::default(), cut, &flips, &junk);
        mangle(&ExtractPolylineRequest::default(), cut, &flips, &junk);
        mangle(&BuildCellGraphRequest::default(), cut, &flips, &junk);
        mangle(&FindRotationPathRequest::default(), cut, &flips, &junk);
        mangle(&GetStatusRequest::default(), cut, &flips, &junk);
    }
}

/// The classic: a sequence length of 0xFFFFFFF0 with nothing behind it.
#[test]
fn huge_length_prefixes_are_errors() {
    let mut b = encode(&OccupancyGrid::default());
    let n = b.len();
    b[n - 4..].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
    assert!(ros2_client::dds::rustdds::cdr_encoding::from_bytes::<OccupancyGrid, Le>(&b).is_err());
}
