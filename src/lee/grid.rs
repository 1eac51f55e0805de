//! The grid model: which cells are free and which moves between neighbours are allowed, packed
//! as one byte of direction bits per cell. Built once per map on the CPU (so every backend sees
//! the same bits, with no floating-point differences) and uploaded once.

use rayon::prelude::*;

use crate::error::{Error, PathEnd, Result};

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

/// The moves between neighbouring cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Connectivity {
    /// Von Neumann neighbourhood, as the seed.
    #[default]
    #[serde(rename = "4")]
    Four,
    /// Moore neighbourhood; a diagonal move needs both L-shaped detours (no corner cutting).
    #[serde(rename = "8")]
    Eight,
}

impl Connectivity {
    /// 4 or 8; anything else is refused, naming the parameter.
    pub fn from_number(n: u32) -> Result<Self> {
        match n {
            4 => Ok(Self::Four),
            8 => Ok(Self::Eight),
            other => Err(Error::invalid(
                "connectivity",
                format!("{other} is not 0, 4 or 8"),
            )),
        }
    }

    /// The `connectivity` parameter of the node and the CLI (one default for both): 4 or 8
    /// as given; 0 (the default) the cost model's own moves: 4 for unit moves (as the seed's
    /// Lee wave), 8 in costmap mode (NavFn's moves, so that a planner_server user gets no
    /// Manhattan staircases).
    pub fn for_model(n: u32, costmap: bool) -> Result<Self> {
        match (n, costmap) {
            (0, false) => Ok(Self::Four),
            (0, true) => Ok(Self::Eight),
            (n, _) => Self::from_number(n),
        }
    }

    /// The number of moves: the first this many of [`DIRECTIONS`].
    pub fn directions(self) -> usize {
        match self {
            Self::Four => 4,
            Self::Eight => 8,
        }
    }
}

/// A grid of cells and the moves allowed between them, row-major, x right, y down (row 0
/// first).
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// Cells per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// The moves a path may take.
    pub connectivity: Connectivity,
    /// Bit k set: the move in `DIRECTIONS[k]` from this cell is allowed. Symmetric: a move is
    /// allowed from a to b exactly when it is from b to a (every constructor makes it so; the
    /// GPU wave tells a neighbour tile only of the cells that may move into it).
    pub masks: Vec<u8>,
    /// Cells a robot may occupy.
    pub free: Vec<bool>,
    /// Set when cells near obstacles were blocked for a robot's radius (lee::clearance).
    pub clearance: Option<Clearance>,
}

/// What a robot radius blocked, so a start or goal there is named for what it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Clearance {
    /// Metres.
    pub robot_radius: f64,
    /// Cells free on the map but within the radius of an obstacle.
    pub inflated: Vec<bool>,
}

impl Grid {
    /// Elevation map (row-major, `heights[y * width + x]`): NaN is no data and +-inf no surface,
    /// both blocked (obstacles to clearance too); a move is allowed iff both cells are finite
    /// and their heights differ by at most `max_step` (which may be +inf: no step limit).
    pub fn from_elevation(
        width: u32,
        height: u32,
        heights: &[f32],
        max_step: f32,
        connectivity: Connectivity,
    ) -> Result<Grid> {
        check_size(width, height, heights.len(), "heights")?;
        if max_step.is_nan() || max_step < 0.0 {
            return Err(Error::invalid(
                "max_step",
                format!("{max_step} is not a non-negative number"),
            ));
        }
        let free: Vec<bool> = heights.iter().map(|h| h.is_finite()).collect();
        let step_ok = |a: usize, b: usize| (heights[a] - heights[b]).abs() <= max_step;
        Ok(Self::build(width, height, free, connectivity, step_ok))
    }

    /// Occupancy grid (nav_msgs/OccupancyGrid values): free iff 0 <= v < occupied_threshold,
    /// unknown (negative) free only if `unknown_is_free`.
    pub fn from_occupancy(
        width: u32,
        height: u32,
        data: &[i8],
        occupied_threshold: i8,
        unknown_is_free: bool,
        connectivity: Connectivity,
    ) -> Result<Grid> {
        check_size(width, height, data.len(), "data")?;
        let free: Vec<bool> = data
            .iter()
            .map(|&v| {
                if v < 0 {
                    unknown_is_free
                } else {
                    v < occupied_threshold
                }
            })
            .collect();
        Ok(Self::build(width, height, free, connectivity, |_, _| true))
    }

