//! The best polyline between two pixels under a turning limit, along the edges of an image:
//! its gradient is computed (and uploaded) once, then any number of problems are solved.
//!
//!     cargo run --release --example polyline

use gpu_planning::compute::{Backend, BackendKind};
use gpu_planning::polyline::{Extractor, Gradient, Gray, Problem};

fn main() -> gpu_planning::error::Result<()> {
    // A bright diagonal stripe on a dark image: its edges are where the gradient is.
    let (w, h) = (120u32, 80u32);
    let pixels: Vec<f64> = (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as f64, (i / w) as f64);
            if (y - 0.6 * x - 5.0).abs() < 4.0 {
                220.0
            } else {
                20.0
            }
        })
        .collect();
    let gradient = Gradient::sobel(&Gray::new(w, h, pixels)?);
    let backend = Backend::select(BackendKind::Auto)?;
    let extractor = Extractor::new(&backend, gradient, false, "example")?;
    let problem = Problem {
        a: (5.0, 6.0),
        b: (110.0, 70.0),
        guides: 8,
        points: 15,
        half_width: 10.0,
        max_angle: 0.5,
    };
    let (line, ran) = extractor.extract(&problem)?;
    println!(
        "feasible: {}, score {:.1}, points {:?} (on {ran})",
        line.feasible, line.score, line.points
    );
    Ok(())
}
