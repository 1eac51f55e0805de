//! Shared helpers of the DDS tests.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU16, Ordering};

use gpu_planning::ros::RosRuntime;

/// A DDS domain no other test of this process uses, spread by process id so that test
/// binaries running side by side rarely meet (domains 1..=232 are valid).
pub fn unique_domain() -> u16 {
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let base = 20 + (std::process::id() % 20) as u16 * 10;
    base + NEXT.fetch_add(1, Ordering::Relaxed) % 10
}

/// Runs a runtime's executor on a background thread until its shutdown fires.
pub fn run_in_background(rt: &RosRuntime) -> std::thread::JoinHandle<()> {
    let ex = rt.executor().clone();
    let sd = rt.shutdown().clone();
    std::thread::spawn(move || smol::block_on(ex.run(sd.wait())))
}
