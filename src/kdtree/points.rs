//! Input points: n tuples of D f32 coordinates (2 <= D <= 8), checked, with -0.0 made +0.0 so
//! that equal coordinates have equal bits (dedupe and sort keys compare bits).

use crate::error::{Error, Result};

/// The fewest coordinates a point may have.
pub const MIN_DIMS: usize = 2;
/// The most.
pub const MAX_DIMS: usize = 8;

/// Checked input points.
#[derive(Debug, Clone, PartialEq)]
pub struct Points {
    /// Coordinates per point.
    pub dims: usize,
    /// Row-major, n * dims.
    pub coords: Vec<f32>,
}

impl Points {
    /// Points of `dims` coordinates from row-major `coords`; refused when dims is out of range,
    /// the length is not a multiple of it, or a coordinate is not finite.
    pub fn new(dims: usize, mut coords: Vec<f32>) -> Result<Points> {
        if !(MIN_DIMS..=MAX_DIMS).contains(&dims) {
            return Err(Error::invalid(
                "dimensions",
                format!("{dims} is not in {MIN_DIMS}..={MAX_DIMS}"),
            ));
        }
        if !coords.len().is_multiple_of(dims) {
            return Err(Error::invalid(
                "points",
                format!(
                    "{} values is not a multiple of {dims} dimensions",
                    coords.len()
                ),
            ));
        }
        if let Some(i) = first_non_finite(&coords) {
            return Err(Error::invalid(
                format!("points[{}]", i / dims),
                format!("coordinate {} is {}", i % dims, coords[i]),
            ));
        }
        if coords.len() / dims >= u32::MAX as usize {
            return Err(Error::invalid("points", "more than 2^32 - 2 points"));
        }
        for v in &mut coords {
            *v += 0.0; // -0.0 + 0.0 = +0.0
        }
        Ok(Points { dims, coords })
    }

    /// The number of points.
    pub fn len(&self) -> usize {
        self.coords.len() / self.dims
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.coords.is_empty()
    }

    /// Point i's coordinates.
    pub fn point(&self, i: usize) -> &[f32] {
        &self.coords[i * self.dims..(i + 1) * self.dims]
    }
}

/// The rows of a cloud that have every coordinate finite, and where each came from.
///
/// Organized clouds (a depth camera's, a lidar's scan rows) mark missing returns with NaN
/// points. As PCL's `KdTreeFLANN` does, they are left out of the tree, and an answer names a
/// point by its index in the cloud as given, not among the points kept.
#[derive(Debug, Clone, PartialEq)]
pub struct FiniteRows {
    /// The kept rows, row-major.
    pub coords: Vec<f32>,
    /// The cloud index of each kept row; `None` when every row was kept.
    pub origin: Option<Vec<u32>>,
    /// Rows left out.
    pub dropped: usize,
}

impl FiniteRows {
    /// The finite rows of `coords` (rows of `dims`).
    pub fn new(dims: usize, coords: Vec<f32>) -> FiniteRows {
        let finite = |r: &[f32]| r.iter().all(|v| v.is_finite());
        if dims == 0 || coords.chunks(dims).all(finite) {
            return FiniteRows {
                coords,
                origin: None,
                dropped: 0,
            };
        }
        let rows = coords.chunks(dims).len();
        let mut kept = Vec::with_capacity(coords.len());
        let mut origin = Vec::with_capacity(rows);
        for (i, r) in coords.chunks(dims).enumerate() {
            if finite(r) {
                kept.extend_from_slice(r);
                origin.push(u32::try_from(i).unwrap_or(u32::MAX));
            }
        }
        FiniteRows {
            coords: kept,
            dropped: rows - origin.len(),
            origin: Some(origin),
        }
    }

    /// Renames tree point indices (an answer's) to indices of the cloud as given.
    pub fn to_cloud_indices<'a>(&self, indices: impl IntoIterator<Item = &'a mut u32>) {
        to_cloud_indices(self.origin.as_deref(), indices);
    }
}

/// Renames tree point indices to cloud indices through `origin` (`FiniteRows::origin`).
pub fn to_cloud_indices<'a>(
    origin: Option<&[u32]>,
    indices: impl IntoIterator<Item = &'a mut u32>,
) {
    if let Some(origin) = origin {
        for i in indices {
            *i = origin[*i as usize];
        }
    }
}

/// A u32 whose unsigned order is the f32 order (for finite values, -0.0 excluded).
#[inline]
pub fn sortable(v: f32) -> u32 {
    let b = v.to_bits();
    if b & 0x8000_0000 != 0 {
        !b
    } else {
        b | 0x8000_0000
    }
}

/// Brown's super key of dimension d: the coordinates d, d + 1, ... cyclically, compared
/// lexicographically; a total order on distinct tuples.
pub fn cmp_super(a: &[f32], b: &[f32], d: usize) -> std::cmp::Ordering {
    let k = a.len();
    for j in 0..k {
        let c = (d + j) % k;
        match a[c].partial_cmp(&b[c]) {
            Some(std::cmp::Ordering::Equal) | None => continue,
            Some(o) => return o,
        }
    }
    std::cmp::Ordering::Equal
}

/// The index of the first NaN or infinite value. Runs on every query batch before any work
/// (a million 3-D queries are three million values): blocks are checked in parallel with a
/// branch-free fold the compiler vectorises, and only a failing block is searched value by
/// value.
pub fn first_non_finite(v: &[f32]) -> Option<usize> {
    use rayon::prelude::*;
    const BLOCK: usize = 1 << 14;
    let bad = |c: &[f32]| c.iter().fold(false, |a, x| a | !x.is_finite());
    let b = v.par_chunks(BLOCK).position_first(bad)?;
    let at = b * BLOCK;
    v[at..].iter().position(|x| !x.is_finite()).map(|i| at + i)
}
