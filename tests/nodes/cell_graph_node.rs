//! The cell_graph node over DDS: constraints on the topic build a graph from generated samples
//! (published on ~/cell_graph); ~/build with given samples answers the graph the CPU builds;
//! bad requests name their field; ~/find_path walks the current graph. Backend auto: the GPU
//! on the device machine.

use std::time::Duration;

use futures::StreamExt;
use gpu_planning::cellgraph::samples::shoemake;
use gpu_planning::cellgraph::{build, Algorithm, Arrangement, Config};
use gpu_planning::compute::Backend;
use gpu_planning::ros::msg::geometry_msgs::Quaternion;
use gpu_planning::ros::msg::gpu_planning_msgs::{
    BuildCellGraph, BuildCellGraphRequest, BuildCellGraphResponse, CellGraph, FindRotationPath,
    FindRotationPathRequest, FindRotationPathResponse, QuadricArrangement,
};
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

fn arrangement_message(a: &Arrangement) -> QuadricArrangement {
    QuadricArrangement {
        count: a.len() as u32,
        coefficients: a.coefficients.iter().flatten().copied().collect(),
        ..Default::default()
    }
}

fn check(msg: &CellGraph, want: &gpu_planning::cellgraph::CellGraph) {
    assert_eq!(msg.cells, want.cells.bits.data);
    assert_eq!(msg.sample_counts, want.cells.counts);
    assert_eq!(msg.representatives, want.cells.representatives);
    assert_eq!(msg.edge_from, want.edges.from);
    assert_eq!(msg.edge_to, want.edges.to);
    assert_eq!(msg.edge_bits, want.edges.bit);
    assert_eq!(msg.sample_count as usize, want.samples.len());
    assert_eq!(msg.words_per_cell as usize, want.cells.bits.words);
}

#[test]
fn cell_graph_over_dds_matches_the_cpu() {
    let domain = common::unique_domain();
    let params =
        ParamsFile::parse("cell_graph:\n  ros__parameters:\n    sample_count: 4000\n    seed: 5\n")
            .unwrap();
    let server = RosRuntime::new(RosArgs::default(), params, Some(domain)).unwrap();
    gpu_planning::nodes::start_all(&server).unwrap();
    let client_rt =
        RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let mut peer = NodeContext::new(&client_rt, "peer").unwrap();
    let constraints_pub = peer
        .publisher::<QuadricArrangement>("/cell_graph/constraints", qos::map())
        .unwrap();
    let graph_sub = peer
        .subscription::<CellGraph>("/cell_graph/cell_graph", qos::map())
        .unwrap();
    let build_client: ros2_client::Client<BuildCellGraphRequest, BuildCellGraphResponse> =
        peer.client::<BuildCellGraph>("/cell_graph/build").unwrap();
    let path_client: ros2_client::Client<FindRotationPathRequest, FindRotationPathResponse> = peer
        .client::<FindRotationPath>("/cell_graph/find_path")
        .unwrap();
    let _a = common::run_in_background(&server);
    let _b = common::run_in_background(&client_rt);

    let arr = Arrangement::random(7, gpu_planning::compute::testing::seed(0xc0));
    smol::block_on(async {
        common::settle_discovery("build service", build_client.wait_for_service(peer.node())).await;
        // Topic: generated samples (sample_count, seed from the parameters).
        constraints_pub
            .async_publish(arrangement_message(&arr))
            .await
            .unwrap();
        let s = graph_sub.async_stream();
        futures::pin_mut!(s);
        let msg = futures::future::select(
            Box::pin(s.next()),
            Box::pin(smol::Timer::after(Duration::from_secs(30))),
        )
        .await;
        let futures::future::Either::Left((Some(Ok((msg, _))), _)) = msg else {
            panic!("no ~/cell_graph within 30 s");
        };
        let want = build(&Backend::Cpu, &arr, &shoemake(4000, 5), &Config::default()).unwrap();
        check(&msg, &want);
        assert!(!want.edges.is_empty());

        // Service: given samples (with a repeat and an antipode), the tree algorithm.
        let mut samples = shoemake(3000, 9);
        samples.push(samples[10]);
        samples.push(samples[11].map(|v| -v));
        let q = |s: &[f64; 4]| Quaternion {
            x: s[0],
            y: s[1],
            z: s[2],
            w: s[3],
        };
        let req = BuildCellGraphRequest {
            constraints: arrangement_message(&arr),
            samples: samples.iter().map(q).collect(),
            algorithm: "tree".into(),
            ..Default::default()
        };
        let r = call(&build_client, req.clone()).await;
        assert!(r.success, "{}", r.error);
        let cfg = Config {
            algorithm: Algorithm::Tree,
            ..Config::default()
        };
        let want = build(&Backend::Cpu, &arr, &samples, &cfg).unwrap();
        check(&r.graph, &want);
        assert_eq!(r.graph.algorithm, "tree");

        // Bad requests name their field; the node keeps serving.
        let mut bad = req.clone();
        bad.constraints.coefficients.pop();
        let e = call(&build_client, bad).await;
        assert!(
            !e.success && e.error.contains("coefficients"),
            "{}",
            e.error
        );
        let mut bad = req.clone();
        bad.algorithm = "magic".into();
        let e = call(&build_client, bad).await;
        assert!(!e.success && e.error.contains("algorithm"), "{}", e.error);
        let mut bad = req.clone();
        bad.samples[2] = Quaternion::default();
        let e = call(&build_client, bad).await;
        assert!(!e.success && e.error.contains("samples[2]"), "{}", e.error);

        // Paths over the graph the last good ~/build made current.
        let p = call(
            &path_client,
            FindRotationPathRequest {
                start: q(&samples[0]),
                goal: q(&samples[1]),
            },
        )
        .await;
        assert!(p.success, "{}", p.error);
        let wp = want.path(samples[0], samples[1]).unwrap();
        assert_eq!(p.reachable, wp.reachable);
        assert_eq!(p.cells, wp.cells);
        let e = call(
            &path_client,
            FindRotationPathRequest {
                start: Quaternion::default(),
                goal: q(&samples[1]),
            },
        )
        .await;
        assert!(!e.success && e.error.contains("start"), "{}", e.error);
    });
    common::assert_device_did_the_work(&server, &["cell_graph"]);
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}

