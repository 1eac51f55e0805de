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
        self.centre_turned(self.rotation(), x, y)
    }

    /// The centres of `cells`, the frame's rotation found once for all of them.
    pub fn centres(&self, cells: &[(u32, u32)]) -> Vec<Point> {
        let r = self.rotation();
        cells
            .iter()
            .map(|&(x, y)| self.centre_turned(r, x, y))
            .collect()
    }

    /// The world yaw of a step of (dx, dy) cells.
    pub fn step_yaw(&self, dx: f64, dy: f64) -> f64 {
        let (c, s) = self.rotation();
        (s * dx + c * dy).atan2(c * dx - s * dy)
    }

    /// The cos and sin of the frame's yaw.
    fn rotation(&self) -> (f64, f64) {
        let t = yaw(&self.origin.orientation);
        (t.cos(), t.sin())
    }

    /// World positions of points in cell units (cell (x, y)'s centre is (x + 0.5, y + 0.5)).
    pub fn points(&self, points: &[(f64, f64)]) -> Vec<Point> {
        let r = self.rotation();
        points
            .iter()
            .map(|&(x, y)| self.point_turned(r, x, y))
            .collect()
    }

    fn centre_turned(&self, r: (f64, f64), x: u32, y: u32) -> Point {
        self.point_turned(r, x as f64 + 0.5, y as f64 + 0.5)
    }

    fn point_turned(&self, (c, s): (f64, f64), x: f64, y: f64) -> Point {
        let (lx, ly) = (x * self.resolution, y * self.resolution);
        Point {
            x: self.origin.position.x + c * lx - s * ly,
            y: self.origin.position.y + s * lx + c * ly,
            z: self.origin.position.z,
        }
    }
}

/// Refuses a map pose that cannot place cells: a NaN or infinite position or orientation
/// would turn every request pose into cell (0, 0) (`floor() as i64` saturates), so plans
/// would come back for the wrong cells without an error.
pub fn check_pose(field: &str, p: &Pose) -> Result<()> {
    let (q, o) = (&p.orientation, &p.position);
    for (name, v) in [
        ("position.x", o.x),
        ("position.y", o.y),
        ("position.z", o.z),
    ] {
        if !v.is_finite() {
            return Err(Error::invalid(
                format!("{field}.{name}"),
                format!("{v} is not finite"),
            ));
        }
    }
    for (name, v) in [("x", q.x), ("y", q.y), ("z", q.z), ("w", q.w)] {
        if !v.is_finite() {
            return Err(Error::invalid(
                format!("{field}.orientation.{name}"),
                format!("{v} is not finite"),
            ));
        }
    }
    Ok(())
}

/// A GridMap layer as a planner grid (see [`heights_from_gridmap`]).
pub fn grid_from_gridmap(
    m: &GridMap,
    layer: &str,
    max_step: f32,
    connectivity: Connectivity,
) -> Result<(Grid, CellFrame)> {
    let (heights, frame) = heights_from_gridmap(m, layer)?;
    let grid = Grid::from_elevation(frame.width, frame.height, &heights, max_step, connectivity)?;
    Ok((grid, frame))
}

