//! Parallel primitives shared by the algorithms: exclusive prefix sum, stream compaction with
//! keep flags, and a stable radix sort of (u64 key, u32 value) pairs. The CPU functions in
//! [`cpu`] are the reference; [`gpu`] must return identical results.

pub mod cpu;
pub mod gpu;

use crate::compute::Backend;
use crate::error::{Error, Result};

/// Exclusive prefix sum with wrapping u32 addition; also returns the (wrapped) total.
pub fn exclusive_scan(backend: &Backend, input: &[u32]) -> Result<(Vec<u32>, u32)> {
    check_len("input", input.len())?;
    match backend {
        Backend::Cpu => Ok(cpu::exclusive_scan(input)),
        Backend::Cuda(rt) => gpu::Primitives::new(rt)?.exclusive_scan_host(input),
    }
}

/// The values whose flag is non-zero, in input order.
pub fn compact(backend: &Backend, values: &[u32], flags: &[u8]) -> Result<Vec<u32>> {
    if values.len() != flags.len() {
        return Err(Error::invalid(
            "flags",
            format!(
                "length {} differs from values length {}",
                flags.len(),
                values.len()
            ),
        ));
    }
    check_len("values", values.len())?;
    match backend {
        Backend::Cpu => Ok(cpu::compact(values, flags)),
        Backend::Cuda(rt) => gpu::Primitives::new(rt)?.compact_host(values, flags),
    }
}

/// Stable sort of pairs by key: equal keys keep their input order.
pub fn sort_pairs(backend: &Backend, keys: &[u64], values: &[u32]) -> Result<(Vec<u64>, Vec<u32>)> {
    if keys.len() != values.len() {
        return Err(Error::invalid(
            "values",
            format!(
                "length {} differs from keys length {}",
                values.len(),
                keys.len()
            ),
        ));
    }
    check_len("keys", keys.len())?;
    match backend {
        Backend::Cpu => Ok(cpu::sort_pairs_parallel(keys, values)),
        Backend::Cuda(rt) => gpu::Primitives::new(rt)?.sort_pairs_host(keys, values),
    }
}

/// The GPU kernels index with u32; larger inputs are refused rather than silently truncated.
fn check_len(field: &str, len: usize) -> Result<()> {
    if len > u32::MAX as usize {
        return Err(Error::invalid(
            field,
            format!("{len} elements exceed the limit of {}", u32::MAX),
        ));
    }
    Ok(())
}
