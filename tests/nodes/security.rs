//! DDS Security (the `security` feature): keystores laid out as `ros2 security` makes them, by
//! an independent maker (tests/interop/make_keystore.sh, OpenSSL's command line) or by
//! `gpu_planning security`; a secured nodes process (`ROS_SECURITY_ENABLE=true`, `Enforce`)
//! and, in this process or in a Fast DDS or Cyclone DDS peer, participants with and without
//! credentials. Skips when `openssl` or a peer is missing, unless
//! GPU_PLANNING_REQUIRE_INTEROP=1 (CI).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;
use gpu_planning::ros::msg::nav_msgs::{
    GetPlan, GetPlanRequest, GetPlanResponse, OccupancyGrid, Path as RosPath,
};
use gpu_planning::ros::security::{enclave_dir, Security};
use gpu_planning::ros::{qos, NodeContext, ParamsFile, RosArgs, RosRuntime};
use ros2_client::dds::rustdds::RTPSEntity;

use crate::bad_input::{call_until, pose};
use crate::common;
use crate::fast_dds::{through_rosbags, FastDdsPeer};
use crate::nav2_planner::{centre, expected, map, positions};

/// Ends the whole test process when a secured test runs past `limit`, naming the test and
/// showing the logs of this process and of the secured nodes processes: two CI runs saw a
/// secured test hang where it passes in seconds alone (a handshake forgotten after its resends,
/// in the vendored RustDDS: its PATCHED.md), and a hang otherwise lasts until CI's own bound
/// with nothing said. The secured nodes processes it started end by their own `--duration-s`.
pub(crate) struct Watchdog {
    /// Dropped with the watchdog at the test's end: the channel disconnects, the thread ends.
    _done: std::sync::mpsc::Sender<()>,
}

impl Watchdog {
    pub(crate) fn arm(test: &'static str, limit: Duration) -> Watchdog {
        let (done, wait) = std::sync::mpsc::channel::<()>();
        std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(limit) {
                eprintln!("{test}: still running after {limit:?}: aborting the test process");
                eprintln!(
                    "--- this process's log, last lines ---\n{}",
                    common::log_tail(60)
                );
                let logs = NODES_LOGS.lock().unwrap_or_else(|p| p.into_inner()).clone();
                for log in logs {
                    eprintln!("--- {}, last lines ---", log.display());
                    eprintln!(
                        "{}",
                        common::tail(&std::fs::read_to_string(&log).unwrap_or_default(), 60)
                    );
                }
                std::process::abort();
            }
        });
        Watchdog { _done: done }
    }
}

/// The log files of the secured nodes processes now running, for the watchdog to show.
static NODES_LOGS: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// A keystore made for one test, removed after it.
pub(crate) struct Keystore(PathBuf);

impl Keystore {
    /// A fresh keystore with `enclaves` (make_keystore.sh's `ENCLAVE[:OPTION]` specs), or why
    /// one cannot be made here.
    fn make(enclaves: &[&str]) -> Result<Keystore, String> {
        Keystore::make_governed(enclaves, &[])
    }

