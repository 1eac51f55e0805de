//! The QoS profiles the nodes use, named by what flows through them.

use ros2_client::qos::{Durability, History, WhenFull};
use ros2_client::QosProfile;

/// Maps and graphs: reliable + transient local, keep last 1, so a node that starts after the
/// map server still gets the map (matches map_server's latched publisher).
pub fn map() -> QosProfile {
    QosProfile::publisher_default()
        .reliability_reliable(WhenFull::DEFAULT)
        .durability(Durability::TransientLocal)
        .history(History::KeepLast { depth: 1 })
}

/// Sensor streams (clouds, images, queries): best effort, keep last 5, like rclcpp's
/// SensorDataQoS; a reliable publisher still matches a best-effort subscription.
pub fn sensor() -> QosProfile {
    QosProfile::subscription_default()
        .reliability_best_effort()
        .durability(Durability::Volatile)
        .history(History::KeepLast { depth: 5 })
}

/// Results we publish (paths, graphs, neighbours, status): reliable, transient local, keep
/// last 1, so late subscribers (RViz) see the latest result.
pub fn result() -> QosProfile {
    map()
}

/// Services: the rmw default (reliable, volatile, keep last 10). Writers keep every sample
/// a reader has not acknowledged whatever the depth (third_party/rustdds), so the depth only
/// bounds how many acknowledged ones stay in memory.
pub fn service() -> QosProfile {
    QosProfile::publisher_default()
        .reliability_reliable(WhenFull::DEFAULT)
        .durability(Durability::Volatile)
        .history(History::KeepLast { depth: 10 })
}

/// What a service reader (requests at a server, responses at a client) holds before it is
/// taken: deep, so that a burst is never cut to the last 10. Requests are taken as they arrive
/// and answered or refused (`max_pending_requests`), so the depth is only the lag of the
/// taking loop behind a burst: 256 lost a third of 3000 requests sent at once by one client
/// (`tests/nodes/bursts.rs`), 4096 none. A taken request is released at once
/// (third_party/rustdds), so the depth costs memory only while a burst is behind, and a
/// request the depth still cannot hold is logged, never lost in silence. History depth is not
/// part of QoS matching, so rmw peers with the default still match.
pub fn service_inbox() -> QosProfile {
    service().history(History::KeepLast { depth: 4096 })
}

/// `/tf`: tf2_ros's listener QoS (reliable, volatile, keep last 100).
pub fn tf() -> QosProfile {
    QosProfile::subscription_default()
        .reliability_reliable(WhenFull::DEFAULT)
        .durability(Durability::Volatile)
        .history(History::KeepLast { depth: 100 })
}

/// `/tf_static`: tf2_ros's static QoS (reliable, transient local, keep last 100), so a node
/// that starts late still gets every static transform.
pub fn tf_static() -> QosProfile {
    tf().durability(Durability::TransientLocal)
}
