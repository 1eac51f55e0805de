//! The offered QoS that rosbag2 keeps per topic (`offered_qos_profiles`), so that playback
//! offers what the recorded publisher offered: a transient-local subscriber (a map) only
//! matches a transient-local publisher.

use ros2_client::qos::{Durability, History, WhenFull};
use ros2_client::QosProfile;
use serde_yaml::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopicQos {
    pub reliable: bool,
    pub transient_local: bool,
    pub depth: u32,
}

impl Default for TopicQos {
    /// rclcpp's default publisher QoS.
    fn default() -> Self {
        TopicQos {
            reliable: true,
            transient_local: false,
            depth: 10,
        }
    }
}

impl TopicQos {
    /// Latched topics (maps, graphs, results).
    pub fn latched() -> Self {
        TopicQos {
            reliable: true,
            transient_local: true,
            depth: 1,
        }
    }

    pub fn profile(&self) -> QosProfile {
        let p = QosProfile::publisher_default();
        let p = if self.reliable {
            p.reliability_reliable(WhenFull::DEFAULT)
        } else {
            p.reliability_best_effort()
        };
        p.durability(if self.transient_local {
            Durability::TransientLocal
        } else {
            Durability::Volatile
        })
        .history(History::KeepLast {
            depth: self.depth.max(1) as usize,
        })
    }

    /// rosbag2's YAML (Humble's numeric enums: reliability 1 reliable / 2 best effort,
    /// durability 1 transient local / 2 volatile, history 1 keep last); infinite durations as
    /// rmw writes them.
    pub fn to_yaml(&self) -> String {
        let inf = "\n    sec: 2147483647\n    nsec: 4294967295";
        format!(
            "- history: 1\n  depth: {}\n  reliability: {}\n  durability: {}\n  deadline:{inf}\n  lifespan:{inf}\n  liveliness: 1\n  liveliness_lease_duration:{inf}\n  avoid_ros_namespace_conventions: false",
            self.depth,
            if self.reliable { 1 } else { 2 },
            if self.transient_local { 1 } else { 2 },
        )
    }

    /// Reads the first profile of a rosbag2 QoS text (numbers, or the names newer rosbag2
    /// writes); what it cannot read stays at the default.
    pub fn from_yaml(text: &str) -> TopicQos {
        let mut q = TopicQos::default();
        let Ok(v) = serde_yaml::from_str::<Value>(text) else {
            return q;
        };
        let first = match &v {
            Value::Sequence(s) => s.first().cloned().unwrap_or(Value::Null),
            other => other.clone(),
        };
        let field = |k: &str| first.get(k).cloned().unwrap_or(Value::Null);
        let is = |v: Value, num: u64, name: &str| match v {
            Value::Number(n) => n.as_u64() == Some(num),
            Value::String(s) => s.eq_ignore_ascii_case(name),
            _ => false,
        };
        if is(field("reliability"), 2, "best_effort") {
            q.reliable = false;
        }
        if is(field("durability"), 1, "transient_local") {
            q.transient_local = true;
        }
        if let Some(d) = field("depth").as_u64() {
            q.depth = u32::try_from(d).unwrap_or(u32::MAX);
        }
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_reads_newer_names() {
        for q in [
            TopicQos::default(),
            TopicQos::latched(),
            TopicQos {
                reliable: false,
                transient_local: false,
                depth: 5,
            },
        ] {
            assert_eq!(TopicQos::from_yaml(&q.to_yaml()), q);
        }
        let jazzy = "- history: keep_last\n  depth: 1\n  reliability: reliable\n  durability: transient_local\n";
        assert_eq!(TopicQos::from_yaml(jazzy), TopicQos::latched());
        assert_eq!(TopicQos::from_yaml(""), TopicQos::default());
    }
}
