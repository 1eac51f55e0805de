//! What each parameter means, for `ros2 param describe`: the comment above it in
//! config/default.yaml, which documents every parameter once (a test holds that each one
//! the nodes declare has a line there).

use std::collections::BTreeMap;

/// The parameters file the nodes document their parameters in.
const DEFAULT_YAML: &str = include_str!("../../config/default.yaml");

/// (section, dotted key under ros__parameters) -> the comment lines above it, joined.
fn docs() -> &'static BTreeMap<(String, String), String> {
    static DOCS: std::sync::OnceLock<BTreeMap<(String, String), String>> =
        std::sync::OnceLock::new();
    DOCS.get_or_init(|| parse(DEFAULT_YAML))
}

/// The description of `key` on node `node` (its own section first, then `/**`), if the file
/// documents it.
pub fn description(node: &str, key: &str) -> Option<&'static str> {
    let docs = docs();
    [node, "/**"]
        .iter()
        .find_map(|section| docs.get(&(section.to_string(), key.to_string())))
        .map(String::as_str)
}

/// Every documented (section, key) with its comment. Keys of nested maps are dotted, as ROS 2
/// flattens them (`costmap.inflation_radius`).
fn parse(text: &str) -> BTreeMap<(String, String), String> {
    let mut out = BTreeMap::new();
    let mut comment: Vec<&str> = Vec::new();
    // The keys of the maps the current line is inside, with their indentation.
    let mut path: Vec<(usize, &str)> = Vec::new();
    for line in text.lines() {
        let body = line.trim_start();
        let indent = line.len() - body.len();
        if body.is_empty() {
            comment.clear();
            continue;
        }
        if let Some(c) = body.strip_prefix('#') {
            comment.push(c.trim());
            continue;
        }
        let Some((key, value)) = body.split_once(':') else {
            comment.clear();
            continue;
        };
        while path.last().is_some_and(|&(i, _)| i >= indent) {
            path.pop();
        }
        let key = key.trim().trim_matches(|c| c == '"' || c == '\'');
        if value.trim().is_empty() {
            path.push((indent, key));
        } else if path.len() >= 2 && path[1].1 == "ros__parameters" {
            let mut dotted: Vec<&str> = path[2..].iter().map(|&(_, k)| k).collect();
            dotted.push(key);
            if !comment.is_empty() {
                out.insert((path[0].1.to_string(), dotted.join(".")), comment.join(" "));
            }
        }
        comment.clear();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_above_keys_describe_them_in_their_section_or_every_node() {
        let text = "# file\n/**:\n  ros__parameters:\n    # Seconds a request\n    # may take.\n    \
                    request_timeout_s: 60.0\nnode_a:\n  ros__parameters:\n    # Own.\n    x: 1\n    \
                    costmap:\n      # Metres.\n      inflation_radius: 0.55\n    undocumented: 2\n";
        let d = parse(text);
        let get = |s: &str, k: &str| d.get(&(s.to_string(), k.to_string())).cloned();
        assert_eq!(
            get("/**", "request_timeout_s").as_deref(),
            Some("Seconds a request may take.")
        );
        assert_eq!(get("node_a", "x").as_deref(), Some("Own."));
        assert_eq!(
            get("node_a", "costmap.inflation_radius").as_deref(),
            Some("Metres.")
        );
        assert_eq!(get("node_a", "undocumented"), None);
    }

    /// Every parameter a node declares (its effective parameters from config/default.yaml) has
    /// a description, so `ros2 param describe` never answers an empty one.
    #[test]
    fn every_parameter_of_every_node_is_described() {
        let params = crate::ros::ParamsFile::parse(DEFAULT_YAML).unwrap();
        let (mut missing, mut checked) = (Vec::new(), 0);
        for node in crate::nodes::NODE_NAMES {
            let effective = params.for_node("/", node, &[]);
            for (key, _) in crate::ros::context::flatten(&effective) {
                checked += 1;
                if description(node, &key).is_none() {
                    missing.push(format!("{node}: {key}"));
                }
            }
        }
        // Six nodes of a dozen or more parameters each, the shared ones included.
        assert!(checked > 60, "only {checked} parameters found");
        assert!(
            missing.is_empty(),
            "undocumented in config/default.yaml: {missing:?}"
        );
    }
}
