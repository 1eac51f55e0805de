//! REP-2011/2016 type hashes (`RIHS01_<sha256>`), which ROS 2 from Iron on announces in each
//! endpoint's USER_DATA (`typehash=RIHS01_...;`); Jazzy's rmws log an error for every endpoint
//! without one, and `ros2 topic info -v` shows it as INVALID. The hash is SHA-256 of the type
//! description as JSON (Python's `json.dumps` layout): the type's fields, each with its field
//! type id, capacity, string capacity and nested type name, then every type it references,
//! sorted by name. Computed from `ros2msg` text (the MCAP schema form: the type's definition,
//! then each nested one after a line of `=` and `MSG: pkg/Type`).

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// One field as the type description has it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Field {
    name: String,
    type_id: u8,
    capacity: u64,
    string_capacity: u64,
    nested: String,
}

/// `pkg/Type` or `pkg/msg/Type` as the description names it: `pkg/msg/Type`.
fn full_name(name: &str) -> String {
    let parts: Vec<&str> = name.split('/').collect();
    match parts[..] {
        [pkg, ty] => format!("{pkg}/msg/{ty}"),
        _ => name.to_string(),
    }
}

fn primitive_id(base: &str) -> Option<u8> {
    Some(match base {
        "int8" => 2,
        // rosidl maps `char` to uint8 (service_msgs/ServiceEventInfo.client_gid), and so do
        // the installed type descriptions the published hashes come from.
        "uint8" | "char" => 3,
        "int16" => 4,
        "uint16" => 5,
        "int32" => 6,
        "uint32" => 7,
        "int64" => 8,
        "uint64" => 9,
        "float32" => 10,
        "float64" => 11,
        "bool" => 15,
        "byte" => 16,
        "string" => 17,
        "wstring" => 18,
        _ => return None,
    })
}

fn bad(what: &str, why: impl std::fmt::Display) -> Error {
    Error::invalid(format!("type hash of {what}"), why)
}

/// The fields of one definition; bare type names resolve in `package`.
fn fields(what: &str, package: &str, text: &str) -> Result<Vec<Field>> {
    let mut out = Vec::new();
    for raw in text.lines() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut parts = line.split_whitespace();
        let (Some(ty), Some(name)) = (parts.next(), parts.next()) else {
            return Err(bad(what, format!("'{raw}' is not 'type name'")));
        };
        if name.contains('=') || parts.next().is_some_and(|p| p.starts_with('=')) {
            continue; // a constant
        }
        let number = |s: &str| {
            s.parse::<u64>()
                .map_err(|_| bad(what, format!("'{ty}': bad bound")))
        };
        // type[N] (array), type[] (sequence), type[<=N] (bounded sequence).
        let (base, offset, capacity) = match ty.find('[') {
            None => (ty, 0, 0),
            Some(b) => {
                let inner = ty[b + 1..].trim_end_matches(']');
                match inner.strip_prefix("<=") {
                    Some(n) => (&ty[..b], 96, number(n)?),
                    None if inner.is_empty() => (&ty[..b], 144, 0),
                    None => (&ty[..b], 48, number(inner)?),
                }
            }
        };
        let (base, string_capacity) = match base.split_once("<=") {
            Some((s, n)) => (s, number(n)?),
            None => (base, 0),
        };
        let (type_id, nested) = match (primitive_id(base), string_capacity) {
            (Some(17), n) if n > 0 => (21, String::new()),
            (Some(18), n) if n > 0 => (22, String::new()),
            (Some(id), _) => (id, String::new()),
            (None, _) if base == "Header" => (1, "std_msgs/msg/Header".to_string()),
            (None, _) if base.contains('/') => (1, full_name(base)),
            (None, _) => (1, format!("{package}/msg/{base}")),
        };
        out.push(Field {
            name: name.to_string(),
            type_id: type_id + offset,
            capacity,
            string_capacity,
            nested,
        });
    }
    if out.is_empty() {
        // rosidl gives an empty message this one member.
        out.push(Field {
            name: "structure_needs_at_least_one_member".into(),
            type_id: 3,
            capacity: 0,
            string_capacity: 0,
            nested: String::new(),
        });
    }
    Ok(out)
}

