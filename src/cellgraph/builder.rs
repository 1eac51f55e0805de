//! The cell-graph builder a caller keeps: its backend and the out-of-memory policy, set once;
//! each arrangement and sample set it is given becomes a [`CellGraph`]. Device out of memory
//! builds on the CPU where `cpu_fallback` allows ([`device_or_cpu`]).

use super::samples::UnitSamples;
use super::{build_unit, Arrangement, CellGraph, Config};
use crate::compute::fallback::device_or_cpu;
use crate::compute::Backend;
use crate::error::Result;

/// ```
/// use gpu_planning::cellgraph::samples::UnitSamples;
/// use gpu_planning::cellgraph::{Arrangement, Builder, Config};
/// use gpu_planning::compute::Backend;
///
/// // One constraint, x^2 - w^2, splits the rotations into two cells.
/// let mut c = vec![0.0; 10];
/// c[0] = 1.0;
/// c[9] = -1.0;
/// let arr = Arrangement::from_unique(1, &c)?;
/// let builder = Builder::new(&Backend::Cpu, false, "doc");
/// let (graph, ran) = builder.build(&arr, UnitSamples::shoemake(2000, 1)?, &Config::default())?;
/// assert_eq!((graph.cells.counts.len(), graph.edges.len(), ran), (2, 1, "cpu"));
/// # Ok::<(), gpu_planning::error::Error>(())
/// ```
pub struct Builder {
    backend: Backend,
    cpu_fallback: bool,
    /// Names the builder in its log lines (a node's name).
    label: String,
}

impl Builder {
    /// A builder on `backend`, failing on a device out of memory unless `cpu_fallback`;
    /// `label` names it in that log line.
    pub fn new(backend: &Backend, cpu_fallback: bool, label: &str) -> Builder {
        Builder {
            backend: backend.clone(),
            cpu_fallback,
            label: label.into(),
        }
    }

    /// The graph of `arr` over `samples` (normalised already, shared with the graph) by
    /// `cfg`'s algorithm, and the backend that built it.
    pub fn build(
        &self,
        arr: &Arrangement,
        samples: UnitSamples,
        cfg: &Config,
    ) -> Result<(CellGraph, &'static str)> {
        if matches!(self.backend, Backend::Cpu) {
            return Ok((build_unit(&self.backend, arr, samples, cfg)?, "cpu"));
        }
        let what = format!(
            "{}: {} samples x {} constraints",
            self.label,
            samples.len(),
            arr.len()
        );
        let on_device = || build_unit(&self.backend, arr, samples.clone(), cfg);
        let on_cpu = || build_unit(&Backend::Cpu, arr, samples.clone(), cfg);
        device_or_cpu(self.cpu_fallback, &what, on_device, on_cpu)
    }
}
