//! Brown's balanced build on the CPU: presort by each dimension's super key (as ranks), remove
//! duplicate tuples, then build breadth-first, one level per pass: every open range is ordered
//! by the rank of its level's dimension and its median becomes the node. The CUDA builder
//! (`gpu.rs`) makes the same passes with radix sorts and yields the same layout.

use rayon::prelude::*;

use super::points::{cmp_super, Points};
use super::tree::{mid, KdTree};

/// Distinct points in super-key-0 order (first copies), and their input indices.
pub fn dedupe(p: &Points) -> (Vec<f32>, Vec<u32>) {
    let mut idx: Vec<u32> = (0..p.len() as u32).collect();
    idx.par_sort_by(|&a, &b| {
        cmp_super(p.point(a as usize), p.point(b as usize), 0).then(a.cmp(&b))
    });
    let mut coords = Vec::new();
    let mut original = Vec::new();
    for (j, &i) in idx.iter().enumerate() {
        if j > 0 && p.point(idx[j - 1] as usize) == p.point(i as usize) {
            continue;
        }
        coords.extend_from_slice(p.point(i as usize));
        original.push(i);
    }
    (coords, original)
}

/// rank[d][id]: position of distinct point id in dimension d's super-key order.
pub fn ranks(dims: usize, coords: &[f32]) -> Vec<Vec<u32>> {
    let n = coords.len() / dims;
    let pt = |i: u32| &coords[i as usize * dims..(i as usize + 1) * dims];
    (0..dims)
        .map(|d| {
            let mut idx: Vec<u32> = (0..n as u32).collect();
            idx.par_sort_by(|&a, &b| cmp_super(pt(a), pt(b), d));
            let mut r = vec![0u32; n];
            for (j, &i) in idx.iter().enumerate() {
                r[i as usize] = j as u32;
            }
            r
        })
        .collect()
}

/// Open ranges of a level, in position order.
pub fn level_ranges(n: usize, level: usize) -> Vec<(usize, usize)> {
    let mut ranges = vec![(0, n)];
    for _ in 0..level {
        ranges = ranges
            .into_iter()
            .flat_map(|(lo, hi)| {
                let m = mid(lo, hi);
                [(lo, m), (m + 1, hi)]
            })
            .filter(|&(lo, hi)| hi > lo)
            .collect();
    }
    ranges
}

pub fn build(p: &Points) -> KdTree {
    let dims = p.dims;
    let (coords, original) = dedupe(p);
    let n = original.len();
    let rank = ranks(dims, &coords);
    // Level 0 sorts everything by dimension 0; ids are already in that order.
    let mut order: Vec<u32> = (0..n as u32).collect();
    let mut ranges = vec![(0usize, n)];
    let mut level = 0;
    while ranges.iter().any(|&(lo, hi)| hi - lo > 1) {
        let d = level % dims;
        let r = &rank[d];
        // Ranges are disjoint: sort each in place, in parallel.
        let mut rest: &mut [u32] = &mut order;
        let mut offset = 0;
        let mut parts = Vec::with_capacity(ranges.len());
        for &(lo, hi) in &ranges {
            let (_, tail) = std::mem::take(&mut rest).split_at_mut(lo - offset);
            let (part, tail) = tail.split_at_mut(hi - lo);
            parts.push(part);
            rest = tail;
            offset = hi;
        }
        parts
            .into_par_iter()
            .for_each(|s| s.sort_unstable_by_key(|&id| r[id as usize]));
        ranges = ranges
            .into_iter()
            .flat_map(|(lo, hi)| {
                let m = mid(lo, hi);
                [(lo, m), (m + 1, hi)]
            })
            .filter(|&(lo, hi)| hi > lo)
            .collect();
        level += 1;
    }
    KdTree {
        dims,
        coords,
        original,
        order,
        input_len: p.len(),
    }
}
