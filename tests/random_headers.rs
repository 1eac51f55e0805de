//! Random headers and sizes for every file reader, each read by the CLI in a process of its own
//! under a 4 GiB address-space limit: whatever a header claims (counts, widths, strides, sizes
//! up to 2^64), the reader answers or refuses with an exit code, and never aborts on an
//! allocation it should have checked first, nor hangs.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use proptest::prelude::*;

fn exe() -> String {
    gpu_planning::env::BIN
        .get()
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_gpu_planning").into())
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gp_headers_{name}_{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `gpu_planning args` under `ulimit -v` 4 GiB (two malloc arenas and two rayon threads,
/// so the limit bounds what the input makes it take, not the machine's core count) for at most
/// 30 s; panics unless it exits with 0, 1 or 2.
fn survives(args: &[&str]) {
    let mut child = Command::new("bash")
        .arg("-c")
        .arg("ulimit -v 4194304 && exec \"$@\"")
        .arg("bash")
        .arg(exe())
        .args(args)
        .env("MALLOC_ARENA_MAX", "2")
        .env("RAYON_NUM_THREADS", "2")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?}: still running after 30 s");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut err);
    }
    let tail: String = err
        .chars()
        .rev()
        .take(600)
        .collect::<Vec<_>>()
        .iter()
        .rev()
        .collect();
    assert!(
        matches!(status.code(), Some(0..=2)),
        "{args:?}: {status} (a signal is an abort), stderr: {tail}"
    );
}

/// A size as a hostile header writes it: small, near a power of two, or huge.
fn size() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..8,
        8u64..100_000,
        (0u32..64).prop_map(|b| 1u64 << b),
        (0u32..64).prop_map(|b| (1u64 << b).wrapping_sub(1)),
        Just(u64::MAX),
        Just(u32::MAX as u64),
    ]
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.display().to_string()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    /// PCD: every header count (WIDTH, HEIGHT, POINTS, SIZE, COUNT) and each DATA kind, with a
    /// short body and a binary_compressed size pair.
    #[test]
    fn pcd_headers(
        width in size(), height in size(), points in size(), count in 0u64..5,
        fsize in prop_oneof![Just(0u64), Just(4), Just(8), size()],
        kind in 0usize..3, packed in size(), raw in size(), body in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let dir = scratch("pcd");
        let data = ["ascii", "binary", "binary_compressed"][kind];
        let mut b = format!(
            "VERSION .7\nFIELDS x y z\nSIZE {fsize} {fsize} {fsize}\nTYPE F F F\nCOUNT {count} {count} {count}\n\
             WIDTH {width}\nHEIGHT {height}\nVIEWPOINT 0 0 0 1 0 0 0\nPOINTS {points}\nDATA {data}\n"
        ).into_bytes();
        if kind == 2 {
            b.extend((packed as u32).to_le_bytes());
            b.extend((raw as u32).to_le_bytes());
        }
        b.extend(&body);
        let f = write(&dir, "c.pcd", &b);
        survives(&["knn", "--backend", "cpu", "--points", &f, "--queries", &f, "--k", "1"]);
    }

    /// NumPy .npy: any shape in the header dict, over a few real bytes.
    #[test]
    fn npy_headers(rows in size(), cols in size(), f8 in any::<bool>(), body in proptest::collection::vec(any::<u8>(), 0..64)) {
        let dir = scratch("npy");
        let descr = if f8 { "<f8" } else { "<f4" };
        let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
        while (10 + dict.len() + 1) % 64 != 0 {
            dict.push(' ');
        }
        dict.push('\n');
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend((dict.len() as u16).to_le_bytes());
        b.extend(dict.as_bytes());
        b.extend(&body);
        let f = write(&dir, "p.npy", &b);
        survives(&["knn", "--backend", "cpu", "--points", &f, "--queries", &f, "--k", "1"]);
    }

    /// PLY: any vertex count, ascii or binary, over a few real bytes.
    #[test]
    fn ply_headers(n in size(), binary in any::<bool>(), body in proptest::collection::vec(any::<u8>(), 0..64)) {
        let dir = scratch("ply");
        let format = if binary { "binary_little_endian" } else { "ascii" };
        let mut b = format!(
            "ply\nformat {format} 1.0\nelement vertex {n}\nproperty float x\nproperty float y\nproperty float z\nend_header\n"
        ).into_bytes();
        b.extend(&body);
        let f = write(&dir, "p.ply", &b);
        survives(&["knn", "--backend", "cpu", "--points", &f, "--queries", &f, "--k", "1"]);
    }

    /// A map_server map: a PGM whose header claims any width, height and maximum value.
    #[test]
    fn pgm_headers(w in size(), h in size(), max in prop_oneof![Just(255u64), Just(65535), size()], body in proptest::collection::vec(any::<u8>(), 0..64)) {
        let dir = scratch("pgm");
        let mut b = format!("P5\n{w} {h}\n{max}\n").into_bytes();
        b.extend(&body);
        write(&dir, "m.pgm", &b);
        let yaml = write(
            &dir,
            "m.yaml",
            b"image: m.pgm\nresolution: 0.05\norigin: [0.0, 0.0, 0.0]\nnegate: 0\noccupied_thresh: 0.65\nfree_thresh: 0.196\n",
        );
        survives(&["lee", "--backend", "cpu", "--map", &yaml, "--start", "0,0", "--goal", "1,1"]);
    }

    /// DIMACS .gr: any vertex and arc count on the `p` line, a few arcs after it.
    #[test]
    fn dimacs_headers(n in size(), m in size(), arcs in proptest::collection::vec((size(), size(), -5i64..100), 0..6)) {
        let dir = scratch("gr");
        let mut t = format!("c random header\np sp {n} {m}\n");
        for (u, v, w) in arcs {
            t.push_str(&format!("a {u} {v} {w}\n"));
        }
        let f = write(&dir, "g.gr", t.as_bytes());
        // A header within the cap is a graph to solve (4095 vertices: n^3 steps, minutes under
        // emulation): the cap here keeps the legitimate work small, the header's claims free.
        survives(&["apsp", "--backend", "cpu", "--max-vertices", "256", "--graph", &f, "--query", "1,1"]);
    }

    /// MCAP: a bag written here, then one record's length, or a chunk's declared sizes, set to
    /// anything.
    #[test]
    fn mcap_lengths(which in 0usize..64, field in 0usize..4, value in size()) {
        let dir = scratch("mcap");
        let bag = dir.join("b");
        let _ = std::fs::remove_dir_all(&bag);
        let mut w = gpu_planning::bag::BagWriter::create(&bag).unwrap();
        w.add_topic("/a", "nav_msgs/msg/Path", gpu_planning::bag::qos::TopicQos::default()).unwrap();
        for t in 0..3u64 {
            let p = gpu_planning::ros::msg::nav_msgs::Path::default();
            w.write("/a", t, &gpu_planning::bag::cdr::encode(&p).unwrap()).unwrap();
        }
        w.finish().unwrap();
        let file = w.file();
        let mut bytes = std::fs::read(&file).unwrap();
        // Walk the records (opcode, u64 length, body) to the chosen one.
        let mut starts = Vec::new();
        let mut at = 8;
        while at + 9 <= bytes.len() {
            let len = u64::from_le_bytes(bytes[at + 1..at + 9].try_into().unwrap());
            starts.push(at);
            match at.checked_add(9).and_then(|a| a.checked_add(len as usize)) {
                Some(next) if next <= bytes.len() => at = next,
                _ => break,
            }
        }
        let rec = starts[which % starts.len()];
        // The record's length, or (in a chunk) its uncompressed size, its compressed size
        // after the compression name, or its start time.
        let offset = match (bytes[rec], field) {
            (0x06, 1) => rec + 9 + 16,
            (0x06, 2) => {
                let name = u32::from_le_bytes(bytes[rec + 9 + 28..rec + 9 + 32].try_into().unwrap()) as usize;
                rec + 9 + 32 + name
            }
            (0x06, 3) => rec + 9,
            _ => rec + 1,
        };
        if offset + 8 <= bytes.len() {
            bytes[offset..offset + 8].copy_from_slice(&value.to_le_bytes());
        }
        let f = write(&dir, "x.mcap", &bytes);
        survives(&["bag", "info", &f]);
    }
}
