//! A small reader of ROS 2 `.msg` / `.srv` definitions: field names and normalised types
//! (`std_msgs/Header`, `uint32[]`), constants skipped. Used to check the Rust mirrors against
//! the interface files field by field.

use crate::error::{Error, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDef {
    pub name: String,
    pub ty: String,
}

const PRIMITIVES: &[&str] = &[
    "bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32",
    "uint32", "int64", "uint64", "string", "wstring",
];

/// Fields of a `.msg` body; `package` resolves bare type names (e.g. `CellGraph`).
pub fn parse_msg(package: &str, text: &str) -> Result<Vec<FieldDef>> {
    let mut fields = Vec::new();
    for (lineno, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut parts = line.split_whitespace();
        let (Some(ty), Some(name)) = (parts.next(), parts.next()) else {
            return Err(Error::invalid(
                format!("line {}", lineno + 1),
                format!("'{raw}' is not 'type name'"),
            ));
        };
        if name.contains('=') || parts.next().is_some_and(|p| p.starts_with('=')) {
            continue; // a constant
        }
        fields.push(FieldDef {
            name: name.to_string(),
            ty: normalise(package, ty),
        });
    }
    Ok(fields)
}

/// The sections of a `ros2msg` text (an MCAP schema, a bag's definition): the top-level
/// definition (named `None`), then each nested type's after a line of 80 `=` and
/// `MSG: pkg/Type` (named by that type, as written). `what` names the text in errors.
pub fn ros2msg_sections<'a>(what: &str, text: &'a str) -> Result<Vec<(Option<&'a str>, &'a str)>> {
    const SEP: &str = SEPARATOR;
    let mut out = Vec::new();
    let mut rest = text;
    let mut name = None;
    loop {
        // A separator line ends the section before it.
        let at = rest.match_indices(SEP).map(|(i, _)| i).find(|&i| {
            (i == 0 || rest.as_bytes()[i - 1] == b'\n') && rest[i + SEP.len()..].starts_with('\n')
        });
        let Some(at) = at else {
            out.push((name, rest));
            return Ok(out);
        };
        out.push((name, &rest[..at]));
        let after = rest[at + SEP.len() + 1..].trim_start_matches('\n');
        let (head, body) = after.split_once('\n').unwrap_or((after, ""));
        let ty = head.trim().strip_prefix("MSG:").ok_or_else(|| {
            Error::invalid(
                what,
                format!("schema section '{head}' is not 'MSG: pkg/Type'"),
            )
        })?;
        name = Some(ty.trim());
        rest = body;
    }
}

/// The line between the sections of a `ros2msg` text.
pub const SEPARATOR: &str =
    "================================================================================";

/// A `.srv` (or `.action`) body split at its `---` lines: request and response (goal, result
/// and feedback).
pub fn srv_parts(text: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    for line in text.lines() {
        if line.trim() == "---" {
            parts.push(String::new());
        } else if let Some(part) = parts.last_mut() {
            part.push_str(line);
            part.push('\n');
        }
    }
    parts
}

