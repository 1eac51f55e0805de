//! rosbag2's sqlite3 storage (`.db3`), the default of Humble: a `topics` table (name, type,
//! serialization format and, from Foxy on, the offered QoS as YAML), a `messages` table
//! (topic id, receive time in ns, CDR bytes) and, from Iron on, `message_definitions` (each
//! type's `ros2msg` text, as an MCAP schema holds it). Opened read-only.

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use super::qos::TopicQos;
use super::reader::{Bag, TopicInfo};
use crate::error::{Error, Result};

impl Bag {
    pub(super) fn read_sqlite3(&mut self, file: &Path) -> Result<()> {
        let name = file.display().to_string();
        let bad = |e: rusqlite::Error| Error::invalid(&name, e);
        let db =
            Connection::open_with_flags(file, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(bad)?;
        // rosbag2 writes tables. A view is a query of the file's author: a recursive one
        // never ends (or sorts onto the disk without bound), so only tables are read.
        let real = tables(&db).map_err(bad)?;
        for t in ["topics", "messages"] {
            if !real.iter().any(|r| r == t) {
                return Err(Error::invalid(
                    &name,
                    format!("'{t}' is not a table of this file (rosbag2's sqlite3 bags have one)"),
                ));
            }
        }
        let has_qos = columns(&db, "topics")
            .map_err(bad)?
            .iter()
            .any(|c| c == "offered_qos_profiles");
        let definitions = if real.iter().any(|t| t == "message_definitions") {
            let mut q = db
                .prepare("SELECT topic_type, encoding, encoded_message_definition FROM message_definitions")
                .map_err(bad)?;
            let rows = q
                .query_map([], |r| Ok((r.get::<_, String>(0)?, (r.get(1)?, r.get(2)?))))
                .map_err(bad)?;
            rows.collect::<rusqlite::Result<BTreeMap<String, (String, String)>>>()
                .map_err(bad)?
        } else {
            BTreeMap::new()
        };
        let qos_column = if has_qos {
            "offered_qos_profiles"
        } else {
            "''"
        };
        let mut q = db
            .prepare(&format!(
                "SELECT id, name, type, serialization_format, {qos_column} FROM topics"
            ))
            .map_err(bad)?;
        let mut topics = BTreeMap::new();
        let rows = q
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                ))
            })
            .map_err(bad)?;
        for row in rows {
            let (id, topic, ty, format, qos) = row.map_err(bad)?;
            if format != "cdr" {
                return Err(Error::invalid(
                    format!("{name}: {topic}"),
                    format!("serialization format '{format}' is not cdr"),
                ));
            }
            // rosbag2 leaves the definition empty for a type it had none of.
            let schema = definitions
                .get(&ty)
                .filter(|(encoding, text)| !encoding.is_empty() && !text.is_empty())
                .cloned();
            let info = TopicInfo {
                name: topic,
                ty,
                qos: TopicQos::from_yaml(&qos),
                count: 0,
                schema,
            };
            topics.insert(id, info);
        }
        let mut q = db
            .prepare("SELECT topic_id, timestamp, data FROM messages ORDER BY timestamp, id")
            .map_err(bad)?;
        let rows = q
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, Vec<u8>>(2)?,
                ))
            })
            .map_err(bad)?;
        for row in rows {
            let (id, time, data) = row.map_err(bad)?;
            let topic = topics.get(&id).ok_or_else(|| {
                Error::invalid(
                    &name,
                    format!("a message names topic id {id}, which is not in topics"),
                )
            })?;
            let time = u64::try_from(time).map_err(|_| {
                Error::invalid(&name, format!("message time {time} ns is negative"))
            })?;
            self.push(&name, &topic.name, &topic.ty, || topic.clone(), time, data)?;
        }
        Ok(())
    }
}

fn tables(db: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut q = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
    let rows = q.query_map([], |r| r.get(0))?;
    rows.collect()
}

fn columns(db: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut q = db.prepare(&format!("PRAGMA table_info({table})"))?;
    let rows = q.query_map([], |r| r.get(1))?;
    rows.collect()
}
