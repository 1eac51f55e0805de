//! Node `apsp`: all-pairs shortest paths of the latest graph.
//!
//! In: `~/graph` (gpu_planning_msgs/msg/WeightedGraph, reliable + transient local); each graph is
//! solved once, whole, and replaces the previous one only when that succeeds. Service
//! `~/shortest_path` (ShortestPath: pairs -> distances, reachable flags, paths, or an error).
//! Out: `~/status` (ApspStatus) after every graph, also when it was refused.

pub mod params;

pub use params::ApspParams;

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use ros2_client::Publisher;

use crate::apsp::{Graph, Solution, Solver, Weights};
use crate::cancel::{self, CancelFlag};
use crate::compute::{warmup, Backend};
use crate::error::{Error, Result};
use crate::nodes::serve::serve;
use crate::nodes::subscribe::messages;
use crate::ros::msg::gpu_planning_msgs::{
    ApspStatus, ShortestPath, ShortestPathRequest, ShortestPathResponse, WeightedGraph,
};
use crate::ros::work::NodeWork;
use crate::ros::{qos, NodeContext, RosRuntime};
use crate::sync::lock;

pub const NODE_NAME: &str = "apsp";

/// The solved graph a query reads; replaced whole, so a query never sees half of one.
type Shared = Arc<Mutex<Option<Arc<Solution>>>>;

pub fn start(rt: &RosRuntime) -> Result<String> {
    let defaults =
        crate::ros::node_params::declared_defaults::<crate::nodes::apsp::ApspParams>(true);
    let mut ctx = NodeContext::with_params(rt, NODE_NAME, defaults, params::PARAMS)?;
    let params: ApspParams = ctx.params()?;
    params
        .validate()
        .map_err(|e| e.under(format!("{}.", ctx.fully_qualified_name())))?;
    let backend = Backend::select(params.backend)?.for_node(params.gpu_priority)?;
    // The service keys as they are now (`cpu_fallback` is read at start).
    let live_limits = ctx.live::<crate::ros::node_params::ServiceParams>()?;
    let cpu_fallback = live_limits.get().cpu_fallback;
    let fq = ctx.fully_qualified_name();
    let work = ctx.work();
    warmup::spawn(
        &backend,
        &fq,
        crate::apsp::gpu::modules(&params.solver_config()),
    );
    let solver = Arc::new(
        Solver::new(&backend, params.solver_config())?.with_cpu_fallback(cpu_fallback, NODE_NAME),
    );
    let state: Shared = Arc::new(Mutex::new(None));
    let graph_sub = ctx.subscription::<WeightedGraph>("~/graph", qos::map())?;
    let server = ctx.server::<ShortestPath>("~/shortest_path")?;
    let status: Publisher<ApspStatus> = ctx.publisher("~/status", qos::map())?;
    let params = Arc::new(params);
    let shutdown = rt.shutdown().clone();

    let graphs = {
        let (state, params) = (state.clone(), params.clone());
        async move {
            let mut received = 0u64;
            let s = messages(&graph_sub, NODE_NAME, "~/graph");
            futures::pin_mut!(s);
            while let Some(msg) = s.next().await {
                received += 1;
                let header = msg.header.clone();
                let (p, solver) = (params.clone(), solver.clone());
                let mut report = ApspStatus {
                    header,
                    vertex_count: msg.vertex_count,
                    edge_count: u32::try_from(msg.edge_from.len()).unwrap_or(u32::MAX),
                    backend: backend.name().into(),
                    memory_model: params.memory_model.name().into(),
                    negative_cycle_vertex: -1,
                    graphs_received: received,
                    ..ApspStatus::default()
                };
                let work = work.clone();
                // The solve has a deadline of its own: past max_solve_s it is cancelled.
                let cancel = CancelFlag::new();
                let timer = {
                    let (cancel, limit) = (cancel.clone(), params.max_solve_s);
                    smol::spawn(async move {
                        smol::Timer::after(std::time::Duration::from_secs_f64(limit)).await;
                        cancel.cancel();
                    })
                };
                let solved =
                    cancel::unblock(&cancel, move || solve_message(&work, &solver, &p, msg)).await;
                drop(timer);
                let solved = solved.map_err(|e| match e {
                    Error::Cancelled => Error::invalid(
                        "graph",
                        format!(
                            "solve stopped after max_solve_s = {} s (the previous graph stays)",
                            params.max_solve_s
                        ),
                    ),
                    other => other,
                });
                match solved {
                    Ok(solution) => {
                        report.compute_time_s = solution.compute_s;
                        // Where it ran: the CPU after a device out-of-memory fallback.
                        report.backend = solution.backend.to_string();
                        tracing::info!(
                            "{NODE_NAME}: graph of {} vertices solved on {} in {:.3} s",
                            solution.vertices,
                            solution.backend,
                            solution.compute_s
                        );
                        *lock(&state) = Some(Arc::new(solution));
                    }
                    Err(e) => {
                        if let Error::NegativeCycle { vertex, .. } = &e {
                            report.negative_cycle = true;
                            report.negative_cycle_vertex = *vertex as i64;
                        }
                        tracing::error!("{NODE_NAME}: graph rejected: {e}");
                        report.error = e.to_string();
                    }
                }
                if let Err(e) = status.publish(report) {
                    tracing::warn!("{NODE_NAME}: publishing ~/status failed: {e:?}");
                }
            }
        }
    };
    let requests = {
        let state = state.clone();
        serve(
            rt,
            server,
            format!("{NODE_NAME}: ~/shortest_path"),
            &live_limits,
            move |req: ShortestPathRequest, cancel: CancelFlag| {
                tracing::debug!("{NODE_NAME}: ~/shortest_path: {} pairs", req.sources.len());
                let solution = lock(&state).clone();
                // Answering reads the solved matrices only: cheap, but off the DDS executor.
                let p = params.clone();
                async move {
                    cancel::unblock(&cancel, move || answer(solution.as_deref(), &p, &req)).await
                }
            },
        )
    };
    rt.spawn(async move {
        let _ctx = ctx;
        let all = futures::future::join(graphs, requests);
        futures::future::select(Box::pin(all), Box::pin(shutdown.wait())).await;
    });
    tracing::info!("{fq}: started");
    Ok(fq)
}

