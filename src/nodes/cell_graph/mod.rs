//! Node `cell_graph`: the cell graph of the latest quadric arrangement.
//!
//! In: `~/constraints` (QuadricArrangement: `count` and 10 unique coefficients per matrix, the
//! upper triangle row by row) and `~/samples` (geometry_msgs/PoseArray; the orientations are
//! the samples), both reliable + transient local. Until samples arrive, `sample_count` Shoemake
//! rotations from `seed` are used. Every new input rebuilds the graph, which is published on
//! `~/cell_graph` (CellGraph) and replaces the current one only when the build succeeds.
//! Services: `~/build` (BuildCellGraph: builds from the request, answers the graph, and makes
//! it current and published too) and `~/find_path` (FindRotationPath over the current graph).
//!
//! `~/cell_graph` and `~/markers` are latched, and a graph goes out on each only once that
//! topic has a reader (then at once): a build's megabytes of messages are not made while
//! nobody listens, nor made beside the answer of the next request, and a reader that joins
//! later still gets the latest graph, as the latching promises.

pub mod params;

pub use params::CellGraphParams;

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use ros2_client::Publisher;

use crate::cancel::{self, CancelFlag};
use crate::cellgraph::samples::{ShoemakeCache, UnitSamples};
use crate::cellgraph::{Arrangement, Builder, CellGraph as Graph};
use crate::compute::{warmup, Backend};
use crate::error::{Error, Result};
use crate::nodes::latched;
use crate::nodes::markers;
use crate::nodes::serve::serve;
use crate::nodes::subscribe::messages;
use crate::ros::msg::geometry_msgs::{PoseArray, Quaternion};
use crate::ros::msg::gpu_planning_msgs::{
    BuildCellGraph, BuildCellGraphRequest, BuildCellGraphResponse, CellGraph, FindRotationPath,
    FindRotationPathRequest, FindRotationPathResponse, QuadricArrangement,
};
use crate::ros::msg::std_msgs::Header;
use crate::ros::msg::visualization_msgs::MarkerArray;
use crate::ros::work::NodeWork;
use crate::ros::{qos, NodeContext, RosRuntime};
use crate::sync::lock;

pub const NODE_NAME: &str = "cell_graph";

#[derive(Default)]
struct Inputs {
    constraints: Option<(Header, Arrangement)>,
    samples: Option<UnitSamples>,
}

struct State {
    inputs: Mutex<Inputs>,
    current: Mutex<Option<Arc<Graph>>>,
    params: CellGraphParams,
    /// The node's backend and its out-of-memory policy.
    builder: Builder,
    work: NodeWork,
    out: Publisher<CellGraph>,
    markers: Publisher<MarkerArray>,
    /// The latest graph not yet published, with its header, and a wake-up for the task that
    /// publishes it.
    unpublished: Mutex<Option<(Arc<Graph>, Header)>>,
    wake: smol::channel::Sender<()>,
    shoemake: ShoemakeCache,
}

