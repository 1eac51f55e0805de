//! ROS name resolution: `~/x` (private), `x` (relative to the namespace), `/x` (absolute), then
//! remap rules on the fully qualified name, as rcl does.

use crate::error::{Error, Result};
use crate::ros::args::Remap;

/// Fully qualified name of `name` for node `node` in namespace `ns` (which starts with '/').
pub fn expand(name: &str, ns: &str, node: &str) -> Result<String> {
    let ns = ns.trim_end_matches('/');
    let fq = if let Some(private) = name.strip_prefix("~/") {
        format!("{ns}/{node}/{private}")
    } else if name == "~" {
        format!("{ns}/{node}")
    } else if name.starts_with('/') {
        name.to_string()
    } else {
        format!("{ns}/{name}")
    };
    validate(&fq)?;
    Ok(fq)
}

/// Expands `name`, then applies the first matching remap rule (later rules do not chain).
pub fn resolve(name: &str, ns: &str, node: &str, remaps: &[Remap]) -> Result<String> {
    let fq = expand(name, ns, node)?;
    for r in remaps {
        if r.from.starts_with("__") || r.node.as_deref().is_some_and(|n| n != node) {
            continue;
        }
        if expand(&r.from, ns, node)? == fq {
            return expand(&r.to, ns, node);
        }
    }
    Ok(fq)
}

/// Splits a fully qualified name into the `ros2-client` form.
pub fn to_ros2_name(fq: &str) -> Result<ros2_client::Name> {
    let (ns, base) = fq
        .rsplit_once('/')
        .ok_or_else(|| Error::invalid("name", format!("'{fq}' is not fully qualified")))?;
    let ns = if ns.is_empty() { "/" } else { ns };
    ros2_client::Name::new(ns, base).map_err(|e| Error::invalid("name", format!("'{fq}': {e:?}")))
}

/// A topic name given on the command line (absolute, or relative to `/`), checked before
/// anything is made for it; errors name `what`.
pub fn check_topic(what: &str, name: &str) -> Result<String> {
    if name.is_empty() {
        return Err(Error::invalid(what, "the topic name is empty"));
    }
    let fq = if name.starts_with('/') {
        name.to_string()
    } else {
        format!("/{name}")
    };
    validate(&fq).map_err(|_| Error::invalid(what, format!("'{name}' is not a valid ROS name")))?;
    Ok(fq)
}

fn validate(fq: &str) -> Result<()> {
    let ok_token = |t: &str| {
        !t.is_empty()
            && !t.starts_with(|c: char| c.is_ascii_digit())
            && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !t.contains("__")
    };
    if fq.len() < 2 || !fq[1..].split('/').all(ok_token) {
        return Err(Error::invalid(
            "name",
            format!("'{fq}' is not a valid ROS name"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remap(from: &str, to: &str) -> Remap {
        Remap {
            node: None,
            from: from.into(),
            to: to.into(),
        }
    }

    #[test]
    fn expands_private_relative_and_absolute_names() {
        assert_eq!(expand("~/status", "/", "gp").unwrap(), "/gp/status");
        assert_eq!(
            expand("~/status", "/robot", "gp").unwrap(),
            "/robot/gp/status"
        );
        assert_eq!(expand("map", "/robot", "gp").unwrap(), "/robot/map");
        assert_eq!(expand("/map", "/robot", "gp").unwrap(), "/map");
        assert!(expand("bad name", "/", "gp").is_err());
        assert!(expand("a//b", "/", "gp").is_err());
    }

    #[test]
    fn remaps_match_on_fully_qualified_names() {
        let rules = [remap("map", "/global_map"), remap("~/status", "health")];
        assert_eq!(resolve("map", "/r", "gp", &rules).unwrap(), "/global_map");
        assert_eq!(
            resolve("/r/map", "/r", "gp", &rules).unwrap(),
            "/global_map"
        );
        assert_eq!(
            resolve("~/status", "/r", "gp", &rules).unwrap(),
            "/r/health"
        );
        assert_eq!(resolve("other", "/r", "gp", &rules).unwrap(), "/r/other");
    }

    #[test]
    fn converts_to_ros2_client_names() {
        let n = to_ros2_name("/robot/gp/status").unwrap();
        assert_eq!(n.to_string(), "/robot/gp/status");
        assert_eq!(to_ros2_name("/map").unwrap().to_string(), "/map");
    }
}
