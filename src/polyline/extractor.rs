//! The polyline extractor of one image: its gradient computed once (and on CUDA kept on the
//! device), then any number of problems solved on it. Device out of memory, at the upload or
//! in a solve, solves on the CPU where `cpu_fallback` allows ([`device_or_cpu`]).

use super::gpu::DeviceGradient;
use super::{cpu, Gradient, Polyline, Problem};
use crate::compute::fallback::device_or_cpu;
use crate::compute::Backend;
use crate::error::Result;

/// ```
/// use gpu_planning::compute::Backend;
/// use gpu_planning::polyline::{Extractor, Gradient, Gray, Problem};
///
/// // A bright vertical line at x = 20 on a 40 x 30 image.
/// let pixels = (0..40 * 30).map(|i| if i % 40 == 20 { 255.0 } else { 0.0 }).collect();
/// let gradient = Gradient::sobel(&Gray::new(40, 30, pixels)?);
/// let extractor = Extractor::new(&Backend::Cpu, gradient, false, "doc")?;
/// let problem = Problem {
///     a: (20.0, 2.0),
///     b: (20.0, 27.0),
///     guides: 4,
///     points: 9,
///     half_width: 4.0,
///     max_angle: 0.3,
/// };
/// let (line, ran) = extractor.extract(&problem)?;
/// assert!(line.feasible && ran == "cpu");
/// assert_eq!(line.points.len(), 6); // a, one point per guide, b
/// # Ok::<(), gpu_planning::error::Error>(())
/// ```
pub struct Extractor {
    grad: Gradient,
    device: Option<DeviceGradient>,
    cpu_fallback: bool,
    /// Names the extractor in its log lines (a node's name).
    label: String,
}

impl Extractor {
    /// Takes the image's gradient and, on CUDA, uploads it.
    pub fn new(
        backend: &Backend,
        grad: Gradient,
        cpu_fallback: bool,
        label: &str,
    ) -> Result<Extractor> {
        let device = match backend {
            Backend::Cpu => None,
            Backend::Cuda(rt) => {
                let what = format!("{label}: image {} x {}", grad.width, grad.height);
                let upload = || DeviceGradient::upload(rt, &grad).map(Some);
                device_or_cpu(cpu_fallback, &what, upload, || Ok(None))?.0
            }
        };
        Ok(Extractor {
            grad,
            device,
            cpu_fallback,
            label: label.into(),
        })
    }

    /// The image's gradient, on the host.
    pub fn gradient(&self) -> &Gradient {
        &self.grad
    }

    /// Where solves run: "cuda" while the gradient is on the device, else "cpu".
    pub fn backend_name(&self) -> &'static str {
        if self.device.is_some() {
            "cuda"
        } else {
            "cpu"
        }
    }

    /// The best polyline of `p` on this image, and the backend that found it.
    pub fn extract(&self, p: &Problem) -> Result<(Polyline, &'static str)> {
        p.check_image(self.grad.width, self.grad.height)?;
        match &self.device {
            None => Ok((cpu::solve(&self.grad, p)?, "cpu")),
            Some(d) => device_or_cpu(
                self.cpu_fallback,
                &self.label,
                || d.solve(p),
                || cpu::solve(&self.grad, p),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::polyline::Gray;

    #[test]
    fn the_extractor_answers_as_the_cpu_reference() {
        let (w, h) = (41u32, 29u32);
        let pixels: Vec<f64> = (0..w * h)
            .map(|i| {
                if (i % w) * 3 == (i / w) * 4 {
                    255.0
                } else {
                    10.0
                }
            })
            .collect();
        let grad = Gradient::sobel(&Gray::new(w, h, pixels).unwrap());
        let ex = Extractor::new(&Backend::Cpu, grad.clone(), false, "t").unwrap();
        assert_eq!(ex.backend_name(), "cpu");
        let p = Problem {
            a: (1.0, 1.0),
            b: (38.0, 27.0),
            guides: 6,
            points: 9,
            half_width: 5.0,
            max_angle: 0.8,
        };
        let (got, ran) = ex.extract(&p).unwrap();
        assert_eq!(ran, "cpu");
        assert_eq!(got, cpu::solve(&grad, &p).unwrap());
        // A problem off the image is refused before any work.
        let off = Problem {
            b: (400.0, 27.0),
            ..p.clone()
        };
        assert!(ex.extract(&off).is_err());
    }
}
