//! gpu_planning: massively parallel motion-planning primitives behind ROS 2 nodes.
//!
//! Layout (README.md, "Layout"): `compute` selects the CPU or CUDA backend and owns
//! the CUDA runtime and the parallel primitives; `ros` speaks ROS 2 on the DDS wire through
//! `ros2-client`; `nodes` holds the thin nodes that connect the two.

// Every unsafe block (device allocations, kernel launches) says why it is sound.
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod apsp;
pub mod bag;
#[doc(hidden)]
pub mod bench;
pub mod cancel;
pub mod cellgraph;
pub mod compute;
#[doc(hidden)]
pub mod demo;
pub mod env;
pub mod error;
pub mod kdtree;
pub mod lee;
pub mod log_limit;
pub mod lzf;
pub mod nodes;
pub mod npy;
pub mod polyline;
pub mod rng;
pub mod ros;
pub mod seconds;
pub mod sync;
#[doc(hidden)]
pub mod testing;
pub mod xml;
pub mod yaml;

pub use compute::{Backend, BackendKind};
pub use error::{Error, Result};
