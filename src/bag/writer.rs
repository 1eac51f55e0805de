//! Writes a rosbag2 bag directory: `<name>_0.mcap` (profile `ros2`, `ros2msg` schemas, `cdr`
//! messages, zstd chunks, as rosbag2's MCAP storage writes) and `metadata.yaml`.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use super::metadata::{
    BagInfo, FileInfo, Metadata, Nanoseconds, SinceEpoch, TopicCount, TopicMetadata,
};
use super::qos::TopicQos;
use super::schema;
use crate::error::{Error, Result};

struct Topic {
    channel: u16,
    ty: String,
    qos: TopicQos,
    count: u64,
}

pub struct BagWriter {
    dir: PathBuf,
    file: String,
    mcap: mcap::Writer<BufWriter<File>>,
    topics: BTreeMap<String, Topic>,
    first_ns: Option<u64>,
    last_ns: u64,
    count: u64,
    finished: bool,
}

fn mcap_err(what: &Path) -> impl Fn(mcap::McapError) -> Error + '_ {
    move |e| Error::invalid(what.display().to_string(), e)
}

impl BagWriter {
    /// Creates `dir` (it must not hold a bag already).
    pub fn create(dir: &Path) -> Result<BagWriter> {
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| !n.is_empty())
            .ok_or_else(|| {
                Error::invalid("bag", format!("'{}' has no folder name", dir.display()))
            })?
            .to_string();
        if dir.join("metadata.yaml").exists() {
            return Err(Error::invalid(
                dir.display().to_string(),
                "already holds a bag (metadata.yaml)",
            ));
        }
        std::fs::create_dir_all(dir).map_err(|e| Error::invalid(dir.display().to_string(), e))?;
        let file = format!("{name}_0.mcap");
        let path = dir.join(&file);
        let f = File::create(&path).map_err(|e| Error::invalid(path.display().to_string(), e))?;
        let mcap = mcap::WriteOptions::new()
            .profile("ros2")
            .library(concat!("gpu_planning ", env!("CARGO_PKG_VERSION")))
            .compression(Some(mcap::Compression::Zstd))
            .create(BufWriter::new(f))
            .map_err(mcap_err(&path))?;
        Ok(BagWriter {
            dir: dir.to_path_buf(),
            file,
            mcap,
            topics: BTreeMap::new(),
            first_ns: None,
            last_ns: 0,
            count: 0,
            finished: false,
        })
    }

    /// Declares a topic of a type this package knows (`nav_msgs/msg/Path`,
    /// `gpu_planning_msgs/srv/KNearest_Event`); its schema goes into the bag.
    pub fn add_topic(&mut self, topic: &str, ty: &str, qos: TopicQos) -> Result<()> {
        if let Some(t) = self.topics.get(topic) {
            if t.ty != ty {
                return Err(Error::invalid(
                    topic,
                    format!("declared as {} and as {ty}", t.ty),
                ));
            }
            return Ok(());
        }
        let path = self.dir.join(&self.file);
        let def = schema::definition(ty)?;
        let schema_id = self
            .mcap
            .add_schema(ty, "ros2msg", def.as_bytes())
            .map_err(mcap_err(&path))?;
        let meta = BTreeMap::from([("offered_qos_profiles".to_string(), qos.to_yaml())]);
        let channel = self
            .mcap
            .add_channel(schema_id, topic, "cdr", &meta)
            .map_err(mcap_err(&path))?;
        self.topics.insert(
            topic.to_string(),
            Topic {
                channel,
                ty: ty.to_string(),
                qos,
                count: 0,
            },
        );
        Ok(())
    }

    /// Appends one serialized message (encapsulation header included) at `time_ns`.
    pub fn write(&mut self, topic: &str, time_ns: u64, cdr: &[u8]) -> Result<()> {
        let path = self.dir.join(&self.file);
        if self.finished {
            return Err(Error::invalid(topic, "written after the bag was finished"));
        }
        let t = self
            .topics
            .get_mut(topic)
            .ok_or_else(|| Error::invalid(topic, "written before add_topic"))?;
        self.mcap
            .write_to_known_channel(
                &mcap::records::MessageHeader {
                    channel_id: t.channel,
                    sequence: u32::try_from(t.count).unwrap_or(u32::MAX),
                    log_time: time_ns,
                    publish_time: time_ns,
                },
                cdr,
            )
            .map_err(mcap_err(&path))?;
        t.count += 1;
        self.count += 1;
        self.first_ns = Some(self.first_ns.map_or(time_ns, |f| f.min(time_ns)));
        self.last_ns = self.last_ns.max(time_ns);
        Ok(())
    }

    /// The bag's one MCAP file (`<dir>/<name>_0.mcap`).
    pub fn file(&self) -> PathBuf {
        self.dir.join(&self.file)
    }

    /// Closes the MCAP file and writes `metadata.yaml`; later writes are errors.
    pub fn finish(&mut self) -> Result<PathBuf> {
        let path = self.file();
        if self.finished {
            return Ok(self.dir.clone());
        }
        self.finished = true;
        self.mcap.finish().map_err(mcap_err(&path))?;
        let start = self.first_ns.unwrap_or(0);
        let duration = self.last_ns.saturating_sub(start);
        let info = BagInfo {
            version: 5,
            storage_identifier: "mcap".into(),
            relative_file_paths: vec![self.file.clone()],
            duration: Nanoseconds {
                nanoseconds: duration,
            },
            starting_time: SinceEpoch {
                nanoseconds_since_epoch: start,
            },
            message_count: self.count,
            topics_with_message_count: self
                .topics
                .iter()
                .map(|(name, t)| TopicCount {
                    topic_metadata: TopicMetadata {
                        name: name.clone(),
                        ty: t.ty.clone(),
                        serialization_format: "cdr".into(),
                        offered_qos_profiles: serde_yaml::Value::String(t.qos.to_yaml()),
                    },
                    message_count: t.count,
                })
                .collect(),
            compression_format: String::new(),
            compression_mode: String::new(),
            files: vec![FileInfo {
                path: self.file.clone(),
                starting_time: SinceEpoch {
                    nanoseconds_since_epoch: start,
                },
                duration: Nanoseconds {
                    nanoseconds: duration,
                },
                message_count: self.count,
            }],
        };
        Metadata {
            rosbag2_bagfile_information: info,
        }
        .write(&self.dir)?;
        Ok(self.dir.clone())
    }
}
