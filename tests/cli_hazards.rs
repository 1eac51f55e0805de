//! The CLI's hazards from the bad-input probe: each input that used to abort, hang, grow
//! without bound or answer nonsense now exits 1 (2 for flags clap refuses) with one `error:`
//! line naming the argument and the value. Each case runs with a time limit, so a hang fails
//! the test instead of stalling it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gpu_planning::npy::{write_f32_2d, write_f64_nd};

fn exe() -> String {
    gpu_planning::env::BIN
        .get()
        .ok_or(())
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_gpu_planning").into())
}

fn scratch() -> PathBuf {
    let d = std::env::temp_dir().join(format!("gpu_planning_cli_hazards_{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs the CLI, at most 60 s; returns (exit code, stderr).
fn run(args: &[&str]) -> (i32, String) {
    let mut child = Command::new(exe())
        .args(args)
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
        &["vertices", "65536", "--max-vertices 12000"],
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

/// Round 3's flags and parameters that panicked, wrapped or ran without bound: durations too
/// long for a `Duration`, a timeout parameter of 1e300, thread counts, bench sizes, scales and
/// pair counts, costmap radii of thousands of cells. Each is refused by name, or (the radii)
/// answered within the time limit.
#[test]
fn round_three_durations_sizes_and_radii_are_refused_or_bounded() {
    let d = scratch();
    // 40 x 30 free cells, a wall at x = 20 from y = 0 to 19.
    let mut img = b"P5\n40 30\n255\n".to_vec();
    img.extend((0..40 * 30).map(|i| {
        if i % 40 == 20 && i / 40 < 20 {
            0u8
        } else {
            255
        }
    }));
    std::fs::write(d.join("r3.pgm"), img).unwrap();
    let map = d.join("r3.yaml");
    std::fs::write(
        &map,
        "image: r3.pgm\nresolution: 0.05\norigin: [0.0, 0.0, 0.0]\nnegate: 0\n\
         occupied_thresh: 0.65\nfree_thresh: 0.196\n",
    )
    .unwrap();
    let map = map.display().to_string();
    let rec = d.join("r3_rec").display().to_string();
    refused(
        &[
            "bag",
            "record",
            &rec,
            "--topic",
            "/map",
            "--duration-s",
            "1e20",
            "--domain-id",
            "231",
        ],
        1,
        &["--duration-s", "1e20", "ten years"],
    );
    refused(
        &[
            "run",
            "--nodes",
            "gpu_planning",
            "--duration-s",
            "1e20",
            "--domain-id",
            "231",
        ],
        1,
        &["--duration-s", "1e20"],
    );
    refused(
        &[
            "run",
            "--duration-s",
            "2",
            "--domain-id",
            "231",
            "--ros-args",
            "-p",
            "request_timeout_s:=1e300",
        ],
        1,
        &["request_timeout_s", "1e300"],
    );
    refused(
        &[
            "run",
            "--threads",
            "100000",
            "--duration-s",
            "1",
            "--domain-id",
            "231",
        ],
        1,
        &["--threads", "100000"],
    );
    refused(&["bench", "lee", "--sizes", "0"], 1, &["--sizes", "0"]);
    refused(
        &["bench", "lee", "--sizes", "100000000"],
        1,
        &["--sizes", "100000000"],
    );
    refused(
        &["bench", "lee", "--map", &map, "--scale", "107374183"],
        1,
        &["--scale", "107374183"],
    );
    refused(
        &["bench", "lee", "--map", &map, "--pairs", "100000000000"],
        1,
        &["--pairs"],
    );
    // Radii of 20,000 cells and of 1e300 m: answered at once, with the inflation they ask
    // for (a radius of 1e300 m used to wrap to none: cost 2100 here instead of more).
    let cost = |extra: &[&str]| -> u64 {
        let mut args = vec![
            "lee",
            "--map",
            &map,
            "--start",
            "2,2",
            "--goal",
            "37,2",
            "--cost-model",
            "costmap",
            "--json",
        ];
        args.extend_from_slice(extra);
        let out = Command::new(exe()).args(&args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["cost"].as_u64().expect("a cost in the JSON answer")
    };
    let plain = cost(&["--inflation-radius", "0.0"]);
    let wide = cost(&["--inflation-radius", "1000", "--cost-scaling-factor", "0.5"]);
    let huge = cost(&[
        "--inflation-radius",
        "1e300",
        "--cost-scaling-factor",
        "0.5",
    ]);
    assert!(
        wide > plain,
        "radius 1000 m: cost {wide}, uninflated {plain}"
    );
    assert_eq!(
        huge, wide,
        "a radius beyond the map inflates as one that covers it"
    );
}

/// Bag folders whose metadata names files outside the folder (absolute, `..`), a device, or
/// no file at all: the first are refused by name, and a replay that compared nothing fails
/// instead of reporting "same as recorded".
#[test]
fn bag_files_stay_inside_their_folder_and_a_replay_must_compare_something() {
    let d = scratch();
    let meta = |files: &str| {
        format!(
            "rosbag2_bagfile_information:\n  version: 5\n  storage_identifier: mcap\n  \
             relative_file_paths: {files}\n  duration:\n    nanoseconds: 0\n  starting_time:\n    \
             nanoseconds_since_epoch: 0\n  message_count: 14\n  topics_with_message_count: []\n"
        )
    };
    for (name, files, needle) in [
        (
            "abs",
            "[/etc/passwd]",
            "'/etc/passwd' is not a path inside the bag folder",
        ),
        (
            "up",
            "[../other/x.mcap]",
            "'../other/x.mcap' is not a path inside",
        ),
    ] {
        let bag = d.join(format!("bag_{name}"));
        std::fs::create_dir_all(&bag).unwrap();
        std::fs::write(bag.join("metadata.yaml"), meta(files)).unwrap();
        refused(&["bag", "info", &bag.display().to_string()], 1, &[needle]);
    }
    let fifo = d.join("bag_fifo");
    std::fs::create_dir_all(&fifo).unwrap();
    std::fs::write(fifo.join("metadata.yaml"), meta("[zero.mcap]")).unwrap();
    let _ = std::fs::remove_file(fifo.join("zero.mcap"));
    std::os::unix::fs::symlink("/dev/zero", fifo.join("zero.mcap")).unwrap();
    refused(
        &["bag", "info", &fifo.display().to_string()],
        1,
        &["zero.mcap", "is not a regular file"],
    );
    let empty = d.join("bag_nofiles");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("metadata.yaml"), meta("[]")).unwrap();
    let (rc, err) = run(&[
        "bag",
        "replay",
        &empty.display().to_string(),
        "--domain-id",
        "230",
    ]);
    assert_ne!(rc, 0, "a replay that compared nothing passed: {err}");
}

/// Messages that named the wrong thing: a bad `--topic` name is refused before the bag folder
/// is made (it used to leave a half-made bag), an empty one is called empty, and the default
/// build's security commands speak as typed rather than in Rust's Debug form.
#[test]
fn bag_record_checks_names_first_and_messages_speak_plainly() {
    let d = scratch();
    for (topic, needle) in [
        (
            "bad name:nav_msgs/msg/Path",
            "'bad name' is not a valid ROS name",
        ),
        (":nav_msgs/msg/Path", "the topic name is empty"),
    ] {
        let out = d.join("rec_bad_name");
        let _ = std::fs::remove_dir_all(&out);
        let o = out.display().to_string();
        refused(
            &["bag", "record", &o, "--topic", topic, "--domain-id", "231"],
            1,
            &["--topic", needle],
        );
        assert!(!out.exists(), "{topic}: {o} was made for a refused topic");
    }
    // `lee` without a grid names the three it can take, not --elevation alone.
    refused(
        &["lee", "--start", "1,1", "--goal", "5,5"],
        2,
        &["--elevation", "--map", "--heightmap"],
    );
    // A huge radius is written as a person would, not with its 300 digits.
    let dir = d.display().to_string();
    pgm(&d, "m4.pgm", 4, 4);
    std::fs::write(
        d.join("m4.yaml"),
        "image: m4.pgm\nresolution: 0.1\norigin: [0, 0, 0]\nnegate: 0\noccupied_thresh: 0.65\nfree_thresh: 0.196\n",
    )
    .unwrap();
    let map = format!("{dir}/m4.yaml");
    let args = [
        "lee",
        "--map",
        &map,
        "--start",
        "1,1",
        "--goal",
        "2,2",
        "--cost-model",
    ];
    let (rc, err) = run(&[&args[..], &["costmap", "--robot-radius", "1e300"]].concat());
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("robot_radius (1e300)"), "{err}");
    if !cfg!(feature = "security") {
        let ks = d.join("ks").display().to_string();
        let (rc, err) = run(&["security", "create-keystore", &ks]);
        assert_eq!(rc, 1, "{err}");
        assert!(
            err.contains("security create-keystore") && !err.contains("CreateKeystore {"),
            "{err}"
        );
    }
}

/// Under GPU_PLANNING_REQUIRE_CUDA=1 (how the device tests run), `auto` resolves to CUDA or
/// fails naming the variable: a node test on `auto` cannot pass on the CPU there.
#[test]
fn auto_under_require_cuda_is_cuda_or_an_error() {
    let out = Command::new(exe())
        .args(["info", "--backend", "auto"])
        .env(gpu_planning::env::REQUIRE_CUDA.name, "1")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    // `info` reports the selection (or why there is none) on stdout.
    let selected = stdout
        .lines()
        .find(|l| l.starts_with("backend selected:"))
        .unwrap_or_else(|| panic!("no selection reported: {stdout}{stderr}"));
    assert!(
        selected == "backend selected: cuda" || selected.contains("GPU_PLANNING_REQUIRE_CUDA"),
        "{selected}"
    );
}
