//! ROS grid messages to planner grids and back: cell geometry (origin, resolution, yaw) and
//! the GridMap storage convention.

use crate::error::{Error, Result};
use crate::lee::{Connectivity, Grid};
use crate::ros::msg::geometry_msgs::{Point, Pose, Quaternion};
use crate::ros::msg::grid_map_msgs::GridMap;

/// Where cell (0, 0) sits and how big cells are: cell (x, y) covers
/// origin + R(yaw) * ([x, x+1] x [y, y+1]) * resolution.
#[derive(Debug, Clone, PartialEq)]
pub struct CellFrame {
    pub origin: Pose,
    pub resolution: f64,
    pub width: u32,
    pub height: u32,
}

fn yaw(q: &Quaternion) -> f64 {
    (2.0 * (q.w * q.z + q.x * q.y)).atan2(1.0 - 2.0 * (q.y * q.y + q.z * q.z))
}

impl CellFrame {
    /// The cell containing world point `p` (may be off the grid: the planner reports that).
    pub fn cell_of(&self, p: &Point) -> Result<(i64, i64)> {
        if !(p.x.is_finite() && p.y.is_finite()) {
            return Err(Error::invalid(
                "pose.position",
                format!("({}, {}) is not finite", p.x, p.y),
            ));
        }
        let t = yaw(&self.origin.orientation);
        let (dx, dy) = (p.x - self.origin.position.x, p.y - self.origin.position.y);
        let (lx, ly) = (t.cos() * dx + t.sin() * dy, -t.sin() * dx + t.cos() * dy);
        Ok((
            (lx / self.resolution).floor() as i64,
            (ly / self.resolution).floor() as i64,
        ))
    }

    /// World position of the centre of cell (x, y).
    pub fn centre(&self, x: u32, y: u32) -> Point {
        let t = yaw(&self.origin.orientation);
        let (lx, ly) = (
            (x as f64 + 0.5) * self.resolution,
            (y as f64 + 0.5) * self.resolution,
        );
        Point {
            x: self.origin.position.x + t.cos() * lx - t.sin() * ly,
            y: self.origin.position.y + t.sin() * lx + t.cos() * ly,
            z: self.origin.position.z,
        }
    }
}

/// A GridMap layer as a planner grid. grid_map stores each layer as a column-major matrix of
/// size (length_x / res) x (length_y / res) whose index (0, 0) is the corner at maximum x and y,
/// with a circular-buffer start index (outer_start_index, inner_start_index). Our cell (x, y)
/// grows with the map's x and y axes from the minimum corner.
pub fn grid_from_gridmap(
    m: &GridMap,
    layer: &str,
    max_step: f32,
    connectivity: Connectivity,
) -> Result<(Grid, CellFrame)> {
    let res = m.info.resolution;
    if !(res.is_finite() && res > 0.0) {
        return Err(Error::invalid(
            "elevation_map.info.resolution",
            format!("{res} is not positive"),
        ));
    }
    let li = m.layers.iter().position(|l| l == layer).ok_or_else(|| {
        Error::invalid(
            "elevation_map.layers",
            format!("no layer '{layer}' in {:?}", m.layers),
        )
    })?;
    let arr = m.data.get(li).ok_or_else(|| {
        Error::invalid(
            "elevation_map.data",
            format!("{} arrays for {} layers", m.data.len(), m.layers.len()),
        )
    })?;
    let rows = (m.info.length_x / res).round();
    let cols = (m.info.length_y / res).round();
    if !(rows >= 1.0 && cols >= 1.0 && rows * cols <= u32::MAX as f64 - 1.0) {
        return Err(Error::invalid(
            "elevation_map.info",
            format!("size {rows} x {cols} cells is not valid"),
        ));
    }
    let (rows, cols) = (rows as usize, cols as usize);
    if arr.data.len() != rows * cols {
        return Err(Error::invalid(
            format!("elevation_map.data[{li}]"),
            format!("length {} differs from {rows} x {cols}", arr.data.len()),
        ));
    }
    let (so, si) = (
        m.outer_start_index as usize % rows,
        m.inner_start_index as usize % cols,
    );
    let mut heights = vec![f32::NAN; rows * cols];
    for jb in 0..cols {
        for ib in 0..rows {
            let i = (ib + rows - so) % rows; // logical index, 0 = maximum x
            let j = (jb + cols - si) % cols;
            let (x, y) = (rows - 1 - i, cols - 1 - j);
            heights[y * rows + x] = arr.data[jb * rows + ib];
        }
    }
    let grid = Grid::from_elevation(rows as u32, cols as u32, &heights, max_step, connectivity)?;
    // The map's pose is its centre; cell (0, 0) starts at the minimum corner.
    let mut origin = m.info.pose.clone();
    let t = yaw(&origin.orientation);
    let (hx, hy) = (-m.info.length_x / 2.0, -m.info.length_y / 2.0);
    origin.position.x += t.cos() * hx - t.sin() * hy;
    origin.position.y += t.sin() * hx + t.cos() * hy;
    Ok((
        grid,
        CellFrame {
            origin,
            resolution: res,
            width: rows as u32,
            height: cols as u32,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_and_centres_round_trip_with_yaw() {
        let a = 0.7f64;
        let origin = Pose {
            position: Point {
                x: 1.0,
                y: -2.0,
                z: 0.0,
            },
            orientation: Quaternion {
                x: 0.0,
                y: 0.0,
                z: (a / 2.0).sin(),
                w: (a / 2.0).cos(),
            },
        };
        let f = CellFrame {
            origin,
            resolution: 0.25,
            width: 10,
            height: 10,
        };
        for (x, y) in [(0, 0), (3, 7), (9, 1)] {
            assert_eq!(f.cell_of(&f.centre(x, y)).unwrap(), (x as i64, y as i64));
        }
        assert!(f
            .cell_of(&Point {
                x: f64::NAN,
                y: 0.0,
                z: 0.0
            })
            .is_err());
    }
}
