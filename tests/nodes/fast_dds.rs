//! The nodes and eProsima Fast DDS, the default RMW of Humble and Jazzy, on one wire: a peer
//! built on Fast DDS 2.9 (`tests/interop/fastdds_peer.cpp`, which does rmw_fastrtps_cpp's
//! naming, QoS and request-reply correlation; payloads encoded and decoded by rosbags in
//! `tests/interop/fastdds_services.py`) publishes a map, a graph, an image and a cloud and
//! calls every service of every node on the default `service_mapping`, each reply checked
//! against the CPU references; the other way, our client calls a Fast DDS service server.
//! The peer is compiled here with the system's Fast DDS (Debian 12: `libfastrtps-dev`); skips
//! when it cannot be, unless GPU_PLANNING_REQUIRE_INTEROP=1 (CI).

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use gpu_planning::ros::msg::nav_msgs::{GetPlan, GetPlanRequest, GetPlanResponse, Path};
use gpu_planning::ros::{NodeContext, ParamsFile, RosArgs, RosRuntime};

use crate::bad_input::pose;
use crate::common;
use crate::cyclone_services::calls_every_service_of_every_node;

/// The Fast DDS peer, compiled once per test process; it needs rosbags beside it (every test
/// of it puts rosbags' codec on the payloads).
pub(crate) fn peer() -> Result<PathBuf, String> {
    static PEER: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    PEER.get_or_init(|| {
        gpu_planning::testing::python_imports("rosbags.typesys")?;
        let source = gpu_planning::testing::repo().join("tests/interop/fastdds_peer.cpp");
        let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fastdds_peer");
        let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".into());
        let out = Command::new(&cxx)
            .args(["-std=c++17", "-O1", "-o"])
            .arg(&exe)
            .arg(&source)
            .args(["-lfastrtps", "-lfastcdr"])
            .output()
            .map_err(|e| format!("{cxx} not runnable: {e}"))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let first: Vec<&str> = err.lines().take(3).collect();
            return Err(format!(
                "the Fast DDS peer does not compile: {}",
                first.join(" | ")
            ));
        }
        Ok(exe)
    })
    .clone()
}

#[test]
fn fast_dds_client_calls_every_service_of_every_node() {
    let exe = match (
        peer(),
        gpu_planning::testing::python_imports("rosbags.typesys, numpy"),
    ) {
        (Ok(exe), Ok(())) => exe,
        (Err(why), _) | (_, Err(why)) => {
            gpu_planning::testing::peer_missing("fast_dds services", &why);
            return;
        }
    };
    let script = gpu_planning::testing::repo().join("tests/interop/fastdds_services.py");
    calls_every_service_of_every_node("fast_dds", |job| {
        Command::new("python3")
            .arg(&script)
            .arg(&exe)
            .arg(job)
            .env(gpu_planning::env::REPO.name, gpu_planning::testing::repo())
            .output()
            .expect("python3 runs")
    });
}

