//! Shared helpers of the DDS tests.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU16, Ordering};

use gpu_planning::ros::RosRuntime;

/// A DDS domain no other test of this process uses (up to 20 tests), spread by process id so
/// that test binaries running side by side rarely meet (domains 1..=232 are valid).
pub fn unique_domain() -> u16 {
    static NEXT: AtomicU16 = AtomicU16::new(0);
    // 20 per process: the `nodes` binary has more DDS tests than 10, and two of its tests on
    // one domain would see each other's topics.
    let base = 20 + (std::process::id() % 10) as u16 * 20;
    base + NEXT.fetch_add(1, Ordering::Relaxed) % 20
}

/// Runs a runtime's executor on a background thread until its shutdown fires.
pub fn run_in_background(rt: &RosRuntime) -> std::thread::JoinHandle<()> {
    let ex = rt.executor().clone();
    let sd = rt.shutdown().clone();
    std::thread::spawn(move || smol::block_on(ex.run(sd.wait())))
}

/// Waits at most 10 s for a discovery future such as `client.wait_for_service(node)`.
/// ros2-client re-checks the match only on some graph events and can miss the one that
/// completes it, so a missed wait is not a failure: the callers retry their service calls
/// until answered, and transient-local topics deliver late.
pub async fn settle_discovery(what: &str, f: impl std::future::Future<Output = ()>) {
    let timer = smol::Timer::after(std::time::Duration::from_secs(10));
    if let futures::future::Either::Right(_) =
        futures::future::select(Box::pin(f), Box::pin(timer)).await
    {
        eprintln!("{what}: discovery not confirmed within 10 s; relying on retries");
    }
}
