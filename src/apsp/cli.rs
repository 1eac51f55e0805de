//! `gpu_planning apsp`: all-pairs shortest paths of a graph file, answering (u, v) queries.

use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use super::config::DEFAULT_MAX_VERTICES;
use super::io::{read_graph, IdBase};
use super::{solve, Config, Distances, MemoryModel};
use crate::compute::{Backend, BackendKind};
use crate::error::{Error, Result};

/// `gpu_planning apsp`'s flags: a graph file, pairs to answer, the variant and the cap.
#[derive(Debug, Args)]
pub struct ApspArgs {
    /// CSV with header `from,to,weight` (0-based ids) or DIMACS `.gr` (1-based ids, reported
    /// back 1-based).
    #[arg(long)]
    pub graph: PathBuf,
    /// Vertex count (default: the .gr `p` line, or the largest id + 1 of a CSV).
    #[arg(long)]
    pub vertices: Option<u32>,
    /// A pair "U,V" to answer; repeat for more.
    #[arg(long = "query")]
    pub queries: Vec<String>,
    /// linear | coalesced | shared | blocked | tiled
    #[arg(long, default_value = Config::default().memory_model.name())]
    pub memory_model: String,
    /// k-block of the tiled model (16, 32, 64; 0: by size, see apsp::config::AUTO_LARGE_FROM).
    #[arg(long, default_value_t = Config::default().tile)]
    pub tile: u32,
    /// Cells per thread along each axis in the tiled model (1, 2, 4, 8; 0 with tile 0).
    #[arg(long, default_value_t = Config::default().thread_tile)]
    pub thread_tile: u32,
    /// Refuse graphs with more vertices (the node's max_vertices; n x n matrices take 8 n^2
    /// bytes on host and device, and the CPU solve n^3 steps).
    #[arg(long, default_value_t = DEFAULT_MAX_VERTICES)]
    pub max_vertices: u32,
    /// auto (CUDA when a device is there), cpu or cuda.
    #[arg(long, default_value = "auto")]
    pub backend: BackendKind,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

fn parse_pair(s: &str, base: u32) -> Result<(u32, u32)> {
    let bad = || Error::invalid("--query", format!("'{s}' is not U,V (two vertex ids)"));
    let (u, v) = s.split_once(',').ok_or_else(bad)?;
    let id = |x: &str| -> Result<u32> {
        let x: u32 = x.trim().parse().map_err(|_| bad())?;
        x.checked_sub(base).ok_or_else(|| {
            Error::invalid(
                "--query",
                format!("'{s}': ids of this file start at {base}"),
            )
        })
    };
    Ok((id(u)?, id(v)?))
}

/// Reads the graph, solves it, and prints the asked pairs' distances and paths.
pub fn run(a: ApspArgs) -> Result<()> {
    let memory_model: MemoryModel = a.memory_model.parse().map_err(|_| {
        Error::invalid(
            "--memory-model",
            format!(
                "'{}' is not one of linear, coalesced, shared, blocked, tiled",
                a.memory_model
            ),
        )
    })?;
    let config = Config {
        memory_model,
        tile: a.tile,
        thread_tile: a.thread_tile,
        ..Config::default()
    };
    let (graph, base) = read_graph(&a.graph, a.vertices)?;
    if graph.vertices > a.max_vertices {
        return Err(Error::invalid(
            "vertices",
            format!(
                "{} is above --max-vertices {} (distances and successors take 8 n^2 = {:.1} GB)",
                graph.vertices,
                a.max_vertices,
                8.0 * (graph.vertices as f64).powi(2) / 1e9
            ),
        ));
    }
    let base = if base == IdBase::One { 1 } else { 0 };
    let pairs: Vec<(u32, u32)> = a
        .queries
        .iter()
        .map(|q| parse_pair(q, base))
        .collect::<Result<_>>()?;
    let backend = Backend::select(a.backend)?;
    let n = graph.vertices;
    let solution = match solve(&backend, &graph, &config) {
        Ok(s) => s,
        Err(Error::NegativeCycle { vertex, cycle }) => {
            let shown = |v: u32| v + base;
            if a.json {
                let c = cycle
                    .as_ref()
                    .map(|c| c.iter().map(|&v| shown(v)).collect::<Vec<_>>());
                println!(
                    "{}",
                    json!({"vertices": n, "negative_cycle": true, "vertex": shown(vertex), "cycle": c})
                );
            }
            return Err(Error::NegativeCycle {
                vertex: shown(vertex),
                cycle: cycle.map(|c| c.into_iter().map(shown).collect()),
            });
        }
        Err(e) => return Err(e),
    };
    let int = matches!(solution.distances, Distances::Int(_));
    let mut answers = Vec::new();
    for &(u, v) in &pairs {
        let p = solution.query(u, v).map_err(|e| match e {
            Error::InvalidInput { reason, .. } => {
                Error::invalid("--query", format!("{},{}: {reason}", u + base, v + base))
            }
            other => other,
        })?;
        answers.push(p);
    }
    if a.json {
        let queries: Vec<_> = answers
            .iter()
            .map(|p| {
                let distance = match (p.reachable, int) {
                    (false, _) => serde_json::Value::Null,
                    (true, true) => json!(p.distance as i64),
                    (true, false) => json!(p.distance),
                };
                json!({
                    "from": p.from + base,
                    "to": p.to + base,
                    "reachable": p.reachable,
                    "distance": distance,
                    "path": p.path.iter().map(|&v| v + base).collect::<Vec<_>>(),
                })
            })
            .collect();
        println!(
            "{}",
            json!({"vertices": n, "negative_cycle": false, "queries": queries})
        );
    } else {
        println!(
            "{n} vertices, {} edges: solved on {} ({}) in {:.3} s",
            graph.from.len(),
            solution.backend,
            solution.memory_model.name(),
            solution.compute_s
        );
        for p in &answers {
            let (u, v) = (p.from + base, p.to + base);
            if p.reachable {
                let path: Vec<String> = p.path.iter().map(|&x| (x + base).to_string()).collect();
                println!("{u} -> {v}: distance {} via {}", p.distance, path.join(" "));
            } else {
                println!("{u} -> {v}: unreachable");
            }
        }
    }
    Ok(())
}
