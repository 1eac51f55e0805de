//! Rotation samples: given quaternions (normalised here), or Shoemake's uniform random
//! rotations from a seed, the same on every backend and thread count.

use crate::error::{Error, Result};

/// SplitMix64: a counter-based generator, so sample i depends only on (seed, i).
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn unit(seed: u64, i: u64, k: u64) -> f64 {
    (splitmix64(seed ^ splitmix64(i.wrapping_mul(3).wrapping_add(k))) >> 11) as f64
        / (1u64 << 53) as f64
}

/// n uniform random rotations (Shoemake 1992) as unit quaternions (x, y, z, w).
pub fn shoemake(n: usize, seed: u64) -> Vec<[f64; 4]> {
    use rayon::prelude::*;
    (0..n as u64)
        .into_par_iter()
        .map(|i| {
            let (u1, u2, u3) = (unit(seed, i, 0), unit(seed, i, 1), unit(seed, i, 2));
            let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
            let (t2, t3) = (std::f64::consts::TAU * u2, std::f64::consts::TAU * u3);
            [a * t2.sin(), a * t2.cos(), b * t3.sin(), b * t3.cos()]
        })
        .collect()
}

/// Quaternions scaled to unit length; zero or non-finite ones are errors naming the index
/// (the first such). Parallel, in one pass over the samples into a vector of known length (a
/// collect into `Option<Vec>` cannot write in place and was slower than two passes); the bad
/// one is looked for only when there is one. At millions of samples this is most of a whole
/// call's host work.
pub fn normalised(raw: &[[f64; 4]]) -> Result<Vec<[f64; 4]>> {
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    let norm = |q: &[f64; 4]| (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    let bad = |n: f64| !(n.is_finite() && n > 0.0);
    let any_bad = AtomicBool::new(false);
    let unit: Vec<[f64; 4]> = raw
        .par_iter()
        .map(|q| {
            let n = norm(q);
            if bad(n) {
                any_bad.store(true, Ordering::Relaxed);
            }
            [q[0] / n, q[1] / n, q[2] / n, q[3] / n]
        })
        .collect();
    // The join that ends the collect orders every store before this load.
    if !any_bad.load(Ordering::Relaxed) {
        return Ok(unit);
    }
    let i = raw.iter().position(|q| bad(norm(q))).unwrap_or(0);
    let q = raw.get(i).copied().unwrap_or_default();
    Err(Error::invalid(
        format!("samples[{i}]"),
        format!("{q:?} has no direction (norm {})", norm(&q)),
    ))
}
