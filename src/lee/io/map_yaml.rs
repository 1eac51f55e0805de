//! ROS map_server maps: a YAML file (image, resolution, origin, negate, occupied_thresh,
//! free_thresh, mode) and its PGM/PNG image, read as map_server's trinary mode does.

use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};

/// A map_server map's YAML, as nav2's map_server reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct MapYaml {
    /// The image file, relative to the YAML's folder.
    pub image: String,
    /// Metres per pixel.
    pub resolution: f64,
    /// The lower-left pixel's pose: x, y, yaw.
    pub origin: [f64; 3],
    /// 1: white is occupied.
    #[serde(default)]
    pub negate: i32,
    /// Occupancy above this is occupied.
    pub occupied_thresh: f64,
    /// Occupancy below this is free.
    pub free_thresh: f64,
    /// trinary (the default), scale or raw.
    #[serde(default = "trinary")]
    pub mode: String,
}

fn trinary() -> String {
    "trinary".into()
}

/// An occupancy map: values 0 (free), 100 (occupied), -1 (unknown); row 0 is the image's top
/// row (the CLI's y axis points down the picture).
#[derive(Debug, Clone)]
pub struct LoadedMap {
    /// Cells per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Occupancy per cell, row-major.
    pub data: Vec<i8>,
    /// The YAML it came from.
    pub meta: MapYaml,
}

/// Loads a map_server YAML and its image as map_server does.
pub fn load(yaml_path: &Path) -> Result<LoadedMap> {
    let name = yaml_path.display().to_string();
    let text = std::fs::read_to_string(yaml_path).map_err(|e| Error::io(&name, e))?;
    let meta: MapYaml = crate::yaml::from_str(&name, &text)?;
    let image_path = yaml_path
        .parent()
        .unwrap_or(Path::new("."))
        .join(&meta.image);
    let image_name = image_path.display().to_string();
    let bytes = std::fs::read(&image_path).map_err(|e| Error::io(&image_name, e))?;
    parse(&name, &text, &image_name, &bytes)
}

/// A map_server map from its YAML text and image bytes (`name` and `image_name` for errors):
/// what [`load`] reads from files, for maps built into the binary (the demo's).
pub fn parse(name: &str, yaml: &str, image_name: &str, image: &[u8]) -> Result<LoadedMap> {
    let meta: MapYaml = crate::yaml::from_str(name, yaml)?;
    if meta.mode != "trinary" {
        return Err(Error::invalid(
            format!("{name}: mode"),
            format!("'{}' is not supported (trinary only)", meta.mode),
        ));
    }
    // The same checks as the node's map.info (resolution, origin): one meaning per field.
    if !(meta.resolution.is_finite() && meta.resolution > 0.0) {
        return Err(Error::invalid(
            format!("{name}: resolution"),
            format!("{} is not positive", meta.resolution),
        ));
    }
    if let Some(v) = meta.origin.iter().find(|v| !v.is_finite()) {
        return Err(Error::invalid(
            format!("{name}: origin"),
            format!("{v} in {:?} is not finite", meta.origin),
        ));
    }
    if !(0.0..=1.0).contains(&meta.free_thresh)
        || !(0.0..=1.0).contains(&meta.occupied_thresh)
        || meta.free_thresh > meta.occupied_thresh
    {
        return Err(Error::invalid(
            format!("{name}: free_thresh/occupied_thresh"),
            format!(
                "{} / {} are not 0 <= free <= occupied <= 1",
                meta.free_thresh, meta.occupied_thresh
            ),
        ));
    }
    let img = image::load_from_memory(image)
        .map_err(|e| Error::invalid(image_name, e))?
        .to_luma8();
    let (width, height) = img.dimensions();
    let data = img
        .pixels()
        .map(|p| {
            let v = p.0[0] as f64 / 255.0;
            let occ = if meta.negate != 0 { v } else { 1.0 - v };
            if occ > meta.occupied_thresh {
                100
            } else if occ < meta.free_thresh {
                0
            } else {
                -1
            }
        })
        .collect();
    Ok(LoadedMap {
        width,
        height,
        data,
        meta,
    })
}
