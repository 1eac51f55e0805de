//! What selects a k-d query: its metric, and on the device its traversal.

use serde::{Deserialize, Serialize};

/// Neighbours per query unless asked (the node's `k`, the CLI's `--k`).
pub const DEFAULT_K: usize = 1;

/// The most neighbours one answer may hold in all unless told (the node's and the CLI's
/// `max_results`): answers are allocated in full, 8 bytes a neighbour.
pub const DEFAULT_MAX_RESULTS: u64 = 1 << 26;

/// How distance is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// Straight-line distance.
    Euclidean,
    /// Quaternions (x, y, z, w): min(|p - q|, |p + q|), so q and -q are one rotation.
    So3,
}

/// How the device's k-nearest search (k up to [`crate::kdtree::gpu::REGISTER_K`], the k best
/// in registers) rules out the far side of a split. Every traversal is exact and gives the
/// CPU's answers; they differ in time, with k and the shape of the cloud (on the H100,
/// docs/bench-history, twenty-second part).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Traversal {
    /// `plane` below k = 32 (BOXES_FROM_K), `boxes` from there.
    #[default]
    Auto,
    /// By the split plane alone: the fastest at k = 1 and at k = 8 on points that fill space
    /// evenly (1M uniform 3-D points, 8-NN: 1.62 ms against the boxes' 2.19).
    Plane,
    /// By the far side's bounding box (the query's offset from it in every dimension, as
    /// cudaKDTree's closest-corner tracking): 1.7-2.1x the plane's speed at k = 8 on PCL's
    /// table scene (an indoor LMS400 scan of flat surfaces) and 1.3x on its stereo frame;
    /// from k = 32 the faster on every cloud measured (the table scene 2.3-3.8x). Above the
    /// registers' k the heap's search always takes boxes.
    Boxes,
}

/// The k from which [`Traversal::Auto`] takes the boxes: at k = 32 and 64 they were the
/// faster on every cloud measured, at k = 8 slower on uniform points (1.2-1.35x).
pub const BOXES_FROM_K: usize = 32;

impl Traversal {
    /// The traversal a query for `k` neighbours takes: [`Traversal::Auto`] resolved.
    pub fn for_k(self, k: usize) -> Traversal {
        match self {
            Traversal::Auto if k >= BOXES_FROM_K => Traversal::Boxes,
            Traversal::Auto => Traversal::Plane,
            t => t,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_takes_the_boxes_from_their_k() {
        assert_eq!(Traversal::Auto.for_k(1), Traversal::Plane);
        assert_eq!(Traversal::Auto.for_k(BOXES_FROM_K - 1), Traversal::Plane);
        assert_eq!(Traversal::Auto.for_k(BOXES_FROM_K), Traversal::Boxes);
        assert_eq!(Traversal::Plane.for_k(64), Traversal::Plane);
        assert_eq!(Traversal::Boxes.for_k(1), Traversal::Boxes);
    }
}
