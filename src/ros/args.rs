//! The `--ros-args` part of a command line, as `ros2 run` and `ros2 launch` pass it:
//! `--params-file F`, `-r [node:]from:=to` (with `__ns` and `__node`), `-p name:=value`,
//! `--log-level LEVEL`, `-e/--enclave /ENCLAVE` (SROS2, [`crate::ros::security`]).

use std::path::PathBuf;

use crate::error::{Error, Result};

#[derive(Debug, Clone, PartialEq)]
pub struct Remap {
    /// Applies only to this node (base name) when set.
    pub node: Option<String>,
    pub from: String,
    pub to: String,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct RosArgs {
    pub params_files: Vec<PathBuf>,
    pub remaps: Vec<Remap>,
    /// `-p name:=value` (every node) or `-p node:name:=value` (one node), value parsed as YAML.
    pub params: Vec<(String, serde_yaml::Value)>,
    pub log_level: Option<String>,
    /// `--enclave` / `-e`: the SROS2 enclave whose keystore entry this process uses.
    pub enclave: Option<String>,
}

impl RosArgs {
    /// Parses everything between `--ros-args` and an optional `--`; arguments outside such a
    /// section are returned untouched for the caller.
    pub fn parse<S: AsRef<str>>(argv: &[S]) -> Result<(RosArgs, Vec<String>)> {
        let mut out = RosArgs::default();
        let mut rest = Vec::new();
        let mut in_ros = false;
        let mut it = argv.iter().map(|s| s.as_ref());
        while let Some(a) = it.next() {
            if !in_ros {
                if a == "--ros-args" {
                    in_ros = true;
                } else {
                    rest.push(a.to_string());
                }
                continue;
            }
            let mut value = |flag: &str| {
                it.next()
                    .map(str::to_string)
                    .ok_or_else(|| Error::invalid("--ros-args", format!("{flag} needs a value")))
            };
            match a {
                "--" => in_ros = false,
                "--ros-args" => {}
                "--params-file" => out.params_files.push(PathBuf::from(value(a)?)),
                "-r" | "--remap" => out.remaps.push(parse_remap(&value(a)?)?),
                "-p" | "--param" => {
                    let v = value(a)?;
                    let (name, val) = v.split_once(":=").ok_or_else(|| {
                        Error::invalid("--ros-args -p", format!("'{v}' is not name:=value"))
                    })?;
                    let val: serde_yaml::Value = serde_yaml::from_str(val).map_err(|e| {
                        Error::invalid(format!("--ros-args -p {name}"), format!("'{val}': {e}"))
                    })?;
                    out.params.push((name.to_string(), val));
                }
                "--log-level" => out.log_level = Some(value(a)?),
                "-e" | "--enclave" => out.enclave = Some(value(a)?),
                // Accepted for compatibility with launch files; rosout is always enabled here.
                "--enable-rosout-logs"
                | "--disable-rosout-logs"
                | "--enable-stdout-logs"
                | "--disable-stdout-logs"
                | "--disable-external-lib-logs" => {}
                other => {
                    return Err(Error::invalid(
                        "--ros-args",
                        format!("unsupported argument '{other}'"),
                    ))
                }
            }
        }
        Ok((out, rest))
    }

    /// The node's namespace from `__ns:=`, or `/`.
    pub fn namespace(&self, node: &str) -> String {
        self.special(node, "__ns").unwrap_or_else(|| "/".into())
    }

    /// The node's name from `__node:=` (or `__name:=`), or `default`.
    pub fn node_name(&self, default: &str) -> String {
        self.special(default, "__node")
            .or_else(|| self.special(default, "__name"))
            .unwrap_or_else(|| default.into())
    }

    fn special(&self, node: &str, key: &str) -> Option<String> {
        self.remaps
            .iter()
            .rev()
            .find(|r| r.from == key && r.node.as_deref().is_none_or(|n| n == node))
            .map(|r| r.to.clone())
    }
}

fn parse_remap(s: &str) -> Result<Remap> {
    let (lhs, to) = s
        .split_once(":=")
        .ok_or_else(|| Error::invalid("--ros-args -r", format!("'{s}' is not from:=to")))?;
    // `node:from` limits a rule to one node; `from` itself never contains ':'.
    let (node, from) = match lhs.split_once(':') {
        Some((n, f)) => (Some(n.to_string()), f.to_string()),
        None => (None, lhs.to_string()),
    };
    if from.is_empty() || to.is_empty() {
        return Err(Error::invalid(
            "--ros-args -r",
            format!("'{s}' has an empty side"),
        ));
    }
    Ok(Remap {
        node,
        from,
        to: to.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_launch_style_arguments() {
        let argv = [
            "run",
            "--ros-args",
            "-r",
            "__node:=planner",
            "-r",
            "__ns:=/robot1",
            "--params-file",
            "/tmp/p.yaml",
            "-r",
            "map:=/global_map",
            "-p",
            "backend:=cpu",
            "-p",
            "status_period_s:=0.5",
            "--enclave",
            "/robot1/planner",
            "--",
            "tail",
        ];
        let (a, rest) = RosArgs::parse(&argv).unwrap();
        assert_eq!(rest, vec!["run", "tail"]);
        assert_eq!(a.node_name("gpu_planning"), "planner");
        assert_eq!(a.namespace("gpu_planning"), "/robot1");
        assert_eq!(a.params_files, vec![PathBuf::from("/tmp/p.yaml")]);
        assert_eq!(a.remaps[2].from, "map");
        assert_eq!(a.params[1].1, serde_yaml::Value::from(0.5));
        assert_eq!(a.enclave.as_deref(), Some("/robot1/planner"));
        let (e, _) = RosArgs::parse(&["--ros-args", "-e", "/x"]).unwrap();
        assert_eq!(e.enclave.as_deref(), Some("/x"));
    }

    #[test]
    fn rejects_malformed_arguments() {
        assert!(RosArgs::parse(&["--ros-args", "-r", "nodelimiter"]).is_err());
        assert!(RosArgs::parse(&["--ros-args", "-p", "x"]).is_err());
        assert!(RosArgs::parse(&["--ros-args", "--params-file"]).is_err());
        assert!(RosArgs::parse(&["--ros-args", "--bogus"]).is_err());
        assert!(RosArgs::parse(&["--ros-args", "--enclave"]).is_err());
    }

    #[test]
    fn node_specific_remap_applies_to_its_node_only() {
        let (a, _) = RosArgs::parse(&["--ros-args", "-r", "other:__ns:=/x"]).unwrap();
        assert_eq!(a.namespace("gpu_planning"), "/");
        assert_eq!(a.namespace("other"), "/x");
    }
}
