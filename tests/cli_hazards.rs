//! The CLI's hazards from the bad-input probe: each input that used to abort, hang, grow
//! without bound or answer nonsense now exits 1 (2 for flags clap refuses) with one `error:`
//! line naming the argument and the value. Each case runs with a time limit, so a hang fails
//! the test instead of stalling it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gpu_planning::npy::{write_f32_2d, write_f64_nd};

fn exe() -> String {
    std::env::var("GPU_PLANNING_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_gpu_planning").into())
}

fn scratch() -> PathBuf {
    let d = std::env::temp_dir().join(format!("gpu_planning_cli_hazards_{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs the CLI (CPU backend), at most 60 s; returns (exit code, stderr).
fn run(args: &[&str]) -> (i32, String) {
    let mut child = Command::new(exe())
        .args(args)
        .env("GPU_PLANNING_BACKEND", "cpu")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            return (status.code().unwrap_or(-1), err);
        }
        if Instant::now() > until {
            let _ = child.kill();
            panic!("{args:?}: still running after 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Exit `code`, and stderr names every needle.
fn refused(args: &[&str], code: i32, needles: &[&str]) {
    let (rc, err) = run(args);
    assert_eq!(rc, code, "{args:?}: exit {rc}, stderr: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: '{n}' not in: {err}");
    }
}

fn pgm(dir: &Path, name: &str, w: usize, h: usize) -> String {
    let mut b = format!("P5\n{w} {h}\n255\n").into_bytes();
    b.extend((0..w * h).map(|i| if i % w.max(1) == w / 2 { 255u8 } else { 0 }));
    let p = dir.join(name);
    std::fs::write(&p, b).unwrap();
    p.display().to_string()
}

#[test]
fn polyline_refuses_unbounded_links_and_sizes() {
    let d = scratch();
    let img = pgm(&d, "img.pgm", 80, 60);
    let base = ["polyline", "--image", &img, "--a", "5,30", "--b", "75,30"];
    let with = |extra: &[&'static str]| -> Vec<String> {
        base.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    let cases: [(&[&str], &[&str]); 5] = [
        (
            &["--half-width", "1e30"],
            &["half_width", "1e30", "diagonal"],
        ),
        (
            &["--guides", "4000000000"],
            &["guides", "4000000000", "max_guides"],
        ),
        (
            &["--points", "4000000000"],
            &["points_per_guide", "max_points_per_guide"],
        ),
        (&["--max-angle=-10"], &["max_angle", "-10 degrees"]),
        (
            &["--guides", "3", "--max-guides", "2"],
            &["guides", "3", "max_guides (2)"],
        ),
    ];
    for (extra, needles) in cases {
        let args = with(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&args, 1, needles);
    }
    for (a, b, field) in [
        ("0,0", "1e12,0", "b: (1000000000000, 0) is outside"),
        (
            "500,30",
            "75,30",
            "a: (500, 30) is outside the 80 x 60 image",
        ),
        ("-5,30", "75,30", "a: (-5, 30) is outside"),
    ] {
        refused(
            &["polyline", "--image", &img, "--a", a, "--b", b],
            1,
            &[field],
        );
    }
    let empty = pgm(&d, "empty.pgm", 0, 0);
    let (rc, err) = run(&["polyline", "--image", &empty, "--a", "0,0", "--b", "1,0"]);
    assert_eq!(rc, 1, "a 0 x 0 image: {err}");
}

#[test]
fn cellgraph_apsp_and_knn_refuse_what_would_not_fit() {
    let d = scratch();
    let c = d.join("c.npy");
    let mut m = vec![0.0; 16];
    m[0] = -1.0;
    m[15] = 1.0;
    std::fs::write(&c, write_f64_nd(&[1, 4, 4], &m)).unwrap();
    let c = c.display().to_string();
    refused(
        &[
            "cellgraph",
            "--constraints",
            &c,
            "--random-samples",
            "99999999999",
        ],
        1,
        &["--random-samples", "99999999999", "--max-samples"],
    );
    refused(
        &["cellgraph", "--constraints", &c, "--random-samples", "0"],
        1,
        &["--random-samples", "0"],
    );

    let g = d.join("g.csv");
    std::fs::write(&g, "from,to,weight\n0,1,3000000001\n").unwrap();
    let g = g.display().to_string();
    refused(
        &["apsp", "--graph", &g, "--query", "0,1"],
        1,
        &["edge 0", "3000000001", "beyond i32"],
    );
    let small = d.join("small.csv");
    std::fs::write(&small, "from,to,weight\n0,1,1\n1,2,1\n2,0,1\n").unwrap();
    let small = small.display().to_string();
    refused(
        &[
            "apsp",
            "--graph",
            &small,
            "--vertices",
            "65536",
            "--query",
            "0,2",
        ],
        1,
        &["vertices", "65536", "--max-vertices 20000"],
    );

    // 20 points, 2 queries: a radius search with max_count 0 could return 40 > 10.
    let pts: Vec<f32> = (0..60).map(|i| i as f32 * 0.01).collect();
    let p = d.join("p.npy");
    std::fs::write(&p, write_f32_2d(20, 3, &pts)).unwrap();
    let q = d.join("q.npy");
    std::fs::write(&q, write_f32_2d(2, 3, &pts[..6])).unwrap();
    let (p, q) = (p.display().to_string(), q.display().to_string());
    let knn = ["knn", "--points", &p, "--queries", &q];
    let with = |extra: &[&str]| -> Vec<String> {
        knn.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    for (extra, needles) in [
        (
            &["--radius", "1", "--max-results", "10"][..],
            &["max_count", "40", "max_results 10"][..],
        ),
        (
            &["--k", "8", "--max-results", "10"],
            &["k", "16", "max_results 10"],
        ),
    ] {
        let args = with(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&args, 1, needles);
    }
    let zq = d.join("zero_q.npy");
    std::fs::write(&zq, write_f32_2d(1, 4, &[0.0; 4])).unwrap();
    let unit = d.join("unit.npy");
    std::fs::write(
        &unit,
        write_f32_2d(2, 4, &[0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0]),
    )
    .unwrap();
    refused(
        &[
            "knn",
            "--points",
            &unit.display().to_string(),
            "--queries",
            &zq.display().to_string(),
            "--metric",
            "so3",
        ],
        1,
        &["zero_q.npy[0]", "not a unit quaternion"],
    );
}

#[test]
fn lee_map_and_bag_rate_are_checked_like_the_node() {
    let d = scratch();
    pgm(&d, "map.pgm", 10, 10);
    for (res, shown) in [("-0.05", "-0.05"), (".nan", "NaN")] {
        let y = d.join(format!("map{shown}.yaml"));
        std::fs::write(
            &y,
            format!(
                "image: map.pgm\nresolution: {res}\norigin: [0.0, 0.0, 0.0]\nnegate: 0\n\
                 occupied_thresh: 0.65\nfree_thresh: 0.196\n"
            ),
        )
        .unwrap();
        refused(
            &[
                "lee",
                "--map",
                &y.display().to_string(),
                "--start",
                "1,1",
                "--goal",
                "3,3",
            ],
            1,
            &["resolution", shown, "not positive"],
        );
    }
    let bag = gpu_planning::testing::repo().join("tests/data/bags/apsp");
    let bag = bag.to_str().expect("the repository path is UTF-8");
    for rate in ["1e-300", "NaN", "-1", "inf"] {
        refused(
            &[
                "bag",
                "play",
                bag,
                &format!("--rate={rate}"),
                "--domain-id",
                "231",
            ],
            2,
            &["--rate", "between 0.001 and 1000"],
        );
    }
    // Every --domain-id as ROS_DOMAIN_ID: 0..=232, refused before anything joins a domain.
    for args in [
        &["bag", "play", bag, "--domain-id", "65535"][..],
        &["bag", "replay", bag, "--domain-id", "233"],
        &["run", "--domain-id", "300", "--duration-s", "1"],
        &["demo", "--domain-id=-1"],
    ] {
        refused(args, 2, &["--domain-id", "is not a domain id 0..=232"]);
    }
}
