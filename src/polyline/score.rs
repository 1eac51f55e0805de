//! Link scores: the gradient component orthogonal to a link, summed over the pixels it crosses.

use super::geometry::Pt;
use super::image::Gradient;

/// Score of the link p -> q (see the module docs of `polyline` for the sampling rule).
pub fn link(g: &Gradient, p: Pt, q: Pt) -> f64 {
    let d = (q.0 - p.0, q.1 - p.1);
    let len = (d.0 * d.0 + d.1 * d.1).sqrt();
    if len == 0.0 {
        return 0.0;
    }
    let u = (d.0 / len, d.1 / len);
    let steps = (len.ceil() as u64).max(1);
    let mut s = 0.0;
    for t in 0..steps {
        let f = t as f64 / steps as f64;
        let x = (p.0 + d.0 * f + 0.5).floor();
        let y = (p.1 + d.1 * f + 0.5).floor();
        if x >= 0.0 && y >= 0.0 && x < g.width as f64 && y < g.height as f64 {
            let i = y as usize * g.width as usize + x as usize;
            s += (g.gx[i] * u.1 - g.gy[i] * u.0).abs();
        }
    }
    s
}
