//! What every node's parameters share: the service keys ([`ServiceParams`], usually under
//! `/**`) split from a node's own, the defaults a node declares, and the typed reading of a
//! node's merged `ros__parameters` (unknown keys refused). Each node's own struct sits beside
//! the node (`src/nodes/<node>/params.rs`).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::ros::live_params::{Param, Range};

/// How a node serves its services: deadlines, queueing and the CPU fallback. The same keys
/// apply to every node, so they usually sit under `/**`; they are taken out of a node's
/// parameters before its own struct is read ([`split_service_params`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServiceParams {
    /// A request not answered within this many seconds (queueing included) is answered with a
    /// deadline error; its computation is abandoned. 0: no deadline.
    pub request_timeout_s: f64,
    /// Requests of one service computed at the same time; more wait their turn.
    pub max_concurrent_requests: u32,
    /// Requests of one service accepted but not yet answered; above it a request is answered
    /// at once with an overload error instead of queueing without bound.
    pub max_pending_requests: u32,
    /// When the device runs out of memory, compute on the CPU instead of failing.
    pub cpu_fallback: bool,
}

/// The keys of [`ServiceParams`].
pub const SERVICE_KEYS: [&str; 4] = [
    "request_timeout_s",
    "max_concurrent_requests",
    "max_pending_requests",
    "cpu_fallback",
];

impl Default for ServiceParams {
    fn default() -> Self {
        ServiceParams {
            request_timeout_s: 60.0,
            max_concurrent_requests: 4,
            max_pending_requests: 1000,
            cpu_fallback: true,
        }
    }
}

impl ServiceParams {
    pub fn validate(&self) -> Result<()> {
        crate::seconds::duration("request_timeout_s", self.request_timeout_s)?;
        if !(1..=1024).contains(&self.max_concurrent_requests) {
            return Err(Error::invalid(
                "max_concurrent_requests",
                format!("{} is not in 1..=1024", self.max_concurrent_requests),
            ));
        }
        if self.max_pending_requests < self.max_concurrent_requests {
            return Err(Error::invalid(
                "max_pending_requests",
                format!(
                    "{} is below max_concurrent_requests {}",
                    self.max_pending_requests, self.max_concurrent_requests
                ),
            ));
        }
        Ok(())
    }

    /// The deadline, if any (none for 0, and for a value [`Self::validate`] refuses).
    pub fn deadline(&self) -> Option<std::time::Duration> {
        crate::seconds::duration("request_timeout_s", self.request_timeout_s)
            .ok()
            .filter(|d| !d.is_zero())
    }
}

/// Splits a node's merged parameters into its own keys and the [`SERVICE_KEYS`].
pub fn split_service_params(
    all: &serde_yaml::Mapping,
) -> (serde_yaml::Mapping, serde_yaml::Mapping) {
    let mut own = serde_yaml::Mapping::new();
    let mut service = serde_yaml::Mapping::new();
    for (k, v) in all {
        let is_service = k.as_str().is_some_and(|k| SERVICE_KEYS.contains(&k));
        if is_service {
            service.insert(k.clone(), v.clone());
        } else {
            own.insert(k.clone(), v.clone());
        }
    }
    (own, service)
}

/// The ranges of [`ServiceParams`], on every node; `ros2 param set` changes two of them at run
/// time: the next request is timed and admitted by the new values (`max_concurrent_requests`
/// sizes a node's workers at start).
pub const SERVICE_PARAMS: [Param; 3] = [
    Param::dynamic(
        "request_timeout_s",
        Range::Float(0.0, crate::seconds::MAX_SECONDS),
    ),
    Param::dynamic("max_pending_requests", Range::Integer(1, u32::MAX as i64)),
    Param::fixed("max_concurrent_requests", Range::Integer(1, 1024)),
];

impl crate::ros::live_params::NodeParams for ServiceParams {
    fn parse(all: &serde_yaml::Mapping) -> Result<Self> {
        service_params(all)
    }
}

/// The parameters node struct `T` runs with when no file sets them (with `served`, the
/// service keys' too), nested as in a params file: what a node declares, as an rclcpp node
/// declares every parameter with its default, so `ros2 param list` shows them all.
pub fn declared_defaults<T: Serialize + Default>(served: bool) -> serde_yaml::Mapping {
    let mut out = match serde_yaml::to_value(T::default()) {
        Ok(serde_yaml::Value::Mapping(m)) => m,
        _ => serde_yaml::Mapping::new(),
    };
    if served {
        if let Ok(serde_yaml::Value::Mapping(m)) = serde_yaml::to_value(ServiceParams::default()) {
            out.extend(m);
        }
    }
    out
}

/// A node's own parameter struct from its merged parameters (the service keys left out).
pub fn node_params<T: serde::de::DeserializeOwned>(all: &serde_yaml::Mapping) -> Result<T> {
    let (mut own, _) = split_service_params(all);
    // Process-wide: the runtime reads it before any node exists.
    own.remove(crate::ros::distro::PARAMETER);
    serde_yaml::from_value(serde_yaml::Value::Mapping(own)).map_err(|e| Error::invalid("", e))
}

/// The [`ServiceParams`] from a node's merged parameters, validated.
pub fn service_params(all: &serde_yaml::Mapping) -> Result<ServiceParams> {
    let (_, service) = split_service_params(all);
    let p: ServiceParams = serde_yaml::from_value(serde_yaml::Value::Mapping(service))
        .map_err(|e| Error::invalid("", e))?;
    p.validate()?;
    Ok(p)
}
