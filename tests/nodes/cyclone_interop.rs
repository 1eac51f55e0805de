//! Interop with an independent DDS implementation: Eclipse Cyclone DDS (Python `cyclonedds`)
//! publishes a nav_msgs/OccupancyGrid to our runtime node, receives our status topic, and calls
//! our service with the rmw_cyclonedds request mapping. Both directions check exact values.
//! Skips when python3 or cyclonedds is missing, unless GPU_PLANNING_REQUIRE_INTEROP=1 (CI).

use std::process::Command;
use std::time::Duration;

use gpu_planning::ros::{ParamsFile, RosArgs, RosRuntime};

use crate::common;

#[test]
fn cyclone_peer_publishes_map_reads_status_and_calls_service() {
    if let Err(why) = gpu_planning::testing::python_imports("cyclonedds.domain") {
        gpu_planning::testing::peer_missing("cyclone interop", &why);
        return;
    }
    let domain = common::unique_domain();
    let (args, _) = RosArgs::parse(&[
        "--ros-args",
        "-r",
        "__ns:=/robot",
        "-p",
        "backend:=cpu",
        "-p",
        "service_mapping:=cyclone",
        "-p",
        "gpu_planning:status_period_s:=0.2",
    ])
    .unwrap();
    let rt = RosRuntime::new(args, ParamsFile::default(), Some(domain)).unwrap();
    gpu_planning::nodes::start_all(&rt).unwrap();
    let _bg = common::run_in_background(&rt);
    std::thread::sleep(Duration::from_millis(200));

    let script = gpu_planning::testing::repo().join("tests/interop/cyclone_peer.py");
    let out = Command::new("python3")
        .arg(script)
        .args([
            "--domain",
            &domain.to_string(),
            "--ns",
            "/robot",
            "--seed",
            &domain.to_string(),
        ])
        .output()
        .expect("python3 runs");
    rt.shutdown().trigger();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "cyclone peer failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("\"ok\": true"), "{stdout}");
    // Everything the nodes sent parsed: Cyclone logs a packet it refuses (a pre-emptive
    // ACKNACK with bitmap base 0 was one) as malformed.
    assert!(
        !stderr.contains("malformed packet"),
        "Cyclone refused packets of the nodes:\n{stderr}"
    );
    println!("cyclone peer: {stdout}");
}
