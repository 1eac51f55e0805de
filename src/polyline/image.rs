//! Grayscale images and their Sobel gradient.

use crate::error::{Error, Result};

/// Row-major grayscale, x right, y down.
#[derive(Debug, Clone, PartialEq)]
pub struct Gray {
    /// Pixels per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Gray values, row-major, finite.
    pub data: Vec<f64>,
}

/// The weights of RGB to gray (ITU-R BT.601 luma).
pub fn luma(r: f64, g: f64, b: f64) -> f64 {
    0.299 * r + 0.587 * g + 0.114 * b
}

impl Gray {
    /// An image of `width` x `height` values; refused when the count differs or a value is
    /// not finite.
    pub fn new(width: u32, height: u32, data: Vec<f64>) -> Result<Gray> {
        let n = width as u64 * height as u64;
        if data.len() as u64 != n {
            return Err(Error::invalid(
                "image.data",
                format!("{} values for {width} x {height} pixels", data.len()),
            ));
        }
        if let Some(i) = data.iter().position(|v| !v.is_finite()) {
            return Err(Error::invalid(
                "image.data",
                format!("pixel {i} is {}", data[i]),
            ));
        }
        Ok(Gray {
            width,
            height,
            data,
        })
    }

    /// From a decoded image file: gray stays gray, colour goes through [`luma`]; values keep
    /// the file's scale (0..255 for 8-bit, 0..65535 for 16-bit).
    pub fn from_dynamic(img: &::image::DynamicImage) -> Result<Gray> {
        let (w, h) = (img.width(), img.height());
        let data: Vec<f64> = if img.color().has_color() {
            let rgb = img.to_rgb32f();
            let scale = if img.color().bytes_per_pixel() / img.color().channel_count() > 1 {
                65535.0
            } else {
                255.0
            };
            rgb.pixels()
                .map(|p| luma(p[0] as f64, p[1] as f64, p[2] as f64) * scale)
                .collect()
        } else if img.color().bytes_per_pixel() / img.color().channel_count() > 1 {
            img.to_luma16().pixels().map(|p| p[0] as f64).collect()
        } else {
            img.to_luma8().pixels().map(|p| p[0] as f64).collect()
        };
        Gray::new(w, h, data)
    }

    fn at(&self, x: i64, y: i64) -> f64 {
        // Replicated borders.
        let x = x.clamp(0, self.width as i64 - 1) as usize;
        let y = y.clamp(0, self.height as i64 - 1) as usize;
        self.data[y * self.width as usize + x]
    }
}

/// Unnormalised 3x3 Sobel gradient: gx grows to the right, gy downwards.
#[derive(Debug, Clone, PartialEq)]
pub struct Gradient {
    /// Pixels per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Horizontal derivative per pixel, row-major.
    pub gx: Vec<f64>,
    /// Vertical derivative per pixel, row-major.
    pub gy: Vec<f64>,
}

impl Gradient {
    /// The Sobel gradient of `img` (edge pixels repeat their border).
    pub fn sobel(img: &Gray) -> Gradient {
        let (w, h) = (img.width as i64, img.height as i64);
        let mut gx = Vec::with_capacity((w * h) as usize);
        let mut gy = Vec::with_capacity((w * h) as usize);
        for y in 0..h {
            for x in 0..w {
                let p = |dx: i64, dy: i64| img.at(x + dx, y + dy);
                gx.push(
                    (p(1, -1) + 2.0 * p(1, 0) + p(1, 1)) - (p(-1, -1) + 2.0 * p(-1, 0) + p(-1, 1)),
                );
                gy.push(
                    (p(-1, 1) + 2.0 * p(0, 1) + p(1, 1)) - (p(-1, -1) + 2.0 * p(0, -1) + p(1, -1)),
                );
            }
        }
        Gradient {
            width: img.width,
            height: img.height,
            gx,
            gy,
        }
    }
}
