//! Edges: pairs of cells at Hamming distance exactly 1, each once as (a, b) with a < b and the
//! differing bit, sorted ascending. Three CPU algorithms that must agree, and a brute force.

use std::collections::HashMap;

use rayon::prelude::*;

use super::cells::Cells;
use super::classify::{bit_keys, hash};

/// The graph's edges, each once (from < to), sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Edges {
    /// Each edge's lower cell.
    pub from: Vec<u32>,
    /// Each edge's higher cell.
    pub to: Vec<u32>,
    /// The constraint whose bit the two cells differ in.
    pub bit: Vec<u32>,
}

impl Edges {
    /// The number of edges.
    pub fn len(&self) -> usize {
        self.from.len()
    }

    /// Whether there are no edges.
    pub fn is_empty(&self) -> bool {
        self.from.is_empty()
    }

    /// From (a, b, bit) triples in any order.
    pub fn from_triples(mut t: Vec<(u32, u32, u32)>) -> Edges {
        t.par_sort_unstable();
        Edges {
            from: t.iter().map(|e| e.0).collect(),
            to: t.iter().map(|e| e.1).collect(),
            bit: t.iter().map(|e| e.2).collect(),
        }
    }
}

/// The bit in which two vectors differ, if they differ in exactly one.
pub fn single_difference(a: &[u64], b: &[u64]) -> Option<u32> {
    let mut found = None;
    for (w, (x, y)) in a.iter().zip(b).enumerate() {
        let d = x ^ y;
        if d == 0 {
            continue;
        }
        if found.is_some() || d & (d - 1) != 0 {
            return None;
        }
        found = Some(w as u32 * 64 + d.trailing_zeros());
    }
    found
}

/// Every pair compared: the definition, for tests.
pub fn brute_force(c: &Cells) -> Edges {
    let n = c.len();
    let t = (0..n)
        .into_par_iter()
        .flat_map_iter(|a| {
            (a + 1..n).filter_map(move |b| {
                single_difference(c.bits.row(a), c.bits.row(b)).map(|k| (a as u32, b as u32, k))
            })
        })
        .collect();
    Edges::from_triples(t)
}

/// Hamming distance, stopping once it reaches `cap`.
fn hamming_capped(a: &[u64], b: &[u64], cap: u32) -> u32 {
    let mut d = 0;
    for (x, y) in a.iter().zip(b) {
        d += (x ^ y).count_ones();
        if d >= cap {
            return d;
        }
    }
    d
}

/// The pivots of the heuristic: h cells spread evenly over the sorted cells.
pub fn pivots(cells: usize, h: usize) -> Vec<usize> {
    let h = h.min(cells);
    (0..h).map(|t| t * cells / h).collect()
}

/// Seed algorithm 1-2: distances to h pivots prune pairs. Hamming(a, b) = 1 needs
/// |d(a, p) - d(b, p)| = 1 for every pivot p (triangle inequality, and parity: d(a, b) has the
/// parity of d(a, p) + d(b, p)); survivors are compared with an early exit at distance 2.
pub fn heuristic(c: &Cells, h: usize) -> Edges {
    let n = c.len();
    let piv = pivots(n, h);
    let dist: Vec<u32> = (0..n)
        .into_par_iter()
        .flat_map_iter(|a| {
            piv.iter()
                .map(move |&p| hamming_capped(c.bits.row(a), c.bits.row(p), u32::MAX))
        })
        .collect();
    let h = piv.len();
    let t = (0..n)
        .into_par_iter()
        .flat_map_iter(|a| {
            let da = &dist[a * h..(a + 1) * h];
            let dist = &dist;
            (a + 1..n).filter_map(move |b| {
                let db = &dist[b * h..(b + 1) * h];
                if da.iter().zip(db).any(|(x, y)| x.abs_diff(*y) != 1) {
                    return None;
                }
                if hamming_capped(c.bits.row(a), c.bits.row(b), 2) != 1 {
                    return None;
                }
                single_difference(c.bits.row(a), c.bits.row(b)).map(|k| (a as u32, b as u32, k))
            })
        })
        .collect();
    Edges::from_triples(t)
}

/// Seed algorithm 3-4: a 2^r-ary search tree over the sorted cells, digit t being bits
/// [l - (t + 1) r, l - t r) (most significant first, so every node is a range of the sorted
/// cells), built level by level; each cell's l neighbour candidates are looked up in it.
pub fn tree(c: &Cells, r: u32) -> Edges {
    let t = super::tree::Tree::build(c, r);
    let l = c.constraints;
    let words = c.bits.words;
    let triples = (0..c.len())
        .into_par_iter()
        .flat_map_iter(|a| {
            let mut key = c.bits.row(a).to_vec();
            let t = &t;
            (0..l)
                .filter_map(|k| {
                    key[k / 64] ^= 1 << (k % 64);
                    let hit = t.find(c, &key).filter(|&b| b as usize > a);
                    key[k / 64] ^= 1 << (k % 64);
                    hit.map(|b| (a as u32, b, k as u32))
                })
                .collect::<Vec<_>>()
        })
        .collect();
    debug_assert!(words == c.bits.words);
    Edges::from_triples(triples)
}

/// Beyond the seed, O(n l) expected: H(x with bit k flipped) = H(x) ^ z_k, so each of the n l
/// candidates is one hash probe; only hits are compared word by word.
pub fn hash_probe(c: &Cells) -> Edges {
    let l = c.constraints;
    let z = bit_keys(l);
    let hashes: Vec<u64> = (0..c.len())
        .into_par_iter()
        .map(|a| hash(c.bits.row(a)))
        .collect();
    // H -> first cell with it; `next` chains cells whose H collides.
    let mut first: HashMap<u64, u32> = HashMap::with_capacity(c.len());
    let mut next = vec![u32::MAX; c.len()];
    for (a, &h) in hashes.iter().enumerate().rev() {
        if let Some(old) = first.insert(h, a as u32) {
            next[a] = old;
        }
    }
    let triples = (0..c.len())
        .into_par_iter()
        .flat_map_iter(|a| {
            let (first, next, z, hashes) = (&first, &next, &z, &hashes);
            (0..l).flat_map(move |k| {
                let mut hits = Vec::new();
                let mut at = first.get(&(hashes[a] ^ z[k])).copied().unwrap_or(u32::MAX);
                while at != u32::MAX {
                    let b = at as usize;
                    if b > a && single_difference(c.bits.row(a), c.bits.row(b)) == Some(k as u32) {
                        hits.push((a as u32, at, k as u32));
                    }
                    at = next[b];
                }
                hits
            })
        })
        .collect();
    Edges::from_triples(triples)
}
