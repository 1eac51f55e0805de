//! The apsp node over DDS: a peer publishes a random graph with negative edges, calls
//! ~/shortest_path and checks distances and paths against the solver on the CPU (same
//! relaxation order as the node's default, so successors match too); bad requests get an error
//! naming the field and the node keeps serving; a graph with a negative cycle is reported on
//! ~/status and does not replace the solved one. Backend auto: the GPU on the device machine.

use std::time::Duration;

use futures::StreamExt;
use gpu_planning::apsp::synth::random_graph;
use gpu_planning::apsp::{Config, Weights};
use gpu_planning::compute::Backend;
use gpu_planning::ros::msg::gpu_planning_msgs::{
    ApspStatus, ShortestPath, ShortestPathRequest, ShortestPathResponse, WeightedGraph,
};
use gpu_planning::ros::{qos, NodeContext, ParamsFile, RosArgs, RosRuntime};

use crate::common;

async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    match futures::future::select(
        Box::pin(f),
        Box::pin(smol::Timer::after(Duration::from_secs(30))),
    )
    .await
    {
        futures::future::Either::Left((v, _)) => v,
        futures::future::Either::Right(_) => panic!("{what}: nothing within 30 s"),
    }
}

/// A service call retried on timeout: a request sent before discovery matched is lost.
async fn call(
    client: &ros2_client::Client<ShortestPathRequest, ShortestPathResponse>,
    req: ShortestPathRequest,
) -> ShortestPathResponse {
    for _ in 0..15 {
        let attempt = futures::future::select(
            Box::pin(client.async_call_service(req.clone())),
            Box::pin(smol::Timer::after(Duration::from_secs(2))),
        )
        .await;
        match attempt {
            futures::future::Either::Left((Ok(r), _)) => return r,
            futures::future::Either::Left((Err(e), _)) => eprintln!("call failed: {e:?}"),
            _ => eprintln!("call timed out"),
        }
    }
    panic!("no response to shortest_path within 30 s");
}

fn message(g: &gpu_planning::apsp::Graph) -> WeightedGraph {
    let Weights::Int(w) = &g.weights else {
        unreachable!()
    };
    let mut m = WeightedGraph {
        vertex_count: g.vertices,
        edge_from: g.from.clone(),
        edge_to: g.to.clone(),
        integer_weights: w.clone(),
        ..Default::default()
    };
    m.header.frame_id = "graph".into();
    m
}

#[test]
fn shortest_path_over_dds_matches_the_solver() {
    check_over_dds(20);
}

/// Responses of tens of KB go out as DATA_FRAG with inline QoS (related_sample_identity);
/// upstream rustdds 0.15.1 malformed those (third_party/rustdds/PATCHED.md).
#[test]
fn large_shortest_path_responses_over_dds() {
    check_over_dds(2000);
}

fn check_over_dds(pairs: u32) {
    let domain = common::unique_domain();
    let server = RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    gpu_planning::nodes::start_all(&server).unwrap();
    let client_rt =
        RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let mut peer = NodeContext::new(&client_rt, "peer").unwrap();
    let graph_pub = peer
        .publisher::<WeightedGraph>("/apsp/graph", qos::map())
        .unwrap();
    let status_sub = peer
        .subscription::<ApspStatus>("/apsp/status", qos::map())
        .unwrap();
    let client = peer.client::<ShortestPath>("/apsp/shortest_path").unwrap();
    let _a = common::run_in_background(&server);
    let _b = common::run_in_background(&client_rt);

    let seed = gpu_planning::compute::testing::seed(0x9a9);
    let g = random_graph(150, 0.1, 0, 6, 20, seed);
    let want = gpu_planning::apsp::solve(&Backend::Cpu, &g, &Config::default()).unwrap();
    let n = g.vertices;
    let (sources, targets): (Vec<u32>, Vec<u32>) = (0..pairs)
        .map(|i| ((i * 37) % n, (i * 101 + 7) % n))
        .unzip();

    smol::block_on(async {
        common::settle_discovery("service", client.wait_for_service(peer.node())).await;
        graph_pub.async_publish(message(&g)).await.unwrap();
        let s = status_sub.async_stream();
        futures::pin_mut!(s);
        let status = within("~/status", s.next()).await.unwrap().unwrap().0;
        assert_eq!(status.error, "");
        assert_eq!(
            (status.vertex_count, status.header.frame_id.as_str()),
            (n, "graph")
        );
        assert!(!status.negative_cycle);
        if gpu_planning::compute::testing::cuda_required() {
            // On the device the answer must come from the GPU, not a silent CPU fallback.
            assert_eq!(status.backend, "cuda", "{status:?}");
        }

        let req = ShortestPathRequest {
            sources: sources.clone(),
            targets: targets.clone(),
        };
        let r = call(&client, req.clone()).await;
        assert!(r.success, "{}", r.error);
        assert_eq!(r.path_offsets.len(), sources.len() + 1);
        for (i, (&u, &v)) in sources.iter().zip(&targets).enumerate() {
            let p = want.query(u, v).unwrap();
            assert_eq!(r.distances[i], p.distance, "pair {u} {v}");
            assert_eq!(r.reachable[i], p.reachable);
            let (a, b) = (r.path_offsets[i] as usize, r.path_offsets[i + 1] as usize);
            assert_eq!(&r.path_vertices[a..b], p.path.as_slice(), "pair {u} {v}");
        }

        // Bad requests: an error naming the field; the next request is served.
        let bad = call(
            &client,
            ShortestPathRequest {
                sources: vec![0, n],
                targets: vec![1, 2],
            },
        )
        .await;
        assert!(
            !bad.success && bad.error.contains("sources[1]"),
            "{}",
            bad.error
        );
        let bad = call(
            &client,
            ShortestPathRequest {
                sources: vec![0],
                targets: vec![],
            },
        )
        .await;
        assert!(
            !bad.success && bad.error.contains("targets"),
            "{}",
            bad.error
        );

        // A negative cycle is reported and the solved graph stays.
        let cyc = random_graph(5, 0.0, 0, 0, 0, 1);
        let mut m = message(&cyc);
        m.edge_from = vec![0, 1, 2];
        m.edge_to = vec![1, 2, 0];
        m.integer_weights = vec![1, -5, 1];
        graph_pub.async_publish(m).await.unwrap();
        let status = within("~/status", s.next()).await.unwrap().unwrap().0;
        assert!(status.negative_cycle, "{status:?}");
        assert!((0..3).contains(&status.negative_cycle_vertex));
        assert!(status.error.contains("negative cycle"), "{}", status.error);
        let r = call(&client, req).await;
        assert!(r.success);
        assert_eq!(
            r.distances[0],
            want.query(sources[0], targets[0]).unwrap().distance
        );
    });
    common::assert_device_did_the_work(&server, &["apsp"]);
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}