/// `cdr` (a CDR payload of the ROS type `name`, as rosbags names it: `nav_msgs/msg/Path`,
/// `nav_msgs/msg/GetPlan_Request`) decoded and encoded again by rosbags: put between our
/// encoder and our decoder, an error the two share (a field order, a length, an alignment) no
/// longer cancels out. `peer()` has checked that rosbags is there.
pub(crate) fn through_rosbags(name: &str, cdr: &[u8]) -> Vec<u8> {
    let script = gpu_planning::testing::repo().join("tests/interop/ros_types.py");
    let program = format!(
        "import sys; sys.path.insert(0, {dir:?}); from ros_types import typestore; \
         ts = typestore(); raw = bytes.fromhex(sys.stdin.read().strip()); \
         print(bytes(ts.serialize_cdr(ts.deserialize_cdr(raw, {name:?}), {name:?})).hex())",
        dir = script.parent().unwrap().display().to_string(),
    );
    let mut child = Command::new("python3")
        .args(["-c", &program])
        .env(gpu_planning::env::REPO.name, gpu_planning::testing::repo())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(hex(cdr).as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "rosbags could not take {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    unhex(String::from_utf8_lossy(&out.stdout).trim())
}

#[test]
fn fast_dds_server_answers_our_client() {
    let exe = match peer() {
        Ok(exe) => exe,
        Err(why) => {
            gpu_planning::testing::peer_missing("fast_dds server", &why);
            return;
        }
    };
    let domain = common::unique_domain();
    let rt = RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let mut node = NodeContext::new(&rt, "fast_dds_caller").unwrap();
    let client = node.client::<GetPlan>("/fast_dds/get_plan").unwrap();
    let _bg = common::run_in_background(&rt);

    let mut answer = GetPlanResponse {
        plan: Path::default(),
    };
    answer.plan.header.frame_id = "map".into();
    answer.plan.poses = vec![
        pose(1.0, 2.0, "map"),
        pose(1.5, 2.5, "map"),
        pose(2.0, 2.0, "map"),
    ];
    let reply = through_rosbags(
        "nav_msgs/msg/GetPlan_Response",
        &gpu_planning::bag::cdr::encode(&answer).unwrap(),
    );
    let hex: String = reply.iter().map(|b| format!("{b:02x}")).collect();
    let mut server = Command::new(&exe)
        .arg(domain.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the peer runs");
    {
        use std::io::Write;
        let stdin = server.stdin.as_mut().unwrap();
        writeln!(
            stdin,
            "serve /fast_dds/get_plan nav_msgs/srv/GetPlan {hex} 30000"
        )
        .unwrap();
        writeln!(stdin, "quit").unwrap();
    }
    let request = GetPlanRequest {
        start: pose(1.0, 2.0, "map"),
        goal: pose(2.0, 2.0, "map"),
        tolerance: 0.25,
    };
    let got = smol::block_on(async {
        for _ in 0..15 {
            let attempt = futures::future::select(
                Box::pin(client.async_call_service(request.clone())),
                Box::pin(smol::Timer::after(Duration::from_secs(2))),
            )
            .await;
            if let futures::future::Either::Left((Ok(r), _)) = attempt {
                return Some(r);
            }
        }
        None
    });
    let out = server.wait_with_output().unwrap();
    rt.shutdown().trigger();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(got, Some(answer), "the peer said: {stdout}");
    // The request as the Fast DDS server took it off the wire.
    let served = stdout
        .lines()
        .find_map(|l| l.strip_prefix("served "))
        .unwrap_or_else(|| panic!("the peer served nothing: {stdout}"));
    let bytes: Vec<u8> = (0..served.len() / 2)
        .map(|i| u8::from_str_radix(&served[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let bytes = through_rosbags("nav_msgs/msg/GetPlan_Request", &bytes);
    let taken: GetPlanRequest = gpu_planning::bag::cdr::decode("GetPlan request", &bytes).unwrap();
    assert_eq!(taken, request);
}

/// `ros_distro` picks rmw_dds_common's Gid layout in `ros_discovery_info`: what Humble's and
/// Jazzy's graph caches (and `ros2 node list`) decode, read here with rosbags' stock Humble
/// and Jazzy definitions from a sample a Fast DDS reader took. Each layout lists the node
/// with the participant's GUID as its gid under its own distro's definition only.
#[test]
fn fast_dds_graph_reads_ros_discovery_info_of_either_distro() {
    let exe = match (
        peer(),
        gpu_planning::testing::python_imports("rosbags.typesys"),
    ) {
        (Ok(exe), Ok(())) => exe,
        (Err(why), _) | (_, Err(why)) => {
            gpu_planning::testing::peer_missing("fast_dds discovery info", &why);
            return;
        }
    };
    let script = gpu_planning::testing::repo().join("tests/interop/fastdds_discovery.py");
    for (distro, other, gid_len) in [("humble", "jazzy", 24), ("jazzy", "humble", 16)] {
        let domain = common::unique_domain();
        let arg = format!("ros_distro:={distro}");
        let _nodes = common::NodesProcess::start(domain, "lee_planner", &["-p", &arg]);
        let out = Command::new("python3")
            .arg(&script)
            .arg(&exe)
            .arg(domain.to_string())
            .arg("/lee_planner")
            .output()
            .expect("python3 runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{distro}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
        let mine = &got["decoded"][distro];
        assert!(
            mine["nodes"]
                .as_array()
                .is_some_and(|n| n.iter().any(|x| x == "/lee_planner")),
            "{distro}: {got}"
        );
        assert_eq!(mine["rest"], 0, "{distro}: bytes left over: {got}");
        assert_eq!(mine["gid_lengths"], serde_json::json!([gid_len]), "{got}");
        // The participant's gid: its GUID (the writer's prefix, entity id 000001c1), zero-padded.
        let writer = got["writer"].as_str().unwrap();
        let want = format!("{}000001c1{}", &writer[..24], "00".repeat(gid_len - 16));
        assert_eq!(mine["gid"], want.as_str(), "{distro}: {got}");
        let theirs = &got["decoded"][other];
        assert!(
            !theirs["nodes"]
                .as_array()
                .is_some_and(|n| n.iter().any(|x| x == "/lee_planner")),
            "{distro}'s layout also reads as {other}'s: {got}"
        );
    }
}

/// REP-2016: every endpoint of a message type announces `typehash=RIHS01_...;` in its
/// USER_DATA, as Fast DDS discovers it, equal to the hash rosbags computes from the ROS
/// definitions (Jazzy's rmws log an error for each endpoint without one).
#[test]
fn fast_dds_discovers_each_endpoints_type_hash_as_rosbags_computes_it() {
    let exe = match (
        peer(),
        gpu_planning::testing::python_imports("rosbags.typesys"),
    ) {
        (Ok(exe), Ok(())) => exe,
        (Err(why), _) | (_, Err(why)) => {
            gpu_planning::testing::peer_missing("type hashes in USER_DATA", &why);
            return;
        }
    };
    let domain = common::unique_domain();
    let rt = RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    gpu_planning::nodes::start_all(&rt).unwrap();
    let _bg = common::run_in_background(&rt);
    let script = gpu_planning::testing::repo().join("tests/interop/fastdds_type_hashes.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(&exe)
        .args([&domain.to_string(), "4"])
        .env(gpu_planning::env::REPO.name, gpu_planning::testing::repo())
        .output()
        .expect("python3 runs");
    rt.shutdown().trigger();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let found: Vec<serde_json::Value> = serde_json::from_str(stdout.trim()).unwrap();
    let mut checked = Vec::new();
    for e in &found {
        let (topic, ty) = (e["topic"].as_str().unwrap(), e["type"].as_str().unwrap());
        let Some(expected) = e["expected"].as_str() else {
            continue;
        };
        assert_eq!(
            e["user_data"].as_str(),
            Some(format!("typehash={expected};").as_str()),
            "{} {topic} ({ty})",
            e["kind"]
        );
        checked.push(topic.to_string());
    }
    for want in [
        "rt/map",
        "rt/lee_planner/path",
        "rt/lee_planner/markers",
        "rt/nearest_neighbors/cloud",
        "rt/apsp/graph",
        "rt/gpu_planning/status",
        "rt/tf",
        "rt/clock",
        "rt/bond",
        "rt/lee_planner/transition_event",
        "rt/costmap",
        "rt/rosout",
        "rt/parameter_events",
        "rq/lee_planner/get_planRequest",
        "rr/lee_planner/get_planReply",
        "rq/nearest_neighbors/knnRequest",
        "rq/apsp/get_parametersRequest",
        "rr/lee_planner/change_stateReply",
        "rq/compute_path_to_pose/_action/send_goalRequest",
        "rr/compute_path_to_pose/_action/get_resultReply",
        "rq/compute_path_to_pose/_action/cancel_goalRequest",
        "rt/compute_path_to_pose/_action/feedback",
        "rt/compute_path_to_pose/_action/status",
    ] {
        assert!(
            checked.iter().any(|c| c == want),
            "{want} not checked; found {found:?}"
        );
    }
}

/// The Fast DDS peer driven line by line.
pub(crate) struct FastDdsPeer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl FastDdsPeer {
    /// The peer on `domain`, secured with the SROS2 enclave directory `enclave` if given.
    pub(crate) fn start(
        exe: &std::path::Path,
        domain: u16,
        enclave: Option<&std::path::Path>,
    ) -> FastDdsPeer {
        let mut command = Command::new(exe);
        if let Some(dir) = enclave {
            command.env("FASTDDS_PEER_ENCLAVE", dir);
        }
        let mut child = command
            .arg(domain.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the peer runs");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        FastDdsPeer {
            child,
            stdin,
            stdout,
        }
    }

    pub(crate) fn ask(&mut self, line: &str) -> String {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
        let mut answer = String::new();
        self.stdout.read_line(&mut answer).unwrap();
        let answer = answer.trim_end().to_string();
        assert!(
            !answer.is_empty() && !answer.starts_with("error"),
            "fastdds_peer on '{}': '{answer}'",
            &line[..line.len().min(80)]
        );
        answer
    }

    /// Publishes `payload` (CDR with its header); the wall clock (us) when write returned.
    pub(crate) fn publish(&mut self, topic: &str, dds_type: &str, payload: &[u8]) -> i64 {
        let answer = self.ask(&format!("pub {topic} {dds_type} latched {}", hex(payload)));
        answer["ok ".len()..].parse().unwrap()
    }

    /// Creates the peer's reader of a DDS topic now (so that it is matched before a sample).
    pub(crate) fn listen(&mut self, topic: &str, dds_type: &str) {
        self.ask(&format!("take {topic} {dds_type} latched 1"));
    }

    /// The next sample of a DDS topic and the wall clock (us) when it was taken.
    pub(crate) fn take(&mut self, topic: &str, dds_type: &str) -> (Vec<u8>, i64) {
        let answer = self.ask(&format!("take {topic} {dds_type} latched 60000"));
        let mut parts = answer.split(' ');
        assert_eq!(
            parts.next(),
            Some("sample"),
            "{}",
            &answer[..answer.len().min(80)]
        );
        let _writer = parts.next();
        let taken = parts.next().unwrap().parse().unwrap();
        (unhex(parts.next().unwrap()), taken)
    }

    /// A service call; `None` when unanswered within `timeout_ms`.
    pub(crate) fn call(
        &mut self,
        service: &str,
        srv: &str,
        request: &[u8],
        timeout_ms: u32,
    ) -> Option<Vec<u8>> {
        let answer = self.ask(&format!(
            "call {service} {srv} {} {timeout_ms}",
            hex(request)
        ));
        answer.strip_prefix("reply ").map(unhex)
    }
}

impl Drop for FastDdsPeer {
    /// Asks the peer to quit; kills it if it has not within 5 s (a Fast DDS participant can hang
    /// in its destructor, and a failing test must still end).
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn hex(b: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = Vec::with_capacity(b.len() * 2);
    for x in b {
        s.push(DIGITS[(x >> 4) as usize]);
        s.push(DIGITS[(x & 15) as usize]);
    }
    String::from_utf8(s).unwrap()
}

pub(crate) fn unhex(s: &str) -> Vec<u8> {
    s.as_bytes()
        .chunks(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap())
        .collect()
}
