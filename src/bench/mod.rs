//! Benchmarks behind `gpu_planning bench`: ours and a peer in the same run, same inputs.

pub mod apsp;
pub mod cellgraph;
pub mod kdtree;
pub mod lee;
pub mod polyline;
pub mod primitives;

use std::time::Instant;

/// Median wall time in milliseconds of `reps` runs of `f` after one warm-up run.
pub fn median_ms<F: FnMut()>(reps: usize, mut f: F) -> f64 {
    f();
    let mut t: Vec<f64> = (0..reps.max(1))
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}
