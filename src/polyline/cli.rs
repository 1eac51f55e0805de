//! `gpu_planning polyline`: the best polyline between two pixels of an image file.

use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use super::geometry as g;
use super::geometry::Problem;
use super::image::{Gradient, Gray};
use super::solve;
use crate::compute::{Backend, BackendKind};
use crate::error::{Error, Result};

/// `gpu_planning polyline`'s flags: an image, the two ends, the problem's shape and caps.
#[derive(Debug, Args)]
pub struct PolylineArgs {
    /// Image file (PNG, PGM/PPM): gray, or colour converted with 0.299 R + 0.587 G + 0.114 B.
    #[arg(long)]
    pub image: PathBuf,
    /// Start pixel "X,Y" (x right, y down; fractions allowed).
    #[arg(long, allow_hyphen_values = true)]
    pub a: String,
    /// End pixel "X,Y".
    #[arg(long, allow_hyphen_values = true)]
    pub b: String,
    /// Interior guides m.
    #[arg(long, default_value_t = g::DEFAULT_GUIDES)]
    pub guides: u32,
    /// Points per guide d (>= 2).
    #[arg(long, default_value_t = g::DEFAULT_POINTS)]
    pub points: u32,
    /// Half width of each guide, pixels.
    #[arg(long, default_value_t = g::DEFAULT_HALF_WIDTH)]
    pub half_width: f64,
    /// Largest turning angle at a guide point, degrees.
    #[arg(long, default_value_t = g::DEFAULT_MAX_ANGLE_DEGREES)]
    pub max_angle: f64,
    /// Largest --guides accepted (the node's max_guides; default from config/default.yaml).
    #[arg(long, default_value_t = g::DEFAULT_MAX_GUIDES)]
    pub max_guides: u32,
    /// Largest --points accepted (the node's max_points_per_guide).
    #[arg(long, default_value_t = g::DEFAULT_MAX_POINTS_PER_GUIDE)]
    pub max_points: u32,
    /// auto (CUDA when a device is there), cpu or cuda.
    #[arg(long, default_value = "auto")]
    pub backend: BackendKind,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also draw the image, the guides' points and the polyline into this PNG file.
    #[arg(long)]
    pub png: Option<PathBuf>,
}

fn parse_point(field: &str, s: &str) -> Result<(f64, f64)> {
    let bad = || Error::invalid(field, format!("'{s}' is not X,Y (two numbers)"));
    let (x, y) = s.split_once(',').ok_or_else(bad)?;
    Ok((
        x.trim().parse().map_err(|_| bad())?,
        y.trim().parse().map_err(|_| bad())?,
    ))
}

/// Reads the image, solves the problem, prints the polyline (and draws it with `--png`).
pub fn run(a: PolylineArgs) -> Result<()> {
    let problem = Problem {
        a: parse_point("--a", &a.a)?,
        b: parse_point("--b", &a.b)?,
        guides: a.guides,
        points: a.points,
        half_width: a.half_width,
        max_angle: a.max_angle.to_radians(),
    };
    problem.validate()?;
    problem.check_limits(a.max_guides, a.max_points)?;
    let name = a.image.display().to_string();
    let img = ::image::open(&a.image).map_err(|e| Error::invalid(name.clone(), e))?;
    let gray = Gray::from_dynamic(&img)?;
    problem.check_image(gray.width, gray.height)?;
    let grad = Gradient::sobel(&gray);
    let started = std::time::Instant::now();
    let backend = Backend::select(a.backend)?;
    let r = solve(&backend, &grad, &problem)?;
    if let Some(out) = &a.png {
        super::draw::draw(&gray, &problem, &r, out)?;
    }
    if a.json {
        let points: Vec<[f64; 2]> = r.points.iter().map(|&(x, y)| [x, y]).collect();
        let score = if r.feasible {
            json!(r.score)
        } else {
            serde_json::Value::Null
        };
        println!(
            "{}",
            json!({"feasible": r.feasible, "points": points, "score": score})
        );
    } else if r.feasible {
        println!(
            "score {:.6} in {:.3} s ({}); points:",
            r.score,
            started.elapsed().as_secs_f64(),
            backend.name()
        );
        for (x, y) in &r.points {
            println!("  {x:.3} {y:.3}");
        }
    } else {
        println!(
            "no polyline turns at most {} degrees at every guide",
            a.max_angle
        );
    }
    Ok(())
}