/// A GridMap layer as heights in our cell order (row-major, x fastest) and the cells' frame.
/// grid_map stores each layer as a column-major matrix of size (length_x / res) x
/// (length_y / res) whose index (0, 0) is the corner at maximum x and y, with a circular-buffer
/// start index (outer_start_index, inner_start_index). Our cell (x, y) grows with the map's x
/// and y axes from the minimum corner.
pub fn heights_from_gridmap(m: &GridMap, layer: &str) -> Result<(Vec<f32>, CellFrame)> {
    let res = m.info.resolution;
    if !(res.is_finite() && res > 0.0) {
        return Err(Error::invalid(
            "elevation_map.info.resolution",
            format!("{res} is not positive"),
        ));
    }
    check_pose("elevation_map.info.pose", &m.info.pose)?;
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
    // The map's pose is its centre; cell (0, 0) starts at the minimum corner.
    let mut origin = m.info.pose.clone();
    let t = yaw(&origin.orientation);
    let (hx, hy) = (-m.info.length_x / 2.0, -m.info.length_y / 2.0);
    origin.position.x += t.cos() * hx - t.sin() * hy;
    origin.position.y += t.sin() * hx + t.cos() * hy;
    Ok((
        heights,
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

    /// A GridMap with distinct heights: buffer cell (ib, jb) holds 100 ib + jb.
    fn gridmap(rows: usize, cols: usize, res: f64, starts: (u16, u16)) -> GridMap {
        use crate::ros::msg::std_msgs::Float32MultiArray;
        let mut m = GridMap::default();
        m.info.resolution = res;
        m.info.length_x = rows as f64 * res;
        m.info.length_y = cols as f64 * res;
        m.info.pose.position = Point {
            x: 10.0,
            y: -4.0,
            z: 1.5,
        };
        m.info.pose.orientation = Quaternion::identity();
        m.layers = vec!["other".into(), "elevation".into()];
        let data = (0..rows * cols)
            .map(|k| (100 * (k % rows) + k / rows) as f32)
            .collect();
        m.data = vec![
            Float32MultiArray::default(),
            Float32MultiArray {
                data,
                ..Default::default()
            },
        ];
        (m.outer_start_index, m.inner_start_index) = starts;
        m
    }

    /// grid_map_core's getPositionFromIndex, written out on its own: the centre of buffer
    /// index (ib, jb) is map position + length / 2 - res (unwrapped index + 0.5), where the
    /// unwrapped index is the buffer index minus the start index, modulo the size.
    fn grid_map_position(m: &GridMap, ib: usize, jb: usize) -> (f64, f64) {
        let res = m.info.resolution;
        let (rows, cols) = (
            (m.info.length_x / res).round() as usize,
            (m.info.length_y / res).round() as usize,
        );
        let ui = (ib + rows - m.outer_start_index as usize % rows) % rows;
        let uj = (jb + cols - m.inner_start_index as usize % cols) % cols;
        (
            m.info.pose.position.x + m.info.length_x / 2.0 - res * (ui as f64 + 0.5),
            m.info.pose.position.y + m.info.length_y / 2.0 - res * (uj as f64 + 0.5),
        )
    }

    #[test]
    fn gridmap_cells_sit_where_grid_map_puts_them() {
        for (rows, cols, starts) in [
            (5, 3, (0, 0)),
            (5, 3, (2, 1)),
            (4, 7, (3, 6)),
            (1, 2, (0, 1)),
        ] {
            let m = gridmap(rows, cols, 0.5, starts);
            let (heights, frame) = heights_from_gridmap(&m, "elevation").unwrap();
            assert_eq!((frame.width, frame.height), (rows as u32, cols as u32));
            let mut seen = vec![false; rows * cols];
            for jb in 0..cols {
                for ib in 0..rows {
                    let (px, py) = grid_map_position(&m, ib, jb);
                    let p = Point {
                        x: px,
                        y: py,
                        z: 0.0,
                    };
                    let (x, y) = frame.cell_of(&p).unwrap();
                    let (x, y) = (x as usize, y as usize);
                    assert!(
                        x < rows && y < cols,
                        "{starts:?}: ({px}, {py}) -> ({x}, {y})"
                    );
                    let want = (100 * ib + jb) as f32;
                    assert_eq!(
                        heights[y * rows + x],
                        want,
                        "{starts:?}: buffer ({ib}, {jb})"
                    );
                    let c = frame.centre(x as u32, y as u32);
                    assert!((c.x - px).abs() < 1e-9 && (c.y - py).abs() < 1e-9);
                    assert_eq!(c.z, 1.5, "cells at the map's height");
                    assert!(!seen[y * rows + x], "two buffer cells on cell ({x}, {y})");
                    seen[y * rows + x] = true;
                }
            }
        }
    }

    #[test]
    fn gridmap_and_map_poses_must_be_finite() {
        for (set, field) in [
            ((f64::NAN, 0.0), "elevation_map.info.pose.position.x"),
            (
                (0.0, f64::INFINITY),
                "elevation_map.info.pose.orientation.z",
            ),
        ] {
            let mut m = gridmap(3, 3, 1.0, (0, 0));
            m.info.pose.position.x = set.0;
            m.info.pose.orientation.z = set.1;
            let e = heights_from_gridmap(&m, "elevation")
                .unwrap_err()
                .to_string();
            assert!(e.contains(field), "{e}");
        }
        let mut p = Pose::default();
        p.orientation.w = f64::NAN;
        let e = check_pose("map.info.origin", &p).unwrap_err().to_string();
        assert!(
            e.contains("map.info.origin.orientation.w") && e.contains("NaN"),
            "{e}"
        );
        assert!(check_pose("map.info.origin", &Pose::default()).is_ok());
    }
}
