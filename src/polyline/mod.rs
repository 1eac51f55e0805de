//! Angle-limited polylines between two pixels (seed 004): m guides across the segment a–b, d
//! points on each, and the polyline a → one point per guide → b that collects the most
//! gradient across its links while turning at most `max_angle` at every guide. The DP in
//! [`cpu`] is the reference; [`cpu::brute_force`] checks it on small instances.
//!
//! The CUDA path in [`gpu`] returns the same result bit for bit (every f64 operation in the
//! kernels is rounded as the CPU rounds it); it sorts each point's predecessors by score and
//! stops at the first one within the turning limit, which is the DP's choice. The `polyline`
//! node (src/nodes/polyline.rs) serves it over ROS 2.

#![warn(missing_docs)]

pub mod cli;
pub mod cpu;
pub mod draw;
pub mod extractor;
pub mod geometry;
pub mod gpu;
pub mod image;
pub mod score;

pub use extractor::Extractor;
pub use geometry::{Polyline, Problem};
pub use image::{Gradient, Gray};

use crate::compute::Backend;
use crate::error::Result;

/// The best polyline on `backend` (the CUDA path uploads the gradient for this one call; a node
/// keeps an [`Extractor`] instead).
pub fn solve(backend: &Backend, g: &Gradient, p: &Problem) -> Result<Polyline> {
    match backend {
        Backend::Cpu => cpu::solve(g, p),
        Backend::Cuda(rt) => gpu::DeviceGradient::upload(rt, g)?.solve(p),
    }
}
