//! Node `cell_graph`: the cell graph of the latest quadric arrangement.
//!
//! In: `~/constraints` (QuadricArrangement: `count` and 10 unique coefficients per matrix, the
//! upper triangle row by row) and `~/samples` (geometry_msgs/PoseArray; the orientations are
//! the samples), both reliable + transient local. Until samples arrive, `sample_count` Shoemake
//! rotations from `seed` are used. Every new input rebuilds the graph, which is published on
//! `~/cell_graph` (CellGraph) and replaces the current one only when the build succeeds.
//! Services: `~/build` (BuildCellGraph: builds from the request, answers the graph, and makes
//! it current and published too) and `~/find_path` (FindRotationPath over the current graph).

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use ros2_client::Publisher;

use crate::cellgraph::samples::shoemake;
use crate::cellgraph::{build, Arrangement, CellGraph as Graph};
use crate::compute::Backend;
use crate::config::CellGraphParams;
use crate::error::{Error, Result};
use crate::ros::msg::geometry_msgs::{PoseArray, Quaternion};
use crate::ros::msg::gpu_planning::{
    BuildCellGraph, BuildCellGraphResponse, CellGraph, FindRotationPath, FindRotationPathResponse,
    QuadricArrangement,
};
use crate::ros::msg::std_msgs::Header;
use crate::ros::{qos, NodeContext, RosRuntime};

pub const NODE_NAME: &str = "cell_graph";

#[derive(Default)]
struct Inputs {
    constraints: Option<(Header, Arrangement)>,
    samples: Option<Vec<[f64; 4]>>,
}

struct State {
    inputs: Mutex<Inputs>,
    current: Mutex<Option<Arc<Graph>>>,
    params: CellGraphParams,
    backend: Backend,
    out: Publisher<CellGraph>,
}

