//! The reference: nav2's inflation layer from the exact distance transform, and the least-cost
//! field by Dijkstra over the grid's allowed moves (entering a cell costs its step cost), with
//! the descent that the device path shares.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::config::{diagonal, CostParams, INSCRIBED, LETHAL, MAX_NON_OBSTACLE};
use crate::lee::clearance::{metres, NO_OBSTACLE};
use crate::lee::grid::{Grid, DIRECTIONS};

/// A path's cells (x, y) from start to goal and its total cost.
pub type CellPath = (Vec<(u32, u32)>, u64);

/// Total cost of a cell the field never reached.
pub const UNREACHED_COST: u64 = u64::MAX;

/// nav2's inflation value of a cell at squared distance `d2` (cells²) from the nearest
/// obstacle: 254 on obstacles, 253 within the robot radius, floor(252 exp(-k (d - r))) up to
/// the inflation radius, 0 beyond. Evaluated in f64 on the host only (the device gets a table
/// of these values by d2), so both backends use the very same numbers.
pub fn inflation_value(d2: u64, resolution: f64, p: &CostParams) -> u8 {
    if d2 == 0 {
        return LETHAL;
    }
    let d = metres(d2, resolution);
    if d <= p.robot_radius {
        INSCRIBED
    } else if d <= p.inflation_radius {
        let v = (MAX_NON_OBSTACLE as f64 * (-p.cost_scaling_factor * (d - p.robot_radius)).exp())
            .floor();
        v as u8
    } else {
        0
    }
}

/// The inflation values by squared distance, from 0 up to the last d2 within the inflation
/// radius or to `max_d2` (the largest squared distance the map holds), whichever comes first;
/// every larger d2 (and NO_OBSTACLE) is 0. `None` when that table would have more than `limit`
/// entries: a radius of many cells (a tiny resolution, a huge radius) then costs no more than
/// evaluating each cell's value on its own ([`values_from_d2`] does either).
pub fn inflation_table(
    resolution: f64,
    p: &CostParams,
    max_d2: u64,
    limit: usize,
) -> Option<Vec<u8>> {
    // In f64, so that a radius of 1e300 m or a resolution of 1e-9 m reaches every cell
    // instead of wrapping to none.
    let reach = p.inflation_radius / resolution;
    let reach2 = (reach * reach).ceil();
    let last = if reach2 < max_d2 as f64 {
        reach2 as u64
    } else {
        max_d2
    };
    if last >= limit as u64 {
        return None;
    }
    let mut table = Vec::with_capacity(last as usize + 1);
    for d2 in 0..=last {
        if d2 > 0 && metres(d2, resolution) > p.inflation_radius {
            break;
        }
        table.push(inflation_value(d2, resolution, p));
    }
    Some(table)
}

/// The largest squared distance (cells²) between two cells of a `width` x `height` map.
pub fn max_squared_distance(width: u32, height: u32) -> u64 {
    let (w, h) = (u64::from(width.max(1) - 1), u64::from(height.max(1) - 1));
    w * w + h * h
}

/// Cell values from squared distances: through `table` when there is one, else each cell's
/// value evaluated on its own.
pub fn values_from_d2(
    d2: &[u64],
    table: Option<&[u8]>,
    resolution: f64,
    p: &CostParams,
) -> Vec<u8> {
    match table {
        Some(t) => values_from_table(d2, t),
        None => d2
            .iter()
            .map(|&d| {
                if d == NO_OBSTACLE {
                    0
                } else {
                    inflation_value(d, resolution, p)
                }
            })
            .collect(),
    }
}

/// Cell values from squared distances through the table.
fn values_from_table(d2: &[u64], table: &[u8]) -> Vec<u8> {
    d2.iter()
        .map(|&d| {
            if d == NO_OBSTACLE {
                0
            } else {
                table.get(d as usize).copied().unwrap_or(0)
            }
        })
        .collect()
}

/// Step cost of entering each cell straight (diagonal moves scale it by 141 / 100).
pub fn enter_costs(values: &[u8], p: &CostParams) -> Vec<u32> {
    values.iter().map(|&v| p.enter(v)).collect()
}

/// The cost of the move in direction `k` into a cell whose straight entry costs `enter`.
pub fn step(k: usize, enter: u32) -> u64 {
    if k < 4 {
        enter as u64
    } else {
        diagonal(enter) as u64
    }
}

/// Least total cost from every cell to `goal` (moves allowed by the grid's masks; entering a
/// cell costs its step), by Dijkstra.
pub fn cost_field(grid: &Grid, enter: &[u32], goal: (u32, u32)) -> Vec<u64> {
    let mut field = vec![UNREACHED_COST; grid.len()];
    if grid.is_empty() {
        return field;
    }
    let w = grid.width as i64;
    let dirs = grid.connectivity.directions();
    let g = grid.index(goal.0, goal.1);
    field[g] = 0;
    let mut heap = BinaryHeap::from([Reverse((0u64, g))]);
    while let Some(Reverse((f, c))) = heap.pop() {
        if f != field[c] {
            continue;
        }
        let (x, y) = (c as i64 % w, c as i64 / w);
        // Moves are symmetric: c's allowed neighbour n reaches c by the opposite move,
        // entering c.
        for (k, &(dx, dy)) in DIRECTIONS.iter().enumerate().take(dirs) {
            if grid.masks[c] & (1 << k) == 0 {
                continue;
            }
            let n = ((y + dy as i64) * w + x + dx as i64) as usize;
            let cand = f + step(k, enter[c]);
            if cand < field[n] {
                field[n] = cand;
                heap.push(Reverse((cand, n)));
            }
        }
    }
    field
}

/// The cells from `start` to the goal down the field: at each cell, the first direction (in
/// DIRECTIONS order: left, up, right, down, then the diagonals) whose neighbour n has
/// `field[n] + step(into n) = field[cell]`. `None` when the start was not reached.
pub fn descend(
    grid: &Grid,
    enter: &[u32],
    field: &[u64],
    start: (u32, u32),
) -> Option<Vec<(u32, u32)>> {
    descend_by(grid, enter, grid.index(start.0, start.1), |c| field[c])
}

/// [`descend`] from cell index `start` over costs read through `cost` (a whole field, or a
/// search's partial one: [`super::search::GoalSearch::descend`]).
pub fn descend_by(
    grid: &Grid,
    enter: &[u32],
    start: usize,
    cost: impl Fn(usize) -> u64,
) -> Option<Vec<(u32, u32)>> {
    let w = grid.width as i64;
    let xy = |c: usize| ((c as i64 % w) as u32, (c as i64 / w) as u32);
    let mut c = start;
    if cost(c) == UNREACHED_COST {
        return None;
    }
    let dirs = grid.connectivity.directions();
    let mut path = vec![xy(c)];
    while cost(c) != 0 {
        let (x, y) = (c as i64 % w, c as i64 / w);
        let here = cost(c);
        let next = DIRECTIONS
            .iter()
            .enumerate()
            .take(dirs)
            .find_map(|(k, &(dx, dy))| {
                if grid.masks[c] & (1 << k) == 0 {
                    return None;
                }
                let n = ((y + dy as i64) * w + x + dx as i64) as usize;
                let f = cost(n);
                (f != UNREACHED_COST && f + step(k, enter[n]) == here).then_some(n)
            })?;
        c = next;
        path.push(xy(c));
    }
    Some(path)
}