/// WeightedGraph -> Graph, with the message's field names in errors; its ids and weights are
/// checked when it is solved ([`crate::apsp::solve`]).
pub fn graph_from_message(msg: WeightedGraph, max_vertices: u32) -> Result<Graph> {
    let n = msg.vertex_count;
    if n > max_vertices {
        return Err(Error::invalid(
            "vertex_count",
            format!("{n} is above the max_vertices parameter ({max_vertices})"),
        ));
    }
    for (field, len) in [
        ("vertex_names", msg.vertex_names.len()),
        ("vertex_poses", msg.vertex_poses.len()),
    ] {
        if len != 0 && len != n as usize {
            return Err(Error::invalid(
                field,
                format!("has {len} entries; must be empty or vertex_count ({n})"),
            ));
        }
    }
    let weights = match (msg.weights.is_empty(), msg.integer_weights.is_empty()) {
        (false, false) => {
            return Err(Error::invalid(
                "weights",
                "both weights and integer_weights are set; send exactly one",
            ))
        }
        (true, false) => Weights::Int(msg.integer_weights),
        _ => Weights::Float(msg.weights),
    };
    let g = Graph {
        vertices: n,
        from: msg.edge_from,
        to: msg.edge_to,
        weights,
    };
    // The ids and weights are checked by the solve, on the backend it runs on (the device
    // for CUDA), with the same errors: not twice.
    g.validate_lengths()?;
    Ok(g)
}

fn solve_message(
    work: &NodeWork,
    solver: &Solver,
    p: &ApspParams,
    msg: WeightedGraph,
) -> Result<Solution> {
    let g = graph_from_message(msg, p.max_vertices)?;
    let solution = solver.solve(&g)?;
    work.record(solution.backend);
    Ok(solution)
}

/// Answers pairs from a solved graph.
pub fn answer(
    solution: Option<&Solution>,
    params: &ApspParams,
    req: &ShortestPathRequest,
) -> Result<ShortestPathResponse> {
    let s = solution.ok_or_else(|| Error::invalid("graph", "no graph solved yet"))?;
    if req.sources.len() != req.targets.len() {
        return Err(Error::invalid(
            "targets",
            format!(
                "has {} entries but sources has {}",
                req.targets.len(),
                req.sources.len()
            ),
        ));
    }
    if req.sources.len() > params.max_pairs as usize {
        return Err(Error::invalid(
            "sources",
            format!(
                "{} pairs is above max_pairs {}",
                req.sources.len(),
                params.max_pairs
            ),
        ));
    }
    let mut r = ShortestPathResponse {
        success: true,
        path_offsets: vec![0],
        ..ShortestPathResponse::default()
    };
    for (i, (&u, &v)) in req.sources.iter().zip(&req.targets).enumerate() {
        let p = s.query(u, v).map_err(|e| match e {
            Error::InvalidInput { field, reason } => {
                let f = if field == "from" {
                    "sources"
                } else {
                    "targets"
                };
                Error::invalid(format!("{f}[{i}]"), reason)
            }
            other => other,
        })?;
        r.distances.push(p.distance);
        r.reachable.push(p.reachable);
        if (r.path_vertices.len() + p.path.len()) as u64 > params.max_path_vertices {
            return Err(Error::invalid(
                "sources",
                format!(
                    "the paths of pairs 0..={i} hold more than max_path_vertices {} vertices; \
                     ask for fewer pairs per request",
                    params.max_path_vertices
                ),
            ));
        }
        r.path_vertices.extend_from_slice(&p.path);
        r.path_offsets.push(offset_u32(r.path_vertices.len())?);
    }
    Ok(r)
}

/// A length as a u32 message offset, refused (not truncated) past u32.
fn offset_u32(n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::invalid("path_offsets", format!("{n} is above u32")))
}
