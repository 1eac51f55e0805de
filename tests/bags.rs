//! The rosbag2 bags under tests/data/bags: one per node, made by `gpu_planning bag generate`
//! from the scenarios in src/bag/generate.rs. Here: every node has one, their inputs are what
//! the generator makes today, bags written here read back, and independent readers (rosbags
//! and Foxglove's mcap, from PyPI) decode every message to the same values as we do. The
//! replay of each bag into the nodes is in tests/nodes/bag_replay.rs. The Python check skips
//! when python3, rosbags or mcap is missing, unless GPU_PLANNING_REQUIRE_INTEROP=1 (CI).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use gpu_planning::bag::generate::scenarios;
use gpu_planning::bag::play::Step;
use gpu_planning::bag::qos::TopicQos;
use gpu_planning::bag::replay::{steps, EVENT_SUFFIX, OUTPUT_TOPICS};
use gpu_planning::bag::{cdr, compare, types, Bag, BagWriter};
use gpu_planning::nodes::NODE_NAMES;
use gpu_planning::ros::msg::nav_msgs::Path as RosPath;
use gpu_planning::ros::msg::std_msgs::Header;

fn bags_root() -> PathBuf {
    gpu_planning::testing::repo().join("tests/data/bags")
}

fn bag(name: &str) -> Bag {
    Bag::open(&bags_root().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn every_node_has_a_bag_with_inputs_calls_and_outputs() {
    for node in NODE_NAMES.iter().filter(|n| **n != "gpu_planning") {
        let b = bag(node);
        let outputs: Vec<_> = b
            .topics
            .keys()
            .filter(|t| OUTPUT_TOPICS.contains(&t.as_str()))
            .collect();
        let events: Vec<_> = b
            .topics
            .keys()
            .filter(|t| t.ends_with(EVENT_SUFFIX))
            .collect();
        assert!(!outputs.is_empty(), "{node}: no expected output topic");
        assert!(!events.is_empty(), "{node}: no recorded service call");
        for t in outputs {
            assert!(
                t.starts_with(&format!("/{node}/")),
                "{node}: output {t} of another node"
            );
            assert!(b.on(t).count() > 0, "{node}: {t} has no messages");
        }
        let calls = steps(&b)
            .unwrap()
            .iter()
            .filter(|s| matches!(s.step, Step::Call { .. }))
            .count();
        let inputs = steps(&b).unwrap().len() - calls;
        assert!(
            calls > 0 && inputs > 0,
            "{node}: {inputs} inputs, {calls} calls"
        );
    }
}

/// The bags were made by the generator in this repository: today's scenarios give the same
/// input bytes at the same times, and every call in a bag has its recorded response.
#[test]
fn bag_inputs_are_what_the_generator_makes() {
    for s in scenarios().unwrap() {
        let b = bag(s.name);
        let played = steps(&b).unwrap();
        assert_eq!(played.len(), s.steps.len(), "{}: step count", s.name);
        for (i, (got, want)) in played.iter().zip(&s.steps).enumerate() {
            // Topic inputs keep their scheduled times; a call is recorded when it was sent.
            let late = got.time_ns.checked_sub(want.time_ns);
            match got.step {
                Step::Publish { .. } => assert_eq!(late, Some(0), "{} step {i}: time", s.name),
                Step::Call { .. } => assert!(
                    late.is_some_and(|ns| ns < 500_000_000),
                    "{} step {i}: sent at {} for {}",
                    s.name,
                    got.time_ns,
                    want.time_ns
                ),
            }
            match (&got.step, &want.step) {
                (
                    Step::Publish {
                        topic,
                        ty,
                        qos,
                        cdr,
                    },
                    Step::Publish {
                        topic: t2,
                        ty: ty2,
                        qos: q2,
                        cdr: c2,
                    },
                ) => {
                    assert_eq!((topic, ty, qos), (t2, ty2, q2), "{} step {i}", s.name);
                    assert!(cdr == c2, "{} step {i}: {topic} bytes differ", s.name);
                }
                (
                    Step::Call {
                        service, request, ..
                    },
                    Step::Call {
                        service: s2,
                        request: r2,
                        ..
                    },
                ) => {
                    assert_eq!(service, s2, "{} step {i}", s.name);
                    assert!(
                        request == r2,
                        "{} step {i}: {service} request differs",
                        s.name
                    );
                }
                (g, w) => panic!("{} step {i}: bag has {g:?}, generator {w:?}", s.name),
            }
        }
    }
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gpu_planning_{name}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn written_bags_read_back() {
    let dir = scratch("bag_round_trip");
    let mut w = BagWriter::create(&dir).unwrap();
    let path = |frame: &str, n: usize| RosPath {
        header: Header {
            frame_id: frame.into(),
            ..Default::default()
        },
        poses: vec![Default::default(); n],
    };
    w.add_topic("/a", "nav_msgs/msg/Path", TopicQos::latched())
        .unwrap();
    w.add_topic("/b", "nav_msgs/msg/Path", TopicQos::default())
        .unwrap();
    let written = [
        (10u64, "/a", path("one", 0)),
        (30, "/b", path("two", 3)),
        (20, "/a", path("three", 1)),
    ];
    for (t, topic, p) in &written {
        w.write(topic, *t, &cdr::encode(p).unwrap()).unwrap();
    }
    assert!(w
        .add_topic("/a", "nav_msgs/msg/OccupancyGrid", TopicQos::default())
        .is_err());
    assert!(w.write("/c", 1, &[0, 1, 0, 0]).is_err());
    w.finish().unwrap();
    assert!(
        BagWriter::create(&dir).is_err(),
        "a bag is never overwritten"
    );

    let b = Bag::open(&dir).unwrap();
    assert_eq!(b.messages.len(), 3);
    assert_eq!(b.topics["/a"].qos, TopicQos::latched());
    assert_eq!(b.topics["/b"].qos, TopicQos::default());
    assert_eq!(b.topics["/a"].count, 2);
    let times: Vec<u64> = b.messages.iter().map(|m| m.time_ns).collect();
    assert_eq!(times, [10, 20, 30], "read in time order");
    let back: RosPath = cdr::decode("m", &b.messages[1].data).unwrap();
    assert_eq!(back, written[2].2);
    let meta = std::fs::read_to_string(dir.join("metadata.yaml")).unwrap();
    for needle in [
        "version: 5",
        "storage_identifier: mcap",
        "message_count: 3",
        "bag_round_trip",
        "nanoseconds: 20",
    ] {
        assert!(
            meta.contains(needle),
            "metadata.yaml lacks {needle}:\n{meta}"
        );
    }
    // One .mcap file alone opens too.
    let file = w.file();
    assert_eq!(Bag::open(&file).unwrap().messages.len(), 3);
    std::fs::remove_dir_all(&dir).unwrap();

    // Damaged bags are errors naming the file, never panics.
    let bad = scratch("bag_damaged");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(bad.join("metadata.yaml"), "rosbag2_bagfile_information: 7").unwrap();
    assert!(Bag::open(&bad).is_err());
    let f = bad.join("x.mcap");
    std::fs::write(&f, b"\x89MCAP0\r\ngarbage").unwrap();
    let e = Bag::open(&f).unwrap_err().to_string();
    assert!(e.contains("x.mcap"), "{e}");
    std::fs::remove_dir_all(&bad).unwrap();
}

#[test]
fn independent_readers_decode_every_message_as_we_do() {
    if let Err(why) = gpu_planning::testing::python_imports("rosbags, mcap") {
        gpu_planning::testing::peer_missing("independent bag readers", &why);
        return;
    }
    let dirs: Vec<PathBuf> = NODE_NAMES
        .iter()
        .filter(|n| **n != "gpu_planning")
        .map(|n| bags_root().join(n))
        .collect();
    let out = Command::new("python3")
        .arg(gpu_planning::testing::repo().join("tests/bags/check_bags.py"))
        .args(&dirs)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "check_bags.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut compared = 0;
    for dir in &dirs {
        let name = dir.file_name().unwrap().to_str().unwrap();
        let b = Bag::open(dir).unwrap();
        let theirs = &seen[name]["rosbags"];
        let mcap_counts = &seen[name]["mcap"];
        let mut ours: BTreeMap<&str, Vec<serde_json::Value>> = BTreeMap::new();
        for m in &b.messages {
            let ty = &b.topics[&m.topic].ty;
            ours.entry(&m.topic)
                .or_default()
                .push(types::to_json(ty, &m.topic, &m.data).unwrap());
        }
        assert_eq!(
            theirs.as_object().map(|o| o.len()),
            Some(ours.len()),
            "{name}: topics"
        );
        for (topic, values) in ours {
            let t = &theirs[topic];
            assert_eq!(
                t["type"],
                b.topics[topic].ty.as_str(),
                "{name} {topic}: type"
            );
            assert_eq!(
                mcap_counts[topic],
                values.len(),
                "{name} {topic}: mcap count"
            );
            let list = t["messages"].as_array().unwrap();
            assert_eq!(list.len(), values.len(), "{name} {topic}: rosbags count");
            for (i, (mine, other)) in values.iter().zip(list).enumerate() {
                // Every field, stamps included: both sides decode the same bytes.
                let d = compare::differences_all(mine, other, 5);
                assert!(d.is_empty(), "{name} {topic}[{i}]: {d:?}");
                compared += 1;
            }
        }
    }
    assert!(compared > 50, "only {compared} messages compared");
}

/// Bags nobody here wrote (`ros2 bag record`'s talker, rosbag2's cdr_test of every primitive
/// and array kind): every message decodes from the bag's own schema, equal to rosbags'
/// decoding of it (rosbags registers the types from the same schemas).
#[test]
fn recorded_bags_of_any_type_decode_as_rosbags_does() {
    use gpu_planning::bag::dynamic::Schema;
    if let Err(why) = gpu_planning::testing::python_imports("rosbags, mcap") {
        gpu_planning::testing::peer_missing("rosbags decoding of recorded bags", &why);
        return;
    }
    // rosbags' own rosbag2 reader reads no message of the talker bag (its metadata predates
    // the `files` list), so the MCAP files are read with Foxglove's reader and every message
    // is decoded by a rosbags typestore built from the channel's schema alone.
    let script = r#"
import dataclasses, glob, json, sys
from mcap.reader import make_reader
from rosbags.typesys import Stores, get_typestore, get_types_from_msg

def full(name):
    p = name.strip().split('/')
    return f'{p[0]}/msg/{p[-1]}' if len(p) == 2 else name.strip()

def is_byte(node):
    # rosbags decodes ROS 2's `byte` (an octet, 0..255) as a signed int8: read it back as
    # the octet it is.
    kind, detail = node
    if kind.name == 'BASE':
        return detail[0] == 'byte'
    if kind.name in ('ARRAY', 'SEQUENCE'):
        return is_byte(detail[0])
    return False

def plain(o, octet=False):
    if dataclasses.is_dataclass(o):
        _, fields = store.fielddefs[o.__msgtype__]
        return {name: plain(getattr(o, name), is_byte(node)) for name, node in fields}
    if hasattr(o, 'tolist'):
        o = o.tolist()
    if isinstance(o, (list, tuple)):
        return [plain(x, octet) for x in o]
    if octet and isinstance(o, int):
        return o & 0xff
    return o

store, known = get_typestore(Stores.EMPTY), set()
for f in sorted(glob.glob(sys.argv[1] + '/*.mcap')):
    with open(f, 'rb') as fh:
        for schema, channel, message in make_reader(fh).iter_messages():
            if schema.name not in known:
                parts = schema.data.decode().split('\n' + '=' * 80 + '\n')
                types = dict(get_types_from_msg(parts[0], full(schema.name)))
                for part in parts[1:]:
                    head, _, body = part.partition('\n')
                    types.update(get_types_from_msg(body, full(head.replace('MSG:', ''))))
                store.register(types)
                known.add(schema.name)
            msg = store.deserialize_cdr(message.data, full(schema.name))
            print(json.dumps({'topic': channel.topic, 'msg': plain(msg)}))
"#;
    let root = gpu_planning::testing::repo().join("tests/data/ros2_bags");
    let mut decoded = 0;
    for name in ["talker", "cdr_test"] {
        let dir = root.join(name);
        let bag = Bag::open(&dir).unwrap();
        let out = Command::new("python3")
            .args(["-c", script])
            .arg(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "rosbags on {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut theirs: std::collections::BTreeMap<String, Vec<serde_json::Value>> =
            Default::default();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let topic = v["topic"].as_str().unwrap().to_string();
            theirs.entry(topic).or_default().push(v["msg"].clone());
        }
        for t in bag.topics.values() {
            let (encoding, text) = t.schema.clone().expect("a recorded channel has a schema");
            assert_eq!(encoding, "ros2msg", "{name} {}", t.name);
            let schema = Schema::parse(&t.ty, &text).unwrap();
            let ours: Vec<serde_json::Value> = bag
                .on(&t.name)
                .enumerate()
                .map(|(i, m)| {
                    schema
                        .to_json(&format!("{}[{i}]", t.name), &m.data)
                        .unwrap()
                })
                .collect();
            let want = &theirs[&t.name];
            assert_eq!(ours.len(), want.len(), "{name} {}", t.name);
            for (i, (a, b)) in ours.iter().zip(want).enumerate() {
                assert_eq!(a, b, "{name} {}[{i}]", t.name);
            }
            decoded += ours.len();
        }
    }
    assert_eq!(decoded, 27, "20 talker messages and 7 cdr_test messages");
}

/// Every bag here rewritten by rosbags and Python's sqlite3 (`tests/interop/rewrite_bag.py`):
/// sqlite3 (`.db3`, Humble's default storage) with Iron's tables split over two files and
/// with Humble's tables (no definitions, no type hashes), and MCAP with Jazzy's
/// metadata.yaml (version 9: QoS as a YAML list, type hashes, `ros_distro`). Each reads as its
/// original: topics, types, QoS, counts, and every message's time and bytes; definitions
/// where the storage keeps them.
#[test]
fn bags_from_an_independent_writer_read_as_their_originals() {
    if let Err(why) = gpu_planning::testing::python_imports("rosbags.rosbag2, ruamel.yaml") {
        gpu_planning::testing::peer_missing("sqlite3 bags written by rosbags", &why);
        return;
    }
    let script = gpu_planning::testing::repo().join("tests/interop/rewrite_bag.py");
    for name in NODE_NAMES.iter().filter(|n| **n != "gpu_planning") {
        let original = bag(name);
        for layout in ["iron", "humble", "jazzy"] {
            let out = scratch(&format!("db3_{name}_{layout}"));
            let run = Command::new("python3")
                .arg(&script)
                .arg(bags_root().join(name))
                .arg(&out)
                .arg(layout)
                .output()
                .expect("python3 runs");
            assert!(
                run.status.success(),
                "{name} {layout}: {}{}",
                String::from_utf8_lossy(&run.stdout),
                String::from_utf8_lossy(&run.stderr)
            );
            let files: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
            let want_files = if layout == "iron" { 2 } else { 1 };
            assert_eq!(files["files"].as_array().map(Vec::len), Some(want_files));
            let db3 = Bag::open(&out).unwrap_or_else(|e| panic!("{name} {layout}: {e}"));
            assert_eq!(db3.topics.len(), original.topics.len(), "{name} {layout}");
            for (topic, t) in &original.topics {
                let d = &db3.topics[topic];
                assert_eq!(
                    (&d.ty, d.count, d.qos),
                    (&t.ty, t.count, t.qos),
                    "{name} {layout} {topic}"
                );
                match layout {
                    "iron" | "jazzy" => assert_eq!(d.schema, t.schema, "{name} {topic}"),
                    _ => assert_eq!(d.schema, None, "{name} {topic}"),
                }
            }
            let key = |b: &Bag| -> Vec<(String, u64, Vec<u8>)> {
                b.messages
                    .iter()
                    .map(|m| (m.topic.clone(), m.time_ns, m.data.clone()))
                    .collect()
            };
            assert!(
                key(&db3) == key(&original),
                "{name} {layout}: messages differ"
            );
            let _ = std::fs::remove_dir_all(&out);
        }
    }
}

/// sqlite3 bags whose `topics` or `messages` is a view (recursive, never ending, or sorting
/// onto the disk without bound) are refused by name before anything is queried from them.
#[test]
fn sqlite3_bags_of_views_are_refused() {
    let dir = scratch("views");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, ddl) in [
        (
            "view_topics.db3",
            "CREATE TABLE messages (id INTEGER, topic_id INTEGER, timestamp INTEGER, data BLOB);\n\
             CREATE VIEW topics AS WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) \
             SELECT i AS id, 'x' AS name, 'std_msgs/msg/String' AS type, 'cdr' AS serialization_format, \
             '' AS offered_qos_profiles FROM r;",
        ),
        (
            "view_messages.db3",
            "CREATE TABLE topics (id INTEGER, name TEXT, type TEXT, serialization_format TEXT, \
             offered_qos_profiles TEXT);\n\
             CREATE VIEW messages AS WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) \
             SELECT i AS id, 1 AS topic_id, i AS timestamp, x'00' AS data FROM r;",
        ),
    ] {
        let file = dir.join(name);
        let _ = std::fs::remove_file(&file);
        rusqlite::Connection::open(&file)
            .unwrap()
            .execute_batch(ddl)
            .unwrap();
        let e = Bag::open(&file).expect_err("a bag of views was read").to_string();
        assert!(e.contains(name) && e.contains("is not a table"), "{e}");
    }
}

/// A chunk's declared uncompressed size is checked before anything is unpacked: one whose
/// header claims more than a chunk may hold is refused naming the file and the size.
#[test]
fn mcap_lengths_that_wrap_or_claim_more_than_a_chunk_may_hold_are_refused() {
    let dir = scratch("chunk_claim");
    let mut w = BagWriter::create(&dir).unwrap();
    w.add_topic("/a", "nav_msgs/msg/Path", TopicQos::default())
        .unwrap();
    w.write("/a", 1, &cdr::encode(&RosPath::default()).unwrap())
        .unwrap();
    w.finish().unwrap();
    let file = w.file();
    let mut bytes = std::fs::read(&file).unwrap();
    // Records after the 8 magic bytes: opcode, u64 length, body. A chunk (0x06) begins with
    // its start and end times, then its uncompressed size.
    let mut at = 8;
    let chunk = loop {
        let len = u64::from_le_bytes(bytes[at + 1..at + 9].try_into().unwrap()) as usize;
        if bytes[at] == 0x06 {
            break at + 9;
        }
        at += 9 + len;
    };
    assert_eq!(Bag::open(&file).unwrap().messages.len(), 1);
    // A record whose length is 2^64 - 1 (mcap's stream wrapped it and panicked).
    let mut huge = bytes.clone();
    huge[chunk - 8..chunk].copy_from_slice(&u64::MAX.to_le_bytes());
    let wrapped = dir.join("wrapped.mcap");
    std::fs::write(&wrapped, &huge).unwrap();
    let e = Bag::open(&wrapped)
        .expect_err("a record of 2^64 - 1 bytes was read")
        .to_string();
    assert!(e.contains("wrapped.mcap"), "{e}");
    bytes[chunk + 16..chunk + 24].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let lying = dir.join("lying.mcap");
    std::fs::write(&lying, &bytes).unwrap();
    let e = Bag::open(&lying)
        .expect_err("a 1 TiB chunk was read")
        .to_string();
    assert!(
        e.contains("lying.mcap") && e.contains("1099511627776 bytes uncompressed"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
