//! A sample that does not decode, on every input topic of every node, is logged and skipped:
//! after it, each node still acts on a good message on that same topic. (A subscription loop
//! written `while let Some(Ok(..))` stops for good at the first bad sample.)

use std::marker::PhantomData;
use std::time::{Duration, Instant};

use futures::StreamExt;
use gpu_planning::ros::msg::geometry_msgs::{Pose, PoseArray, Quaternion};
use gpu_planning::ros::msg::gpu_planning_msgs::{
    ApspStatus, CellGraph, ExtractPolyline, ExtractPolylineRequest, KNearest, KNearestRequest,
    Neighbors, QuadricArrangement, RuntimeStatus, WeightedGraph,
};
use gpu_planning::ros::msg::grid_map_msgs::GridMap;
use gpu_planning::ros::msg::nav_msgs::{OccupancyGrid, Path};
use gpu_planning::ros::msg::sensor_msgs::{Image, PointCloud2};
use gpu_planning::ros::msg::std_msgs::Float32MultiArray;
use gpu_planning::ros::msg::{RosMessage, RosType};
use gpu_planning::ros::{qos, NodeContext};
use ros2_client::QosProfile;
use serde::{Serialize, Serializer};

use crate::bad_input::{call_until, logged, occupancy, pose, runtimes};
use crate::common;
use crate::nearest_neighbors_node::cloud;

/// Eight bytes under `M`'s type name: a header's stamp, then the end of the data where the
/// frame_id's length should be, so no message with a header decodes from it.
struct Garbage<M>(PhantomData<M>);

impl<M> Serialize for Garbage<M> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        [0xffu8; 4].to_vec().serialize(s)
    }
}

impl<M: RosMessage> RosType for Garbage<M> {
    fn ros_type() -> String {
        M::ros_type()
    }
}

impl<M: RosMessage> RosMessage for Garbage<M> {
    const PACKAGE: &'static str = M::PACKAGE;
    const NAME: &'static str = M::NAME;
    fn fields() -> Vec<(&'static str, String)> {
        M::fields()
    }
}

/// Publishes garbage on `topic` (as type `M`, with the QoS the node subscribes with) until the
/// node logs that it could not decode it: the log line is the proof that it arrived.
async fn send_garbage<M: RosMessage + 'static>(
    peer: &mut NodeContext,
    topic: &str,
    q: QosProfile,
    node: &str,
    logged_topic: &str,
) {
    let publisher = peer.publisher::<Garbage<M>>(topic, q).unwrap();
    let needle = format!("{node}: {logged_topic} not decoded");
    let needles = [needle.as_str()];
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        if let Err(e) = publisher.async_publish(Garbage(PhantomData)).await {
            panic!("{topic}: garbage not published: {:?}", e.to_string());
        }
        let seen = futures::future::select(
            Box::pin(logged(&needles)),
            Box::pin(smol::Timer::after(Duration::from_millis(500))),
        )
        .await;
        if let futures::future::Either::Left(_) = seen {
            return;
        }
        assert!(Instant::now() < until, "{needle}: never logged");
    }
}

/// The first message on `stream` that `ok` accepts (30 s at most), re-sending with `poke`
/// between waits (best-effort topics may drop a message before discovery settles).
async fn first_where<M, S>(
    what: &str,
    stream: S,
    mut poke: impl AsyncFnMut(),
    ok: impl Fn(&M) -> bool,
) -> M
where
    S: futures::Stream<Item = ros2_client::ReadResult<(M, ros2_client::MessageInfo)>>,
{
    futures::pin_mut!(stream);
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        poke().await;
        let next = futures::future::select(
            Box::pin(stream.next()),
            Box::pin(smol::Timer::after(Duration::from_millis(500))),
        )
        .await;
        if let futures::future::Either::Left((Some(Ok((m, _))), _)) = next {
            if ok(&m) {
                return m;
            }
        }
        assert!(
            Instant::now() < until,
            "{what}: no such message within 30 s; log:\n{}",
            common::log_tail(60)
        );
    }
}

fn elevation_map(frame: &str) -> GridMap {
    let mut m = GridMap::default();
    m.header.frame_id = frame.into();
    m.info.resolution = 1.0;
    m.info.length_x = 3.0;
    m.info.length_y = 2.0;
    m.info.pose.orientation = Quaternion::identity();
    m.layers = vec!["elevation".into()];
    m.data = vec![Float32MultiArray {
        data: vec![0.0; 6],
        ..Default::default()
    }];
    m
}