    fn build(
        width: u32,
        height: u32,
        free: Vec<bool>,
        connectivity: Connectivity,
        step_ok: impl Fn(usize, usize) -> bool + Sync,
    ) -> Grid {
        let (w, h) = (width as i64, height as i64);
        let idx = |x: i64, y: i64| (y * w + x) as usize;
        let inside = |x: i64, y: i64| x >= 0 && y >= 0 && x < w && y < h;
        let orth = |x: i64, y: i64, dx: i64, dy: i64| {
            let (nx, ny) = (x + dx, y + dy);
            inside(nx, ny)
                && free[idx(x, y)]
                && free[idx(nx, ny)]
                && step_ok(idx(x, y), idx(nx, ny))
        };
        let masks = move_masks(width, free.len(), connectivity, |x, y, dx, dy| {
            if dx == 0 || dy == 0 {
                orth(x, y, dx, dy)
            } else {
                // Both detours: via (x+dx, y) and via (x, y+dy).
                orth(x, y, dx, 0)
                    && orth(x + dx, y, 0, dy)
                    && orth(x, y, 0, dy)
                    && orth(x, y + dy, dx, 0)
            }
        });
        Grid {
            width,
            height,
            connectivity,
            masks,
            free,
            clearance: None,
        }
    }

    /// This grid with the cells flagged in `blocked` (one per cell) blocked as well: they are
    /// no longer free, and every move into, out of or (diagonally) past one is removed. Moves
    /// between cells that stay free keep the map's own rule (steps, detours).
    pub fn with_blocked(mut self, blocked: &[bool], robot_radius: f64) -> Grid {
        let (w, h) = (self.width as i64, self.height as i64);
        let inflated: Vec<bool> = self
            .free
            .iter()
            .zip(blocked)
            .map(|(&f, &b)| f && b)
            .collect();
        let free: Vec<bool> = self
            .free
            .iter()
            .zip(blocked)
            .map(|(&f, &b)| f && !b)
            .collect();
        let ok = |x: i64, y: i64| x >= 0 && y >= 0 && x < w && y < h && free[(y * w + x) as usize];
        // A diagonal also passes both detour cells (no corner cutting).
        let keep = move_masks(self.width, free.len(), self.connectivity, |x, y, dx, dy| {
            ok(x, y)
                && ok(x + dx, y + dy)
                && (dx == 0 || dy == 0 || (ok(x + dx, y) && ok(x, y + dy)))
        });
        for (m, k) in self.masks.iter_mut().zip(keep) {
            *m &= k;
        }
        self.free = free;
        self.clearance = Some(Clearance {
            robot_radius,
            inflated,
        });
        self
    }

    /// The number of cells.
    pub fn len(&self) -> usize {
        self.masks.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.masks.is_empty()
    }

    /// The row-major index of cell (x, y).
    pub fn index(&self, x: u32, y: u32) -> usize {
        y as usize * self.width as usize + x as usize
    }

    /// Checks that `p` is on the grid and free, as path end `end`.
    pub fn check_cell(&self, end: PathEnd, p: (i64, i64)) -> Result<(u32, u32)> {
        let refused = |reason: String| Error::EndRefused { end, reason };
        let (x, y) = p;
        if x < 0 || y < 0 || x >= self.width as i64 || y >= self.height as i64 {
            return Err(refused(format!(
                "({x}, {y}) is off the {} x {} grid",
                self.width, self.height
            )));
        }
        let (x, y) = (x as u32, y as u32);
        if let Some(c) = &self.clearance {
            if c.inflated[self.index(x, y)] {
                return Err(refused(format!(
                    "({x}, {y}) is within robot_radius {} m of an obstacle",
                    c.robot_radius
                )));
            }
        }
        if !self.free[self.index(x, y)] {
            return Err(refused(format!("({x}, {y}) is a blocked cell")));
        }
        Ok((x, y))
    }
}