pub fn start(rt: &RosRuntime) -> Result<String> {
    let defaults = crate::ros::node_params::declared_defaults::<
        crate::nodes::cell_graph::CellGraphParams,
    >(true);
    let mut ctx = NodeContext::with_params(rt, NODE_NAME, defaults, params::PARAMS)?;
    let params: CellGraphParams = ctx.params()?;
    let fq = ctx.fully_qualified_name();
    params.validate().map_err(|e| e.under(format!("{fq}.")))?;
    let backend = Backend::select(params.backend)?.for_node(params.gpu_priority)?;
    warmup::spawn(&backend, &fq, crate::cellgraph::gpu::modules());
    // The service keys as they are now (`cpu_fallback` is read at start).
    let live_limits = ctx.live::<crate::ros::node_params::ServiceParams>()?;
    let cpu_fallback = live_limits.get().cpu_fallback;
    let constraints_sub = ctx.subscription::<QuadricArrangement>("~/constraints", qos::map())?;
    let samples_sub = ctx.subscription::<PoseArray>("~/samples", qos::map())?;
    let build_srv = ctx.server::<BuildCellGraph>("~/build")?;
    let path_srv = ctx.server::<FindRotationPath>("~/find_path")?;
    // Capacity 1: a wake-up already queued covers every graph installed before it is taken.
    let (wake_tx, wake_rx) = smol::channel::bounded(1);
    let state = Arc::new(State {
        inputs: Mutex::new(Inputs::default()),
        current: Mutex::new(None),
        params,
        builder: Builder::new(&backend, cpu_fallback, NODE_NAME),
        work: ctx.work(),
        out: ctx.publisher("~/cell_graph", qos::map())?,
        markers: ctx.publisher("~/markers", qos::result())?,
        unpublished: Mutex::new(None),
        wake: wake_tx,
        shoemake: ShoemakeCache::default(),
    });
    let shutdown = rt.shutdown().clone();

    let constraints = {
        let state = state.clone();
        async move {
            let s = messages(&constraints_sub, NODE_NAME, "~/constraints");
            futures::pin_mut!(s);
            while let Some(msg) = s.next().await {
                match arrangement(&state.params, &msg) {
                    Ok(a) => lock(&state.inputs).constraints = Some((msg.header, a)),
                    Err(e) => {
                        tracing::error!("{NODE_NAME}: ~/constraints rejected: {e}");
                        continue;
                    }
                }
                rebuild(&state).await;
            }
        }
    };
    let samples = {
        let state = state.clone();
        async move {
            let s = messages(&samples_sub, NODE_NAME, "~/samples");
            futures::pin_mut!(s);
            while let Some(msg) = s.next().await {
                let q: Vec<[f64; 4]> = msg.poses.iter().map(|p| quat(&p.orientation)).collect();
                if q.len() > state.params.max_samples as usize {
                    tracing::error!(
                        "{NODE_NAME}: ~/samples rejected: poses: {} is above max_samples {}",
                        q.len(),
                        state.params.max_samples
                    );
                    continue;
                }
                // Normalised once here, off the executor's thread, not at every rebuild.
                match smol::unblock(move || UnitSamples::new(&q)).await {
                    Ok(s) => lock(&state.inputs).samples = Some(s),
                    Err(e) => {
                        tracing::error!("{NODE_NAME}: ~/samples rejected: {e}");
                        continue;
                    }
                }
                rebuild(&state).await;
            }
        }
    };
    let builds = {
        let state = state.clone();
        serve(
            rt,
            build_srv,
            format!("{NODE_NAME}: ~/build"),
            &live_limits,
            move |req: BuildCellGraphRequest, cancel: CancelFlag| {
                let state = state.clone();
                async move {
                    let st = state.clone();
                    let header = req.constraints.header.clone();
                    let g = cancel::unblock(&cancel, move || build_request(&st, &req)).await?;
                    // A build dropped at its deadline never gets here: the graph stays.
                    let msg = message(&g, header.clone());
                    install(&state, g, header);
                    Ok(BuildCellGraphResponse {
                        success: true,
                        error: String::new(),
                        graph: msg,
                    })
                }
            },
        )
    };
    let paths = {
        let state = state.clone();
        serve(
            rt,
            path_srv,
            format!("{NODE_NAME}: ~/find_path"),
            &live_limits,
            move |req: FindRotationPathRequest, cancel: CancelFlag| {
                let current = lock(&state.current).clone();
                async move {
                    let g = current
                        .ok_or_else(|| Error::invalid("graph", "no cell graph built yet"))?;
                    let p =
                        cancel::unblock(&cancel, move || g.path(quat(&req.start), quat(&req.goal)))
                            .await?;
                    Ok(FindRotationPathResponse {
                        success: true,
                        error: String::new(),
                        reachable: p.reachable,
                        cells: p.cells,
                        waypoints: p
                            .waypoints
                            .iter()
                            .map(|q| Quaternion {
                                x: q[0],
                                y: q[1],
                                z: q[2],
                                w: q[3],
                            })
                            .collect(),
                    })
                }
            },
        )
    };
    rt.spawn(async move {
        let all = futures::future::join5(
            constraints,
            samples,
            builds,
            paths,
            publish_latest(state, wake_rx, &ctx),
        );
        futures::future::select(Box::pin(all), Box::pin(shutdown.wait())).await;
    });
    tracing::info!("{fq}: started");
    Ok(fq)
}

/// The graph a ~/build request asks for (its samples, or `sample_count` Shoemake ones).
fn build_request(st: &State, req: &BuildCellGraphRequest) -> Result<Graph> {
    let arr = arrangement(&st.params, &req.constraints)?;
    let samples = if !req.samples.is_empty() {
        if req.samples.len() > st.params.max_samples as usize {
            return Err(Error::invalid(
                "samples",
                format!(
                    "{} is above max_samples {}",
                    req.samples.len(),
                    st.params.max_samples
                ),
            ));
        }
        let raw: Vec<[f64; 4]> = req.samples.iter().map(quat).collect();
        UnitSamples::new(&raw)?
    } else if req.sample_count == 0 {
        return Err(Error::invalid(
            "sample_count",
            "0 while samples is empty: give samples or a count",
        ));
    } else if req.sample_count > st.params.max_samples {
        return Err(Error::invalid(
            "sample_count",
            format!(
                "{} is above max_samples {}",
                req.sample_count, st.params.max_samples
            ),
        ));
    } else {
        st.shoemake.get(req.sample_count as usize, req.seed)?
    };
    let cfg = st.params.config(Some(&req.algorithm))?;
    build_with_fallback(st, &arr, samples, &cfg)
}

fn quat(q: &Quaternion) -> [f64; 4] {
    [q.x, q.y, q.z, q.w]
}

/// A QuadricArrangement message, checked against the node's caps.
pub fn arrangement(p: &CellGraphParams, m: &QuadricArrangement) -> Result<Arrangement> {
    if m.count > p.max_constraints {
        return Err(Error::invalid(
            "count",
            format!("{} is above max_constraints {}", m.count, p.max_constraints),
        ));
    }
    Arrangement::from_unique(m.count as usize, &m.coefficients)
}

