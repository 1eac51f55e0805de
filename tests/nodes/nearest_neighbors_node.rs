//! The nearest_neighbors node over DDS: a peer publishes an organized cloud as a depth camera
//! does (rows, padded point_step and row_step, extra fields, NaN points) and orientations, calls ~/knn and ~/radius and publishes ~/queries; answers equal
//! the CPU tree's; bad requests name their field. Backend auto: the GPU on the device machine.

use std::time::Duration;

use futures::StreamExt;
use gpu_planning::kdtree::cpu::{knn, radius};
use gpu_planning::kdtree::{build, Metric, Points};
use gpu_planning::ros::msg::geometry_msgs::{Pose, PoseArray, Quaternion};
use gpu_planning::ros::msg::gpu_planning_msgs::{
    KNearest, KNearestRequest, KNearestResponse, Neighbors, RadiusSearch, RadiusSearchRequest,
    RadiusSearchResponse,
};
use gpu_planning::ros::msg::sensor_msgs::{PointCloud2, PointField};
use gpu_planning::ros::{qos, NodeContext, ParamsFile, RosArgs, RosRuntime};

use crate::common;

async fn call<Q, R>(client: &ros2_client::Client<Q, R>, req: Q) -> R
where
    Q: ros2_client::Message + Clone + 'static,
    R: ros2_client::Message + 'static,
{
    for _ in 0..15 {
        let attempt = futures::future::select(
            Box::pin(client.async_call_service(req.clone())),
            Box::pin(smol::Timer::after(Duration::from_secs(2))),
        )
        .await;
        if let futures::future::Either::Left((Ok(r), _)) = attempt {
            return r;
        }
    }
    panic!("no response within 30 s");
}

/// x y z float32 at offsets 0, 4, 8 and 4 bytes of padding (point_step 16).
pub(crate) fn cloud(points: &[[f32; 3]]) -> PointCloud2 {
    let field = |name: &str, offset| PointField {
        name: name.into(),
        offset,
        datatype: PointField::FLOAT32,
        count: 1,
    };
    PointCloud2 {
        height: 1,
        width: points.len() as u32,
        fields: vec![field("x", 0), field("y", 4), field("z", 8)],
        point_step: 16,
        row_step: 16 * points.len() as u32,
        data: points
            .iter()
            .flat_map(|p| {
                let mut b: Vec<u8> = p.iter().flat_map(|v| v.to_le_bytes()).collect();
                b.extend([0xee; 4]);
                b
            })
            .collect(),
        ..Default::default()
    }
}

/// An organized cloud of `width` x (n / width) points as a driver sends one: x y z float32,
/// intensity, 4 bytes of padding per point (point_step 20) and 12 per row.
fn organized(points: &[[f32; 3]], width: usize) -> PointCloud2 {
    let field = |name: &str, offset| PointField {
        name: name.into(),
        offset,
        datatype: PointField::FLOAT32,
        count: 1,
    };
    let row_step = width * 20 + 12;
    let mut data = Vec::new();
    for row in points.chunks(width) {
        for (i, p) in row.iter().enumerate() {
            data.extend(p.iter().flat_map(|v| v.to_le_bytes()));
            data.extend((i as f32).to_le_bytes());
            data.extend([0xee; 4]);
        }
        data.extend([0xdd; 12]);
    }
    PointCloud2 {
        height: (points.len() / width) as u32,
        width: width as u32,
        fields: vec![
            field("intensity", 12),
            field("x", 0),
            field("y", 4),
            field("z", 8),
        ],
        point_step: 20,
        row_step: row_step as u32,
        data,
        is_dense: false,
        ..Default::default()
    }
}

pub(crate) fn rows(m: &Neighbors) -> Vec<Vec<(f32, u32)>> {
    m.offsets
        .windows(2)
        .map(|w| {
            (w[0] as usize..w[1] as usize)
                .map(|i| (m.distances[i], m.indices[i]))
                .collect()
        })
        .collect()
}

