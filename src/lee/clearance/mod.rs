//! Clearance for a robot of radius r: a cell whose distance to the nearest obstacle cell centre,
//! `sqrt(dx² + dy²) * resolution` in f64, is at most r is blocked. The distances come from an
//! exact Euclidean distance transform (squared distances in integer cells², [`cpu`] the
//! reference, [`gpu`] equal to it bit for bit), computed once per map; only the comparison
//! with r is in floating point, evaluated the same way on both sides.

pub mod cpu;
pub mod gpu;

use super::grid::Grid;
use crate::compute::Backend;
use crate::error::{Error, Result};

pub use cpu::{NO_OBSTACLE, NO_OBSTACLE_1D};
/// Longest side the transform takes: squared distances and the envelope's sums stay far inside
/// an i64 (2 x (2^21)² < 2^44).
pub const MAX_SIDE: u32 = 1 << 21;

/// The distance in metres of a squared distance in cells², as the comparison with the radius
/// uses it (f64 square root, then times the resolution).
pub fn metres(d2: u64, resolution: f64) -> f64 {
    if d2 == NO_OBSTACLE {
        f64::INFINITY
    } else {
        (d2 as f64).sqrt() * resolution
    }
}

/// Checks a robot radius parameter or flag.
pub fn check_radius(field: &str, robot_radius: f64) -> Result<()> {
    if !(robot_radius.is_finite() && robot_radius >= 0.0) {
        return Err(Error::invalid(
            field,
            format!("{robot_radius} is not a finite non-negative number of metres"),
        ));
    }
    Ok(())
}

/// A map the transform can take: a positive resolution, sides of at most MAX_SIDE cells.
pub fn check_map(grid: &Grid, resolution: f64) -> Result<()> {
    if !(resolution.is_finite() && resolution > 0.0) {
        return Err(Error::invalid(
            "resolution",
            format!("{resolution} is not a positive number of metres per cell"),
        ));
    }
    if grid.width > MAX_SIDE || grid.height > MAX_SIDE {
        return Err(Error::invalid(
            "map",
            format!(
                "the distance transform needs a map of at most {MAX_SIDE} cells a side; this one is {} x {}",
                grid.width, grid.height
            ),
        ));
    }
    Ok(())
}

fn obstacles(grid: &Grid) -> Vec<bool> {
    grid.free.iter().map(|f| !f).collect()
}

/// Squared distances in cells² from every cell to the nearest obstacle cell (a cell that is
/// not free), on the backend (device out of memory is the caller's to handle:
/// [`crate::compute::fallback`]).
pub fn squared_distances(backend: &Backend, grid: &Grid) -> Result<Vec<u64>> {
    let obstacle = obstacles(grid);
    let (w, h) = (grid.width as usize, grid.height as usize);
    match backend {
        Backend::Cpu => Ok(cpu::squared_distances(w, h, &obstacle)),
        Backend::Cuda(rt) => gpu::squared_distances(rt, w, h, &obstacle),
    }
}

/// Per cell: within `robot_radius` metres of an obstacle cell (obstacles themselves included)?
/// On the device only the flags come back, not the distances.
pub fn blocked(
    backend: &Backend,
    grid: &Grid,
    resolution: f64,
    robot_radius: f64,
) -> Result<Vec<bool>> {
    let obstacle = obstacles(grid);
    let (w, h) = (grid.width as usize, grid.height as usize);
    match backend {
        Backend::Cpu => Ok(cpu::squared_distances(w, h, &obstacle)
            .into_iter()
            .map(|d| metres(d, resolution) <= robot_radius)
            .collect()),
        Backend::Cuda(rt) => gpu::blocked(rt, w, h, &obstacle, resolution, robot_radius),
    }
}

/// The grid with every cell within `robot_radius` metres of an obstacle blocked (radius 0
/// returns the grid unchanged: obstacle cells are the only cells at distance 0).
pub fn inflate(backend: &Backend, grid: Grid, resolution: f64, robot_radius: f64) -> Result<Grid> {
    inflate_by(grid, resolution, robot_radius, |g| {
        blocked(backend, g, resolution, robot_radius)
    })
}

/// [`inflate`] with the blocked cells from `blocked` (a caller's policy around [`blocked`]:
/// `lee::RobotPlanner` falls back to the CPU with it).
pub fn inflate_by(
    grid: Grid,
    resolution: f64,
    robot_radius: f64,
    blocked: impl FnOnce(&Grid) -> Result<Vec<bool>>,
) -> Result<Grid> {
    check_radius("robot_radius", robot_radius)?;
    if robot_radius == 0.0 {
        return Ok(grid);
    }
    check_map(&grid, resolution)?;
    let blocked = blocked(&grid)?;
    Ok(grid.with_blocked(&blocked, robot_radius))
}
