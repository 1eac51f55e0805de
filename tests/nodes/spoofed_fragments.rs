//! A stranger on the network sends DATA_FRAG submessages whose sample size claims up to 4 GiB,
//! from writers nobody matched, to every reader entity of the nodes' participant, with no
//! discovery at all: the process keeps serving, and its memory stays flat. (Before fragment
//! reassembly was bounded, one such datagram of 4 GiB aborted the whole process, and four of
//! 512 MiB pinned 2 GB.)

use std::net::UdpSocket;
use std::time::Duration;

use gpu_planning::ros::msg::nav_msgs::{GetPlan, GetPlanRequest, OccupancyGrid};
use gpu_planning::ros::{qos, NodeContext, ParamsFile, RosArgs, RosRuntime};

use crate::bad_input::{call_until, occupancy, pose};
use crate::common;

/// One RTPS message: the header (a spoofed participant, `prefix`), then one little-endian
/// DATA_FRAG carrying fragment 1 (1024 bytes) of a sample of `sample_size` bytes from writer
/// entity 0x000077_02 to reader `reader`.
fn spoofed_datafrag(prefix: [u8; 12], reader: [u8; 4], sn: u32, sample_size: u32) -> Vec<u8> {
    const FRAGMENT: u16 = 1024;
    let mut m = Vec::with_capacity(1100);
    m.extend_from_slice(b"RTPS");
    m.extend_from_slice(&[2, 4, 0x01, 0x0f]); // RTPS 2.4, a vendor id
    m.extend_from_slice(&prefix);
    let body_len: u16 = 4 + 4 + 4 + 8 + 4 + 2 + 2 + 4 + FRAGMENT;
    m.push(0x16); // DATA_FRAG
    m.push(0x01); // little-endian
    m.extend_from_slice(&body_len.to_le_bytes());
    m.extend_from_slice(&0u16.to_le_bytes()); // extra flags
    m.extend_from_slice(&28u16.to_le_bytes()); // octets to inline QoS (none follows)
    m.extend_from_slice(&reader);
    m.extend_from_slice(&[0x00, 0x00, 0x77, 0x02]);
    m.extend_from_slice(&0i32.to_le_bytes()); // sequence number, high
    m.extend_from_slice(&sn.to_le_bytes()); // and low
    m.extend_from_slice(&1u32.to_le_bytes()); // fragment starting number
    m.extend_from_slice(&1u16.to_le_bytes()); // fragments in submessage
    m.extend_from_slice(&FRAGMENT.to_le_bytes());
    m.extend_from_slice(&sample_size.to_le_bytes());
    m.extend(std::iter::repeat_n(0xa5u8, FRAGMENT as usize));
    m
}

/// Sends spoofed fragments to every user port of `domain` (RTPS's port formula, participants
/// 0..4, and the user multicast port on loopback): for each sample size, 16 spoofed
/// participants, each to the unknown reader and to user reader entities 1..=0x60 (kinds 04
/// and 07) with a fresh sequence number each.
fn spray(domain: u16, sample_sizes: &[u32]) {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let base = 7400 + 250 * u32::from(domain);
    let mut ports: Vec<u32> = (0..4).map(|p| base + 11 + 2 * p).collect();
    ports.push(base + 1);
    let mut readers = vec![[0u8; 4]];
    for key in 1..=0x60u8 {
        readers.push([0, 0, key, 0x04]);
        readers.push([0, 0, key, 0x07]);
    }
    let mut sn = 1;
    for &size in sample_sizes {
        for p in 0..16u8 {
            let prefix = [
                0x01,
                0x0f,
                0xde,
                0xad,
                p,
                size.to_le_bytes()[3],
                7,
                7,
                7,
                7,
                7,
                7,
            ];
            for reader in &readers {
                let d = spoofed_datafrag(prefix, *reader, sn, size);
                sn += 1;
                for port in &ports {
                    // A full socket buffer drops some: the sender does not care either.
                    let _ = socket.send_to(&d, ("127.0.0.1", *port as u16));
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

#[test]
fn spoofed_fragments_of_unmatched_writers_neither_crash_the_nodes_nor_pin_memory() {
    let domain = common::unique_domain();
    let mut nodes = common::NodesProcess::start(domain, "gpu_planning,lee_planner", &[]);
    let client_rt =
        RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let _b = common::run_in_background(&client_rt);
    let mut peer = NodeContext::new(&client_rt, "spoof_witness").unwrap();
    let map_pub = peer.publisher::<OccupancyGrid>("/map", qos::map()).unwrap();
    let plan = peer.client::<GetPlan>("/lee_planner/get_plan").unwrap();
    let req = GetPlanRequest {
        start: pose(0.5, 0.5, ""),
        goal: pose(4.5, 2.5, ""),
        tolerance: 0.0,
    };
    let planned = |r: &gpu_planning::ros::msg::nav_msgs::GetPlanResponse| !r.plan.poses.is_empty();
    smol::block_on(async {
        map_pub
            .async_publish(occupancy(5, 3, vec![0; 15], "map"))
            .await
            .unwrap();
        call_until(&plan, req.clone(), planned, || {})
            .await
            .expect("a plan before the spoofed fragments");
    });
    let before = nodes.resident_bytes();
    spray(domain, &[u32::MAX, 512 << 20, 16 << 20]);
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        nodes.running(),
        "the nodes process died of the spoofed fragments"
    );
    let after = nodes.resident_bytes();
    assert!(
        after < before + (64 << 20),
        "resident memory grew from {before} to {after} bytes under spoofed fragments"
    );
    smol::block_on(async {
        call_until(&plan, req, planned, || {})
            .await
            .expect("a plan after the spoofed fragments");
    });
    assert!(nodes.running());
    client_rt.shutdown().trigger();
}
