//! What selects a k-d query: its metric.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    Euclidean,
    /// Quaternions (x, y, z, w): min(|p - q|, |p + q|), so q and -q are one rotation.
    So3,
}

/// How the device's k-nearest search (k up to [`crate::kdtree::gpu::REGISTER_K`], the k best
/// in registers) rules out the far side of a split. Both are exact and give the same answers
/// as the CPU; they differ in time, with the shape of the cloud.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Traversal {
    /// By the split plane alone, one loop over every kind of step: the fastest on points that
    /// fill space evenly and on airborne LiDAR (on the H100, BENCHMARKS.md, twenty-second
    /// part: 1.2-1.9x faster than boxes on uniform points and laspy's Autzen scan).
    #[default]
    Plane,
    /// By the far side's bounding box (the query's offset from it in every dimension,
    /// cudaKDTree's closest-corner tracking): the faster at k >= 8 on scans of flat indoor
    /// surfaces (PCL's table scene: 1.4x at k = 8, 1.9x at k = 32, 2.8x turned off the axes).
    /// Above the registers' k the search always takes the boxes.
    Boxes,
}
