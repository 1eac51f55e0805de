//! Floyd–Warshall all-pairs shortest paths with successors, on directed graphs with integer
//! (exact, i32) or float (f32) weights, negative edges allowed and negative cycles reported.
//! The CPU loops in [`cpu`] are the references; every GPU memory model in [`gpu`] returns the
//! same distances and the successor matrix of the reference that relaxes in its order.

#![warn(missing_docs)]

pub mod cli;
pub mod config;
pub mod cpu;
pub mod gpu;
pub mod graph;
pub mod io;
pub mod paths;
pub mod solution;
pub mod solver;
pub mod synth;
pub mod weight;

pub use config::{Config, MemoryModel, BLOCKED_TILE};
pub use graph::{Graph, Weights, NO_VERTEX};
pub use paths::NegativeCycle;
pub use solution::{Distances, PairPath, Solution};
pub use solver::Solver;
pub use weight::Weight;

use std::time::Instant;

use rayon::prelude::*;

use crate::compute::staging::host_vec;
use crate::compute::Backend;
use crate::error::{Error, Result};
use graph::{dense, padded};
use paths::{
    bellman_ford_cycle, has_zero_weight_cycle, negative_cycle, repair_on_zero_weight_cycles,
};

// The dispatch: a graph in, distances and successors out, on the CPU or a GPU memory model.

/// Solves `graph`; a negative cycle is `Error::NegativeCycle`. A caller that solves many
/// graphs, or falls back to the CPU, keeps a [`Solver`].
pub fn solve(backend: &Backend, graph: &Graph, config: &Config) -> Result<Solution> {
    config.validate()?;
    let started = Instant::now();
    match backend {
        // The ids and weights are checked on the device (DeviceMatrices::from_edges).
        Backend::Cuda(_) if graph.vertices > 0 => graph.validate_lengths()?,
        _ => graph.validate()?,
    }
    let n = graph.vertices as usize;
    let (distances, successors) = match &graph.weights {
        Weights::Int(w) => {
            let (d, h) = solve_typed(backend, graph, w, config)?;
            (Distances::Int(d), h)
        }
        Weights::Float(w) => {
            let (d, h) = solve_typed(backend, graph, w, config)?;
            (Distances::Float(d), h)
        }
    };
    Ok(Solution {
        vertices: n,
        distances,
        successors,
        backend: backend.name(),
        memory_model: config.memory_model,
        compute_s: started.elapsed().as_secs_f64(),
    })
}

fn solve_typed<T: Weight>(
    backend: &Backend,
    graph: &Graph,
    w: &[T],
    config: &Config,
) -> Result<(Vec<T>, Vec<u32>)> {
    let n = graph.vertices as usize;
    let np = padded_size(n, config);
    let (d, mut h, zero_cycle) = match backend {
        Backend::Cpu => {
            let (mut d, mut h) = dense(n, np, &graph.from, &graph.to, w);
            run(backend, &mut d, &mut h, np, config)?;
            let (d, h) = finish(d, h, n, np);
            let zero_cycle = has_zero_weight_cycle(&graph.from, &graph.to, w, &d, n);
            (d, h, zero_cycle)
        }
        Backend::Cuda(rt) => on_device(rt, graph, w, np, config)?,
    };
    let edge = |u, v| lightest_edge(graph, w, u, v);
    if let Some(c) = negative_cycle(&d, &h, n, edge) {
        let cycle = c
            .cycle
            .or_else(|| bellman_ford_cycle(&graph.from, &graph.to, w, n, edge));
        return Err(Error::NegativeCycle {
            vertex: c.vertex,
            cycle,
        });
    }
    if zero_cycle {
        let repaired = repair_on_zero_weight_cycles(&graph.from, &graph.to, w, &d, &mut h, n);
        tracing::debug!("apsp: rebuilt successors of {repaired} targets on zero-weight cycles");
    }
    Ok((d, h))
}

/// The finished solution from the device (what [`finish`] makes on the host) and whether the
/// graph has a zero-weight cycle: the edges are checked and the start matrices built there
/// ([`gpu::DeviceMatrices::from_edges`]), so the host neither fills nor uploads np x np
/// matrices, and the answer's vectors are mapped while the device solves.
fn on_device<T: Weight>(
    rt: &std::sync::Arc<crate::compute::cuda::CudaRuntime>,
    graph: &Graph,
    w: &[T],
    np: usize,
    config: &Config,
) -> Result<(Vec<T>, Vec<u32>, bool)> {
    let n = graph.vertices as usize;
    if n == 0 {
        return Ok((Vec::new(), Vec::new(), false));
    }
    let lap = Instant::now();
    // The edges go up first, the pool's threads all theirs (the staging copy is the host's
    // memory work that the device waits for); the answer's pages are then mapped over the
    // pool while the device solves (n = 2000: 32 MB of pages, about the solve's 2.3 ms, and
    // the solve's launches queued meanwhile from this thread). Mapped beside the upload they
    // halved its pace: 3.4M edges took 1.5-2.6 ms to go up.
    let mut m = gpu::DeviceMatrices::from_edges(rt, config, n, np, &graph.from, &graph.to, w)?;
    let up = lap.elapsed();
    let (((mut d, mut h), pages), device) = rayon::join(
        || {
            let answer = (host_vec::<T>(n * n), host_vec::<u32>(n * n));
            (answer, lap.elapsed())
        },
        || -> Result<_> {
            m.solve(config)?;
            Ok(lap.elapsed())
        },
    );
    let solving = device?;
    let queued = lap.elapsed();
    let zero_cycle = m.verdict(config, &graph.from, &graph.to, w)?;
    m.download_finished(config, n, &mut d, &mut h)?;
    let ms = |t: std::time::Duration| t.as_secs_f64() * 1e3;
    tracing::debug!(
        "apsp on the device: edges up {:.2} ms (their checks queued), then solve queued {:.2} and \
         answer's pages {:.2} (both {:.2}); the solve's end, the checks' verdict and the download \
         {:.2}",
        ms(up),
        ms(solving),
        ms(pages),
        ms(queued),
        ms(lap.elapsed() - queued)
    );
    Ok((d, h, zero_cycle))
}

