//! `metadata.yaml` of a rosbag2 bag directory: written as version 5 (which Humble and later
//! read), read in every version from 4 (Foxy) to 9 (Jazzy; tests/bags.rs reads one rosbags
//! wrote); fields a version adds that this package does not use are ignored.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Metadata {
    pub rosbag2_bagfile_information: BagInfo,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BagInfo {
    pub version: u32,
    pub storage_identifier: String,
    #[serde(default)]
    pub relative_file_paths: Vec<String>,
    pub duration: Nanoseconds,
    pub starting_time: SinceEpoch,
    pub message_count: u64,
    #[serde(default)]
    pub topics_with_message_count: Vec<TopicCount>,
    #[serde(default)]
    pub compression_format: String,
    #[serde(default)]
    pub compression_mode: String,
    #[serde(default)]
    pub files: Vec<FileInfo>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Nanoseconds {
    pub nanoseconds: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SinceEpoch {
    pub nanoseconds_since_epoch: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TopicCount {
    pub topic_metadata: TopicMetadata,
    pub message_count: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TopicMetadata {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: String,
    pub serialization_format: String,
    /// A YAML text in rosbag2 up to Jazzy; kept as whatever YAML it is.
    #[serde(default)]
    pub offered_qos_profiles: serde_yaml::Value,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileInfo {
    pub path: String,
    pub starting_time: SinceEpoch,
    pub duration: Nanoseconds,
    pub message_count: u64,
}

impl Metadata {
    pub fn read(dir: &Path) -> Result<Metadata> {
        let path = dir.join("metadata.yaml");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::invalid(path.display().to_string(), e))?;
        crate::yaml::from_str(&path.display().to_string(), &text)
    }

    pub fn write(&self, dir: &Path) -> Result<()> {
        let path = dir.join("metadata.yaml");
        let text = serde_yaml::to_string(self)
            .map_err(|e| Error::invalid(path.display().to_string(), e))?;
        std::fs::write(&path, text).map_err(|e| Error::invalid(path.display().to_string(), e))
    }
}
