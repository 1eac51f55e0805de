//! A stranger on the network who forges handshake messages (RTPS DATA on the stateless
//! authentication topic, which DDS Security leaves unprotected so that strangers can begin a
//! handshake at all): it cannot wedge a participant's handshakes nor flood its log. The forged
//! messages claim to come from a participant the target is in a handshake with (one of another
//! CA, whose handshake never completes, and the legitimate peer that joins meanwhile): requests
//! without their fields, with an unknown algorithm and a certificate of garbage, replies and
//! final messages related to the target's requests with garbage values and signatures, and
//! truncated messages. While they arrive at hundreds a second, the legitimate peer
//! authenticates and receives the target's latched topic, and each participant logs about a
//! line a second for all of them.

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use gpu_planning::ros::msg::nav_msgs::OccupancyGrid;
use gpu_planning::ros::security::Security;
use gpu_planning::ros::{qos, NodeContext, RosRuntime};
use ros2_client::dds::rustdds::RTPSEntity;

use crate::common;
use crate::nav2_planner::map;
use crate::security::{participant, Keystore, Watchdog};

/// DDS Security's builtin stateless endpoints (9.3.1) and the participant's entity id.
const STATELESS_WRITER: [u8; 4] = [0x00, 0x02, 0x01, 0xc3];
const STATELESS_READER: [u8; 4] = [0x00, 0x02, 0x01, 0xc4];
const PARTICIPANT: [u8; 4] = [0x00, 0x00, 0x01, 0xc1];

/// Little-endian CDR, offsets from the payload's start (after its encapsulation header).
#[derive(Default)]
struct Cdr(Vec<u8>);

impl Cdr {
    fn align(&mut self, n: usize) {
        while !self.0.len().is_multiple_of(n) {
            self.0.push(0);
        }
    }
    fn u32(&mut self, v: u32) {
        self.align(4);
        self.0.extend(v.to_le_bytes());
    }
    fn string(&mut self, s: &str) {
        self.u32(s.len() as u32 + 1);
        self.0.extend(s.as_bytes());
        self.0.push(0);
    }
    fn octets(&mut self, b: &[u8]) {
        self.u32(b.len() as u32);
        self.0.extend(b);
    }
    fn guid(&mut self, prefix: &[u8; 12], entity: [u8; 4]) {
        self.0.extend(prefix);
        self.0.extend(entity);
    }
    /// A sample identity: a writer's GUID and a sequence number (high, low).
    fn identity(&mut self, prefix: &[u8; 12], entity: [u8; 4], sn: u32) {
        self.guid(prefix, entity);
        self.u32(0);
        self.u32(sn);
    }
}