/// The schema of a service event topic (`pkg/srv/Name_Event`) in the plain `ros2msg` form
/// when rosbag2 stored it in its `SRV:` form (Jazzy on: a separator, `SRV: pkg/srv/Name`, the
/// `.srv` text, then the `MSG:` sections it uses, without `service_msgs/ServiceEventInfo`);
/// None when `text` is not in that form. The event's layout is rosidl's: the info, then the
/// request and the response as sequences of at most one.
pub fn service_event_as_msg(event_type: &str, text: &str) -> Result<Option<String>> {
    let Some(rest) = text
        .strip_prefix(SEPARATOR)
        .and_then(|r| r.trim_start_matches('\n').strip_prefix("SRV:"))
    else {
        return Ok(None);
    };
    let (head, rest) = rest.split_once('\n').unwrap_or((rest, ""));
    let service = head.trim();
    let bad = |why: String| Error::invalid(event_type, why);
    let parts: Vec<&str> = service.split('/').collect();
    let (pkg, name) = match parts[..] {
        [pkg, "srv", name] | [pkg, name] => (pkg, name),
        _ => return Err(bad(format!("'SRV: {service}' is not pkg/srv/Name"))),
    };
    let sections = ros2msg_sections(event_type, rest)?;
    let halves = srv_parts(sections.first().map_or("", |(_, body)| body));
    let [request, response] = &halves[..] else {
        return Err(bad(format!(
            "the SRV: {service} text has {} parts, not request --- response",
            halves.len()
        )));
    };
    let (req, resp) = (
        format!("{pkg}/{name}_Request"),
        format!("{pkg}/{name}_Response"),
    );
    let mut out =
        format!("service_msgs/ServiceEventInfo info\n{req}[<=1] request\n{resp}[<=1] response\n");
    let mut section = |ty: &str, body: &str| {
        out.push_str(&format!("{SEPARATOR}\nMSG: {ty}\n{body}"));
        if !out.ends_with('\n') {
            out.push('\n');
        }
    };
    section(&req, request);
    section(&resp, response);
    section("service_msgs/ServiceEventInfo", SERVICE_EVENT_INFO);
    let named = |ty: &str| {
        sections
            .iter()
            .any(|(n, _)| n.map(|n| normalise("", n)) == Some(ty.into()))
    };
    if !named("builtin_interfaces/Time") {
        section("builtin_interfaces/Time", TIME);
    }
    for (name, body) in sections.iter().skip(1) {
        section(name.unwrap_or_default(), body);
    }
    Ok(Some(out))
}

const SERVICE_EVENT_INFO: &str =
    include_str!("../../interfaces/service_msgs/msg/ServiceEventInfo.msg");
const TIME: &str = include_str!("../../interfaces/builtin_interfaces/msg/Time.msg");

/// Request and response fields of a `.srv` body.
pub fn parse_srv(package: &str, text: &str) -> Result<(Vec<FieldDef>, Vec<FieldDef>)> {
    // The separator is a line of its own; an empty request leaves it on the first line.
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim() == "---")
        .ok_or_else(|| Error::invalid("srv", "missing the '---' separator"))?;
    let (req, resp) = (lines[..at].join("\n"), lines[at + 1..].join("\n"));
    Ok((parse_msg(package, &req)?, parse_msg(package, &resp)?))
}

fn normalise(package: &str, ty: &str) -> String {
    let (base, array) = match ty.find('[') {
        Some(i) => (&ty[..i], &ty[i..]),
        None => (ty, ""),
    };
    let base = if base == "char" {
        // rosidl maps `char` to uint8 (service_msgs/ServiceEventInfo.client_gid).
        "uint8".to_string()
    } else if PRIMITIVES.contains(&base.split("<=").next().unwrap_or(base)) {
        // A bounded string (`string<=256`) is a string.
        base.to_string()
    } else if base == "Header" {
        "std_msgs/Header".to_string()
    } else if let Some((pkg, rest)) = base.split_once('/') {
        format!("{pkg}/{}", rest.trim_start_matches("msg/"))
    } else {
        format!("{package}/{base}")
    };
    format!("{base}{array}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_fields_constants_and_types() {
        let f = parse_msg(
            "pkg",
            "# c\nuint8 A = 1\nuint8 B=2\nHeader header\ngeometry_msgs/msg/Pose[] poses # x\nCell c\nfloat32[4] q\nstring<=256 s\n",
        )
        .unwrap();
        let got: Vec<(&str, &str)> = f.iter().map(|f| (f.name.as_str(), f.ty.as_str())).collect();
        assert_eq!(
            got,
            vec![
                ("header", "std_msgs/Header"),
                ("poses", "geometry_msgs/Pose[]"),
                ("c", "pkg/Cell"),
                ("q", "float32[4]"),
                ("s", "string<=256"),
            ]
        );
    }

    #[test]
    fn splits_services() {
        let (a, b) = parse_srv("p", "int32 a\n---\nint32 b\nint32 c\n").unwrap();
        assert_eq!((a.len(), b.len()), (1, 2));
        assert!(parse_srv("p", "int32 a\n").is_err());
        assert!(parse_msg("p", "lonely\n").is_err());
    }
}