/// Builds made while nobody reads ~/cell_graph and ~/markers are held, not published; a reader
/// that joins afterwards gets the latest of them on each topic, as latched topics promise.
#[test]
fn a_late_reader_gets_the_latest_graph() {
    use gpu_planning::ros::msg::visualization_msgs::MarkerArray;
    let domain = common::unique_domain();
    let server = RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    gpu_planning::nodes::start_all(&server).unwrap();
    let client_rt =
        RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let mut peer = NodeContext::new(&client_rt, "late_peer").unwrap();
    let build_client: ros2_client::Client<BuildCellGraphRequest, BuildCellGraphResponse> =
        peer.client::<BuildCellGraph>("/cell_graph/build").unwrap();
    let _a = common::run_in_background(&server);
    let _b = common::run_in_background(&client_rt);
    let arr = Arrangement::random(6, gpu_planning::compute::testing::seed(0xc1));
    smol::block_on(async {
        common::settle_discovery("build service", build_client.wait_for_service(peer.node())).await;
        let mut last = None;
        for count in [1500, 2500] {
            let req = BuildCellGraphRequest {
                constraints: arrangement_message(&arr),
                sample_count: count,
                seed: 3,
                ..Default::default()
            };
            let r = call(&build_client, req).await;
            assert!(r.success, "{}", r.error);
            last = Some(r.graph);
        }
        let last = last.unwrap();
        assert_eq!(last.sample_count, 2500);
        let graph_sub = peer
            .subscription::<CellGraph>("/cell_graph/cell_graph", qos::map())
            .unwrap();
        let markers_sub = peer
            .subscription::<MarkerArray>("/cell_graph/markers", qos::map())
            .unwrap();
        let within = Duration::from_secs(30);
        let g = graph_sub.async_stream();
        futures::pin_mut!(g);
        let got =
            futures::future::select(Box::pin(g.next()), Box::pin(smol::Timer::after(within))).await;
        let futures::future::Either::Left((Some(Ok((msg, _))), _)) = got else {
            panic!("no ~/cell_graph within 30 s of a late reader");
        };
        assert_eq!(msg.sample_count, 2500, "the latest graph");
        assert_eq!(msg.cells, last.cells);
        assert_eq!(msg.edge_from, last.edge_from);
        assert_eq!(msg.edge_to, last.edge_to);
        let m = markers_sub.async_stream();
        futures::pin_mut!(m);
        let got =
            futures::future::select(Box::pin(m.next()), Box::pin(smol::Timer::after(within))).await;
        let futures::future::Either::Left((Some(Ok((marks, _))), _)) = got else {
            panic!("no ~/markers within 30 s of a late reader");
        };
        // The deletion marker, then one arrow per shown cell (at most max_markers).
        assert!(marks.markers.len() > 1);
    });
    common::assert_device_did_the_work(&server, &["cell_graph"]);
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}
