//! The `--png` picture: the image in grey, the guides' candidate points in blue, the polyline
//! in red, a and b in green; small images scaled up so a person can see the pixels.

use std::path::Path;

use image::{Rgb, RgbImage};

use super::geometry::Polyline;
use super::geometry::{Problem, Pt};
use super::image::Gray;
use crate::error::{Error, Result};

/// Draws the image, every guide's points and the polyline into a PNG at `out`.
pub fn draw(gray: &Gray, p: &Problem, r: &Polyline, out: &Path) -> Result<()> {
    let (w, h) = (gray.width, gray.height);
    let scale = (768 / w.max(h).max(1)).clamp(1, 8);
    let (lo, hi) = gray
        .data
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    let span = (hi - lo).max(1e-12);
    let mut img = RgbImage::from_fn(w * scale, h * scale, |x, y| {
        let v = gray.data[(y / scale * w + x / scale) as usize];
        let g = (40.0 + (v - lo) / span * 150.0) as u8;
        Rgb([g, g, g])
    });
    let mut dot = |pt: Pt, c: [u8; 3], radius: i64| {
        // Pixel x covers [x - 0.5, x + 0.5) (the sampling rule of the link scores).
        let (cx, cy) = (
            ((pt.0 + 0.5) * scale as f64).floor() as i64,
            ((pt.1 + 0.5) * scale as f64).floor() as i64,
        );
        for dy in -radius..=radius {
            for dx in -radius..=radius {
                let (x, y) = (cx + dx, cy + dy);
                if x >= 0 && y >= 0 && x < img.width() as i64 && y < img.height() as i64 {
                    img.put_pixel(x as u32, y as u32, Rgb(c));
                }
            }
        }
    };
    // Many points per guide would paint the guide solid; every one is drawn, only smaller.
    for k in 1..=p.guides {
        for j in 0..p.points {
            dot(p.vertex(k, j), [60, 110, 230], 0);
        }
    }
    for seg in r.points.windows(2) {
        let (a, b) = (seg[0], seg[1]);
        let len = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt() * scale as f64;
        let steps = len.ceil().max(1.0) as u32;
        for t in 0..=steps {
            let f = t as f64 / steps as f64;
            dot(
                (a.0 + (b.0 - a.0) * f, a.1 + (b.1 - a.1) * f),
                [230, 30, 30],
                0,
            );
        }
    }
    for &v in &r.points {
        dot(v, [230, 30, 30], scale as i64 / 2);
    }
    dot(p.a, [20, 220, 20], scale as i64);
    dot(p.b, [20, 220, 20], scale as i64);
    img.save(out)
        .map_err(|e| Error::invalid(out.display().to_string(), e))
}
