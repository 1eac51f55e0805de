//! Bit vectors of samples: bit i of q is [q^T A_i q >= 0], packed 64 per word (bit i in word
//! i / 64 at bit i % 64), and each vector's XOR hash (see [`bit_key`]).

use rayon::prelude::*;

use super::arrangement::{form, monomials, Arrangement};
use super::samples::splitmix64;

/// The random 64-bit key z_i of constraint i. H(x) = XOR of z_i over the set bits of x, so
/// flipping bit k changes H by z_k: every neighbour candidate costs one probe.
#[inline]
pub fn bit_key(i: usize) -> u64 {
    splitmix64(0xce11_9a9b_0000_0000 ^ i as u64)
}

/// All keys z_0..z_{l-1}.
pub fn bit_keys(l: usize) -> Vec<u64> {
    (0..l).map(bit_key).collect()
}

/// Bit vectors of many samples, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct Bits {
    /// u64 words per row (l bits rounded up).
    pub words: usize,
    /// Rows of `words` words each.
    pub data: Vec<u64>,
}

impl Bits {
    /// Row i's words.
    pub fn row(&self, i: usize) -> &[u64] {
        &self.data[i * self.words..(i + 1) * self.words]
    }

    /// The number of rows.
    pub fn rows(&self) -> usize {
        self.data.len().checked_div(self.words).unwrap_or(0)
    }
}

/// One sample's bit vector into `out` (words long).
pub fn classify_one(arr: &Arrangement, q: &[f64; 4], out: &mut [u64]) {
    out.fill(0);
    let m = monomials(q);
    for (i, c) in arr.coefficients.iter().enumerate() {
        if form(c, &m) >= 0.0 {
            out[i / 64] |= 1 << (i % 64);
        }
    }
}

/// The CPU classification (rayon over samples).
pub fn classify(arr: &Arrangement, samples: &[[f64; 4]]) -> Bits {
    let words = arr.words();
    let mut data = vec![0u64; samples.len() * words];
    data.par_chunks_mut(words)
        .zip(samples.par_iter())
        .for_each(|(row, q)| classify_one(arr, q, row));
    Bits { words, data }
}

/// H of one bit vector.
pub fn hash(row: &[u64]) -> u64 {
    let mut h = 0;
    for (w, &word) in row.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            let b = bits.trailing_zeros() as usize;
            h ^= bit_key(w * 64 + b);
            bits &= bits - 1;
        }
    }
    h
}
