//! The README's main job, `gpu_planning demo`: the bundled bags replayed into the nodes over
//! DDS, every node reported, every answer equal to its recording, the pictures written.

#[test]
fn demo_reports_every_node_and_draws() {
    let dir = std::env::temp_dir().join(format!("gpu_planning_demo_{}", std::process::id()));
    let exe = gpu_planning::env::BIN
        .get()
        .ok_or(())
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_gpu_planning").to_string());
    let out = std::process::Command::new(&exe)
        .args(["demo", "--out"])
        .arg(&dir)
        // The demo takes ten domains from here (five bags, and a CUDA warm-up pass): above
        // the per-process blocks of common::unique_domain (20..=217).
        .args(["--domain-id", "220"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in [
        "200 x 150 map of 0.1 m cells",
        "path of 329 cells",
        "path of 367 cells",
        "graph of 300 vertices, 1803 edges: solved on",
        "negative cycle through vertex 1",
        "feasible true",
        "10 quadrics over 3000 samples",
        "find_path: reachable true",
        "knn 3-D, k = 5: first query's neighbours",
        "k: 0: ask for at least one neighbour",
        "knn refused, as expected",
        "costmap mode on nav2's depot map (604 x 307 cells of 0.05 m",
        "least-cost grid path",
    ] {
        assert!(text.contains(line), "missing '{line}' in:\n{text}");
    }
    assert_eq!(
        text.matches("every output and response equals the recording")
            .count(),
        5,
        "{text}"
    );
    for png in [
        "lee_path.png",
        "distance_field.png",
        "polyline.png",
        "costmap_path.png",
    ] {
        let img = image::open(dir.join(png)).unwrap();
        assert!(img.width() > 100 && img.height() > 100);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
