//! ROS 2 parameter files (`node: ros__parameters: {...}`), the same files `ros2 launch` passes
//! with `--params-file`. Sections apply in this order, later winning: `/**`, then the node's
//! base name (`name` or `/**/name`), then its fully qualified name (`/ns/name`), then `-p`
//! overrides from the command line. Nested maps are kept (they are dotted names in ROS).

use std::path::Path;

use serde_yaml::{Mapping, Value};

use crate::error::{Error, Result};

#[derive(Debug, Clone, Default)]
pub struct ParamsFile {
    sections: Vec<(String, Mapping)>,
}

impl ParamsFile {
    pub fn load(path: &Path) -> Result<ParamsFile> {
        let text =
            std::fs::read_to_string(path).map_err(|e| Error::io(path.display().to_string(), e))?;
        Self::parse(&text).map_err(|e| match e {
            Error::InvalidInput { field, reason } => {
                Error::invalid(format!("{}: {field}", path.display()), reason)
            }
            other => other,
        })
    }

    pub fn parse(text: &str) -> Result<ParamsFile> {
        let root: Value = crate::yaml::from_str("params", text)?;
        let mut sections = Vec::new();
        let map = match root {
            Value::Null => return Ok(ParamsFile::default()),
            Value::Mapping(m) => m,
            _ => {
                return Err(Error::invalid(
                    "params",
                    "the top level must be a mapping of nodes",
                ))
            }
        };
        for (key, body) in map {
            let key = key
                .as_str()
                .ok_or_else(|| {
                    Error::invalid("params", format!("node key {key:?} is not a string"))
                })?
                .to_string();
            let params = body
                .get("ros__parameters")
                .and_then(Value::as_mapping)
                .ok_or_else(|| Error::invalid(&key, "missing 'ros__parameters' mapping"))?
                .clone();
            sections.push((key, params));
        }
        Ok(ParamsFile { sections })
    }

    /// Later files override earlier ones, section by section, as rcl applies several files.
    pub fn extend(&mut self, other: ParamsFile) {
        self.sections.extend(other.sections);
    }

    /// The node keys present, for checks against the nodes the code knows.
    pub fn node_keys(&self) -> impl Iterator<Item = &str> {
        self.sections.iter().map(|(k, _)| k.as_str())
    }

    /// Every section that sets the top-level parameter `key`, with its value, in file order.
    pub fn values_of(&self, key: &str) -> Vec<(String, Value)> {
        self.sections
            .iter()
            .filter_map(|(section, m)| m.get(key).map(|v| (section.clone(), v.clone())))
            .collect()
    }

    /// Merged parameters of the node `name` in namespace `ns`.
    pub fn for_node(&self, ns: &str, name: &str, overrides: &[(String, Value)]) -> Mapping {
        let ns = ns.trim_end_matches('/');
        let fq = format!("{ns}/{name}");
        let rank = |key: &str| -> Option<u8> {
            let key_abs = if key.starts_with('/') {
                key.to_string()
            } else {
                format!("/{key}")
            };
            match key {
                "/**" | "**" => Some(0),
                _ if key == name || key == format!("/**/{name}") => Some(1),
                _ if key_abs == fq => Some(2),
                _ => None,
            }
        };
        let mut ranked: Vec<(u8, usize)> = self
            .sections
            .iter()
            .enumerate()
            .filter_map(|(i, (k, _))| rank(k).map(|r| (r, i)))
            .collect();
        ranked.sort();
        let mut merged = Mapping::new();
        for (_, i) in ranked {
            merge(&mut merged, &self.sections[i].1);
        }
        for (key, v) in overrides {
            // `node:name` limits an override to one node; a bare name applies to all of them.
            let dotted = match key.split_once(':') {
                Some((node, _)) if node != name => continue,
                Some((_, dotted)) => dotted,
                None => key.as_str(),
            };
            set_dotted(&mut merged, dotted, v.clone());
        }
        merged
    }
}

fn merge(into: &mut Mapping, from: &Mapping) {
    for (k, v) in from {
        match (into.get_mut(k), v) {
            (Some(Value::Mapping(a)), Value::Mapping(b)) => merge(a, b),
            _ => {
                into.insert(k.clone(), v.clone());
            }
        }
    }
}

fn set_dotted(into: &mut Mapping, dotted: &str, v: Value) {
    match dotted.split_once('.') {
        None => {
            into.insert(Value::from(dotted), v);
        }
        Some((head, tail)) => {
            let entry = into
                .entry(Value::from(head))
                .or_insert_with(|| Value::Mapping(Mapping::new()));
            if !entry.is_mapping() {
                *entry = Value::Mapping(Mapping::new());
            }
            if let Value::Mapping(m) = entry {
                set_dotted(m, tail, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"
/**:
  ros__parameters:
    backend: auto
    block: { x: 32, y: 8 }
gpu_planning:
  ros__parameters:
    backend: cpu
/robot/gpu_planning:
  ros__parameters:
    status_period_s: 2.0
other:
  ros__parameters:
    backend: cuda
"#;

    #[test]
    fn merges_wildcard_name_and_fully_qualified_sections() {
        let f = ParamsFile::parse(FILE).unwrap();
        let m = f.for_node(
            "/robot",
            "gpu_planning",
            &[("block.y".into(), Value::from(4))],
        );
        assert_eq!(m.get("backend"), Some(&Value::from("cpu")));
        assert_eq!(m.get("status_period_s"), Some(&Value::from(2.0)));
        let block = m.get("block").and_then(Value::as_mapping).unwrap();
        assert_eq!(block.get("x"), Some(&Value::from(32)));
        assert_eq!(block.get("y"), Some(&Value::from(4)));
        let scoped = [("other:backend".to_string(), Value::from("cpu"))];
        assert_eq!(
            f.for_node("/", "other", &scoped).get("backend"),
            Some(&Value::from("cpu"))
        );
        assert_eq!(
            f.for_node("/", "gpu_planning", &scoped).get("backend"),
            Some(&Value::from("cpu"))
        );
        let root = f.for_node("/", "gpu_planning", &[]);
        assert_eq!(root.get("status_period_s"), None);
    }

    #[test]
    fn rejects_files_without_ros_parameters() {
        assert!(ParamsFile::parse("node: {backend: cpu}").is_err());
        assert!(ParamsFile::parse("[1, 2]").is_err());
        assert!(ParamsFile::parse("").unwrap().node_keys().next().is_none());
    }
}