/// Matrix side the model runs on: a multiple of its tile for the blocked orders.
pub fn padded_size(n: usize, config: &Config) -> usize {
    if config.memory_model.is_blocked() {
        padded(n, config.blocked_shape(n).0 as usize)
    } else {
        n
    }
}

/// Runs `config`'s model in place on padded start matrices.
pub fn run<T: Weight>(
    backend: &Backend,
    d: &mut [T],
    h: &mut [u32],
    np: usize,
    config: &Config,
) -> Result<()> {
    if np == 0 {
        return Ok(());
    }
    match backend {
        Backend::Cpu => {
            if config.memory_model.is_blocked() {
                cpu::blocked(d, h, np, config.blocked_shape(np).0 as usize)
            } else {
                cpu::textbook(d, h, np)
            }
        }
        Backend::Cuda(rt) => {
            let mut m = gpu::DeviceMatrices::upload(rt, d, h, np)?;
            m.solve(config)?;
            m.download(d, h)
        }
    }
}

/// Crops padding and maps everything unreached to (INF, NO_VERTEX): in place when there is
/// no padding, over the pool by rows either way (one thread took 37 ms at n = 2000).
pub fn finish<T: Weight>(
    mut d: Vec<T>,
    mut h: Vec<u32>,
    n: usize,
    np: usize,
) -> (Vec<T>, Vec<u32>) {
    let unreached = |d: &mut [T], h: &mut [u32]| {
        for (x, s) in d.iter_mut().zip(h.iter_mut()) {
            if !x.reached() {
                *x = T::INF;
                *s = NO_VERTEX;
            }
        }
    };
    if n == 0 {
        return (Vec::new(), Vec::new());
    }
    if np == n {
        d.par_chunks_mut(n)
            .zip(h.par_chunks_mut(n))
            .for_each(|(d, h)| unreached(d, h));
        return (d, h);
    }
    // Every cell is written below: the pages only need mapping, over the pool.
    let mut od = host_vec::<T>(n * n);
    let mut oh = host_vec::<u32>(n * n);
    od.par_chunks_mut(n)
        .zip(oh.par_chunks_mut(n))
        .enumerate()
        .for_each(|(i, (od, oh))| {
            od.copy_from_slice(&d[i * np..i * np + n]);
            oh.copy_from_slice(&h[i * np..i * np + n]);
            unreached(od, oh);
        });
    (od, oh)
}

fn lightest_edge<T: Weight>(g: &Graph, w: &[T], u: u32, v: u32) -> Option<T> {
    let mut best: Option<T> = None;
    for ((&a, &b), &x) in g.from.iter().zip(&g.to).zip(w) {
        if a == u && b == v && best.is_none_or(|m| x < m) {
            best = Some(x);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apsp::weight::{INT_INF, INT_REACH_LIMIT};

    /// `finish` against its definition, cell by cell: unpadded in place, padded cropped, at
    /// sizes around the pool's row pieces, with reached, unreached and run-away values.
    #[test]
    fn finish_crops_padding_and_marks_the_unreached() {
        let mut rng = crate::rng::XorShift::new(7);
        for (n, np) in [(0, 0), (1, 1), (1, 4), (5, 5), (5, 8), (63, 64), (100, 128)] {
            let d: Vec<i32> = (0..np * np)
                .map(|_| match rng.next_u64() % 4 {
                    0 => INT_INF,
                    1 => INT_REACH_LIMIT + (rng.next_u64() % 1000) as i32,
                    _ => (rng.next_u64() % 2000) as i32 - 1000,
                })
                .collect();
            let h: Vec<u32> = (0..np * np).map(|_| (rng.next_u64() % 97) as u32).collect();
            let (od, oh) = finish(d.clone(), h.clone(), n, np);
            assert_eq!((od.len(), oh.len()), (n * n, n * n), "n {n} np {np}");
            for i in 0..n {
                for j in 0..n {
                    let (x, s) = (d[i * np + j], h[i * np + j]);
                    let want = if x < INT_REACH_LIMIT {
                        (x, s)
                    } else {
                        (INT_INF, NO_VERTEX)
                    };
                    assert_eq!(
                        (od[i * n + j], oh[i * n + j]),
                        want,
                        "n {n} np {np} ({i}, {j})"
                    );
                }
            }
        }
    }
}
