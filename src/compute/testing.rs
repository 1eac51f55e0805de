//! Helpers for tests that need a GPU. On machines without CUDA they skip with a printed reason;
//! with `GPU_PLANNING_REQUIRE_CUDA=1` a missing device is a failure instead, which is how the
//! GPU tests are run on the device machine.

use std::sync::Arc;

use super::cuda::CudaRuntime;

/// Environment variable that turns a skipped GPU test into a failed one.
pub const REQUIRE_CUDA_ENV: &str = crate::env::REQUIRE_CUDA.name;

pub fn cuda_required() -> bool {
    crate::env::REQUIRE_CUDA
        .get()
        .is_some_and(|v| !v.is_empty() && v != "0")
}

/// The shared CUDA runtime, or `None` (after printing why) when the test should skip.
///
/// # Panics
/// When CUDA is unavailable and [`REQUIRE_CUDA_ENV`] is set.
pub fn cuda_or_skip(test: &str) -> Option<Arc<CudaRuntime>> {
    match CudaRuntime::shared() {
        Ok(rt) => Some(rt),
        Err(e) if cuda_required() => {
            panic!("{test}: {REQUIRE_CUDA_ENV} is set but CUDA is unavailable: {e}")
        }
        Err(e) => {
            crate::testing::announce_skip(test, &e.to_string());
            None
        }
    }
}

/// Environment variable that fixes the run-dependent part of every random test's seed.
pub const TEST_RUN_ENV: &str = crate::env::TEST_RUN.name;

/// A random test's seed: `base` (one per test) mixed with a per-run value, the process id
/// unless [`TEST_RUN_ENV`] names one. Printed (the harness shows it when the test fails), so a
/// failure anywhere, the device included, reproduces with `GPU_PLANNING_TEST_RUN=<run>`.
pub fn seed(base: u64) -> u64 {
    let run = crate::env::TEST_RUN
        .get()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(std::process::id() as u64);
    let seed = base ^ run;
    println!("seed {seed:#x} (base {base:#x}; reproduce with {TEST_RUN_ENV}={run})");
    seed
}
