//! Reads a bag: a rosbag2 directory (`metadata.yaml` and its files, split or not, in MCAP or
//! in sqlite3, Humble's default storage) or one `.mcap` or `.db3` file. Types and QoS come from
//! the bag itself (MCAP schemas and channels; sqlite3's `topics` and, from Iron on,
//! `message_definitions` tables), so bags recorded by `ros2 bag record` and by this package read
//! alike. Messages are loaded whole: bags here are test and demo inputs, not hours of sensor
//! data.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::metadata::Metadata;
use super::qos::TopicQos;
use crate::error::{Error, Result};

/// How a bag's files store their messages (rosbag2's `storage_identifier`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Storage {
    Mcap,
    Sqlite3,
}

#[derive(Debug, Clone)]
pub struct TopicInfo {
    pub name: String,
    pub ty: String,
    pub qos: TopicQos,
    pub count: u64,
    /// The channel's schema as the bag stores it: (encoding, text), e.g. ("ros2msg", ...).
    pub schema: Option<(String, String)>,
}

#[derive(Debug, Clone)]
pub struct BagMessage {
    pub topic: String,
    pub time_ns: u64,
    pub data: Vec<u8>,
}

#[derive(Debug, Clone)]
pub struct Bag {
    pub path: PathBuf,
    /// By topic name.
    pub topics: BTreeMap<String, TopicInfo>,
    /// In log-time order (stable for equal times).
    pub messages: Vec<BagMessage>,
}

/// A file a bag folder's metadata names, which must lie inside the folder: a relative path
/// without `..`, so that a bag someone hands over cannot make the reader open other files.
fn inside(folder: &Path, file: &str) -> Result<PathBuf> {
    use std::path::Component;
    let rel = Path::new(file);
    if file.is_empty()
        || !rel
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(Error::invalid(
            folder.join("metadata.yaml").display().to_string(),
            format!(
                "relative_file_paths: '{file}' is not a path inside the bag folder (relative, \
                 without '..')"
            ),
        ));
    }
    Ok(folder.join(rel))
}

impl Bag {
    pub fn open(path: &Path) -> Result<Bag> {
        let files: Vec<(PathBuf, Storage)> = if path.is_dir() {
            let meta = Metadata::read(path)?;
            let info = meta.rosbag2_bagfile_information;
            let storage = match info.storage_identifier.as_str() {
                "mcap" => Storage::Mcap,
                "sqlite3" => Storage::Sqlite3,
                other => {
                    return Err(Error::invalid(
                        path.join("metadata.yaml").display().to_string(),
                        format!("storage_identifier '{other}': mcap and sqlite3 bags are read"),
                    ))
                }
            };
            if !info.compression_mode.is_empty() && info.compression_mode != "none" {
                return Err(Error::invalid(
                    "compression_mode",
                    format!(
                        "'{}': whole-file compression is not read; MCAP chunk compression is",
                        info.compression_mode
                    ),
                ));
            }
            info.relative_file_paths
                .iter()
                .map(|f| inside(path, f).map(|file| (file, storage)))
                .collect::<Result<_>>()?
        } else {
            let storage = if path.extension().is_some_and(|e| e == "db3") {
                Storage::Sqlite3
            } else {
                Storage::Mcap
            };
            vec![(path.to_path_buf(), storage)]
        };
        let mut bag = Bag {
            path: path.to_path_buf(),
            topics: BTreeMap::new(),
            messages: Vec::new(),
        };
        for (file, storage) in files {
            // A device, a FIFO or a folder would be read until memory runs out or forever.
            let kind = std::fs::metadata(&file)
                .map_err(|e| Error::invalid(file.display().to_string(), e))?;
            if !kind.is_file() {
                return Err(Error::invalid(
                    file.display().to_string(),
                    "is not a regular file (a bag's files are)",
                ));
            }
            match storage {
                Storage::Mcap => bag.read_mcap(&file)?,
                Storage::Sqlite3 => bag.read_sqlite3(&file)?,
            }
        }
        bag.messages.sort_by_key(|m| m.time_ns);
        Ok(bag)
    }

    /// A bag from the bytes of one MCAP file (`name` names it in errors).
    pub fn from_mcap_bytes(name: &str, bytes: &[u8]) -> Result<Bag> {
        let mut bag = Bag {
            path: PathBuf::from(name),
            topics: BTreeMap::new(),
            messages: Vec::new(),
        };
        bag.read_bytes(name, bytes)?;
        bag.messages.sort_by_key(|m| m.time_ns);
        Ok(bag)
    }

    fn read_mcap(&mut self, file: &Path) -> Result<()> {
        let name = file.display().to_string();
        let bytes = std::fs::read(file).map_err(|e| Error::invalid(&name, e))?;
        self.read_bytes(&name, &bytes)
    }

