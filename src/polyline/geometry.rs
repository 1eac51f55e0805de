//! The guides: m segments across a–b, equally spaced, d points each; the turning limit; and
//! the polyline an answer is.

use crate::error::{Error, Result};

/// A point (x, y) in pixels, x right, y down.
pub type Pt = (f64, f64);

/// Interior guides m when a request leaves them out (the node's `guides`, the CLI's
/// `--guides`).
pub const DEFAULT_GUIDES: u32 = 8;
/// Points per guide d when a request leaves them out.
pub const DEFAULT_POINTS: u32 = 64;
/// The guides' half width in pixels when a request leaves it out.
pub const DEFAULT_HALF_WIDTH: f64 = 10.0;
/// The turning limit in degrees when a request leaves it out.
pub const DEFAULT_MAX_ANGLE_DEGREES: f64 = 30.0;
/// The most guides a problem may have unless told: the DP's table grows with guides x
/// points^2.
pub const DEFAULT_MAX_GUIDES: u32 = 256;
/// The most points per guide unless told.
pub const DEFAULT_MAX_POINTS_PER_GUIDE: u32 = 4096;

/// One extraction request, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// The polyline's first end.
    pub a: Pt,
    /// Its last end.
    pub b: Pt,
    /// Interior guides m.
    pub guides: u32,
    /// Points per guide d (>= 2).
    pub points: u32,
    /// Half width w of each guide, pixels.
    pub half_width: f64,
    /// Largest turning angle at a guide point, radians (0 = straight).
    pub max_angle: f64,
}

impl Problem {
    /// Checks every field's range; the error names the field and the value.
    pub fn validate(&self) -> Result<()> {
        for (f, v) in [
            ("a.x", self.a.0),
            ("a.y", self.a.1),
            ("b.x", self.b.0),
            ("b.y", self.b.1),
        ] {
            if !v.is_finite() {
                return Err(Error::invalid(f, format!("{v} is not finite")));
            }
        }
        if self.a == self.b {
            return Err(Error::invalid(
                "b",
                format!(
                    "({}, {}) equals a: the guides need a direction",
                    self.b.0, self.b.1
                ),
            ));
        }
        if self.points < 2 {
            return Err(Error::invalid(
                "points_per_guide",
                format!("{} is below 2", self.points),
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
                format!(
                    "{} degrees ({} rad) is not a non-negative angle",
                    self.max_angle.to_degrees(),
                    self.max_angle
                ),
            ));
        }
        Ok(())
    }

    /// The caps of the `polyline` parameters (node and CLI): the DP costs O(d^3 m).
    pub fn check_limits(&self, max_guides: u32, max_points_per_guide: u32) -> Result<()> {
        if self.guides > max_guides {
            return Err(Error::invalid(
                "guides",
                format!("{} is above max_guides ({max_guides})", self.guides),
            ));
        }
        if self.points > max_points_per_guide {
            return Err(Error::invalid(
                "points_per_guide",
                format!(
                    "{} is above max_points_per_guide ({max_points_per_guide})",
                    self.points
                ),
            ));
        }
        Ok(())
    }

    /// The checks that need the image: ends on it (ends off it would score links against
    /// clamped borders, not what was asked), and guides no wider than its diagonal. A link is
    /// sampled once per pixel of its length, so an unbounded half_width (or end) would be
    /// unbounded work; within these bounds every link is shorter than three diagonals.
    pub fn check_image(&self, width: u32, height: u32) -> Result<()> {
        if width == 0 || height == 0 {
            return Err(Error::invalid(
                "image",
                format!("{width} x {height} has no pixels"),
            ));
        }
        let (w, h) = (width as f64, height as f64);
        for (field, (x, y)) in [("a", self.a), ("b", self.b)] {
            if !(x >= 0.0 && y >= 0.0 && x <= w - 1.0 && y <= h - 1.0) {
                return Err(Error::invalid(
                    field,
                    format!("({x}, {y}) is outside the {w} x {h} image"),
                ));
            }
        }
        let diagonal = w.hypot(h);
        if self.half_width > diagonal {
            return Err(Error::invalid(
                "half_width",
                format!(
                    "{:?} px is above the image diagonal ({diagonal:.1} px)",
                    self.half_width
                ),
            ));
        }
        Ok(())
    }

    /// Vertex j of layer k: layer 0 is a, layers 1..=m the guides, layer m + 1 is b.
    pub fn vertex(&self, k: u32, j: u32) -> Pt {
        let m = self.guides;
        if k == 0 {
            return self.a;
        }
        if k == m + 1 {
            return self.b;
        }
        let (dx, dy) = (self.b.0 - self.a.0, self.b.1 - self.a.1);
        let len = (dx * dx + dy * dy).sqrt();
        let t = k as f64 / (m + 1) as f64;
        let c = (self.a.0 + dx * t, self.a.1 + dy * t);
        let n = (-dy / len, dx / len);
        let w = self.half_width;
        let s = -w + 2.0 * w * j as f64 / (self.points - 1) as f64;
        (c.0 + n.0 * s, c.1 + n.1 * s)
    }

    /// Vertices in layer k.
    pub fn layer_size(&self, k: u32) -> u32 {
        if k == 0 || k == self.guides + 1 {
            1
        } else {
            self.points
        }
    }
}

/// Whether the turn at q from p -> q to q -> r is at most the angle whose cosine is `cos_max`.
#[inline]
pub fn turn_ok(p: Pt, q: Pt, r: Pt, cos_max: f64) -> bool {
    let u = (q.0 - p.0, q.1 - p.1);
    let v = (r.0 - q.0, r.1 - q.1);
    let dot = u.0 * v.0 + u.1 * v.1;
    let nu = (u.0 * u.0 + u.1 * u.1).sqrt();
    let nv = (v.0 * v.0 + v.1 * v.1).sqrt();
    dot >= cos_max * (nu * nv)
}

/// The answer: the best polyline, or that none keeps within the turning limit.
#[derive(Debug, Clone, PartialEq)]
pub struct Polyline {
    /// False when no polyline keeps every turn within the limit (points then empty).
    pub feasible: bool,
    /// a, one point per guide, b.
    pub points: Vec<Pt>,
    /// Index of the chosen point on each guide.
    pub indices: Vec<u32>,
    /// Sum of the link scores, added from a towards b.
    pub score: f64,
}

/// cos(max_angle), or -inf from a half turn on (every turn allowed, whatever the rounding).
pub fn cos_limit(max_angle: f64) -> f64 {
    if max_angle >= std::f64::consts::PI {
        f64::NEG_INFINITY
    } else {
        max_angle.cos()
    }
}
