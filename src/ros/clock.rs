//! The node clock, as rclcpp has it: the system clock, or with the `use_sim_time` parameter
//! the latest time received on `/clock` (rosgraph_msgs/Clock, published by Gazebo or
//! `ros2 bag play --clock`), zero until the first one arrives.

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use ros2_client::qos::{Durability, History};
use ros2_client::{QosProfile, Subscription};

use crate::ros::msg::builtin_interfaces::Time;
use crate::ros::msg::rosgraph_msgs::Clock as ClockMsg;
use crate::ros::RosRuntime;
use crate::sync::lock;

/// rclcpp's ClockQoS: keep last 1, best effort (a reliable publisher still matches).
pub fn qos() -> QosProfile {
    QosProfile::subscription_default()
        .reliability_best_effort()
        .durability(Durability::Volatile)
        .history(History::KeepLast { depth: 1 })
}

#[derive(Clone, Default)]
pub struct Clock {
    /// `Some` with `use_sim_time`: the last `/clock` time (zero before the first).
    sim: Option<Arc<Mutex<Time>>>,
}

impl Clock {
    /// The system clock.
    pub fn system() -> Clock {
        Clock::default()
    }

    /// Simulation time from `sub`, the node `name`'s subscription to `/clock` (with
    /// [`qos`]), read by a task on `rt`'s executor.
    pub fn simulated(rt: &RosRuntime, sub: Subscription<ClockMsg>, name: String) -> Clock {
        let time = Arc::new(Mutex::new(Time::default()));
        let latest = time.clone();
        rt.spawn(async move {
            let s = sub.async_stream();
            futures::pin_mut!(s);
            while let Some(m) = s.next().await {
                match m {
                    Ok((c, _)) => *lock(&latest) = c.clock,
                    Err(e) => tracing::warn!("{name}: /clock not decoded: {e:?}"),
                }
            }
        });
        Clock { sim: Some(time) }
    }

    pub fn is_simulated(&self) -> bool {
        self.sim.is_some()
    }

    /// The time now on this clock.
    pub fn now(&self) -> Time {
        match &self.sim {
            None => Time::now(),
            Some(t) => lock(t).clone(),
        }
    }
}
