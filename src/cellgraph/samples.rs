//! Rotation samples: given quaternions (normalised here), or Shoemake's uniform random
//! rotations from a seed, the same on every backend and thread count.

use std::ops::Deref;
use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};
use crate::sync::lock;

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

/// Rotation i of a Shoemake set (Shoemake 1992) as a quaternion (x, y, z, w).
fn rotation(seed: u64, i: u64) -> [f64; 4] {
    let (u1, u2, u3) = (unit(seed, i, 0), unit(seed, i, 1), unit(seed, i, 2));
    let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
    let (t2, t3) = (std::f64::consts::TAU * u2, std::f64::consts::TAU * u3);
    [a * t2.sin(), a * t2.cos(), b * t3.sin(), b * t3.cos()]
}

/// n uniform random rotations (Shoemake 1992) as unit quaternions (x, y, z, w).
pub fn shoemake(n: usize, seed: u64) -> Vec<[f64; 4]> {
    use rayon::prelude::*;
    (0..n as u64)
        .into_par_iter()
        .map(|i| rotation(seed, i))
        .collect()
}

/// Quaternions scaled to unit length; zero or non-finite ones are errors naming the index
/// (the first such). Parallel, in one pass over the samples into a vector of known length (a
/// collect into `Option<Vec>` cannot write in place and was slower than two passes); the bad
/// one is looked for only when there is one. At millions of samples this is most of a whole
/// call's host work.
pub fn normalised(raw: &[[f64; 4]]) -> Result<Vec<[f64; 4]>> {
    normalise_each(raw.len(), |i| raw[i])
}

/// [`normalised`] over the quaternions `q(0..n)`, made as they are scaled.
fn normalise_each(n: usize, q: impl Fn(usize) -> [f64; 4] + Sync) -> Result<Vec<[f64; 4]>> {
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    let norm = |q: &[f64; 4]| (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    let bad = |n: f64| !(n.is_finite() && n > 0.0);
    let any_bad = AtomicBool::new(false);
    let unit: Vec<[f64; 4]> = (0..n)
        .into_par_iter()
        .map(|i| {
            let q = q(i);
            let n = norm(&q);
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
    let i = (0..n).position(|i| bad(norm(&q(i)))).unwrap_or(0);
    let q = if n > 0 { q(i) } else { [0.0; 4] };
    Err(Error::invalid(
        format!("samples[{i}]"),
        format!("{q:?} has no direction (norm {})", norm(&q)),
    ))
}

/// Samples scaled to unit length by [`normalised`], shared: a node keeps one set across the
/// builds that use it, and each graph holds the set it was built on without a copy.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitSamples(Arc<Vec<[f64; 4]>>);

impl UnitSamples {
    /// `raw` normalised; errors as [`normalised`].
    pub fn new(raw: &[[f64; 4]]) -> Result<UnitSamples> {
        Ok(UnitSamples(Arc::new(normalised(raw)?)))
    }

    /// `n` Shoemake rotations from `seed`, normalised: [`shoemake`] then [`normalised`], in
    /// one pass (each rotation scaled as it is made: the same arithmetic, so the same set,
    /// without the raw set in memory between the two).
    pub fn shoemake(n: usize, seed: u64) -> Result<UnitSamples> {
        Ok(UnitSamples(Arc::new(normalise_each(n, |i| {
            rotation(seed, i as u64)
        })?)))
    }
}

impl UnitSamples {
    /// Whether both are one set in memory (not merely equal).
    pub fn shares(&self, other: &UnitSamples) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The last Shoemake set made, by (count, seed): a node's builds that ask for it again (every
/// rebuild over its `sample_count` samples, a ~/build repeating a count and seed) share it
/// instead of making it again (at 44,000 samples about 0.5 ms of the host's time, at 4M tens
/// of ms). Holds one set at most.
#[derive(Default)]
pub struct ShoemakeCache(Mutex<Option<((usize, u64), UnitSamples)>>);

impl ShoemakeCache {
    /// [`UnitSamples::shoemake`]`(n, seed)`, the kept set when it is that one.
    pub fn get(&self, n: usize, seed: u64) -> Result<UnitSamples> {
        if let Some((_, s)) = lock(&self.0).as_ref().filter(|(key, _)| *key == (n, seed)) {
            return Ok(s.clone());
        }
        let s = UnitSamples::shoemake(n, seed)?;
        *lock(&self.0) = Some(((n, seed), s.clone()));
        Ok(s)
    }
}

impl Deref for UnitSamples {
    type Target = [[f64; 4]];

    fn deref(&self) -> &[[f64; 4]] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_shares_one_set_per_count_and_seed() {
        let cache = ShoemakeCache::default();
        let a = cache.get(100, 1).unwrap();
        assert_eq!(a, UnitSamples::shoemake(100, 1).unwrap());
        assert!(cache.get(100, 1).unwrap().shares(&a));
        let b = cache.get(100, 2).unwrap();
        assert!(!b.shares(&a));
        assert_eq!(b, UnitSamples::shoemake(100, 2).unwrap());
        let c = cache.get(101, 2).unwrap();
        assert!(!c.shares(&b) && c.len() == 101);
        // One set kept: the first is made anew, equal but not shared.
        let a2 = cache.get(100, 1).unwrap();
        assert!(!a2.shares(&a) && a2 == a);
    }

    #[test]
    fn a_kept_shoemake_set_is_the_raw_set_normalised_bit_for_bit() {
        for (n, seed) in [(0, 1), (1, 2), (1000, 7), (44_000, 1)] {
            let one_pass = UnitSamples::shoemake(n, seed).unwrap();
            let two_passes = normalised(&shoemake(n, seed)).unwrap();
            let bits =
                |s: &[[f64; 4]]| -> Vec<u64> { s.iter().flatten().map(|x| x.to_bits()).collect() };
            assert_eq!(bits(&one_pass), bits(&two_passes), "n = {n}, seed = {seed}");
        }
    }

    #[test]
    fn unit_samples_are_normalised_and_bad_ones_named() {
        let s = UnitSamples::new(&[[0.0, 0.0, 0.0, 2.0], [3.0, 0.0, 4.0, 0.0]]).unwrap();
        assert_eq!(&s[..], &[[0.0, 0.0, 0.0, 1.0], [0.6, 0.0, 0.8, 0.0]]);
        let e = UnitSamples::new(&[[1.0, 0.0, 0.0, 0.0], [0.0; 4], [f64::NAN, 0.0, 0.0, 1.0]])
            .unwrap_err()
            .to_string();
        assert!(e.contains("samples[1]"), "{e}");
    }
}
