//! Gazebo heightmaps as elevation grids: a grayscale PNG whose pixels are vertices spread over
//! `size` (x, y, z metres) and centred at `pos`, as a `<heightmap>` in an SDF world gives them.
//! Height = pos.z + size.z * pixel / max pixel (8- or 16-bit); each pixel becomes one cell.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// A Gazebo heightmap as heights per pixel, with the size and position its world gives it.
#[derive(Debug, Clone)]
pub struct Heightmap {
    /// Pixels per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Heights in metres, row-major, row 0 = the image's top row (the world's maximum y).
    pub heights: Vec<f32>,
    /// Metres the image spans: x, y, and z (a white pixel's height).
    pub size: [f64; 3],
    /// Where its centre stands in the world.
    pub pos: [f64; 3],
}

impl Heightmap {
    /// Cell size: the vertex spacing (Gazebo spreads `width` vertices over size.x).
    pub fn resolution(&self) -> f64 {
        self.size[0] / (self.width.max(2) - 1) as f64
    }

    /// The minimum corner of the cell whose centre is the vertex at (min x, min y).
    pub fn origin_xy(&self) -> (f64, f64) {
        let r = self.resolution();
        (
            self.pos[0] - self.size[0] / 2.0 - r / 2.0,
            self.pos[1] - self.size[1] / 2.0 - r / 2.0,
        )
    }

    /// Heights with row 0 at the world's minimum y (the image flipped), for grids whose cell
    /// (x, y) grows with the world's axes.
    pub fn world_rows(&self) -> Vec<f32> {
        let w = self.width as usize;
        self.heights
            .chunks(w.max(1))
            .rev()
            .flatten()
            .copied()
            .collect()
    }
}

fn check_size(field: &str, size: [f64; 3], pos: [f64; 3]) -> Result<()> {
    if !size.iter().all(|v| v.is_finite() && *v >= 0.0) || size[0] <= 0.0 || size[1] <= 0.0 {
        return Err(Error::invalid(
            field,
            format!("{size:?} is not a positive x, y and non-negative z size"),
        ));
    }
    if !pos.iter().all(|v| v.is_finite()) {
        return Err(Error::invalid(field, format!("pos {pos:?} is not finite")));
    }
    Ok(())
}

/// A heightmap PNG with its size and position (metres).
pub fn load_png(path: &Path, size: [f64; 3], pos: [f64; 3]) -> Result<Heightmap> {
    check_size("heightmap size", size, pos)?;
    let name = path.display().to_string();
    let img = image::open(path).map_err(|e| Error::invalid(&name, e))?;
    let (width, height) = (img.width(), img.height());
    if width < 2 || height < 2 {
        return Err(Error::invalid(
            &name,
            format!("{width} x {height} pixels: a heightmap needs at least 2 x 2"),
        ));
    }
    let luma = img.into_luma16();
    let heights = luma
        .as_raw()
        .iter()
        .map(|&v| (pos[2] + size[2] * v as f64 / u16::MAX as f64) as f32)
        .collect();
    let m = Heightmap {
        width,
        height,
        heights,
        size,
        pos,
    };
    // Gazebo maps pixels to vertices per axis; planner cells are square.
    let ry = size[1] / (height - 1) as f64;
    if (m.resolution() - ry).abs() > 1e-6 * m.resolution().max(ry) {
        return Err(Error::invalid(
            &name,
            format!(
                "cells would be {} x {ry} m: the planner needs square cells (size.x / (width - 1) = size.y / (height - 1))",
                m.resolution()
            ),
        ));
    }
    Ok(m)
}

/// The first `<heightmap>` of an SDF world or model: its image (`uri`), `size` and `pos`.
pub fn parse_sdf(text: &str, sdf_dir: &Path) -> Result<(PathBuf, [f64; 3], [f64; 3])> {
    let doc = crate::xml::parse("sdf", text)?;
    let hm = doc
        .descendants()
        .find(|n| n.has_tag_name("heightmap"))
        .ok_or_else(|| Error::invalid("sdf", "has no <heightmap>"))?;
    let child = |tag: &str| {
        hm.children()
            .find(|n| n.has_tag_name(tag))
            .and_then(|n| n.text())
            .map(str::trim)
    };
    let uri = child("uri").ok_or_else(|| Error::invalid("sdf heightmap", "has no <uri>"))?;
    let vec3 = |tag: &str, default: [f64; 3]| -> Result<[f64; 3]> {
        let Some(t) = child(tag) else {
            return Ok(default);
        };
        let v: Vec<f64> = t
            .split_whitespace()
            .map(str::parse)
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| Error::invalid(format!("sdf heightmap <{tag}>"), format!("'{t}'")))?;
        <[f64; 3]>::try_from(v.as_slice()).map_err(|_| {
            Error::invalid(
                format!("sdf heightmap <{tag}>"),
                format!("'{t}' is not 3 numbers"),
            )
        })
    };
    // SDF's defaults: size 1 1 1, pos 0 0 0.
    let size = vec3("size", [1.0, 1.0, 1.0])?;
    let pos = vec3("pos", [0.0, 0.0, 0.0])?;
    Ok((resolve_uri(uri, sdf_dir)?, size, pos))
}

/// `file://` and plain paths relative to the SDF; `model://` through GZ_SIM_RESOURCE_PATH and
/// GAZEBO_MODEL_PATH, as Gazebo resolves them.
fn resolve_uri(uri: &str, sdf_dir: &Path) -> Result<PathBuf> {
    if let Some(rest) = uri.strip_prefix("model://") {
        let dirs = ["GZ_SIM_RESOURCE_PATH", "GAZEBO_MODEL_PATH"]
            .iter()
            .filter_map(|v| std::env::var(v).ok())
            .flat_map(|v| v.split(':').map(PathBuf::from).collect::<Vec<_>>());
        for d in dirs {
            let p = d.join(rest);
            if p.exists() {
                return Ok(p);
            }
        }
        return Err(Error::invalid(
            "sdf heightmap <uri>",
            format!("'{uri}' is not under GZ_SIM_RESOURCE_PATH or GAZEBO_MODEL_PATH"),
        ));
    }
    let p = PathBuf::from(uri.strip_prefix("file://").unwrap_or(uri));
    Ok(if p.is_absolute() { p } else { sdf_dir.join(p) })
}

/// An SDF file's first heightmap, or a PNG with the given size and position.
pub fn load(path: &Path, png_size: Option<[f64; 3]>, png_pos: [f64; 3]) -> Result<Heightmap> {
    let name = path.display().to_string();
    let is_png = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"));
    if is_png {
        let size = png_size.ok_or_else(|| {
            Error::invalid("heightmap size", format!("is required for the PNG {name}"))
        })?;
        return load_png(path, size, png_pos);
    }
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(&name, e))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let (image, size, pos) = parse_sdf(&text, dir)?;
    load_png(&image, size, pos)
}
