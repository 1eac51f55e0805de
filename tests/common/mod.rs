//! Shared helpers of the DDS tests.
#![allow(dead_code)]

use std::io::Write;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use gpu_planning::ros::RosRuntime;

/// A DDS domain no other test of this process uses (up to 66 domains), spread by process id so
/// that test binaries running side by side rarely meet (domains 20..=217; the demo test takes
/// 220 and up). Past 66 it panics: a silent wrap would put two tests on one domain, where each
/// sees the other's topics.
pub fn unique_domain() -> u16 {
    // Every DDS test starts here: the log capture is in place before its first node.
    logs();
    const PER_PROCESS: u16 = 66;
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let base = 20 + (std::process::id() % 3) as u16 * PER_PROCESS;
    let i = NEXT.fetch_add(1, Ordering::Relaxed);
    assert!(
        i < PER_PROCESS,
        "more than {PER_PROCESS} DDS domains asked for by one test process: raise PER_PROCESS"
    );
    base + i
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

/// The `gpu_planning` executable under test (`GPU_PLANNING_BIN` where the tests travel).
pub fn executable() -> String {
    gpu_planning::env::BIN
        .get()
        .ok_or(())
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_gpu_planning").into())
}

/// Nodes in a process of their own (`gpu_planning run`), for what one process can hold only
/// once, such as its ROS distribution; killed when dropped.
pub struct NodesProcess(std::process::Child);

impl NodesProcess {
    /// `gpu_planning run --nodes <nodes> --domain-id <domain> --ros-args <ros_args>`.
    pub fn start(domain: u16, nodes: &str, ros_args: &[&str]) -> NodesProcess {
        let child = std::process::Command::new(executable())
            .args(["run", "--nodes", nodes, "--duration-s", "120"])
            .args(["--domain-id", &domain.to_string(), "--ros-args"])
            .args(ros_args)
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("gpu_planning run did not start");
        NodesProcess(child)
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.0.id()
    }

    /// Whether the process still runs (false once it has exited, for whatever reason).
    pub fn running(&mut self) -> bool {
        matches!(self.0.try_wait(), Ok(None))
    }

    /// Its resident memory in bytes now (Linux: VmRSS of /proc/PID/status).
    pub fn resident_bytes(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("/proc/PID/status of the nodes process");
        let kb: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS in /proc/PID/status");
        kb * 1024
    }
}

impl Drop for NodesProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Under `GPU_PLANNING_REQUIRE_CUDA=1`, that each of `nodes` on `rt` finished work on the
/// device and none on the CPU (an out-of-memory fallback, or a request the device cannot
/// take, would pass an answer check unseen); elsewhere, that they finished some work.
pub fn assert_device_did_the_work(rt: &RosRuntime, nodes: &[&str]) {
    let work = rt.work();
    for node in nodes {
        let (cuda, cpu) = (work.count(node, "cuda"), work.count(node, "cpu"));
        assert!(cuda + cpu > 0, "{node} counted no work");
        if gpu_planning::compute::testing::cuda_required() {
            assert!(
                cuda > 0 && cpu == 0,
                "{node}: {cuda} computations on the device, {cpu} on the CPU"
            );
        }
    }
}

/// Every log line of this test process, for the topic cases (their only answer is the log)
/// and for failure messages: ours from INFO, and RustDDS's and ros2-client's (`log` records,
/// bridged) from WARN, as the executable logs them, so that a transport's complaint stands
/// beside a test's timeout.
pub(crate) fn logs() -> &'static Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        use tracing_subscriber::util::SubscriberInitExt;
        let buf = Arc::new(Mutex::new(Vec::new()));
        let sink = buf.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_env_filter(tracing_subscriber::EnvFilter::new(
                "info,rustdds=warn,rustdds::discovery::secure_discovery=info,ros2_client=warn",
            ))
            .with_writer(move || Sink(sink.clone()))
            .finish();
        // Another test binary's subscriber cannot be here: this is the only one in `nodes`.
        // try_init also routes the `log` crate's records into it.
        let _ = subscriber.try_init();
        buf
    })
}

/// The last `n` log lines of this process, for a failure message.
pub(crate) fn log_tail(n: usize) -> String {
    let text = logs().lock().unwrap_or_else(|p| p.into_inner()).clone();
    tail(&String::from_utf8_lossy(&text), n)
}

/// The last `n` lines of `text`.
pub(crate) fn tail(text: &str, n: usize) -> String {
    let mut lines: Vec<&str> = text.lines().rev().take(n).collect();
    lines.reverse();
    lines.join("\n")
}

struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).extend(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
