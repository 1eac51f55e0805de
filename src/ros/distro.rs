//! The ROS 2 distribution this process speaks where the wire differs between Humble and Jazzy:
//! rmw_dds_common's Gid in `ros_discovery_info` (24 bytes through Humble, 16 from Iron on),
//! which `ros2 node list` and every rmw's graph cache decode, and nav2_msgs' action results.
//! One process speaks one distribution: `ros_distro` is a process-wide parameter.

use std::sync::OnceLock;

use serde_yaml::Value;

use crate::error::{Error, Result};
use crate::ros::params::ParamsFile;

/// The ROS 2 distribution whose layouts the process speaks where they differ (the process-wide
/// `ros_distro` parameter, [`crate::ros::distro`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RosDistro {
    Humble,
    #[default]
    Jazzy,
}

/// The parameter's name, wherever it is set (`/**`, a node's section, `-p`).
pub const PARAMETER: &str = "ros_distro";

static PROCESS: OnceLock<RosDistro> = OnceLock::new();

/// `ros_distro` from the parameter files and `-p` overrides (every place that sets it must
/// agree), else the `ROS_DISTRO` a sourced ROS 2 environment sets, else Jazzy.
pub fn from_parameters(file: &ParamsFile, overrides: &[(String, Value)]) -> Result<RosDistro> {
    let mut set: Vec<(String, RosDistro)> = Vec::new();
    for (section, value) in file.values_of(PARAMETER) {
        set.push((format!("{section}.{PARAMETER}"), parse(&section, &value)?));
    }
    for (key, value) in overrides {
        let name = key.split_once(':').map_or(key.as_str(), |(_, k)| k);
        if name == PARAMETER {
            set.push((format!("-p {key}"), parse(key, value)?));
        }
    }
    if let Some((first, d)) = set.first() {
        if let Some((other, e)) = set.iter().find(|(_, e)| e != d) {
            return Err(Error::invalid(
                PARAMETER,
                format!(
                    "{first} is {} but {other} is {}: one process speaks one distribution",
                    name(*d),
                    name(*e)
                ),
            ));
        }
        return Ok(*d);
    }
    Ok(from_environment(
        std::env::var("ROS_DISTRO").ok().as_deref(),
    ))
}

fn parse(place: &str, value: &Value) -> Result<RosDistro> {
    serde_yaml::from_value(value.clone()).map_err(|_| {
        Error::invalid(
            format!("{place}.{PARAMETER}"),
            format!("{value:?} is not humble or jazzy"),
        )
    })
}

/// `ROS_DISTRO` as ROS 2's setup scripts set it. Iron and later share Jazzy's Gid layout; a
/// distribution this package has no action results for speaks Jazzy's, said in one log line.
pub fn from_environment(ros_distro: Option<&str>) -> RosDistro {
    match ros_distro.map(str::trim) {
        Some("humble") => RosDistro::Humble,
        None | Some("") | Some("jazzy") => RosDistro::Jazzy,
        Some(other) => {
            tracing::warn!(
                "ROS_DISTRO is '{other}': speaking jazzy's layouts (set the {PARAMETER} \
                 parameter to humble or jazzy to choose)"
            );
            RosDistro::Jazzy
        }
    }
}

/// Makes `distro` this process's distribution (before its DDS participant exists). A process
/// that already speaks another one refuses: Gids on the wire cannot change under its peers.
pub fn adopt(distro: RosDistro) -> Result<()> {
    let spoken = *PROCESS.get_or_init(|| {
        ros2_client::gid::set_wire_distro(match distro {
            RosDistro::Humble => ros2_client::RosDistro::Humble,
            RosDistro::Jazzy => ros2_client::RosDistro::Jazzy,
        });
        distro
    });
    if spoken == distro {
        Ok(())
    } else {
        Err(Error::invalid(
            PARAMETER,
            format!(
                "{}: this process already speaks {} (one distribution per process)",
                name(distro),
                name(spoken)
            ),
        ))
    }
}

/// The process's distribution (Jazzy until a runtime adopts one).
pub fn current() -> RosDistro {
    PROCESS.get().copied().unwrap_or_default()
}

pub fn name(d: RosDistro) -> &'static str {
    match d {
        RosDistro::Humble => "humble",
        RosDistro::Jazzy => "jazzy",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> ParamsFile {
        ParamsFile::parse(text).unwrap()
    }

    #[test]
    fn parameters_agree_or_are_refused() {
        let f = file("/**:\n  ros__parameters:\n    ros_distro: humble\n");
        assert_eq!(from_parameters(&f, &[]).unwrap(), RosDistro::Humble);
        let o = [("lee_planner:ros_distro".to_string(), Value::from("jazzy"))];
        let e = from_parameters(&f, &o).unwrap_err().to_string();
        assert!(
            e.contains("/**.ros_distro is humble")
                && e.contains("-p lee_planner:ros_distro is jazzy"),
            "{e}"
        );
        let o = [("ros_distro".to_string(), Value::from("humble"))];
        assert_eq!(from_parameters(&f, &o).unwrap(), RosDistro::Humble);
    }

    #[test]
    fn a_bad_value_is_named() {
        let f = file("lee_planner:\n  ros__parameters:\n    ros_distro: iron\n");
        let e = from_parameters(&f, &[]).unwrap_err().to_string();
        assert!(
            e.contains("lee_planner.ros_distro") && e.contains("iron"),
            "{e}"
        );
    }

    #[test]
    fn the_environment_decides_when_no_parameter_does() {
        assert_eq!(from_environment(Some("humble")), RosDistro::Humble);
        assert_eq!(from_environment(Some("jazzy")), RosDistro::Jazzy);
        assert_eq!(from_environment(None), RosDistro::Jazzy);
        assert_eq!(from_environment(Some("kilted")), RosDistro::Jazzy);
    }
}
