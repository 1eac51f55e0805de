//! What the test binaries share that is not about the GPU: where the repository is. Tests
//! travel (scripts/device-test runs them on another machine), so a file of the repository is
//! found through `GPU_PLANNING_REPO` when it is set, and the build's own checkout otherwise.

use std::path::PathBuf;

/// Environment variable naming the repository the tests read their files from.
pub const REPO_ENV: &str = "GPU_PLANNING_REPO";

/// The repository root.
pub fn repo() -> PathBuf {
    std::env::var_os(REPO_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}