/// One direction byte per cell (row-major, `len` cells of rows `width` wide): bit k set where
/// `allowed(x, y, dx, dy)` holds for move k.
fn move_masks(
    width: u32,
    len: usize,
    connectivity: Connectivity,
    allowed: impl Fn(i64, i64, i64, i64) -> bool + Sync,
) -> Vec<u8> {
    let dirs = connectivity.directions();
    let mut masks = vec![0u8; len];
    masks
        .par_chunks_mut(width.max(1) as usize)
        .enumerate()
        .for_each(|(y, row)| {
            let y = y as i64;
            for (x, m) in row.iter_mut().enumerate() {
                for (k, &(dx, dy)) in DIRECTIONS.iter().enumerate().take(dirs) {
                    if allowed(x as i64, y, dx as i64, dy as i64) {
                        *m |= 1 << k;
                    }
                }
            }
        });
    masks
}

fn check_size(width: u32, height: u32, len: usize, field: &str) -> Result<()> {
    let cells = width as u64 * height as u64;
    if cells != len as u64 {
        return Err(Error::invalid(
            field,
            format!("length {len} differs from width x height = {width} x {height} = {cells}"),
        ));
    }
    if cells > u32::MAX as u64 - 1 {
        return Err(Error::invalid(
            field,
            format!("{cells} cells exceed the limit of {}", u32::MAX - 1),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_block_moves_symmetrically() {
        // 3 x 1: heights 0, 1, 3 with max_step 1: 0-1 allowed, 1-3 blocked.
        let g = Grid::from_elevation(3, 1, &[0.0, 1.0, 3.0], 1.0, Connectivity::Four).unwrap();
        assert_eq!(g.masks, vec![0b0100, 0b0001, 0]);
    }

    #[test]
    fn infinite_elevations_are_blocked_and_named() {
        let h = [0.0, f32::INFINITY, 0.5, f32::NEG_INFINITY, f32::NAN, 0.0];
        for step in [1.0, f32::INFINITY] {
            let g = Grid::from_elevation(6, 1, &h, step, Connectivity::Four).unwrap();
            assert_eq!(g.free, vec![true, false, true, false, false, true]);
            assert!(g.masks[1] == 0 && g.masks[3] == 0 && g.masks[4] == 0);
            let e = g
                .check_cell(PathEnd::Start, (1, 0))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("start") && e.contains("(1, 0) is a blocked cell"),
                "{e}"
            );
        }
        // No step limit: finite neighbours of any heights are joined.
        let g = Grid::from_elevation(2, 1, &[0.0, 1e30], f32::INFINITY, Connectivity::Four);
        assert_eq!(g.unwrap().masks, vec![0b0100, 0b0001]);
    }

    #[test]
    fn diagonals_need_both_detours() {
        // 2 x 2 with the top-right cell blocked: no diagonal from (0,0) to (1,1).
        let h = [0.0, f32::NAN, 0.0, 0.0];
        let g = Grid::from_elevation(2, 2, &h, 1.0, Connectivity::Eight).unwrap();
        assert_eq!(g.masks[0] & (1 << 6), 0);
        let open = Grid::from_elevation(2, 2, &[0.0; 4], 1.0, Connectivity::Eight).unwrap();
        assert_ne!(open.masks[0] & (1 << 6), 0);
        assert_ne!(open.masks[3] & (1 << 4), 0);
    }

    #[test]
    fn occupancy_thresholds_and_unknown() {
        let d = [0, 64, 65, -1];
        let g = Grid::from_occupancy(4, 1, &d, 65, false, Connectivity::Four).unwrap();
        assert_eq!(g.free, vec![true, true, false, false]);
        let g = Grid::from_occupancy(4, 1, &d, 65, true, Connectivity::Four).unwrap();
        assert_eq!(g.free, vec![true, true, false, true]);
    }

    #[test]
    fn bad_sizes_and_points_are_named() {
        let e = Grid::from_elevation(2, 2, &[0.0; 3], 1.0, Connectivity::Four).unwrap_err();
        assert!(e.to_string().contains("heights"), "{e}");
        let e = Grid::from_elevation(1, 1, &[0.0], f32::NAN, Connectivity::Four).unwrap_err();
        assert!(e.to_string().contains("max_step"), "{e}");
        let g = Grid::from_elevation(2, 1, &[0.0, f32::NAN], 1.0, Connectivity::Four).unwrap();
        assert!(g
            .check_cell(PathEnd::Start, (5, 0))
            .unwrap_err()
            .to_string()
            .contains("off the"));
        assert!(g
            .check_cell(PathEnd::Goal, (1, 0))
            .unwrap_err()
            .to_string()
            .contains("blocked"));
        assert_eq!(g.check_cell(PathEnd::Start, (0, 0)).unwrap(), (0, 0));
    }
}
