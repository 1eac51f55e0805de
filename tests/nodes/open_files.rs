//! Every node in one process needs more file descriptors than a soft limit of 256 (RustDDS
//! wakes each endpoint through socket pairs): the process raises its soft limit to the hard
//! one before it joins DDS, and runs.

use std::time::{Duration, Instant};

use crate::common;

/// The soft and hard "Max open files" of a running process (Linux /proc/PID/limits).
fn open_file_limits(pid: u32) -> (String, String) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .expect("Max open files in /proc/PID/limits")
        .to_string();
    let mut fields = line["Max open files".len()..].split_whitespace();
    let soft = fields.next().unwrap().to_string();
    let hard = fields.next().unwrap().to_string();
    (soft, hard)
}

#[test]
fn every_node_runs_from_a_soft_limit_of_256_open_files() {
    let hard = open_file_limits(std::process::id()).1;
    if hard != "unlimited" && hard.parse::<u64>().unwrap() < 2048 {
        eprintln!("skipped: the hard open-file limit here is {hard}, too low to show the raise");
        return;
    }
    let domain = common::unique_domain();
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -Sn 256 && exec "$0" "$@""#)
        .arg(common::executable())
        .args([
            "run",
            "--duration-s",
            "60",
            "--domain-id",
            &domain.to_string(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Every node is up once the process holds hundreds of descriptors.
    let started = Instant::now();
    let mut held = 0;
    while started.elapsed() < Duration::from_secs(30) && held < 400 {
        if let Ok(Some(status)) = child.try_wait() {
            let out = child.wait_with_output().unwrap();
            panic!(
                "gpu_planning run exited ({status}):\n{}",
                common::tail(&String::from_utf8_lossy(&out.stderr), 20)
            );
        }
        held = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .map(|d| d.count())
            .unwrap_or(0);
        std::thread::sleep(Duration::from_millis(100));
    }
    let (soft, hard) = open_file_limits(pid);
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        held >= 400,
        "the nodes hold only {held} descriptors after 30 s"
    );
    assert_eq!(soft, hard, "the soft limit was not raised");
}
