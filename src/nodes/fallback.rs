//! Device out of memory is not a reason to fail a robot's request: with `cpu_fallback` the
//! same work runs again on the CPU (slower, same answer, since every GPU path equals its CPU
//! reference), and a log line says so. The node's work tally counts where it ran.

use crate::compute::Backend;
use crate::error::{Error, Result};
use crate::ros::work::NodeWork;

/// Runs `work` on `backend`; on device out-of-memory and with `allowed`, runs it on the CPU.
/// The backend that finished it is counted in `tally`.
pub fn cpu_when_out_of_memory<T>(
    tally: &NodeWork,
    backend: &Backend,
    allowed: bool,
    what: &str,
    work: impl Fn(&Backend) -> Result<T>,
) -> Result<T> {
    let (ran, result) = match work(backend) {
        Err(Error::OutOfMemory {
            requested_bytes, ..
        }) if allowed && !matches!(backend, Backend::Cpu) => {
            tracing::warn!(
                "{what}: {requested_bytes} bytes do not fit the device; computing on the CPU \
                 (cpu_fallback)"
            );
            (Backend::Cpu.name(), work(&Backend::Cpu))
        }
        other => (backend.name(), other),
    };
    if result.is_ok() {
        tally.record(ran);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
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
