//! sensor_msgs/PointCloud2 -> xyz f32 points: fields x, y, z of type FLOAT32, any point_step,
//! row_step and field offsets, little-endian, organized or not; points with a NaN (or
//! infinite) coordinate are left out, counted, and each kept point remembers its index in the
//! cloud (PCL's convention for organized clouds).

use crate::error::{Error, Result};
use crate::kdtree::FiniteRows;
use crate::ros::msg::sensor_msgs::{PointCloud2, PointField};

/// The finite x y z points of `c`, row-major, with their cloud indices.
pub fn xyz_from_cloud(c: &PointCloud2, max_points: usize) -> Result<FiniteRows> {
    if c.is_bigendian {
        return Err(Error::invalid(
            "is_bigendian",
            "true: only little-endian clouds are read",
        ));
    }
    let field = |name: &str| -> Result<usize> {
        let f = c
            .fields
            .iter()
            .find(|f| f.name == name)
            .ok_or_else(|| Error::invalid("fields", format!("no '{name}' field")))?;
        if f.datatype != PointField::FLOAT32 {
            return Err(Error::invalid(
                format!("fields.{name}.datatype"),
                format!("{} is not FLOAT32 (7)", f.datatype),
            ));
        }
        if f.offset as usize + 4 > c.point_step as usize {
            return Err(Error::invalid(
                format!("fields.{name}.offset"),
                format!("{} does not fit point_step {}", f.offset, c.point_step),
            ));
        }
        Ok(f.offset as usize)
    };
    let offs = [field("x")?, field("y")?, field("z")?];
    let (w, h) = (c.width as usize, c.height as usize);
    let n = w
        .checked_mul(h)
        .filter(|&n| n <= max_points)
        .ok_or_else(|| {
            Error::invalid(
                "width",
                format!("{w} x {h} points is above the limit of {max_points}"),
            )
        })?;
    if (c.row_step as usize) < w * c.point_step as usize {
        return Err(Error::invalid(
            "row_step",
            format!(
                "{} is below width x point_step ({})",
                c.row_step,
                w * c.point_step as usize
            ),
        ));
    }
    let need = if h == 0 {
        0
    } else {
        (h - 1) * c.row_step as usize + w * c.point_step as usize
    };
    if c.data.len() < need {
        return Err(Error::invalid(
            "data",
            format!("{} bytes, {need} needed for {w} x {h} points", c.data.len()),
        ));
    }
    let mut out = Vec::with_capacity(n * 3);
    for r in 0..h {
        for col in 0..w {
            let base = r * c.row_step as usize + col * c.point_step as usize;
            out.extend(offs.map(|o| {
                let b = &c.data[base + o..base + o + 4];
                f32::from_le_bytes([b[0], b[1], b[2], b[3]])
            }));
        }
    }
    Ok(FiniteRows::new(3, out))
}
