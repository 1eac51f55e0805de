//! Device out of memory is not a reason to fail a robot's request: with `cpu_fallback` the
//! same work runs again on the CPU (slower, same answer, since every GPU path equals its CPU
//! reference), and a log line says so. The node's work tally counts where it ran.

use crate::compute::{fallback::device_or_cpu, Backend};
use crate::error::Result;
use crate::ros::work::NodeWork;

/// Runs `work` on `backend`; on device out-of-memory and with `allowed`, runs it on the CPU
/// ([`device_or_cpu`]). The backend that finished it is counted in `tally`.
pub fn cpu_when_out_of_memory<T>(
    tally: &NodeWork,
    backend: &Backend,
    allowed: bool,
    what: &str,
    work: impl Fn(&Backend) -> Result<T>,
) -> Result<T> {
    let (result, ran) = match backend {
        Backend::Cpu => (work(backend)?, backend.name()),
        Backend::Cuda(_) => device_or_cpu(allowed, what, || work(backend), || work(&Backend::Cpu))?,
    };
    tally.record(ran);
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::ros::work::WorkTally;
    use std::sync::Arc;

    #[test]
    fn only_out_of_memory_on_a_device_falls_back_and_only_when_allowed() {
        let tally = Arc::new(WorkTally::default());
        let n = NodeWork::new(tally.clone(), "n");
        let oom = || Error::OutOfMemory {
            requested_bytes: 8,
            detail: "test".into(),
        };
        // On the CPU there is nothing to fall back from.
        let r: Result<()> = cpu_when_out_of_memory(&n, &Backend::Cpu, true, "t", |_| Err(oom()));
        assert!(matches!(r, Err(Error::OutOfMemory { .. })));
        let r: Result<()> = cpu_when_out_of_memory(&n, &Backend::Cpu, true, "t", |_| {
            Err(Error::invalid("x", "bad"))
        });
        assert!(matches!(r, Err(Error::InvalidInput { .. })));
        let r = cpu_when_out_of_memory(&n, &Backend::Cpu, false, "t", |_| Ok(5));
        assert_eq!(r.unwrap(), 5);
        // Only finished work counts.
        assert_eq!(tally.count("n", "cpu"), 1);
    }
}
