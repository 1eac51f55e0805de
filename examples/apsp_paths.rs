//! All-pairs shortest paths (Floyd-Warshall) on a small road graph, then any pair's distance
//! and path from the solution. The solver is kept: each new graph is one more `solve`.
//!
//!     cargo run --release --example apsp_paths

use gpu_planning::apsp::{Config, Graph, Solver, Weights};
use gpu_planning::compute::{Backend, BackendKind};

fn main() -> gpu_planning::error::Result<()> {
    // Five junctions, one-way streets with travel times in seconds.
    let graph = Graph {
        vertices: 5,
        from: vec![0, 0, 1, 2, 3, 1, 4],
        to: vec![1, 2, 3, 3, 4, 4, 0],
        weights: Weights::Int(vec![7, 3, 2, 9, 4, 12, 5]),
    };
    let backend = Backend::select(BackendKind::Auto)?;
    let solver = Solver::new(&backend, Config::default())?;
    let solution = solver.solve(&graph)?;
    for (u, v) in [(0, 4), (2, 0), (4, 3)] {
        let p = solution.query(u, v)?;
        println!(
            "{u} -> {v}: {} s along {:?} (solved on {})",
            p.distance, p.path, solution.backend
        );
    }
    Ok(())
}
