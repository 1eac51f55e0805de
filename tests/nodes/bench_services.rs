//! `gpu_planning bench services` end to end on small inputs: every node's service answers over
//! DDS on the CPU backend and the table has a row per case (on the device the same command
//! compares CUDA's responses with the CPU's; BENCHMARKS.md).

use crate::common;

#[test]
fn bench_services_times_every_service_over_dds() {
    let domain = common::unique_domain();
    let out = std::process::Command::new(common::executable())
        .args([
            "bench",
            "services",
            "--backends",
            "cpu",
            "--map-sizes",
            "120,200",
        ])
        .args([
            "--cloud-points",
            "5000",
            "--knn-queries",
            "50",
            "--vertices",
            "60",
        ])
        .args(["--pairs", "10", "--cpu-calls", "4", "--warmup", "1"])
        .args(["--extract", "2:16", "--build", "500:8"])
        .args(["--domain-id", &domain.to_string()])
        .output()
        .expect("gpu_planning bench services did not start");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("| cpu |"))
        .collect();
    let services = [
        "get_plan",
        "get_plan",
        "knn",
        "shortest_path",
        "extract",
        "build",
        "build",
    ];
    assert_eq!(rows.len(), services.len(), "{stdout}");
    for (row, service) in rows.iter().zip(services) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(cells[2], service, "{row}");
        assert_eq!(cells[4], "4", "four timed calls: {row}");
        let p50: f64 = cells[5].parse().unwrap_or(-1.0);
        assert!(p50 > 0.0, "a round trip takes time: {row}");
    }
}
