//! What the test binaries share that is not about the GPU: where the repository is. Tests
//! travel (scripts/device-test runs them on another machine), so a file of the repository is
//! found through `GPU_PLANNING_REPO` when it is set, and the build's own checkout otherwise.

use std::path::PathBuf;

/// Environment variable naming the repository the tests read their files from.
pub const REPO_ENV: &str = crate::env::REPO.name;

/// The repository root.
pub fn repo() -> PathBuf {
    crate::env::REPO
        .get_os()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

/// Environment variable that makes the independent peers' checks (Cyclone DDS, rosbags and
/// mcap, pypcd4) required instead of skipped when their Python package is missing (CI).
pub const REQUIRE_INTEROP_ENV: &str = crate::env::REQUIRE_INTEROP.name;

/// What to install so that no interop check skips.
pub const INTEROP_INSTALL: &str = "pip install cyclonedds==11.0.1 rosbags==0.11.9 mcap==1.6.0 \
     pypcd4==1.5.1; apt install g++ libfastrtps-dev (eProsima Fast DDS)";

/// Prints `SKIP check: why` where the test command's output shows it even for a passing test:
/// straight to the process's stderr, which the test harness does not capture (its capture
/// takes only what `eprintln!` writes).
pub fn announce_skip(check: &str, why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "SKIP {check}: {why}");
}

/// An independent peer's check cannot run (`why`): a failure under
/// `GPU_PLANNING_REQUIRE_INTEROP=1`, else a visible skip naming what to install.
pub fn peer_missing(check: &str, why: &str) {
    if crate::env::REQUIRE_INTEROP.is("1") {
        panic!("{REQUIRE_INTEROP_ENV}=1 but {check} cannot run: {why}");
    }
    announce_skip(check, &format!("{why} (to run it: {INTEROP_INSTALL})"));
}

/// Whether python3 imports `modules` (`"cyclonedds.domain, rosbags.typesys"`); the reason when
/// not, for `peer_missing`.
pub fn python_imports(modules: &str) -> Result<(), String> {
    let out = std::process::Command::new("python3")
        .args(["-c", &format!("import {modules}")])
        .output()
        .map_err(|e| format!("python3 not runnable: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "python3 cannot import {modules}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}