#[test]
fn every_node_keeps_reading_a_topic_after_a_sample_it_cannot_decode() {
    let (server, client_rt) = runtimes("");
    let mut peer = NodeContext::new(&client_rt, "garbage_peer").unwrap();
    let map_pub = peer.publisher::<OccupancyGrid>("/map", qos::map()).unwrap();
    let elev_pub = peer
        .publisher::<GridMap>("/elevation_map", qos::map())
        .unwrap();
    let start_pub = peer
        .publisher::<gpu_planning::ros::msg::geometry_msgs::PoseStamped>(
            "/start_pose",
            qos::sensor(),
        )
        .unwrap();
    let goal_pub = peer
        .publisher::<gpu_planning::ros::msg::geometry_msgs::PoseStamped>(
            "/goal_pose",
            qos::sensor(),
        )
        .unwrap();
    let graph_pub = peer
        .publisher::<WeightedGraph>("/apsp/graph", qos::map())
        .unwrap();
    let image_pub = peer
        .publisher::<Image>("/polyline/image", qos::map())
        .unwrap();
    let constraints_pub = peer
        .publisher::<QuadricArrangement>("/cell_graph/constraints", qos::map())
        .unwrap();
    let samples_pub = peer
        .publisher::<PoseArray>("/cell_graph/samples", qos::map())
        .unwrap();
    let cloud_pub = peer
        .publisher::<PointCloud2>("/nearest_neighbors/cloud", qos::map())
        .unwrap();
    let orient_pub = peer
        .publisher::<PoseArray>("/nearest_neighbors/orientations", qos::map())
        .unwrap();
    let query_pub = peer
        .publisher::<PointCloud2>("/nearest_neighbors/queries", qos::sensor())
        .unwrap();
    let status_sub = peer
        .subscription::<RuntimeStatus>("/gpu_planning/status", qos::result())
        .unwrap();
    let path_sub = peer
        .subscription::<Path>("/lee_planner/path", qos::result())
        .unwrap();
    let apsp_sub = peer
        .subscription::<ApspStatus>("/apsp/status", qos::map())
        .unwrap();
    let cells_sub = peer
        .subscription::<CellGraph>("/cell_graph/cell_graph", qos::map())
        .unwrap();
    let neighbors_sub = peer
        .subscription::<Neighbors>("/nearest_neighbors/neighbors", qos::result())
        .unwrap();
    let extract = peer.client::<ExtractPolyline>("/polyline/extract").unwrap();
    let knn = peer.client::<KNearest>("/nearest_neighbors/knn").unwrap();
    let _a = common::run_in_background(&server);
    let _b = common::run_in_background(&client_rt);
    let p = &mut peer;
    smol::block_on(async {
        // Garbage first, on every input topic of every node (the map topic has two readers:
        // gpu_planning's and lee_planner's).
        send_garbage::<OccupancyGrid>(p, "/map", qos::map(), "gpu_planning", "map").await;
        send_garbage::<OccupancyGrid>(p, "/map", qos::map(), "lee_planner", "map").await;
        let (m, s) = (qos::map(), qos::sensor());
        send_garbage::<GridMap>(
            p,
            "/elevation_map",
            m.clone(),
            "lee_planner",
            "elevation_map",
        )
        .await;
        send_garbage::<gpu_planning::ros::msg::geometry_msgs::PoseStamped>(
            p,
            "/start_pose",
            s.clone(),
            "lee_planner",
            "start_pose",
        )
        .await;
        send_garbage::<gpu_planning::ros::msg::geometry_msgs::PoseStamped>(
            p,
            "/goal_pose",
            s.clone(),
            "lee_planner",
            "goal_pose",
        )
        .await;
        send_garbage::<WeightedGraph>(p, "/apsp/graph", m.clone(), "apsp", "~/graph").await;
        send_garbage::<Image>(p, "/polyline/image", m.clone(), "polyline", "~/image").await;
        let cg = "cell_graph";
        send_garbage::<QuadricArrangement>(
            p,
            "/cell_graph/constraints",
            m.clone(),
            cg,
            "~/constraints",
        )
        .await;
        send_garbage::<PoseArray>(p, "/cell_graph/samples", m.clone(), cg, "~/samples").await;
        let nn = "nearest_neighbors";
        send_garbage::<PointCloud2>(p, "/nearest_neighbors/cloud", m.clone(), nn, "~/cloud").await;
        send_garbage::<PoseArray>(
            p,
            "/nearest_neighbors/orientations",
            m.clone(),
            nn,
            "~/orientations",
        )
        .await;
        send_garbage::<PointCloud2>(p, "/nearest_neighbors/queries", s.clone(), nn, "~/queries")
            .await;

        // Then a good message on each: every node acts on it. The map goes out once:
        // reliable and transient-local, it must arrive (tests/nodes/latched.rs checks that
        // delivery on its own); the count tells a map from garbage (at least two garbage
        // samples reached this reader).
        map_pub
            .async_publish(occupancy(5, 3, vec![0; 15], "map"))
            .await
            .unwrap();
        let status = first_where(
            "gpu_planning ~/status with the map",
            status_sub.async_stream(),
            async || {},
            |s: &RuntimeStatus| s.map_width == 5 && s.map_height == 3,
        )
        .await;
        assert_eq!(
            status.maps_received, 1,
            "garbage is not a map: {} maps counted after one sent",
            status.maps_received
        );
        if gpu_planning::compute::testing::cuda_required() {
            assert_eq!(
                status.backend, "cuda",
                "the nodes run on the CPU: {status:?}"
            );
        }
        logged(&["lee_planner: map 5 x 3 (map)"]).await;
        let path = first_where(
            "lee_planner ~/path from start_pose + goal_pose",
            path_sub.async_stream(),
            async || {
                start_pub
                    .async_publish(pose(0.5, 0.5, "map"))
                    .await
                    .unwrap();
                goal_pub.async_publish(pose(4.5, 2.5, "map")).await.unwrap();
            },
            |p: &Path| !p.poses.is_empty(),
        )
        .await;
        assert_eq!(
            path.poses.len(),
            7,
            "4-connected moves across a free 5 x 3 map"
        );
        elev_pub.async_publish(elevation_map("elev")).await.unwrap();
        logged(&["lee_planner: map 3 x 2 (elev)"]).await;

        graph_pub
            .async_publish(WeightedGraph {
                vertex_count: 2,
                edge_from: vec![0],
                edge_to: vec![1],
                weights: vec![2.0],
                ..Default::default()
            })
            .await
            .unwrap();
        let solved = first_where(
            "apsp ~/status",
            apsp_sub.async_stream(),
            async || {},
            |s: &ApspStatus| s.vertex_count == 2,
        )
        .await;
        assert!(solved.error.is_empty(), "{}", solved.error);
        assert_eq!(solved.graphs_received, 1, "garbage is not a graph");

        let (w, h) = (20u32, 10u32);
        image_pub
            .async_publish(Image {
                width: w,
                height: h,
                encoding: "mono8".into(),
                step: w,
                data: (0..w * h)
                    .map(|i| if i % w == 10 { 255 } else { 0 })
                    .collect(),
                ..Default::default()
            })
            .await
            .unwrap();
        let req = ExtractPolylineRequest {
            a: gpu_planning::ros::msg::geometry_msgs::Point {
                x: 10.0,
                y: 1.0,
                z: 0.0,
            },
            b: gpu_planning::ros::msg::geometry_msgs::Point {
                x: 10.0,
                y: 8.0,
                z: 0.0,
            },
            guides: 2,
            points_per_guide: 5,
            ..Default::default()
        };
        let extracted = call_until(&extract, req.clone(), |r| r.success, || {}).await;
        assert!(extracted.is_some(), "polyline acts on the good image");

        // One constraint w^2 - x^2 >= 0, then three sample rotations.
        let mut coefficients = vec![0.0; 10];
        coefficients[0] = -1.0;
        coefficients[9] = 1.0;
        constraints_pub
            .async_publish(QuadricArrangement {
                count: 1,
                coefficients,
                ..Default::default()
            })
            .await
            .unwrap();
        let identity = Pose {
            orientation: Quaternion::identity(),
            ..Default::default()
        };
        samples_pub
            .async_publish(PoseArray {
                poses: vec![identity.clone(); 3],
                ..Default::default()
            })
            .await
            .unwrap();
        let graph = first_where(
            "cell_graph ~/cell_graph over the 3 samples",
            cells_sub.async_stream(),
            async || {},
            |g: &CellGraph| g.constraint_count == 1 && g.sample_count == 3,
        )
        .await;
        assert_eq!(graph.sample_counts, vec![3], "{graph:?}");

        cloud_pub
            .async_publish(cloud(&[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]))
            .await
            .unwrap();
        let found = first_where(
            "nearest_neighbors ~/neighbors for ~/queries",
            neighbors_sub.async_stream(),
            async || {
                query_pub
                    .async_publish(cloud(&[[0.9, 0.0, 0.0]]))
                    .await
                    .unwrap();
            },
            |n: &Neighbors| !n.indices.is_empty(),
        )
        .await;
        assert_eq!(found.indices, vec![1]);
        orient_pub
            .async_publish(PoseArray {
                poses: vec![identity; 2],
                ..Default::default()
            })
            .await
            .unwrap();
        let answered = call_until(
            &knn,
            KNearestRequest {
                dimensions: 4,
                points: vec![0.0, 0.0, 0.0, 1.0],
                k: 1,
            },
            |r| r.success,
            || {},
        )
        .await;
        assert!(
            answered.is_some(),
            "nearest_neighbors acts on the good orientations"
        );
    });
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}