/// With `knn_traversal: boxes` (the default plane traversal answers the bag replays): the
/// traversal changes the device's time, never an answer.
#[test]
fn neighbours_over_dds_match_the_cpu_tree() {
    let domain = common::unique_domain();
    let params = ParamsFile::parse(
        "nearest_neighbors:\n  ros__parameters:\n    k: 3\n    knn_traversal: boxes\n",
    )
    .unwrap();
    let server = RosRuntime::new(RosArgs::default(), params, Some(domain)).unwrap();
    gpu_planning::nodes::start_all(&server).unwrap();
    let client_rt =
        RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let mut peer = NodeContext::new(&client_rt, "peer").unwrap();
    let cloud_pub = peer
        .publisher::<PointCloud2>("/nearest_neighbors/cloud", qos::map())
        .unwrap();
    let orient_pub = peer
        .publisher::<PoseArray>("/nearest_neighbors/orientations", qos::map())
        .unwrap();
    let query_pub = peer
        .publisher::<PointCloud2>("/nearest_neighbors/queries", qos::sensor())
        .unwrap();
    let out_sub = peer
        .subscription::<Neighbors>("/nearest_neighbors/neighbors", qos::result())
        .unwrap();
    let knn_client: ros2_client::Client<KNearestRequest, KNearestResponse> =
        peer.client::<KNearest>("/nearest_neighbors/knn").unwrap();
    let radius_client: ros2_client::Client<RadiusSearchRequest, RadiusSearchResponse> = peer
        .client::<RadiusSearch>("/nearest_neighbors/radius")
        .unwrap();
    let _a = common::run_in_background(&server);
    let _b = common::run_in_background(&client_rt);

    let seed = gpu_planning::compute::testing::seed(0);
    let mut rng = gpu_planning::rng::XorShift::new(seed);
    let mut unit = move || (rng.next_u64() % 1000) as f32 / 100.0;
    let mut pts: Vec<[f32; 3]> = (0..2000).map(|_| [unit(), unit(), unit()]).collect();
    pts[17] = [f32::NAN, 0.0, 0.0];
    pts[40] = pts[39];
    // A row with no returns, as a lidar's or depth camera's organized cloud has.
    for p in &mut pts[100..140] {
        *p = [f32::NAN; 3];
    }
    pts[1999] = [0.0, f32::INFINITY, 0.0];
    // The tree the node should hold is over the finite points; answers name points by their
    // index in the published cloud (PCL's convention), so tree indices map through `origin`.
    let origin: Vec<u32> = (0..pts.len() as u32)
        .filter(|&i| pts[i as usize].iter().all(|v| v.is_finite()))
        .collect();
    let kept: Vec<f32> = origin.iter().flat_map(|&i| pts[i as usize]).collect();
    let tree = build(&gpu_planning::Backend::Cpu, &Points::new(3, kept).unwrap()).unwrap();
    let in_cloud = |mut rows: Vec<Vec<(f32, u32)>>| {
        for e in rows.iter_mut().flatten() {
            e.1 = origin[e.1 as usize];
        }
        rows
    };
    let queries: Vec<f32> = (0..300).map(|_| unit()).collect();
    let quats: Vec<[f32; 4]> = gpu_planning::cellgraph::samples::shoemake(500, seed)
        .iter()
        .map(|q| q.map(|v| v as f32))
        .collect();
    let otree = build(
        &gpu_planning::Backend::Cpu,
        &Points::new(4, quats.iter().flatten().copied().collect()).unwrap(),
    )
    .unwrap();

    smol::block_on(async {
        common::settle_discovery("knn service", knn_client.wait_for_service(peer.node())).await;
        cloud_pub.async_publish(organized(&pts, 40)).await.unwrap();
        orient_pub
            .async_publish(PoseArray {
                poses: quats
                    .iter()
                    .map(|q| Pose {
                        orientation: Quaternion {
                            x: q[0] as f64,
                            y: q[1] as f64,
                            z: q[2] as f64,
                            w: q[3] as f64,
                        },
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .await
            .unwrap();
        let req = KNearestRequest {
            dimensions: 3,
            points: queries.clone(),
            k: 5,
        };
        // The trees build asynchronously: retry until the node has one.
        let mut r = call(&knn_client, req.clone()).await;
        for _ in 0..50 {
            if r.success {
                break;
            }
            assert!(r.error.contains("no ~/cloud"), "{}", r.error);
            smol::Timer::after(Duration::from_millis(100)).await;
            r = call(&knn_client, req.clone()).await;
        }
        assert!(r.success, "{}", r.error);
        assert_eq!(
            rows(&r.neighbors),
            in_cloud(knn(&tree, &queries, 5, Metric::Euclidean).unwrap())
        );

        let rr = call(
            &radius_client,
            RadiusSearchRequest {
                dimensions: 3,
                points: queries.clone(),
                radius: 1.5,
                max_count: 0,
            },
        )
        .await;
        assert!(rr.success, "{}", rr.error);
        assert_eq!(
            rows(&rr.neighbors),
            in_cloud(radius(&tree, &queries, 1.5, 0, Metric::Euclidean).unwrap())
        );

        // Orientations: 4-D queries, SO(3) metric.
        let oq: Vec<f32> = quats[..50].iter().flat_map(|q| q.map(|v| -v)).collect();
        let oreq = KNearestRequest {
            dimensions: 4,
            points: oq.clone(),
            k: 2,
        };
        let mut o = call(&knn_client, oreq.clone()).await;
        for _ in 0..50 {
            if o.success {
                break;
            }
            smol::Timer::after(Duration::from_millis(100)).await;
            o = call(&knn_client, oreq.clone()).await;
        }
        assert!(o.success, "{}", o.error);
        let want = knn(&otree, &oq, 2, Metric::So3).unwrap();
        assert_eq!(rows(&o.neighbors), want);
        assert!(want
            .iter()
            .enumerate()
            .all(|(i, w)| w[0] == (0.0, i as u32)));

        // ~/queries -> ~/neighbors with the parameter's k. The answer carries its queries'
        // header, so this waits for the answer to its own cloud (tagged by frame_id), not for
        // whatever sample the latched topic holds; best effort may drop a cloud, so it is re-sent.
        let qc: Vec<[f32; 3]> = queries.chunks(3).map(|c| [c[0], c[1], c[2]]).collect();
        let mut tagged = cloud(&qc);
        tagged.header.frame_id = format!("queries-{}", std::process::id());
        let s = out_sub.async_stream();
        futures::pin_mut!(s);
        let mut answer = None;
        for _ in 0..60 {
            query_pub.async_publish(tagged.clone()).await.unwrap();
            let got = futures::future::select(
                Box::pin(s.next()),
                Box::pin(smol::Timer::after(Duration::from_millis(500))),
            )
            .await;
            if let futures::future::Either::Left((Some(Ok((m, _))), _)) = got {
                if m.header.frame_id == tagged.header.frame_id {
                    answer = Some(m);
                    break;
                }
            }
        }
        let m = answer.expect("~/neighbors answering our ~/queries within 30 s");
        assert_eq!(m.k, 3);
        assert_eq!(
            rows(&m),
            in_cloud(knn(&tree, &queries, 3, Metric::Euclidean).unwrap())
        );

        // Bad requests name their field.
        for (bad, field) in [
            (
                KNearestRequest {
                    dimensions: 5,
                    points: vec![0.0; 5],
                    k: 1,
                },
                "dimensions",
            ),
            (
                KNearestRequest {
                    dimensions: 3,
                    points: vec![0.0; 4],
                    k: 1,
                },
                "points",
            ),
            (
                KNearestRequest {
                    dimensions: 3,
                    points: vec![0.0; 3],
                    k: 0,
                },
                "k",
            ),
            (
                KNearestRequest {
                    dimensions: 3,
                    points: vec![f32::NAN, 0.0, 0.0],
                    k: 1,
                },
                "queries[0]",
            ),
        ] {
            let e = call(&knn_client, bad).await;
            assert!(
                !e.success && e.error.contains(field),
                "{field}: {}",
                e.error
            );
        }
    });
    common::assert_device_did_the_work(&server, &["nearest_neighbors"]);
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}
