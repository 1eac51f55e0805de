//! The one policy for a device out of memory: where the caller allows it (a node's
//! `cpu_fallback`), the same work runs again on the CPU, slower and with the same answer
//! (every device path equals its CPU reference), and one WARN line says so; otherwise the
//! error goes back to the caller as it is. Every algorithm's prepared object and every node
//! that falls back goes through here, so the rule and its log line are the same everywhere.

use crate::error::{Error, Result};

/// The device's answer, or with `allowed` and a device out of memory, the CPU's. Also says
/// which of the two it is ([`super::Backend::name`]: "cuda" or "cpu"). `what` names the work
/// in the log line.
pub fn device_or_cpu<T>(
    allowed: bool,
    what: &str,
    device: impl FnOnce() -> Result<T>,
    cpu: impl FnOnce() -> Result<T>,
) -> Result<(T, &'static str)> {
    match device() {
        Err(Error::OutOfMemory {
            requested_bytes, ..
        }) if allowed => {
            tracing::warn!(
                "{what}: {requested_bytes} bytes do not fit the device; computing on the CPU \
                 (cpu_fallback)"
            );
            Ok((cpu()?, "cpu"))
        }
        other => Ok((other?, "cuda")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oom() -> Error {
        Error::OutOfMemory {
            requested_bytes: 8,
            detail: "test".into(),
        }
    }

    #[test]
    fn only_out_of_memory_falls_back_and_only_when_allowed() {
        let r = device_or_cpu(true, "t", || Err::<u8, _>(oom()), || Ok(5));
        assert_eq!(r.unwrap(), (5, "cpu"));
        let r = device_or_cpu(false, "t", || Err::<u8, _>(oom()), || Ok(5));
        assert!(matches!(r, Err(Error::OutOfMemory { .. })));
        let r = device_or_cpu(
            true,
            "t",
            || Err::<u8, _>(Error::invalid("x", "bad")),
            || Ok(5),
        );
        assert!(matches!(r, Err(Error::InvalidInput { .. })));
        assert_eq!(
            device_or_cpu(true, "t", || Ok(7), || Ok(5)).unwrap(),
            (7, "cuda")
        );
        // The CPU's own error after a fallback is the answer.
        let r = device_or_cpu(true, "t", || Err::<u8, _>(oom()), || Err(Error::Cancelled));
        assert!(matches!(r, Err(Error::Cancelled)));
    }
}