pub fn start(rt: &RosRuntime) -> Result<String> {
    let mut ctx = NodeContext::new(rt, NODE_NAME)?;
    let params: CellGraphParams = ctx.params()?;
    let fq = ctx.fully_qualified_name();
    params.validate().map_err(|e| match e {
        Error::InvalidInput { field, reason } => Error::invalid(format!("{fq}.{field}"), reason),
        other => other,
    })?;
    let backend = Backend::select(params.backend)?;
    let constraints_sub = ctx.subscription::<QuadricArrangement>("~/constraints", qos::map())?;
    let samples_sub = ctx.subscription::<PoseArray>("~/samples", qos::map())?;
    let build_srv = ctx.server::<BuildCellGraph>("~/build")?;
    let path_srv = ctx.server::<FindRotationPath>("~/find_path")?;
    let state = Arc::new(State {
        inputs: Mutex::new(Inputs::default()),
        current: Mutex::new(None),
        params,
        backend,
        out: ctx.publisher("~/cell_graph", qos::map())?,
    });
    let shutdown = rt.shutdown().clone();

    let constraints = {
        let state = state.clone();
        async move {
            let s = constraints_sub.async_stream();
            futures::pin_mut!(s);
            while let Some(item) = s.next().await {
                let Ok((msg, _)) = item else {
                    tracing::error!("{NODE_NAME}: ~/constraints not decoded: {:?}", item.err());
                    continue;
                };
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
            let s = samples_sub.async_stream();
            futures::pin_mut!(s);
            while let Some(item) = s.next().await {
                let Ok((msg, _)) = item else {
                    tracing::error!("{NODE_NAME}: ~/samples not decoded: {:?}", item.err());
                    continue;
                };
                let q: Vec<[f64; 4]> = msg.poses.iter().map(|p| quat(&p.orientation)).collect();
                if q.len() > state.params.max_samples as usize {
                    tracing::error!(
                        "{NODE_NAME}: ~/samples rejected: poses: {} is above max_samples {}",
                        q.len(),
                        state.params.max_samples
                    );
                    continue;
                }
                lock(&state.inputs).samples = Some(q);
                rebuild(&state).await;
            }
        }
    };
    let builds = {
        let state = state.clone();
        async move {
            let s = build_srv.receive_request_stream();
            futures::pin_mut!(s);
            while let Some(item) = s.next().await {
                let Ok((id, req)) = item else {
                    tracing::error!("{NODE_NAME}: ~/build request not decoded: {:?}", item.err());
                    continue;
                };
                let st = state.clone();
                let header = req.constraints.header.clone();
                let result = smol::unblock(move || {
                    let arr = arrangement(&st.params, &req.constraints)?;
                    let samples: Vec<[f64; 4]> = if !req.samples.is_empty() {
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
                        req.samples.iter().map(quat).collect()
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
                        shoemake(req.sample_count as usize, req.seed)
                    };
                    let cfg = st.params.config(Some(&req.algorithm))?;
                    build_with_fallback(&st.backend, &arr, &samples, &cfg)
                })
                .await;
                let response = match result {
                    Ok(g) => {
                        let msg = message(&g, header);
                        install(&state, g, msg.clone());
                        BuildCellGraphResponse {
                            success: true,
                            error: String::new(),
                            graph: msg,
                        }
                    }
                    Err(e) => {
                        tracing::warn!("{NODE_NAME}: ~/build: {e}");
                        BuildCellGraphResponse {
                            success: false,
                            error: e.to_string(),
                            ..Default::default()
                        }
                    }
                };
                if let Err(e) = build_srv.async_send_response(id, response).await {
                    tracing::error!("{NODE_NAME}: ~/build response lost: {e:?}");
                }
            }
        }
    };
    let paths = {
        let state = state.clone();
        async move {
            let s = path_srv.receive_request_stream();
            futures::pin_mut!(s);
            while let Some(item) = s.next().await {
                let Ok((id, req)) = item else {
                    tracing::error!(
                        "{NODE_NAME}: ~/find_path request not decoded: {:?}",
                        item.err()
                    );
                    continue;
                };
                let current = lock(&state.current).clone();
                let result = match current {
                    None => Err(Error::invalid("graph", "no cell graph built yet")),
                    Some(g) => {
                        smol::unblock(move || g.path(quat(&req.start), quat(&req.goal))).await
                    }
                };
                let response = match result {
                    Ok(p) => FindRotationPathResponse {
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
                    },
                    Err(e) => {
                        tracing::warn!("{NODE_NAME}: ~/find_path: {e}");
                        FindRotationPathResponse {
                            success: false,
                            error: e.to_string(),
                            ..Default::default()
                        }
                    }
                };
                if let Err(e) = path_srv.async_send_response(id, response).await {
                    tracing::error!("{NODE_NAME}: ~/find_path response lost: {e:?}");
                }
            }
        }
    };
    rt.spawn(async move {
        let _ctx = ctx;
        let all = futures::future::join4(constraints, samples, builds, paths);
        futures::future::select(Box::pin(all), Box::pin(shutdown.wait())).await;
    });
    tracing::info!("{fq}: started");
    Ok(fq)
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

/// Device out of memory: the CPU still answers (slower), as a robot expects.
fn build_with_fallback(
    backend: &Backend,
    arr: &Arrangement,
    samples: &[[f64; 4]],
    cfg: &crate::cellgraph::Config,
) -> Result<Graph> {
    match build(backend, arr, samples, cfg) {
        Err(Error::OutOfMemory {
            requested_bytes, ..
        }) if !matches!(backend, Backend::Cpu) => {
            tracing::warn!(
                "{NODE_NAME}: {requested_bytes} bytes do not fit the device; building on the CPU"
            );
            build(&Backend::Cpu, arr, samples, cfg)
        }
        other => other,
    }
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
        let samples =
            samples.unwrap_or_else(|| shoemake(st.params.sample_count as usize, st.params.seed));
        let cfg = st.params.config(None)?;
        build_with_fallback(&st.backend, &arr, &samples, &cfg)
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
            let msg = message(&g, header);
            install(state, g, msg);
        }
        Err(e) => tracing::error!("{NODE_NAME}: cell graph not built: {e}"),
    }
}

fn install(state: &State, g: Graph, msg: CellGraph) {
    *lock(&state.current) = Some(Arc::new(g));
    if let Err(e) = state.out.publish(msg) {
        tracing::warn!("{NODE_NAME}: publishing ~/cell_graph failed: {e:?}");
    }
}

pub fn message(g: &Graph, header: Header) -> CellGraph {
    CellGraph {
        header,
        constraint_count: g.arrangement.len() as u32,
        words_per_cell: g.cells.bits.words as u32,
        cells: g.cells.bits.data.clone(),
        sample_counts: g.cells.counts.clone(),
        representatives: g.cells.representatives.clone(),
        edge_from: g.edges.from.clone(),
        edge_to: g.edges.to.clone(),
        edge_bits: g.edges.bit.clone(),
        sample_count: g.samples.len() as u32,
        algorithm: g.algorithm.name().into(),
        compute_time_s: g.classify_s + g.graph_s,
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
