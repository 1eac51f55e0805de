//! Every topic and service-request type a node reads, decoded from arbitrary bytes: the first
//! byte picks the type. A decoded value must re-encode (the node would use it).
#![no_main]

use gpu_planning::ros::msg::geometry_msgs::{PoseArray, PoseStamped};
use gpu_planning::ros::msg::gpu_planning_msgs::{
    BuildCellGraphRequest, ExtractPolylineRequest, FindRotationPathRequest, GetStatusRequest,
    KNearestRequest, QuadricArrangement, RadiusSearchRequest, ShortestPathRequest, WeightedGraph,
};
use gpu_planning::ros::msg::grid_map_msgs::GridMap;
use gpu_planning::ros::msg::nav_msgs::{GetPlanRequest, OccupancyGrid};
use gpu_planning::ros::msg::sensor_msgs::{Image, PointCloud2};
use libfuzzer_sys::fuzz_target;
use serde::de::DeserializeOwned;
use serde::Serialize;

type Le = byteorder::LittleEndian;

fn survive<T: Serialize + DeserializeOwned>(bytes: &[u8]) {
    use ros2_client::dds::rustdds::cdr_encoding;
    if let Ok((v, _)) = cdr_encoding::from_bytes::<T, Le>(bytes) {
        cdr_encoding::to_vec::<T, Le>(&v).expect("a decoded value re-encodes");
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, bytes)) = data.split_first() else {
        return;
    };
    match which % 15 {
        0 => survive::<OccupancyGrid>(bytes),
        1 => survive::<GridMap>(bytes),
        2 => survive::<PoseStamped>(bytes),
        3 => survive::<GetPlanRequest>(bytes),
        4 => survive::<PointCloud2>(bytes),
        5 => survive::<PoseArray>(bytes),
        6 => survive::<KNearestRequest>(bytes),
        7 => survive::<RadiusSearchRequest>(bytes),
        8 => survive::<WeightedGraph>(bytes),
        9 => survive::<ShortestPathRequest>(bytes),
        10 => survive::<Image>(bytes),
        11 => survive::<ExtractPolylineRequest>(bytes),
        12 => survive::<QuadricArrangement>(bytes),
        13 => survive::<BuildCellGraphRequest>(bytes),
        _ => {
            survive::<FindRotationPathRequest>(bytes);
            survive::<GetStatusRequest>(bytes);
        }
    }
});