fn json_struct(name: &str, fields: &[Field]) -> String {
    let fields: Vec<String> = fields
        .iter()
        .map(|f| {
            format!(
                "{{\"name\": {}, \"type\": {{\"type_id\": {}, \"capacity\": {}, \
                 \"string_capacity\": {}, \"nested_type_name\": {}}}}}",
                serde_json::Value::from(f.name.as_str()),
                f.type_id,
                f.capacity,
                f.string_capacity,
                serde_json::Value::from(f.nested.as_str())
            )
        })
        .collect();
    format!(
        "{{\"type_name\": {}, \"fields\": [{}]}}",
        serde_json::Value::from(name),
        fields.join(", ")
    )
}

/// The RIHS01 hash of `type_name` (`pkg/msg/Type`) from its `ros2msg` text.
pub fn rihs01(type_name: &str, ros2msg: &str) -> Result<String> {
    let top = full_name(&type_name.replace("/msg/", "/"));
    let mut defs: BTreeMap<String, &str> = BTreeMap::new();
    for (section, body) in crate::ros::idl::ros2msg_sections(type_name, ros2msg)? {
        defs.insert(section.map_or_else(|| top.clone(), full_name), body);
    }
    // Every type reachable from the top one, each parsed once.
    let mut structs: BTreeMap<String, Vec<Field>> = BTreeMap::new();
    let mut todo = vec![top.clone()];
    while let Some(name) = todo.pop() {
        if structs.contains_key(&name) {
            continue;
        }
        let body = defs
            .get(&name)
            .ok_or_else(|| bad(type_name, format!("no definition of {name}")))?;
        let package = name.split('/').next().unwrap_or("");
        let f = fields(type_name, package, body)?;
        todo.extend(
            f.iter()
                .filter(|f| !f.nested.is_empty())
                .map(|f| f.nested.clone()),
        );
        structs.insert(name, f);
    }
    let referenced: Vec<String> = structs
        .iter()
        .filter(|(n, _)| **n != top)
        .map(|(n, f)| json_struct(n, f))
        .collect();
    let json = format!(
        "{{\"type_description\": {}, \"referenced_type_descriptions\": [{}]}}",
        json_struct(&top, &structs[&top]),
        referenced.join(", ")
    );
    let digest = Sha256::digest(json.as_bytes());
    Ok(format!(
        "RIHS01_{}",
        digest
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    ))
}

/// Announces `hash` in the USER_DATA of every endpoint of `dds_type` created from now on, as
/// rmw_fastrtps and rmw_cyclonedds do (`typehash=RIHS01_...;`).
pub fn announce(dds_type: &str, hash: &str) {
    ros2_client::dds::rustdds::discovery::set_user_data_for_type(
        dds_type,
        format!("typehash={hash};").as_bytes(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn std_msgs_string_has_jazzy_published_hash() {
        // The hash in Jazzy's std_msgs/msg/String.json (and ros2-client's table).
        assert_eq!(
            rihs01("std_msgs/msg/String", "string data\n").unwrap(),
            "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"
        );
    }

    #[test]
    fn bounds_and_nesting_change_the_hash() {
        let a = rihs01("p/msg/A", "uint8[] x\n").unwrap();
        let b = rihs01("p/msg/A", "uint8[<=4] x\n").unwrap();
        let c = rihs01("p/msg/A", "uint8[4] x\n").unwrap();
        assert!(a != b && b != c && a != c);
        let nested = "B b\n================================================================================\nMSG: p/B\nint32 v\n";
        assert!(rihs01("p/msg/A", nested).unwrap().starts_with("RIHS01_"));
        assert!(rihs01("p/msg/A", "B b\n").is_err()); // B undefined
    }
}
