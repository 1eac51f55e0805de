//! Lee wave planning on grids: wave numbers (BFS distances in moves) from a goal over cells
//! whose transitions are limited by occupancy or elevation steps, and the path that descends
//! them from a start. The CPU BFS in [`cpu`] is the reference; every GPU memory model in
//! [`gpu`] must return identical labels.

pub mod cli;
pub mod cpu;
pub mod gpu;
pub mod grid;
pub mod io;
pub mod path;
pub mod planner;
pub mod synth;

pub use grid::{Connectivity, Grid};
pub use planner::{MemoryModel, Plan, Planner, PlannerConfig};

/// Label of a cell the wave never reached.
pub const UNREACHED: u32 = u32::MAX;

/// Move directions as (dx, dy); bit k of a cell's mask allows move k. The first four are the
/// seed's path priority (left, up, right, down); diagonals follow, clockwise from up-left.
pub const DIRECTIONS: [(i32, i32); 8] = [
    (-1, 0),
    (0, -1),
    (1, 0),
    (0, 1),
    (-1, -1),
    (1, -1),
    (1, 1),
    (-1, 1),
];

/// The direction opposite to `k` (moves are symmetric).
pub const fn opposite(k: usize) -> usize {
    match k {
        0 => 2,
        1 => 3,
        2 => 0,
        3 => 1,
        4 => 6,
        5 => 7,
        6 => 4,
        _ => 5,
    }
}
