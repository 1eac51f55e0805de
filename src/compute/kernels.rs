//! The kernel sources, embedded in the binary so a deployed node needs no files beside it.

use super::cuda::KernelSource;

/// `kernels/primitives.cu`: sort, scan, compaction, iota and fill.
pub const PRIMITIVES: KernelSource = KernelSource {
    name: "primitives",
    code: include_str!("../../kernels/primitives.cu"),
};

/// `kernels/lee.cu`: the Lee wave: sweeps, bitwave, portals and the descent.
pub const LEE: KernelSource = KernelSource {
    name: "lee",
    code: include_str!("../../kernels/lee.cu"),
};

/// `kernels/clearance.cu`: the exact distance transform and the robot-radius blocking.
pub const CLEARANCE: KernelSource = KernelSource {
    name: "clearance",
    code: include_str!("../../kernels/clearance.cu"),
};

/// `kernels/costfield.cu`: the costmap field: tile relaxation and its descent.
pub const COSTFIELD: KernelSource = KernelSource {
    name: "costfield",
    code: include_str!("../../kernels/costfield.cu"),
};

/// `kernels/apsp.cu`: floyd-Warshall, every memory model.
pub const APSP: KernelSource = KernelSource {
    name: "apsp",
    code: include_str!("../../kernels/apsp.cu"),
};

/// `kernels/polyline.cu`: the polyline DP.
pub const POLYLINE: KernelSource = KernelSource {
    name: "polyline",
    code: include_str!("../../kernels/polyline.cu"),
};

/// `kernels/cellgraph.cu`: classification and the cell graph's edges.
pub const CELLGRAPH: KernelSource = KernelSource {
    name: "cellgraph",
    code: include_str!("../../kernels/cellgraph.cu"),
};

/// `kernels/kdtree.cu`: the k-d build and queries.
pub const KDTREE: KernelSource = KernelSource {
    name: "kdtree",
    code: include_str!("../../kernels/kdtree.cu"),
};
