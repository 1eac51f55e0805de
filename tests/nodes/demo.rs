//! The README's main job, `gpu_planning demo`: every node answers over DDS and both pictures
//! are written.

use crate::common;

#[test]
fn demo_reports_every_node_and_draws() {
    let dir = std::env::temp_dir().join(format!("gpu_planning_demo_{}", std::process::id()));
    let exe = std::env::var("GPU_PLANNING_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_gpu_planning").to_string());
    let out = std::process::Command::new(&exe)
        .args(["demo", "--out"])
        .arg(&dir)
        .args(["--domain-id", &common::unique_domain().to_string()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in [
        "lee_planner: 200 x 150 map, path of",
        "apsp: 300 vertices",
        "feasible true",
        "cell_graph: 24 quadrics",
        "rotation path: reachable",
        "nearest_neighbors: query 1",
    ] {
        assert!(text.contains(line), "missing '{line}' in:\n{text}");
    }
    for png in ["lee_path.png", "polyline.png"] {
        let img = image::open(dir.join(png)).unwrap();
        assert!(img.width() > 100 && img.height() > 100);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
