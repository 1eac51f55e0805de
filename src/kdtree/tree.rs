//! The balanced tree: an implicit layout over the distinct points. The node of a range
//! [lo, hi) of `order` is position m = lo + (hi - lo) / 2; its left subtree is [lo, m), its
//! right (m, hi); a node at depth t splits on dimension t mod D by the super key of that
//! dimension (left smaller, right larger). No pointers: children follow from the range.

use super::points::{cmp_super, Points};

/// A balanced k-d tree over distinct points (the layout above).
#[derive(Debug, Clone, PartialEq)]
pub struct KdTree {
    /// Coordinates per point.
    pub dims: usize,
    /// Distinct points, row-major (the tree's coordinates, in `order`'s terms).
    pub coords: Vec<f32>,
    /// Input index of each distinct point: its first copy.
    pub original: Vec<u32>,
    /// Distinct point ids in tree layout.
    pub order: Vec<u32>,
    /// Input points (copies included).
    pub input_len: usize,
}

/// Median of a range.
#[inline]
pub fn mid(lo: usize, hi: usize) -> usize {
    lo + (hi - lo) / 2
}

impl KdTree {
    /// Distinct points.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Distinct point `id`'s coordinates.
    pub fn point(&self, id: u32) -> &[f32] {
        &self.coords[id as usize * self.dims..(id as usize + 1) * self.dims]
    }

    /// The tree layout's point at position i.
    pub fn at(&self, i: usize) -> &[f32] {
        self.point(self.order[i])
    }

    /// Every node splits its subtree correctly: each position is on the right side of every
    /// ancestor by that ancestor's super key. Returns the first violation found.
    pub fn check(&self) -> Result<(), String> {
        let n = self.len();
        let mut seen = vec![false; self.coords.len() / self.dims.max(1)];
        for &id in &self.order {
            if std::mem::replace(&mut seen[id as usize], true) {
                return Err(format!("point {id} appears twice in the layout"));
            }
        }
        for i in 0..n {
            let (mut lo, mut hi, mut depth) = (0, n, 0);
            loop {
                let m = mid(lo, hi);
                if i == m {
                    break;
                }
                let d = depth % self.dims;
                let o = cmp_super(self.at(i), self.at(m), d);
                let ok = if i < m { o.is_lt() } else { o.is_gt() };
                if !ok {
                    return Err(format!(
                        "position {i} is on the wrong side of node {m} (depth {depth}, dim {d})"
                    ));
                }
                if i < m {
                    hi = m;
                } else {
                    lo = m + 1;
                }
                depth += 1;
            }
        }
        Ok(())
    }

    /// The distinct points, in id order.
    pub fn points(&self) -> Points {
        Points {
            dims: self.dims,
            coords: self.coords.clone(),
        }
    }
}
