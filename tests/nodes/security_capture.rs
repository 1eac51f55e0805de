//! What a secured exchange puts on the wire: every frame on the loopback interface, captured
//! through a packet socket while a participant of the keystore publishes a map and gets its
//! plan from the secured planner. Under a governance that encrypts RTPS messages and data, no
//! run of the map's bytes is in any frame; under one that protects neither, the same exchange
//! shows them (which is how the capture is known to see the exchange at all). Needs
//! CAP_NET_RAW: as root it captures the host's loopback; otherwise it runs itself again in a
//! network namespace of its own (`unshare -rn`, where it has the capability over that
//! namespace's loopback, and the nodes process it starts runs there too); where neither can be
//! had it skips, visibly, unless GPU_PLANNING_REQUIRE_INTEROP=1.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gpu_planning::ros::msg::nav_msgs::{GetPlan, OccupancyGrid};
use gpu_planning::ros::security::Security;
use gpu_planning::ros::{qos, NodeContext};

use crate::bad_input::call_until;
use crate::common;
use crate::nav2_planner::{map, positions};
use crate::security::{participant, request, want, Keystore, SecuredNodes, Watchdog};

/// The frames seen on `lo` since the capture started (or was last taken), in a thread.
struct Capture {
    frames: Arc<Mutex<Vec<Vec<u8>>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Capture {
    /// Starts capturing, or says why it cannot here.
    fn start() -> Result<Capture, String> {
        let all = (libc::ETH_P_ALL as u16).to_be();
        // SAFETY: plain system calls on a descriptor this function owns; every pointer passed
        // points to a live local of the size given.
        let fd = unsafe {
            let fd = libc::socket(libc::AF_PACKET, libc::SOCK_RAW, all as libc::c_int);
            if fd < 0 {
                return Err(format!(
                    "no packet socket (CAP_NET_RAW): {}",
                    std::io::Error::last_os_error()
                ));
            }
            let fd = OwnedFd::from_raw_fd(fd);
            let mut at: libc::sockaddr_ll = std::mem::zeroed();
            at.sll_family = libc::AF_PACKET as u16;
            at.sll_protocol = all;
            at.sll_ifindex = libc::if_nametoindex(c"lo".as_ptr()) as i32;
            if libc::bind(
                fd.as_raw_fd(),
                (&at as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            ) != 0
            {
                return Err(format!(
                    "the packet socket cannot bind to lo: {}",
                    std::io::Error::last_os_error()
                ));
            }
            let timeout = libc::timeval {
                tv_sec: 0,
                tv_usec: 100_000,
            };
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&timeout as *const libc::timeval).cast(),
                std::mem::size_of::<libc::timeval>() as u32,
            );
            // A map's burst must not overrun the socket while the thread copies frames out.
            let size: libc::c_int = 64 << 20;
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVBUFFORCE,
                (&size as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as u32,
            );
            fd
        };
        let frames = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (frames, stop) = (frames.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 1 << 17];
                while !stop.load(Ordering::Relaxed) {
                    // SAFETY: `buf` is live and `buf.len()` bytes long.
                    let n = unsafe {
                        libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0)
                    };
                    if n > 0 {
                        let mut f = frames.lock().unwrap_or_else(|p| p.into_inner());
                        f.push(buf[..n as usize].to_vec());
                    }
                }
            })
        };
        Ok(Capture {
            frames,
            stop,
            thread: Some(thread),
        })
    }

    /// The frames captured so far; the capture goes on from none.
    fn take(&self) -> Vec<Vec<u8>> {
        std::mem::take(&mut *self.frames.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The test planner's map with its free cells numbered (1..=61, all below the occupied
/// threshold, so the plan is the same), and a run of its bytes no other traffic holds: the
/// last two rows, which no wall crosses.
fn numbered_map() -> (OccupancyGrid, Vec<u8>) {
    let mut m = map();
    for (i, c) in m.data.iter_mut().enumerate() {
        if *c == 0 {
            *c = 1 + (i * 7919 % 61) as i8;
        }
    }
    let row = m.info.width as usize;
    let tail = m.data[m.data.len() - 2 * row..]
        .iter()
        .map(|&c| c as u8)
        .collect();
    (m, tail)
}

/// One secured exchange under a keystore whose governance protects RTPS messages by `rtps` and
/// each topic's data and metadata (submessages) by `data`: the peer publishes the numbered map
/// and gets the CPU reference's plan.
fn exchange(rtps: &str, data: &str) -> Result<(), String> {
    let ks = Keystore::make_governed(
        &["/gpu_planning", "/peer"],
        &[
            ("RTPS_PROTECTION", rtps),
            ("DATA_PROTECTION", data),
            ("METADATA_PROTECTION", data),
        ],
    )?;
    let domain = common::unique_domain();
    let nodes = SecuredNodes::start(domain, &ks, "/gpu_planning");
    let (peer, _bg) = participant(domain, Security::Enclave(ks.enclave("/peer")));
    let mut ctx = NodeContext::new(&peer, "capture_peer").unwrap();
    let map_pub = ctx.publisher::<OccupancyGrid>("/map", qos::map()).unwrap();
    let client = ctx.client::<GetPlan>("/lee_planner/get_plan").unwrap();
    let (m, _) = numbered_map();
    let plan = smol::block_on(async {
        map_pub.async_publish(m.clone()).await.ok()?;
        call_until(
            &client,
            request(),
            |r| !r.plan.poses.is_empty(),
            || {
                let _ = map_pub.publish(m.clone());
            },
        )
        .await
    });
    let plan =
        plan.ok_or_else(|| format!("no plan (rtps {rtps}, data {data}): {}", nodes.log()))?;
    assert_eq!(positions(&plan.plan), want(), "rtps {rtps}, data {data}");
    Ok(())
}

/// Set in the run of this test inside its own network namespace.
const INNER: &str = "GP_CAPTURE_IN_NAMESPACE";

/// Runs this test again in a user and network namespace of its own, with its loopback up: Ok
/// when it passed there, Err when no namespace can be made here; a failure there fails here.
fn run_in_own_network_namespace() -> Result<(), String> {
    let probe = std::process::Command::new("unshare")
        .args(["-rn", "ip", "link", "set", "lo", "up"])
        .output()
        .map_err(|e| format!("unshare not runnable: {e}"))?;
    if !probe.status.success() {
        return Err(format!(
            "unshare -rn ip link set lo up: {}",
            String::from_utf8_lossy(&probe.stderr).trim()
        ));
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = std::process::Command::new("unshare")
        .args(["-rn", "sh", "-c"])
        .arg("ip link set lo up && exec \"$0\" \"$1\" --test-threads=1 --nocapture")
        .arg(&exe)
        .arg("security_capture::security_an_encrypted_exchange_puts_no_map_bytes_on_the_wire")
        .env(INNER, "1")
        .output()
        .map_err(|e| format!("unshare not runnable: {e}"))?;
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && text.contains("1 passed"),
        "the capture test in its own network namespace failed:\n{}",
        common::tail(&text, 60)
    );
    Ok(())
}

/// Whether any frame holds `bytes` in a row.
fn holds(frames: &[Vec<u8>], bytes: &[u8]) -> bool {
    frames
        .iter()
        .any(|f| f.windows(bytes.len()).any(|w| w == bytes))
}

#[test]
fn security_an_encrypted_exchange_puts_no_map_bytes_on_the_wire() {
    let _watchdog = Watchdog::arm(
        "security_an_encrypted_exchange_puts_no_map_bytes_on_the_wire",
        Duration::from_secs(240),
    );
    let capture = match Capture::start() {
        Ok(c) => c,
        Err(why) if std::env::var_os(INNER).is_none() => {
            if let Err(also) = run_in_own_network_namespace() {
                gpu_planning::testing::peer_missing(
                    "the loopback capture",
                    &format!("{why}; in a namespace of its own: {also}"),
                );
            }
            return;
        }
        Err(why) => panic!("in a network namespace of its own: {why}"),
    };
    let (_, secret) = numbered_map();
    for (rtps, data, in_clear) in [("NONE", "NONE", true), ("ENCRYPT", "ENCRYPT", false)] {
        capture.take();
        if let Err(why) = exchange(rtps, data) {
            if why.contains("keystore was not made") {
                gpu_planning::testing::peer_missing("security", &why);
                return;
            }
            panic!("{why}");
        }
        let frames = capture.take();
        let rtps_frames = frames
            .iter()
            .filter(|f| f.windows(4).any(|w| w == b"RTPS"))
            .count();
        assert!(
            rtps_frames > 0,
            "rtps {rtps}, data {data}: the capture saw no RTPS message ({} frames)",
            frames.len()
        );
        assert_eq!(
            holds(&frames, &secret),
            in_clear,
            "rtps {rtps}, data {data}: the map's bytes {} on the wire ({} frames, {rtps_frames} RTPS)",
            if in_clear { "were not seen" } else { "were seen in clear" },
            frames.len()
        );
    }
}