/// What a forged message carries.
enum Forged {
    /// A request without its fields.
    EmptyRequest,
    /// A request with a certificate of garbage and algorithms nobody has.
    UnknownAlgorithms,
    /// A reply or final message (`class`) related to the target's request number `related`,
    /// every value and the signature garbage.
    Answer { class: &'static str, related: u32 },
}

/// One RTPS message from `from` (its GUID prefix, forged) to `to`'s stateless reader, number
/// `sn` of the forged writer; `cut` truncates its payload.
fn message(from: &[u8; 12], to: &[u8; 12], forged: &Forged, sn: u32, cut: bool) -> Vec<u8> {
    let garbage = |n: usize| -> Vec<u8> { (0..n).map(|i| (i * 151 + sn as usize) as u8).collect() };
    let mut c = Cdr::default();
    c.identity(from, STATELESS_WRITER, sn);
    match forged {
        Forged::Answer { related, .. } => c.identity(to, STATELESS_WRITER, *related),
        _ => c.identity(&[0; 12], [0; 4], 0),
    }
    c.guid(to, PARTICIPANT);
    c.guid(to, STATELESS_READER);
    c.guid(from, STATELESS_WRITER);
    c.string("dds.sec.auth");
    c.u32(1);
    let (class, binary): (&str, Vec<(&str, Vec<u8>)>) = match forged {
        Forged::EmptyRequest => ("DDS:Auth:PKI-DH:1.0+Req", vec![]),
        Forged::UnknownAlgorithms => (
            "DDS:Auth:PKI-DH:1.0+Req",
            vec![
                ("c.id", garbage(600)),
                ("c.perm", garbage(300)),
                ("c.pdata", garbage(64)),
                ("c.dsign_algo", b"ECDSA-SHA1024".to_vec()),
                ("c.kagree_algo", b"DH+MODP-13".to_vec()),
                ("hash_c1", garbage(32)),
                ("dh1", garbage(65)),
                ("challenge1", garbage(32)),
            ],
        ),
        Forged::Answer { class, .. } => (
            class,
            vec![
                ("c.id", garbage(600)),
                ("c.perm", garbage(300)),
                ("c.pdata", garbage(64)),
                ("c.dsign_algo", b"ECDSA-SHA256".to_vec()),
                ("c.kagree_algo", b"ECDH+prime256v1-CEUM".to_vec()),
                ("hash_c1", garbage(32)),
                ("hash_c2", garbage(32)),
                ("dh1", garbage(65)),
                ("dh2", garbage(65)),
                ("challenge1", garbage(32)),
                ("challenge2", garbage(32)),
                ("signature", garbage(72)),
            ],
        ),
    };
    c.string(class);
    c.u32(0); // properties
    c.u32(binary.len() as u32);
    for (name, value) in &binary {
        c.string(name);
        c.octets(value);
    }
    let mut payload = vec![0x00, 0x01, 0x00, 0x00]; // CDR, little endian
    payload.extend(&c.0);
    if cut {
        payload.truncate(payload.len() / 3);
    }
    while !payload.len().is_multiple_of(4) {
        payload.push(0);
    }
    let mut data = Vec::new();
    data.extend(0u16.to_le_bytes()); // extra flags
    data.extend(16u16.to_le_bytes()); // octets to inline QoS: right after the SN
    data.extend(STATELESS_READER);
    data.extend(STATELESS_WRITER);
    data.extend(0i32.to_le_bytes());
    data.extend(sn.to_le_bytes());
    data.extend(payload);
    let mut m = b"RTPS".to_vec();
    m.extend([2, 4, 0x01, 0x12]);
    m.extend(from);
    m.push(0x15); // DATA
    m.push(0x05); // little endian, data present
    m.extend((data.len() as u16).to_le_bytes());
    m.extend(data);
    m
}

/// Sends forged messages from each of `from` to `to` at the metatraffic unicast ports of the
/// domain's first participants, until `stop`; returns how many were sent.
fn flood(domain: u16, from: Vec<[u8; 12]>, to: [u8; 12], stop: Arc<AtomicBool>) -> u64 {
    let socket = UdpSocket::bind("127.0.0.1:0").expect("a UDP socket");
    let ports: Vec<u16> = (0..8).map(|id| 7400 + 250 * domain + 10 + 2 * id).collect();
    let (mut sn, mut sent) = (1u32 << 30, 0u64);
    while !stop.load(Ordering::Relaxed) {
        for from in &from {
            let mut forged = vec![Forged::EmptyRequest, Forged::UnknownAlgorithms];
            for related in 1..=8 {
                forged.push(Forged::Answer {
                    class: "DDS:Auth:PKI-DH:1.0+Reply",
                    related,
                });
                forged.push(Forged::Answer {
                    class: "DDS:Auth:PKI-DH:1.0+Final",
                    related,
                });
            }
            for (k, f) in forged.iter().enumerate() {
                sn += 1;
                let m = message(from, &to, f, sn, k % 5 == 4);
                for port in &ports {
                    let _ = socket.send_to(&m, ("127.0.0.1", *port));
                }
                sent += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    sent
}

fn prefix(rt: &RosRuntime) -> [u8; 12] {
    let mut out = [0; 12];
    out.copy_from_slice(rt.context().domain_participant().guid().prefix.as_ref());
    out
}

#[test]
fn security_a_strangers_forged_handshake_messages_neither_block_a_peer_nor_flood_the_log() {
    let _watchdog = Watchdog::arm(
        "security_a_strangers_forged_handshake_messages_neither_block_a_peer_nor_flood_the_log",
        Duration::from_secs(180),
    );
    let made = Keystore::make_governed(&["/target", "/peer"], &[])
        .and_then(|ks| Ok((ks, Keystore::make_governed(&["/foreign"], &[])?)));
    let (ks, other) = match made {
        Ok(k) => k,
        Err(why) => {
            gpu_planning::testing::peer_missing("security", &why);
            return;
        }
    };
    let logs = common::logs();
    let domain = common::unique_domain();
    let (target, _bg) = participant(domain, Security::Enclave(ks.enclave("/target")));
    let mut ctx = NodeContext::new(&target, "target").unwrap();
    let latched = ctx
        .publisher::<OccupancyGrid>("/stranger_map", qos::map())
        .unwrap();
    smol::block_on(latched.async_publish(map())).unwrap();
    let (foreign, _bg2) = participant(domain, Security::Enclave(other.enclave("/foreign")));
    // The target and the participant of another CA discover each other and begin a handshake
    // that never completes.
    std::thread::sleep(Duration::from_secs(2));

    let mark = logs.lock().unwrap().len();
    let start = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let (peer, _bg3) = participant(domain, Security::Enclave(ks.enclave("/peer")));
    let forged_from = vec![prefix(&foreign), prefix(&peer)];
    let flooding = {
        let (to, stop) = (prefix(&target), stop.clone());
        std::thread::spawn(move || flood(domain, forged_from, to, stop))
    };
    let mut pctx = NodeContext::new(&peer, "peer").unwrap();
    let sub = pctx
        .subscription::<OccupancyGrid>("/stranger_map", qos::map())
        .unwrap();
    let received = smol::block_on(async {
        let s = sub.async_stream();
        futures::pin_mut!(s);
        crate::security::answered(s.next(), Duration::from_secs(15)).await
    });
    // Go on flooding for a few seconds whatever happened, for the log's count.
    std::thread::sleep(Duration::from_secs(3));
    stop.store(true, Ordering::Relaxed);
    let sent = flooding.join().unwrap();
    let text = String::from_utf8_lossy(&logs.lock().unwrap()[mark..]).to_string();
    assert!(
        received,
        "the peer did not authenticate within 15 s of {sent} forged handshake messages:\n{}",
        common::tail(&text, 40)
    );
    let elapsed = start.elapsed().as_secs_f64();
    let warnings: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("WARN") || l.contains("ERROR"))
        .collect();
    // The lines the forged messages drive: about the handshake and the stateless topic.
    let lines: Vec<&str> = warnings
        .iter()
        .copied()
        .filter(|l| l.contains("handshake") || l.contains("stateless"))
        .collect();
    let held: u64 = text
        .split(" more refused handshake messages")
        .filter_map(|before| before.rsplit('(').next()?.trim().parse::<u64>().ok())
        .sum();
    assert!(
        held >= 100,
        "of {sent} forged messages only {held} were refused unlogged: the flood did not reach \
         the handshake\n{}",
        common::tail(&text, 40)
    );
    // Each of the three participants here (the target, the peer and the one of another CA,
    // which the other two refuse and which refuses them) logs at most a line a second.
    assert!(
        lines.len() as f64 <= 3.0 * (elapsed + 2.0),
        "{} warning lines in {elapsed:.1} s from {sent} forged messages:\n{}",
        lines.len(),
        lines.join("\n")
    );
    // Nor does anything else log a line per forged message.
    assert!(
        warnings.len() < 200,
        "{} warning lines in {elapsed:.1} s from {sent} forged messages",
        warnings.len()
    );
}
