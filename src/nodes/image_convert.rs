//! sensor_msgs/Image -> grayscale (mono8, mono16, 32FC1, rgb8, bgr8), honouring `step` and
//! `is_bigendian`; any other encoding is refused with its name.

use crate::error::{Error, Result};
use crate::polyline::image::{luma, Gray};
use crate::ros::msg::sensor_msgs::Image;

pub const ENCODINGS: &str = "mono8, mono16, 32FC1, rgb8, bgr8";

pub fn gray_from_image(img: &Image, max_pixels: u64) -> Result<Gray> {
    let (w, h) = (img.width as usize, img.height as usize);
    let pixels = w as u64 * h as u64;
    if pixels == 0 || pixels > max_pixels {
        return Err(Error::invalid(
            "image.width x image.height",
            format!("{w} x {h} is not 1..={max_pixels} pixels"),
        ));
    }
    let bpp = match img.encoding.as_str() {
        "mono8" => 1,
        "mono16" => 2,
        "32FC1" => 4,
        "rgb8" | "bgr8" => 3,
        other => {
            return Err(Error::invalid(
                "image.encoding",
                format!("'{other}' is not one of {ENCODINGS}"),
            ))
        }
    };
    let row = w * bpp;
    let step = img.step as usize;
    if step < row {
        return Err(Error::invalid(
            "image.step",
            format!("{step} is below width x bytes per pixel = {row}"),
        ));
    }
    let need = step * (h - 1) + row;
    if img.data.len() < need {
        return Err(Error::invalid(
            "image.data",
            format!(
                "{} bytes, but step x (height - 1) + row needs {need}",
                img.data.len()
            ),
        ));
    }
    let big = img.is_bigendian != 0;
    let mut out = Vec::with_capacity(w * h);
    for y in 0..h {
        let r = &img.data[y * step..y * step + row];
        for x in 0..w {
            let p = &r[x * bpp..(x + 1) * bpp];
            out.push(match img.encoding.as_str() {
                "mono8" => p[0] as f64,
                "mono16" => {
                    let b = [p[0], p[1]];
                    (if big {
                        u16::from_be_bytes(b)
                    } else {
                        u16::from_le_bytes(b)
                    }) as f64
                }
                "32FC1" => {
                    let b = [p[0], p[1], p[2], p[3]];
                    (if big {
                        f32::from_be_bytes(b)
                    } else {
                        f32::from_le_bytes(b)
                    }) as f64
                }
                "rgb8" => luma(p[0] as f64, p[1] as f64, p[2] as f64),
                _ => luma(p[2] as f64, p[1] as f64, p[0] as f64),
            });
        }
    }
    Gray::new(img.width, img.height, out).map_err(|e| match e {
        Error::InvalidInput { reason, .. } => Error::invalid("image.data", reason),
        other => other,
    })
}
