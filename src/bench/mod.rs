//! Benchmarks behind `gpu_planning bench`: ours and a peer in the same run, same inputs.

pub mod apsp;
pub mod cancel;
pub mod cellgraph;
pub mod first_call;
mod harness;
pub mod kdtree;
pub mod lee;
pub mod lee_map;
pub mod mixed_load;
pub mod polyline;
pub mod primitives;
pub mod services;

pub use harness::{median, median_ms, try_median_ms, write_file, write_npy};

use clap::Subcommand;

use crate::error::Result;

/// `gpu_planning bench ...`.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Radix sort, scan and compaction: CUDA against rayon on the CPU.
    Primitives(primitives::Args),
    /// Cell graph: every algorithm on Shoemake samples and random arrangements, and the CPU.
    Cellgraph(cellgraph::Args),
    /// k-d tree: build phases and exact kNN queries, CUDA against the CPU.
    Kdtree(kdtree::Args),
    /// Floyd–Warshall: every memory model and the CPU solvers on random graphs.
    Apsp(apsp::Args),
    /// Polyline: the seed's guides x points table, CUDA against the CPU DP.
    Polyline(polyline::Args),
    /// Lee wave: every memory model and the CPU BFS on random terrain and mazes.
    Lee(lee::Args),
    /// Each service's first call in a fresh process against its warm calls.
    FirstCall(first_call::Args),
    /// get_plan latency alone and beside all-pairs solves and cell graphs on the same GPU.
    MixedLoad(mixed_load::Args),
    /// Every node's service called over DDS, end to end, on each backend.
    Services(services::Args),
    /// How soon a cancelled plan stops, per Lee memory model and the costmap planner.
    Cancel(cancel::Args),
}

impl BenchCommand {
    pub fn run(self) -> Result<()> {
        match self {
            BenchCommand::Primitives(a) => a.run(),
            BenchCommand::Cellgraph(a) => a.run(),
            BenchCommand::Kdtree(a) => a.run(),
            BenchCommand::Apsp(a) => a.run(),
            BenchCommand::Polyline(a) => a.run(),
            BenchCommand::Lee(a) => a.run(),
            BenchCommand::FirstCall(a) => a.run(),
            BenchCommand::MixedLoad(a) => a.run(),
            BenchCommand::Services(a) => a.run(),
            BenchCommand::Cancel(a) => a.run(),
        }
    }
}
