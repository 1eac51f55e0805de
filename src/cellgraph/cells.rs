//! Cells: the distinct bit vectors, sorted by the integer sum(bit_i 2^i) ascending, each with
//! its sample count and the index of its first sample.

use rayon::prelude::*;

use super::classify::Bits;

/// The distinct bit vectors the samples fell in, sorted: one cell each.
#[derive(Debug, Clone, PartialEq)]
pub struct Cells {
    /// Constraints l.
    pub constraints: usize,
    /// Each cell's bit vector (row i is cell i).
    pub bits: Bits,
    /// Samples per cell.
    pub counts: Vec<u32>,
    /// A sample of each cell (its first in input order).
    pub representatives: Vec<u32>,
}

impl Cells {
    /// The number of cells.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// Whether there are no cells (no samples).
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// The cell with exactly this bit vector (binary search in the sorted cells).
    pub fn find(&self, row: &[u64]) -> Option<u32> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match cmp_int(self.bits.row(mid), row) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid as u32),
            }
        }
        None
    }
}

/// Compares bit vectors as integers (most significant word last in memory).
pub fn cmp_int(a: &[u64], b: &[u64]) -> std::cmp::Ordering {
    a.iter().rev().cmp(b.iter().rev())
}

/// The CPU reference: a stable sort of sample indices by bit vector, then runs of equals.
pub fn cells(constraints: usize, samples: &Bits) -> Cells {
    let n = samples.rows();
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.par_sort_by(|&a, &b| {
        cmp_int(samples.row(a as usize), samples.row(b as usize)).then(a.cmp(&b))
    });
    let words = samples.words;
    let mut out = Cells {
        constraints,
        bits: Bits {
            words,
            data: Vec::new(),
        },
        counts: Vec::new(),
        representatives: Vec::new(),
    };
    for (j, &s) in order.iter().enumerate() {
        let row = samples.row(s as usize);
        if j > 0 && samples.row(order[j - 1] as usize) == row {
            if let Some(c) = out.counts.last_mut() {
                *c += 1;
            }
            continue;
        }
        out.bits.data.extend_from_slice(row);
        out.counts.push(1);
        out.representatives.push(s);
    }
    out
}
