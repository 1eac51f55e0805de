//! CPU primitives: plain sequential references, and a parallel sort for the CPU backend.

use rayon::slice::ParallelSliceMut;

/// Each value replaced by the sum of those before it (wrapping), and the total.
pub fn exclusive_scan(input: &[u32]) -> (Vec<u32>, u32) {
    let mut out = Vec::with_capacity(input.len());
    let mut acc = 0u32;
    for &x in input {
        out.push(acc);
        acc = acc.wrapping_add(x);
    }
    (out, acc)
}

/// The values whose flag is not 0, in order.
pub fn compact(values: &[u32], flags: &[u8]) -> Vec<u32> {
    values
        .iter()
        .zip(flags)
        .filter(|(_, &f)| f != 0)
        .map(|(&v, _)| v)
        .collect()
}

/// Sequential stable sort: the reference.
pub fn sort_pairs(keys: &[u64], values: &[u32]) -> (Vec<u64>, Vec<u32>) {
    let mut pairs: Vec<(u64, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
    pairs.sort_by_key(|p| p.0);
    pairs.into_iter().unzip()
}

/// Parallel stable sort (rayon merge sort): what the CPU backend runs.
pub fn sort_pairs_parallel(keys: &[u64], values: &[u32]) -> (Vec<u64>, Vec<u32>) {
    let mut pairs: Vec<(u64, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
    pairs.par_sort_by_key(|p| p.0);
    pairs.into_iter().unzip()
}