    /// As [`Keystore::make`] with the governance's protection kinds `protection` sets
    /// (make_keystore.sh's `RTPS_PROTECTION`, `METADATA_PROTECTION`, `DATA_PROTECTION`).
    pub(crate) fn make_governed(
        enclaves: &[&str],
        protection: &[(&str, &str)],
    ) -> Result<Keystore, String> {
        let dir = std::env::temp_dir().join(format!(
            "gp-keystore-{}-{}",
            std::process::id(),
            common::unique_domain()
        ));
        let script = gpu_planning::testing::repo().join("tests/interop/make_keystore.sh");
        let out = Command::new("bash")
            .arg(&script)
            .arg(&dir)
            .args(enclaves)
            .envs(protection.iter().copied())
            .output()
            .map_err(|e| format!("bash not runnable: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "the keystore was not made (is openssl installed?): {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(Keystore(dir))
    }

    /// A fresh keystore made by `gpu_planning security` (create-keystore, create-enclave for
    /// each of `enclaves`, create-permission for each `(enclave, sros2 policy)`).
    fn made_by_cli(enclaves: &[&str], policies: &[(&str, &str)]) -> Keystore {
        let dir = std::env::temp_dir().join(format!(
            "gp-keystore-cli-{}-{}",
            std::process::id(),
            common::unique_domain()
        ));
        let ks = Keystore(dir);
        let security = |args: &[&std::ffi::OsStr]| {
            let out = Command::new(common::executable())
                .arg("security")
                .args(args)
                .output()
                .expect("gpu_planning runs");
            assert!(
                out.status.success(),
                "gpu_planning security {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        security(&["create-keystore".as_ref(), ks.0.as_os_str()]);
        for e in enclaves {
            security(&["create-enclave".as_ref(), ks.0.as_os_str(), e.as_ref()]);
        }
        for (e, policy) in policies {
            let file = ks.0.join(format!("policy{}.xml", e.replace('/', "-")));
            std::fs::write(&file, policy).unwrap();
            security(&[
                "create-permission".as_ref(),
                ks.0.as_os_str(),
                e.as_ref(),
                file.as_os_str(),
            ]);
        }
        ks
    }

    pub(crate) fn enclave(&self, name: &str) -> PathBuf {
        enclave_dir(&self.0, name)
    }
}

impl Drop for Keystore {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The keystores of a test, or None after reporting why they cannot be made here.
fn keystores<const N: usize>(specs: [&[&str]; N]) -> Option<[Keystore; N]> {
    let made: Result<Vec<Keystore>, String> = specs.iter().map(|s| Keystore::make(s)).collect();
    match made {
        Ok(v) => v.try_into().ok(),
        Err(why) => {
            gpu_planning::testing::peer_missing("security", &why);
            None
        }
    }
}

/// A secured `gpu_planning run --nodes lee_planner` (Enforce, enclave `/gpu_planning`); its log
/// is kept and shown when the test fails.
pub(crate) struct SecuredNodes {
    child: Child,
    log: PathBuf,
}

impl SecuredNodes {
    pub(crate) fn start(domain: u16, keystore: &Keystore, enclave: &str) -> SecuredNodes {
        SecuredNodes::start_nodes(domain, keystore, enclave, &["--nodes", "lee_planner"])
    }

    /// `gpu_planning run` secured, with `nodes` (`--nodes` and its list, or none for all).
    fn start_nodes(
        domain: u16,
        keystore: &Keystore,
        enclave: &str,
        nodes: &[&str],
    ) -> SecuredNodes {
        let log = keystore
            .0
            .join(format!("nodes{}.log", enclave.replace('/', "-")));
        let file = std::fs::File::create(&log).expect("the nodes' log file could not be made");
        let child = Command::new(common::executable())
            .arg("run")
            .args(nodes)
            .args(["--duration-s", "120"])
            .args(["--domain-id", &domain.to_string()])
            .args(["--ros-args", "--enclave", enclave])
            .env("ROS_SECURITY_ENABLE", "true")
            .env("ROS_SECURITY_STRATEGY", "Enforce")
            .env("ROS_SECURITY_KEYSTORE", &keystore.0)
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .expect("gpu_planning run did not start");
        NODES_LOGS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(log.clone());
        SecuredNodes { child, log }
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until the process reports its node running (up to 30 s).
    fn wait_running(&self) {
        let start = Instant::now();
        while !self.log().contains(": running /") {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "the secured nodes did not start within 30 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for SecuredNodes {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        NODES_LOGS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|l| l != &self.log);
        if std::thread::panicking() {
            eprintln!("--- the secured nodes' log, last lines ---");
            eprintln!("{}", common::tail(&self.log(), 40));
        }
    }
}

/// A participant of this process with `security`, spinning in the background.
pub(crate) fn participant(
    domain: u16,
    security: Security,
) -> (RosRuntime, std::thread::JoinHandle<()>) {
    let rt = RosRuntime::with_security(
        RosArgs::default(),
        ParamsFile::default(),
        Some(domain),
        security,
    )
    .expect("participant");
    let bg = common::run_in_background(&rt);
    (rt, bg)
}

pub(crate) fn request() -> GetPlanRequest {
    GetPlanRequest {
        start: pose(0.75, 0.75, "map"),
        goal: pose(6.25, 5.25, "map"),
        tolerance: 0.0,
    }
}

pub(crate) fn want() -> Vec<(f64, f64)> {
    expected((1, 1), (12, 10)).into_iter().map(centre).collect()
}

/// The plan of an authenticated client once the map it publishes has reached the planner.
async fn plan_with_map(
    client: &ros2_client::Client<GetPlanRequest, GetPlanResponse>,
    map_pub: &ros2_client::Publisher<OccupancyGrid>,
) -> Option<RosPath> {
    map_pub.async_publish(map()).await.ok()?;
    call_until(
        client,
        request(),
        |r| !r.plan.poses.is_empty(),
        || {
            let _ = map_pub.publish(map());
        },
    )
    .await
    .map(|r| r.plan)
}

/// Whether `call` is answered within `wait`.
pub(crate) async fn answered<F: std::future::Future>(call: F, wait: Duration) -> bool {
    let timer = async {
        smol::Timer::after(wait).await;
        false
    };
    smol::future::or(
        async {
            call.await;
            true
        },
        timer,
    )
    .await
}

/// Readers and writers of other participants that `rt` has discovered.
fn foreign_endpoints(rt: &RosRuntime) -> Vec<String> {
    let dp = rt.context().domain_participant();
    let own = dp.guid().prefix;
    let readers = dp
        .discovered_readers()
        .into_iter()
        .filter(|r| r.reader_proxy.remote_reader_guid.prefix != own)
        .map(|r| format!("reader of {}", r.subscription_topic_data.topic_name()));
    let writers = dp
        .discovered_writers()
        .into_iter()
        .filter(|w| w.writer_proxy.remote_writer_guid.prefix != own)
        .map(|w| format!("writer of {}", w.publication_topic_data.topic_name));
    readers.chain(writers).collect()
}

/// An occupancy grid with every cell occupied: if it reached the planner, nothing would plan.
fn walled_map() -> OccupancyGrid {
    let mut m = map();
    m.data.iter_mut().for_each(|c| *c = 100);
    m
}

/// 4a and 4c: a participant of the same keystore publishes the map, receives the planner's path
/// topic and its get_plan answer (the CPU reference's path); a participant without credentials
/// on the same domain discovers none of their endpoints, is not answered, and the map it
/// publishes (every cell occupied) never reaches the planner.
#[test]
fn security_participants_of_one_keystore_exchange_topics_and_calls_and_a_stranger_gets_nothing() {
    let _watchdog = Watchdog::arm("security_participants_of_one_keystore_exchange_topics_and_calls_and_a_stranger_gets_nothing", Duration::from_secs(180));
    let Some([ks]) = keystores([&["/gpu_planning", "/peer"]]) else {
        return;
    };
    let domain = common::unique_domain();
    let nodes = SecuredNodes::start(domain, &ks, "/gpu_planning");

    let (peer, _bg) = participant(domain, Security::Enclave(ks.enclave("/peer")));
    let mut ctx = NodeContext::new(&peer, "secure_peer").unwrap();
    let map_pub = ctx.publisher::<OccupancyGrid>("/map", qos::map()).unwrap();
    let path_sub = ctx
        .subscription::<RosPath>("/lee_planner/path", qos::result())
        .unwrap();
    let client = ctx.client::<GetPlan>("/lee_planner/get_plan").unwrap();
    let plan = smol::block_on(plan_with_map(&client, &map_pub));
    let plan = plan.expect("no plan from the secured planner for a participant of its keystore");
    assert_eq!(positions(&plan), want());
    let published = smol::block_on(async {
        let s = path_sub.async_stream();
        futures::pin_mut!(s);
        answered(s.next(), Duration::from_secs(10)).await
    });
    assert!(published, "the planner's path topic did not reach the peer");

    let (stranger, _bg2) = participant(domain, Security::Off);
    let mut sctx = NodeContext::new(&stranger, "stranger").unwrap();
    let walls = sctx.publisher::<OccupancyGrid>("/map", qos::map()).unwrap();
    let sclient = sctx.client::<GetPlan>("/lee_planner/get_plan").unwrap();
    let start = Instant::now();
    let mut stranger_answered = false;
    while start.elapsed() < Duration::from_secs(6) && !stranger_answered {
        let _ = walls.publish(walled_map());
        stranger_answered = smol::block_on(answered(
            sclient.async_call_service(request()),
            Duration::from_secs(1),
        ));
    }
    assert!(
        !stranger_answered,
        "a participant without credentials was answered"
    );
    let seen = foreign_endpoints(&stranger);
    assert!(seen.is_empty(), "the stranger discovered {seen:?}");
    // The walled map never replaced the peer's: the plan is unchanged.
    let again = smol::block_on(crate::bad_input::call(&client, request()));
    assert_eq!(
        positions(&again.plan),
        want(),
        "the stranger's map reached the planner"
    );
    assert!(!nodes.log().contains("panicked"), "{}", nodes.log());
}

/// 4b, the independent check: a Fast DDS 2.9 participant secured as rmw_fastrtps secures it
/// (tests/interop/fastdds_peer.cpp with FASTDDS_PEER_ENCLAVE), with an enclave of the same
/// keystore, publishes the map, receives the planner's path topic and its get_plan answer.
#[test]
fn security_a_fast_dds_participant_of_the_keystore_exchanges_a_map_a_path_and_a_plan() {
    let _watchdog = Watchdog::arm(
        "security_a_fast_dds_participant_of_the_keystore_exchanges_a_map_a_path_and_a_plan",
        Duration::from_secs(180),
    );
    let exe = match crate::fast_dds::peer() {
        Ok(exe) => exe,
        Err(why) => {
            gpu_planning::testing::peer_missing("security with fast_dds", &why);
            return;
        }
    };
    fast_dds_exchange(&exe, true);
}

/// Secured nodes processes and Fast DDS peers started at the same moment, three pairs at once
/// (each pair on its own domain), four times over: every pair authenticates and exchanges the
/// map, the plan and the path. Twelve key agreements: the MODP secret Fast DDS asks for has a
/// leading zero octet once in 256, which both sides must hash alike
/// (third_party/rustdds/PATCHED.md; the unit test there covers it every run).
#[test]
fn security_fast_dds_peers_and_nodes_started_at_once_always_authenticate() {
    let _watchdog = Watchdog::arm(
        "security_fast_dds_peers_and_nodes_started_at_once_always_authenticate",
        Duration::from_secs(240),
    );
    let exe = match crate::fast_dds::peer() {
        Ok(exe) => exe,
        Err(why) => {
            gpu_planning::testing::peer_missing("security with fast_dds", &why);
            return;
        }
    };
    for _round in 0..4 {
        std::thread::scope(|scope| {
            let pairs: Vec<_> = (0..3)
                .map(|_| scope.spawn(|| fast_dds_exchange(&exe, false)))
                .collect();
            for p in pairs {
                if let Err(e) = p.join() {
                    std::panic::resume_unwind(e);
                }
            }
        });
    }
}

/// A secured nodes process and a secured Fast DDS peer of one keystore (made by our CLI: Fast
/// DDS checks its certificates and S/MIME signatures independently), the peer started once the
/// nodes run (`ordered`) or at the same moment: the peer publishes the map, calls get_plan and
/// takes the path topic, each equal to the CPU reference.
fn fast_dds_exchange(exe: &std::path::Path, ordered: bool) {
    let ks = Keystore::made_by_cli(&["/gpu_planning", "/fastdds"], &[]);
    let domain = common::unique_domain();
    let nodes = SecuredNodes::start(domain, &ks, "/gpu_planning");
    if ordered {
        nodes.wait_running();
    }
    let mut peer = FastDdsPeer::start(exe, domain, Some(&ks.enclave("/fastdds")));
    let path_type = "nav_msgs::msg::dds_::Path_";
    peer.listen("rt/lee_planner/path", path_type);
    let map_cdr = through_rosbags(
        "nav_msgs/msg/OccupancyGrid",
        &gpu_planning::bag::cdr::encode(&map()).unwrap(),
    );
    peer.publish("/map", "nav_msgs::msg::dds_::OccupancyGrid_", &map_cdr);
    let request = through_rosbags(
        "nav_msgs/msg/GetPlan_Request",
        &gpu_planning::bag::cdr::encode(&request()).unwrap(),
    );
    let mut plan = None;
    for _ in 0..60 {
        let reply = peer.call(
            "/lee_planner/get_plan",
            "nav_msgs/srv/GetPlan",
            &request,
            1000,
        );
        if let Some(bytes) = reply {
            let bytes = through_rosbags("nav_msgs/msg/GetPlan_Response", &bytes);
            let r: GetPlanResponse =
                gpu_planning::bag::cdr::decode("GetPlan reply", &bytes).expect("the reply decodes");
            if !r.plan.poses.is_empty() {
                plan = Some(r.plan);
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let plan = plan.expect("no plan for the secured Fast DDS participant");
    assert_eq!(positions(&plan), want());
    let (path_cdr, _) = peer.take("rt/lee_planner/path", path_type);
    let path_cdr = through_rosbags("nav_msgs/msg/Path", &path_cdr);
    let path: RosPath = gpu_planning::bag::cdr::decode("path", &path_cdr).unwrap();
    assert_eq!(positions(&path), want());
    drop(nodes);
}

/// Where a Python `cyclonedds` on a Cyclone DDS with the DDS Security plugins is, with the
/// plugins' folder; or why there is none here.
fn cyclone_secure_peer() -> Result<(PathBuf, PathBuf), String> {
    let py = gpu_planning::env::CYCLONE_SECURE_PY
        .get_os()
        .map(PathBuf::from)
        .unwrap_or_else(|| gpu_planning::testing::repo().join("target/cyclone-secure-py"));
    if !py.join("cyclonedds").is_dir() {
        return Err(format!(
            "no Python cyclonedds on a secured Cyclone DDS in {} (.ci/run builds it on \
             Debian's cyclonedds-dev 0.10.2)",
            py.display()
        ));
    }
    let plugins = ["x86_64", "aarch64"]
        .iter()
        .map(|arch| PathBuf::from(format!("/usr/lib/{arch}-linux-gnu/libddsc0debian")))
        .find(|dir| dir.join("libdds_security_auth.so").is_file())
        .ok_or("Debian's Cyclone DDS Security plugins (libddsc0debian) are not installed")?;
    Ok((py, plugins))
}

/// CYCLONEDDS_URI for a participant of `enclave` with the plugins in `plugins`: an sros2
/// enclave as rmw_cyclonedds configures it, the handshake's optional fields on or off.
fn cyclone_security_xml(
    enclave: &std::path::Path,
    plugins: &std::path::Path,
    optional: bool,
) -> String {
    let (e, l) = (enclave.display(), plugins.display());
    format!(
        r#"<CycloneDDS><Domain id="any"><Security>
<Authentication>
 <Library path="{l}/libdds_security_auth.so" initFunction="init_authentication" finalizeFunction="finalize_authentication"/>
 <IdentityCA>file:{e}/identity_ca.cert.pem</IdentityCA>
 <IdentityCertificate>file:{e}/cert.pem</IdentityCertificate>
 <PrivateKey>file:{e}/key.pem</PrivateKey>
 <IncludeOptionalFields>{optional}</IncludeOptionalFields>
</Authentication>
<AccessControl>
 <Library path="{l}/libdds_security_ac.so" initFunction="init_access_control" finalizeFunction="finalize_access_control"/>
 <PermissionsCA>file:{e}/permissions_ca.cert.pem</PermissionsCA>
 <Governance>file:{e}/governance.p7s</Governance>
 <Permissions>file:{e}/permissions.p7s</Permissions>
</AccessControl>
<Cryptographic>
 <Library path="{l}/libdds_security_crypto.so" initFunction="init_crypto" finalizeFunction="finalize_crypto"/>
</Cryptographic>
</Security></Domain></CycloneDDS>"#
    )
}

/// The GUID prefix's first six bytes a participant of `enclave` takes under DDS Security
/// (9.3.3: the first bit set, then the hash of its certificate's subject): the lower prefix
/// starts the handshake.
fn secured_prefix(enclave: &std::path::Path) -> [u8; 6] {
    use sha2::Digest;
    let pem = std::fs::read(enclave.join("cert.pem")).unwrap();
    let cert = openssl::x509::X509::from_pem(&pem).unwrap();
    let hash = sha2::Sha256::digest(cert.subject_name().to_der().unwrap());
    let v = (u64::from_be_bytes(hash[..8].try_into().unwrap()) >> 1) | (1 << 63);
    v.to_be_bytes()[..6].try_into().unwrap()
}

/// 4c, the second independent check: an Eclipse Cyclone DDS participant secured with Cyclone's
/// own DDS Security plugins (Debian's 0.10.2, through Python `cyclonedds` built on it, running
/// tests/interop/cyclone_services.py: rmw_cyclonedds's `rt/` topics, `rq/`/`rr/` services and
/// request header), of an enclave of the same keystore, publishes the map and calls get_plan;
/// the plan, which comes back encrypted from the nodes, equals the CPU reference. Both sides
/// start the handshake once (the lower GUID prefix starts it, and a prefix is fixed by the
/// certificate's subject: `/cyclone`'s is below the nodes', `/cyclone_e`'s above, checked),
/// each with the handshake's optional fields left out (rmw_cyclonedds's default: a reply
/// without dh1 and hash_c1, a final message without either hash or DH value) and included;
/// Cyclone's algorithm names come with their terminating NUL.
#[test]
fn security_a_cyclone_participant_of_the_keystore_publishes_a_map_and_gets_its_plan() {
    let _watchdog = Watchdog::arm(
        "security_a_cyclone_participant_of_the_keystore_publishes_a_map_and_gets_its_plan",
        Duration::from_secs(240),
    );
    let (py, plugins) = match cyclone_secure_peer() {
        Ok(found) => found,
        Err(why) => {
            gpu_planning::testing::peer_missing("security with cyclone", &why);
            return;
        }
    };
    if let Err(why) = gpu_planning::testing::python_imports("rosbags.typesys") {
        gpu_planning::testing::peer_missing("security with cyclone", &why);
        return;
    }
    let ks = Keystore::made_by_cli(&["/gpu_planning", "/cyclone", "/cyclone_e"], &[]);
    let nodes_prefix = secured_prefix(&ks.enclave("/gpu_planning"));
    assert!(
        secured_prefix(&ks.enclave("/cyclone")) < nodes_prefix
            && nodes_prefix < secured_prefix(&ks.enclave("/cyclone_e")),
        "the two Cyclone enclaves do not start the handshake one each"
    );
    let script = gpu_planning::testing::repo().join("tests/interop/cyclone_services.py");
    let map = serde_json::to_value(map()).unwrap();
    let request = serde_json::to_value(request()).unwrap();
    let runs = [("/cyclone", false), ("/cyclone", true)]
        .into_iter()
        .chain([("/cyclone_e", false), ("/cyclone_e", true)]);
    for (enclave, optional) in runs {
        let what = format!("{enclave}, optional fields {optional}");
        let domain = common::unique_domain();
        let nodes = SecuredNodes::start(domain, &ks, "/gpu_planning");
        nodes.wait_running();
        let job = ks.0.join(format!(
            "cyclone-job{}-{optional}.json",
            enclave.replace('/', "-")
        ));
        let spec = serde_json::json!({
            "domain": domain,
            "publish": [{"topic": "/map", "type": "nav_msgs/msg/OccupancyGrid",
                         "qos": "latched", "value": map}],
            "calls": [{"service": "/lee_planner/get_plan", "type": "nav_msgs/srv/GetPlan",
                       "request": request, "until": "plan.poses"}],
            "timeout_s": 90,
        });
        std::fs::write(&job, spec.to_string()).unwrap();
        let out = Command::new("python3")
            .arg(&script)
            .arg(&job)
            .env("PYTHONPATH", &py)
            .env(
                "CYCLONEDDS_URI",
                cyclone_security_xml(&ks.enclave(enclave), &plugins, optional),
            )
            .env(gpu_planning::env::REPO.name, gpu_planning::testing::repo())
            .output()
            .expect("python3 runs");
        assert!(
            out.status.success(),
            "{what}: the secured Cyclone client failed: {}\n{}\nnodes:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            common::tail(&nodes.log(), 40)
        );
        let line: serde_json::Value =
            serde_json::from_slice(out.stdout.split(|&b| b == b'\n').next().unwrap()).unwrap();
        let hex = line["response"].as_str().unwrap();
        let bytes: Vec<u8> = (0..hex.len() / 2)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        let reply: GetPlanResponse = gpu_planning::bag::cdr::decode("get_plan", &bytes).unwrap();
        assert_eq!(positions(&reply.plan), want(), "{what}");
        assert!(!nodes.log().contains("panicked"), "{}", nodes.log());
    }
}

/// An sros2 policy: `/map` denied both ways, every other topic and service allowed.
const RESTRICTED_POLICY: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<policy version="0.2.0">
  <enclaves>
    <enclave path="/restricted">
      <profiles>
        <profile ns="/" node="restricted">
          <topics publish="DENY" subscribe="DENY"><topic>/map</topic></topics>
          <topics publish="ALLOW" subscribe="ALLOW"><topic>*</topic></topics>
          <services reply="ALLOW" request="ALLOW"><service>*</service></services>
        </profile>
      </profiles>
    </enclave>
  </enclaves>
</policy>
"#;

/// 4d: an enclave whose permissions (`gpu_planning security create-permission` from an sros2
/// policy) deny `/map`, publish and subscribe: its own access control refuses to create a writer
/// or a reader of it; and a writer made anyway (the participant skipping its own check, as a
/// peer that does not enforce its permissions would) is refused by the planner's access
/// control, so its maps never reach the planner, while the enclave's other calls are answered.
#[test]
fn security_an_enclave_denied_the_map_topic_cannot_publish_or_subscribe_it() {
    let _watchdog = Watchdog::arm(
        "security_an_enclave_denied_the_map_topic_cannot_publish_or_subscribe_it",
        Duration::from_secs(180),
    );
    let ks = Keystore::made_by_cli(
        &["/gpu_planning", "/restricted"],
        &[("/restricted", RESTRICTED_POLICY)],
    );
    let domain = common::unique_domain();
    let nodes = SecuredNodes::start(domain, &ks, "/gpu_planning");
    let (rt, _bg) = participant(domain, Security::Enclave(ks.enclave("/restricted")));
    let mut ctx = NodeContext::new(&rt, "restricted").unwrap();
    let publisher = ctx.publisher::<OccupancyGrid>("/map", qos::map());
    let subscription = ctx.subscription::<OccupancyGrid>("/map", qos::map());
    assert!(
        publisher.is_err() && subscription.is_err(),
        "the denied enclave could create a publisher ({}) or subscription ({}) of /map",
        publisher.is_ok(),
        subscription.is_ok()
    );

    ros2_client::dds::rustdds::testing_skip_local_create_checks(true);
    let unchecked = ctx.publisher::<OccupancyGrid>("/map", qos::map());
    ros2_client::dds::rustdds::testing_skip_local_create_checks(false);
    let unchecked = unchecked.expect("a writer of /map, its own check skipped");
    let client = ctx.client::<GetPlan>("/lee_planner/get_plan").unwrap();
    let _ = unchecked.publish(map());
    // Answered (get_plan is allowed), but without a map: the denied writer never carried one.
    let reply = smol::block_on(crate::bad_input::call(&client, request()));
    for _ in 0..20 {
        let _ = unchecked.publish(map());
        std::thread::sleep(Duration::from_millis(100));
    }
    let after = smol::block_on(crate::bad_input::call(&client, request()));
    assert!(
        reply.plan.poses.is_empty() && after.plan.poses.is_empty(),
        "a map from an enclave denied rt/map reached the planner"
    );
    // The planner saw the writer and its access control refused it (RustDDS logs that at INFO).
    let refused = nodes.log().lines().any(|l| {
        l.contains("Access control check did not pass") && l.contains("to publish to topic rt/map")
    });
    assert!(
        refused,
        "the planner's log has no refusal of the /map writer:\n{}",
        common::tail(&nodes.log(), 40)
    );
    drop(nodes);
}

/// 4e: participants whose certificates another CA signed are refused at the handshake (no
/// answer), and the log of the side that validated the other's certificate says why; a node
/// whose own certificate has expired refuses to start, saying so.
#[test]
fn security_a_foreign_ca_or_an_expired_certificate_is_refused_with_the_reason() {
    let _watchdog = Watchdog::arm(
        "security_a_foreign_ca_or_an_expired_certificate_is_refused_with_the_reason",
        Duration::from_secs(180),
    );
    let Some([ks, other]) = keystores([&["/gpu_planning", "/old:expired"], &["/gpu_planning"]])
    else {
        return;
    };
    let domain = common::unique_domain();
    let nodes = SecuredNodes::start(domain, &ks, "/gpu_planning");
    // A whole secured process of the other CA as well: of two participants, the one that
    // receives the handshake request validates the other's certificate and logs why it fails.
    let foreign_nodes = SecuredNodes::start(domain, &other, "/gpu_planning");
    let (foreign, _bg) = participant(domain, Security::Enclave(other.enclave("/gpu_planning")));
    let mut ctx = NodeContext::new(&foreign, "foreign").unwrap();
    let client = ctx.client::<GetPlan>("/lee_planner/get_plan").unwrap();
    let got = smol::block_on(answered(
        client.async_call_service(request()),
        Duration::from_secs(6),
    ));
    assert!(!got, "a participant of another CA was answered");
    let reason = "Certificate signature verification failure";
    let start = Instant::now();
    // Generous: on a loaded 2-core machine the processes' discovery and handshake can take
    // most of half a minute before either side validates the other's certificate.
    while !(nodes.log() + &foreign_nodes.log()).contains(reason)
        && start.elapsed() < Duration::from_secs(60)
    {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        (nodes.log() + &foreign_nodes.log()).contains(reason),
        "neither secured process logs why it refused the other CA's participant"
    );
    drop(nodes);
    drop(foreign_nodes);

    let out = Command::new(common::executable())
        .args(["run", "--nodes", "lee_planner", "--duration-s", "5"])
        .args(["--domain-id", &domain.to_string()])
        .args(["--ros-args", "--enclave", "/old"])
        .env("ROS_SECURITY_ENABLE", "true")
        .env("ROS_SECURITY_STRATEGY", "Enforce")
        .env("ROS_SECURITY_KEYSTORE", &ks.0)
        .output()
        .expect("gpu_planning run did not start");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "a node with an expired certificate started"
    );
    assert!(
        stderr.contains("expired at"),
        "the refusal does not say the certificate expired: {stderr}"
    );
}

/// A secured process of every node, idle, logs nothing above INFO: before, our own
/// participant's endpoints were sent to over the wire and offered key exchanges, which the
/// crypto plugin (holding handles only for remote participants) failed, about 190 ERROR lines
/// a second and 20 at every start; its built-in secure endpoints warned of themselves 22 times.
#[test]
fn security_an_idle_secured_process_of_every_node_logs_nothing_above_info() {
    let _watchdog = Watchdog::arm(
        "security_an_idle_secured_process_of_every_node_logs_nothing_above_info",
        Duration::from_secs(180),
    );
    let Some([ks]) = keystores([&["/gpu_planning"]]) else {
        return;
    };
    let domain = common::unique_domain();
    let nodes = SecuredNodes::start_nodes(domain, &ks, "/gpu_planning", &[]);
    nodes.wait_running();
    std::thread::sleep(Duration::from_secs(5));
    let log = nodes.log();
    let loud: Vec<&str> = log
        .lines()
        // Coloured or not, the level stands after a space.
        .filter(|l| l.contains(" WARN") || l.contains(" ERROR"))
        .take(10)
        .collect();
    assert!(
        log.contains("running /gpu_planning, /lee_planner"),
        "not every node ran: {log}"
    );
    assert!(loud.is_empty(), "an idle secured process logs {loud:#?}");
    drop(nodes);
}
