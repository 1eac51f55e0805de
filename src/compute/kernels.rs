//! The kernel sources, embedded in the binary so a deployed node needs no files beside it.

use super::cuda::KernelSource;

pub const PRIMITIVES: KernelSource = KernelSource {
    name: "primitives",
    code: include_str!("../../kernels/primitives.cu"),
};

pub const LEE: KernelSource = KernelSource {
    name: "lee",
    code: include_str!("../../kernels/lee.cu"),
};

pub const CLEARANCE: KernelSource = KernelSource {
    name: "clearance",
    code: include_str!("../../kernels/clearance.cu"),
};

pub const COSTFIELD: KernelSource = KernelSource {
    name: "costfield",
    code: include_str!("../../kernels/costfield.cu"),
};

pub const APSP: KernelSource = KernelSource {
    name: "apsp",
    code: include_str!("../../kernels/apsp.cu"),
};

pub const POLYLINE: KernelSource = KernelSource {
    name: "polyline",
    code: include_str!("../../kernels/polyline.cu"),
};

pub const CELLGRAPH: KernelSource = KernelSource {
    name: "cellgraph",
    code: include_str!("../../kernels/cellgraph.cu"),
};

pub const KDTREE: KernelSource = KernelSource {
    name: "kdtree",
    code: include_str!("../../kernels/kdtree.cu"),
};
