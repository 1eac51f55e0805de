//! The kernel sources, embedded in the binary so a deployed node needs no files beside it.

use super::cuda::KernelSource;

/// `kernels/primitives.cu`: sort, scan, compaction, iota and fill.
pub const PRIMITIVES: KernelSource = KernelSource {
    name: "primitives",
    code: include_str!("../../kernels/primitives.cu"),
};

/// `kernels/lee/`: the Lee wave, one module from one file per family: the shared
/// definitions, the seed's sweeps and tiles, bitwave (rounds and the work queue), the
/// portals, the descent.
pub const LEE: KernelSource = KernelSource {
    name: "lee",
    // NVRTC's messages name each part's own file and line.
    code: concat!(
        "#line 1 \"lee/wave.cu\"\n",
        include_str!("../../kernels/lee/wave.cu"),
        "#line 1 \"lee/sweeps.cu\"\n",
        include_str!("../../kernels/lee/sweeps.cu"),
        "#line 1 \"lee/bitwave.cu\"\n",
        include_str!("../../kernels/lee/bitwave.cu"),
        "#line 1 \"lee/portals.cu\"\n",
        include_str!("../../kernels/lee/portals.cu"),
        "#line 1 \"lee/descent.cu\"\n",
        include_str!("../../kernels/lee/descent.cu"),
    ),
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
