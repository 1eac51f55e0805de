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

/// A deterministic xorshift generator, so benchmark inputs are reproducible from a seed.
pub struct XorShift(u64);

impl XorShift {
    pub fn new(seed: u64) -> Self {
        XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}