/// Builds on the node's backend, on the CPU when the device is out of memory and allowed.
fn build_with_fallback(
    st: &State,
    arr: &Arrangement,
    samples: UnitSamples,
    cfg: &crate::cellgraph::Config,
) -> Result<Graph> {
    let (graph, ran) = st.builder.build(arr, samples, cfg)?;
    st.work.record(ran);
    Ok(graph)
}

/// Rebuilds from the latest topic inputs (when constraints have arrived).
async fn rebuild(state: &Arc<State>) {
    let (header, arr, samples) = {
        let i = lock(&state.inputs);
        let Some((h, a)) = i.constraints.clone() else {
            return;
        };
        (h, a, i.samples.clone())
    };
    let st = state.clone();
    let result = smol::unblock(move || {
        let samples = match samples {
            Some(s) => s,
            None => st
                .shoemake
                .get(st.params.sample_count as usize, st.params.seed)?,
        };
        let cfg = st.params.config(None)?;
        build_with_fallback(&st, &arr, samples, &cfg)
    })
    .await;
    match result {
        Ok(g) => {
            tracing::info!(
                "{NODE_NAME}: {} samples, {} constraints: {} cells, {} edges in {:.3} s",
                g.samples.len(),
                g.arrangement.len(),
                g.cells.len(),
                g.edges.len(),
                g.classify_s + g.graph_s
            );
            install(state, g, header);
        }
        Err(e) => tracing::error!("{NODE_NAME}: cell graph not built: {e}"),
    }
}

/// Makes `g` the graph ~/find_path answers on at once, and hands it to the publishing task:
/// a ~/build response does not wait for the ~/cell_graph and ~/markers messages (a megabyte
/// and more of DDS fragments at a few hundred thousand samples).
fn install(state: &State, g: Graph, header: Header) {
    let g = Arc::new(g);
    *lock(&state.current) = Some(g.clone());
    *lock(&state.unpublished) = Some((g, header));
    let _ = state.wake.try_send(());
}

/// Publishes each installed graph on ~/cell_graph and ~/markers once that topic has a reader
/// (`latched`); a graph replaced before its turn is skipped (both topics are latched: a reader
/// that joins later gets the latest, which is all they keep anyway).
async fn publish_latest(state: Arc<State>, wake: smol::channel::Receiver<()>, ctx: &NodeContext) {
    let installed = wake.filter_map(|()| {
        let taken = lock(&state.unpublished).take();
        async move { taken.map(|g| (g, [true, true])) }
    });
    let topics: [&dyn latched::Topic; 2] = [&state.out, &state.markers];
    latched::publish_when_read(ctx.node(), topics, installed, |g, now| {
        let st = state.clone();
        smol::unblock(move || publish(&st, &g.0, g.1.clone(), now))
    })
    .await;
}

/// `topics`: whether to publish on ~/cell_graph, on ~/markers.
fn publish(state: &State, g: &Graph, header: Header, topics: [bool; 2]) {
    if topics[0] {
        if let Err(e) = state.out.publish(message(g, header.clone())) {
            tracing::warn!("{NODE_NAME}: publishing ~/cell_graph failed: {e:?}");
        }
    }
    if topics[1] {
        let representatives: Vec<[f64; 4]> = g
            .cells
            .representatives
            .iter()
            .map(|&i| {
                g.samples
                    .get(i as usize)
                    .copied()
                    .unwrap_or([0.0, 0.0, 0.0, 1.0])
            })
            .collect();
        let edges = g.edges.from.iter().copied().zip(g.edges.to.iter().copied());
        let marks = markers::rotations(
            &header,
            "cells",
            &representatives,
            &g.cells.counts,
            edges,
            state.params.max_markers as usize,
        );
        if let Err(e) = state.markers.publish(marks) {
            tracing::warn!("{NODE_NAME}: publishing ~/markers failed: {e:?}");
        }
    }
}

pub fn message(g: &Graph, header: Header) -> CellGraph {
    // The arrays are copied side by side: a megabyte and more into fresh pages at 44,000
    // samples, on a ~/build's way to its answer.
    let ((cells, sample_counts), ((representatives, edge_bits), (edge_from, edge_to))) =
        rayon::join(
            || (g.cells.bits.data.clone(), g.cells.counts.clone()),
            || {
                rayon::join(
                    || (g.cells.representatives.clone(), g.edges.bit.clone()),
                    || (g.edges.from.clone(), g.edges.to.clone()),
                )
            },
        );
    CellGraph {
        header,
        constraint_count: g.arrangement.len() as u32,
        words_per_cell: g.cells.bits.words as u32,
        cells,
        sample_counts,
        representatives,
        edge_from,
        edge_to,
        edge_bits,
        sample_count: g.samples.len() as u32,
        algorithm: g.algorithm.name().into(),
        compute_time_s: g.classify_s + g.graph_s,
    }
}
