//! The `polyline` node's parameters: the extraction defaults a request may leave out, and
//! the caps on images and problems.

use serde::{Deserialize, Serialize};

use crate::compute::BackendKind;
use crate::error::{Error, Result};
use crate::ros::live_params::{Param, Range, ABOVE_ZERO};

/// The parameters' ranges (every one read at start); `guides` is at most `max_guides` and
/// `points_per_guide` at most `max_points_per_guide`.
pub const PARAMS: &[Param] = &[
    Param::fixed("gpu_priority", Range::Integer(0, u32::MAX as i64)),
    Param::fixed("guides", Range::Integer(0, u32::MAX as i64)),
    Param::fixed("points_per_guide", Range::Integer(2, u32::MAX as i64)),
    Param::fixed("half_width", Range::Float(ABOVE_ZERO, f64::MAX)),
    Param::fixed("max_angle", Range::Float(0.0, f64::MAX)),
    Param::fixed("max_guides", Range::Integer(0, u32::MAX as i64)),
    Param::fixed("max_points_per_guide", Range::Integer(2, u32::MAX as i64)),
    Param::fixed("max_image_pixels", Range::Integer(1, i64::MAX)),
    Param::fixed("pixel_size", Range::Float(0.0, f64::MAX)),
    Param::fixed("origin_x", Range::Float(-f64::MAX, f64::MAX)),
    Param::fixed("origin_y", Range::Float(-f64::MAX, f64::MAX)),
];

/// Parameters of the `polyline` node; the extraction defaults apply where a request leaves a
/// field at 0 (or a negative angle / width).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolylineParams {
    pub backend: BackendKind,
    pub service_mapping: String,
    pub use_sim_time: bool,
    /// CUDA stream priority of the node's own stream: 0 is CUDA's default, higher values run
    /// first when nodes share the device (clamped to the device's range, 0..=5 on the H100).
    pub gpu_priority: u32,
    pub guides: u32,
    pub points_per_guide: u32,
    /// Pixels.
    pub half_width: f64,
    /// Radians.
    pub max_angle: f64,
    /// Caps on requests and images.
    pub max_guides: u32,
    pub max_points_per_guide: u32,
    pub max_image_pixels: u64,
    /// Metres per pixel for `~/polyline`; 0 publishes pixel coordinates.
    pub pixel_size: f64,
    /// Where pixel (0, 0) lies in `output_frame`, metres (used when `pixel_size` > 0).
    pub origin_x: f64,
    pub origin_y: f64,
    /// Frame of `~/polyline`; empty: the image's frame.
    pub output_frame: String,
}

impl Default for PolylineParams {
    fn default() -> Self {
        use crate::polyline::geometry as g;
        PolylineParams {
            backend: BackendKind::Auto,
            service_mapping: "auto".into(),
            use_sim_time: false,
            gpu_priority: 0,
            guides: g::DEFAULT_GUIDES,
            points_per_guide: g::DEFAULT_POINTS,
            half_width: g::DEFAULT_HALF_WIDTH,
            max_angle: g::DEFAULT_MAX_ANGLE_DEGREES.to_radians(),
            max_guides: g::DEFAULT_MAX_GUIDES,
            max_points_per_guide: g::DEFAULT_MAX_POINTS_PER_GUIDE,
            max_image_pixels: 64 << 20,
            pixel_size: 0.0,
            origin_x: 0.0,
            origin_y: 0.0,
            output_frame: String::new(),
        }
    }
}

impl PolylineParams {
    pub fn validate(&self) -> Result<()> {
        if self.guides > self.max_guides {
            return Err(Error::invalid(
                "guides",
                format!("{} is above max_guides {}", self.guides, self.max_guides),
            ));
        }
        if self.points_per_guide < 2 || self.points_per_guide > self.max_points_per_guide {
            return Err(Error::invalid(
                "points_per_guide",
                format!(
                    "{} is not in 2..={}",
                    self.points_per_guide, self.max_points_per_guide
                ),
            ));
        }
        if !(self.half_width.is_finite() && self.half_width > 0.0) {
            return Err(Error::invalid(
                "half_width",
                format!("{} is not a positive number", self.half_width),
            ));
        }
        if !(self.max_angle.is_finite() && self.max_angle >= 0.0) {
            return Err(Error::invalid(
                "max_angle",
                format!("{} is not a non-negative angle", self.max_angle),
            ));
        }
        if self.max_image_pixels == 0 {
            return Err(Error::invalid("max_image_pixels", "0 allows no image"));
        }
        if !(self.pixel_size.is_finite() && self.pixel_size >= 0.0) {
            return Err(Error::invalid(
                "pixel_size",
                format!("{} is not a non-negative number of metres", self.pixel_size),
            ));
        }
        for (f, v) in [("origin_x", self.origin_x), ("origin_y", self.origin_y)] {
            if !v.is_finite() {
                return Err(Error::invalid(f, format!("{v} is not finite")));
            }
        }
        Ok(())
    }
}
