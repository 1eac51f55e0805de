//! The 2^r-ary search tree of the `tree` algorithm over sorted cells. Digit t of a bit vector
//! is bits [l - (t + 1) r, l - t r) (clipped at 0), most significant first, so the cells under
//! a node are a contiguous range of the sorted cells and its children split that range.

use rayon::prelude::*;

use super::cells::Cells;

#[derive(Debug, Clone, Copy)]
struct Node {
    /// Cells [start, end) share this node's digits.
    start: u32,
    end: u32,
    /// Children are nodes[first_child..first_child + children], ordered by digit.
    first_child: u32,
    children: u32,
    /// The digit that led here from the parent.
    digit: u32,
}

/// The 2^r-ary search tree over the sorted cells' bit vectors (seed algorithms 3-4): a
/// node per run of cells sharing a prefix of r-bit digits.
pub struct Tree {
    r: u32,
    l: usize,
    nodes: Vec<Node>,
    /// Nodes of level t are `nodes[level_start[t]..level_start[t + 1]]`.
    pub level_start: Vec<usize>,
}

/// Bits [lo, lo + len) of a packed vector, len <= 8.
#[inline]
pub fn digit(row: &[u64], lo: usize, len: usize) -> u32 {
    let w = lo / 64;
    let s = lo % 64;
    let mut v = row[w] >> s;
    if s + len > 64 && w + 1 < row.len() {
        v |= row[w + 1] << (64 - s);
    }
    (v & ((1u64 << len) - 1)) as u32
}

impl Tree {
    /// (lowest bit, width) of digit t.
    fn span(&self, t: usize) -> (usize, usize) {
        let hi = self.l - (t * self.r as usize).min(self.l);
        let lo = hi.saturating_sub(self.r as usize);
        (lo, hi - lo)
    }

    /// Built level by level: every node of a level splits its range by the next digit.
    pub fn build(c: &Cells, r: u32) -> Tree {
        let r = r.clamp(1, 8);
        let mut t = Tree {
            r,
            l: c.constraints,
            nodes: Vec::new(),
            level_start: vec![0],
        };
        if c.is_empty() {
            t.level_start.push(0);
            return t;
        }
        t.nodes.push(Node {
            start: 0,
            end: c.len() as u32,
            first_child: 0,
            children: 0,
            digit: 0,
        });
        let mut level = 0;
        loop {
            let (from, to) = (t.level_start[level], t.nodes.len());
            t.level_start.push(to);
            let (lo, len) = t.span(level);
            if len == 0 {
                break;
            }
            // Children of each node of this level, found in parallel, appended in order.
            let kids: Vec<Vec<Node>> = t.nodes[from..to]
                .par_iter()
                .map(|n| {
                    let mut out = Vec::new();
                    if n.end - n.start <= 1 {
                        return out;
                    }
                    let mut s = n.start;
                    while s < n.end {
                        let d = digit(c.bits.row(s as usize), lo, len);
                        let mut e = s + 1;
                        while e < n.end && digit(c.bits.row(e as usize), lo, len) == d {
                            e += 1;
                        }
                        out.push(Node {
                            start: s,
                            end: e,
                            first_child: 0,
                            children: 0,
                            digit: d,
                        });
                        s = e;
                    }
                    out
                })
                .collect();
            let mut next = to as u32;
            for (i, k) in kids.iter().enumerate() {
                t.nodes[from + i].first_child = next;
                t.nodes[from + i].children = k.len() as u32;
                next += k.len() as u32;
            }
            t.nodes.extend(kids.into_iter().flatten());
            if t.nodes.len() == to {
                break;
            }
            level += 1;
        }
        t
    }

    /// Nodes as (start, end, first_child, children, digit) u32 quintuples, root first (the
    /// layout the CUDA lookup walks).
    pub fn flat(&self) -> Vec<u32> {
        self.nodes
            .iter()
            .flat_map(|n| [n.start, n.end, n.first_child, n.children, n.digit])
            .collect()
    }

    /// The number of nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// The cell whose bit vector is `key`, walking one level per digit.
    pub fn find(&self, c: &Cells, key: &[u64]) -> Option<u32> {
        let mut n = *self.nodes.first()?;
        let mut level = 0;
        loop {
            if n.end - n.start == 1 {
                return (c.bits.row(n.start as usize) == key).then_some(n.start);
            }
            let (lo, len) = self.span(level);
            let d = digit(key, lo, len);
            let kids = &self.nodes[n.first_child as usize..(n.first_child + n.children) as usize];
            let i = kids.binary_search_by_key(&d, |k| k.digit).ok()?;
            n = kids[i];
            level += 1;
        }
    }
}