    fn read_bytes(&mut self, name: &str, bytes: &[u8]) -> Result<()> {
        check_uncompressed_sizes(name, bytes)?;
        // The records inside a chunk are read by mcap alone, whose length arithmetic can panic
        // on hostile values (see check_uncompressed_sizes): a panic there is this file's error.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.read_records(name, bytes)
        }))
        .unwrap_or_else(|_| {
            Err(Error::invalid(
                name,
                "the MCAP reader failed on malformed records (see the message above)",
            ))
        })
    }

    fn read_records(&mut self, name: &str, bytes: &[u8]) -> Result<()> {
        let stream = mcap::MessageStream::new(bytes).map_err(|e| Error::invalid(name, e))?;
        for m in stream {
            let m = m.map_err(|e| Error::invalid(name, e))?;
            let ch = &m.channel;
            if ch.message_encoding != "cdr" {
                return Err(Error::invalid(
                    format!("{name}: {}", ch.topic),
                    format!("message encoding '{}' is not cdr", ch.message_encoding),
                ));
            }
            let ty = ch.schema.as_ref().map(|s| s.name.clone()).ok_or_else(|| {
                Error::invalid(
                    format!("{name}: {}", ch.topic),
                    "channel has no schema (type)",
                )
            })?;
            // The channel describes the topic once, at its first message.
            let describe = || TopicInfo {
                name: ch.topic.clone(),
                ty: ty.clone(),
                qos: ch
                    .metadata
                    .get("offered_qos_profiles")
                    .map(|q| TopicQos::from_yaml(q))
                    .unwrap_or_default(),
                count: 0,
                schema: ch.schema.as_ref().map(|s| {
                    (
                        s.encoding.clone(),
                        String::from_utf8_lossy(&s.data).into_owned(),
                    )
                }),
            };
            self.push(
                name,
                &ch.topic,
                &ty,
                describe,
                m.log_time,
                m.data.into_owned(),
            )?;
        }
        Ok(())
    }

    /// Adds a message of `topic`, of type `ty`: its first message declares the topic
    /// (`describe`), a later one with another type is an error naming both.
    pub(super) fn push(
        &mut self,
        file: &str,
        topic: &str,
        ty: &str,
        describe: impl FnOnce() -> TopicInfo,
        time_ns: u64,
        data: Vec<u8>,
    ) -> Result<()> {
        let t = match self.topics.get_mut(topic) {
            Some(t) => t,
            None => self
                .topics
                .entry(topic.to_string())
                .or_insert_with(describe),
        };
        if t.ty != ty {
            return Err(Error::invalid(
                format!("{file}: {topic}"),
                format!("carries both {} and {ty}", t.ty),
            ));
        }
        t.count += 1;
        self.messages.push(BagMessage {
            topic: topic.to_string(),
            time_ns,
            data,
        });
        Ok(())
    }

    /// The messages of one topic, in order.
    pub fn on<'a>(&'a self, topic: &'a str) -> impl Iterator<Item = &'a BagMessage> + 'a {
        self.messages.iter().filter(move |m| m.topic == topic)
    }
}

/// The largest chunk an MCAP file may declare, uncompressed: one message as large as the
/// transport takes (RustDDS's reassembly limit, `third_party/rustdds`'s fragment budget).
const MCAP_CHUNK_LIMIT: u64 = (1 << 30) + (1 << 20);

/// The most message bytes one MCAP file may unpack to: the bag is held in memory whole.
const MCAP_FILE_LIMIT: u64 = 4 << 30;

/// Checks the sizes an MCAP file's chunks declare before any is unpacked: a 10 KB file whose
/// zstd chunk unpacks to 300 MB took 600 MB to read, and nothing bounded a larger claim.
fn check_uncompressed_sizes(name: &str, bytes: &[u8]) -> Result<()> {
    // A file the linear scan cannot read is refused by the message stream, naming why.
    let Ok(records) = mcap::read::LinearReader::new(bytes) else {
        return Ok(());
    };
    let mut total = 0u64;
    for record in records {
        let size = match record {
            Ok(mcap::records::Record::Chunk { header, .. }) => {
                if header.uncompressed_size > MCAP_CHUNK_LIMIT {
                    return Err(Error::invalid(
                        name,
                        format!(
                            "a chunk declares {} bytes uncompressed, above the {MCAP_CHUNK_LIMIT} a chunk may hold",
                            header.uncompressed_size
                        ),
                    ));
                }
                header.uncompressed_size
            }
            Ok(mcap::records::Record::Message { data, .. }) => data.len() as u64,
            Ok(_) => 0,
            // mcap's message stream, unlike this scan, does not bound a record's length by the
            // file's: a length of 2^64 - 1 wraps and panics there (mcap 0.26). Refused here.
            Err(e) => return Err(Error::invalid(name, e)),
        };
        total += size;
        if total > MCAP_FILE_LIMIT {
            return Err(Error::invalid(
                name,
                format!("its messages unpack to more than {MCAP_FILE_LIMIT} bytes (held in memory whole)"),
            ));
        }
    }
    Ok(())
}
