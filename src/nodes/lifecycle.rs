//! A managed node as rclcpp_lifecycle has it, so nav2's lifecycle_manager can bring it up and
//! down: the primary states unconfigured, inactive, active and finalized; the transitions
//! configure, cleanup, activate, deactivate and shutdown through `~/change_state` (by id, or
//! by label when the id is 0); `~/get_state`, `~/get_available_states`,
//! `~/get_available_transitions`; each step announced on `~/transition_event`; and while
//! active, the bond heartbeat (bond/Status on `bond`) lifecycle_manager watches.

use std::future::Future;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use ros2_client::Publisher;

use crate::ros::ServiceServer;

use crate::error::{Error, Result};
use crate::ros::msg::bond::Status;
use crate::ros::msg::lifecycle_msgs::{
    ChangeState, ChangeStateRequest, ChangeStateResponse, EmptyRequest, GetAvailableStates,
    GetAvailableStatesResponse, GetAvailableTransitions, GetAvailableTransitionsResponse, GetState,
    GetStateResponse, State, Transition, TransitionDescription, TransitionEvent,
};
use crate::ros::msg::std_msgs::Header;
use crate::ros::{qos, NodeContext};

/// The primary states (lifecycle_msgs/State ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Primary {
    Unconfigured = 1,
    Inactive = 2,
    Active = 3,
    Finalized = 4,
}

impl Primary {
    fn from_id(id: u8) -> Primary {
        match id {
            2 => Primary::Inactive,
            3 => Primary::Active,
            4 => Primary::Finalized,
            _ => Primary::Unconfigured,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Primary::Unconfigured => "unconfigured",
            Primary::Inactive => "inactive",
            Primary::Active => "active",
            Primary::Finalized => "finalized",
        }
    }

    fn msg(self) -> State {
        state(self as u8, self.label())
    }
}

fn state(id: u8, label: &str) -> State {
    State {
        id,
        label: label.into(),
    }
}

/// One transition of the state machine: its id and label, the intermediate state it passes
/// through, and the id of the success transition that ends it.
struct Step {
    id: u8,
    label: &'static str,
    from: Primary,
    via: (u8, &'static str),
    to: Primary,
    success: u8,
}

const STEPS: [Step; 7] = [
    Step {
        id: 1,
        label: "configure",
        from: Primary::Unconfigured,
        via: (10, "configuring"),
        to: Primary::Inactive,
        success: 10,
    },
    Step {
        id: 2,
        label: "cleanup",
        from: Primary::Inactive,
        via: (11, "cleaningup"),
        to: Primary::Unconfigured,
        success: 20,
    },
    Step {
        id: 3,
        label: "activate",
        from: Primary::Inactive,
        via: (13, "activating"),
        to: Primary::Active,
        success: 30,
    },
    Step {
        id: 4,
        label: "deactivate",
        from: Primary::Active,
        via: (14, "deactivating"),
        to: Primary::Inactive,
        success: 40,
    },
    Step {
        id: 5,
        label: "shutdown",
        from: Primary::Unconfigured,
        via: (12, "shuttingdown"),
        to: Primary::Finalized,
        success: 50,
    },
    Step {
        id: 6,
        label: "shutdown",
        from: Primary::Inactive,
        via: (12, "shuttingdown"),
        to: Primary::Finalized,
        success: 50,
    },
    Step {
        id: 7,
        label: "shutdown",
        from: Primary::Active,
        via: (12, "shuttingdown"),
        to: Primary::Finalized,
        success: 50,
    },
];

/// Every state a managed node has (what `~/get_available_states` lists).
fn all_states() -> Vec<State> {
    let mut v: Vec<State> = [
        Primary::Unconfigured,
        Primary::Inactive,
        Primary::Active,
        Primary::Finalized,
    ]
    .into_iter()
    .map(Primary::msg)
    .collect();
    v.extend(
        [
            (10, "configuring"),
            (11, "cleaningup"),
            (12, "shuttingdown"),
            (13, "activating"),
            (14, "deactivating"),
            (15, "errorprocessing"),
        ]
        .map(|(id, l)| state(id, l)),
    );
    v
}

/// The node's current state, shared with whatever it gates.
pub struct Lifecycle {
    state: AtomicU8,
}

impl Lifecycle {
    pub fn new(start: Primary) -> Lifecycle {
        Lifecycle {
            state: AtomicU8::new(start as u8),
        }
    }

    pub fn current(&self) -> Primary {
        Primary::from_id(self.state.load(Ordering::Acquire))
    }

    pub fn is_active(&self) -> bool {
        self.current() == Primary::Active
    }

    /// The error a gated request gets while the node is not active.
    pub fn inactive_error(&self, node: &str) -> Error {
        Error::invalid(
            "lifecycle",
            format!(
                "{node} is {}, not active: activate it through ~/change_state (or start_active: true)",
                self.current().label()
            ),
        )
    }

    /// The step `t` names from the current state (by id, or by label when the id is 0).
    fn step_for(&self, t: &Transition) -> std::result::Result<&'static Step, String> {
        let now = self.current();
        STEPS
            .iter()
            .find(|s| s.from == now && (s.id == t.id || (t.id == 0 && s.label == t.label)))
            .ok_or_else(|| {
                format!(
                    "transition {} '{}' is not available in state {}",
                    t.id,
                    t.label,
                    now.label()
                )
            })
    }

    fn available(&self) -> Vec<TransitionDescription> {
        let now = self.current();
        STEPS
            .iter()
            .filter(|s| s.from == now)
            .map(|s| TransitionDescription {
                transition: Transition {
                    id: s.id,
                    label: s.label.into(),
                },
                start_state: s.from.msg(),
                goal_state: state(s.via.0, s.via.1),
            })
            .collect()
    }
}

/// The bond: how often the heartbeat goes, and after how long silence the manager gives up.
#[derive(Debug, Clone, Copy)]
pub struct BondTiming {
    pub heartbeat_period: f64,
    pub timeout: f64,
}

/// The lifecycle services, events and bond of `ctx`'s node. Returns the shared state and the
/// task that serves them until the node stops.
pub fn manage(
    ctx: &mut NodeContext,
    start: Primary,
    bond: BondTiming,
) -> Result<(Arc<Lifecycle>, impl Future<Output = ()> + Send + 'static)> {
    let life = Arc::new(Lifecycle::new(start));
    let change = ctx.server::<ChangeState>("~/change_state")?;
    let get = ctx.server::<GetState>("~/get_state")?;
    let states = ctx.server::<GetAvailableStates>("~/get_available_states")?;
    let transitions = ctx.server::<GetAvailableTransitions>("~/get_available_transitions")?;
    let events: Publisher<TransitionEvent> = ctx.publisher("~/transition_event", qos::service())?;
    let heartbeat: Publisher<Status> = ctx.publisher("bond", qos::service())?;
    let name = ctx.name().to_string();
    let clock = ctx.clock();
    let instance_id = format!("{:032x}", rand_id());
    let task = {
        let life = life.clone();
        async move {
            let heartbeat = Arc::new(heartbeat);
            let bond_status = {
                let (heartbeat, name, clock) = (heartbeat.clone(), name.clone(), clock.clone());
                move |active: bool| {
                    let s = Status {
                        header: Header {
                            stamp: clock.now(),
                            frame_id: String::new(),
                        },
                        id: name.clone(),
                        instance_id: instance_id.clone(),
                        active,
                        heartbeat_timeout: bond.timeout as f32,
                        heartbeat_period: bond.heartbeat_period as f32,
                    };
                    if let Err(e) = heartbeat.publish(s) {
                        tracing::warn!("{name}: bond heartbeat not sent: {e:?}");
                    }
                }
            };
            let changes = serve_changes(change, life.clone(), events, name.clone(), {
                let bond_status = bond_status.clone();
                move |was: Primary, now: Primary| {
                    if was == Primary::Active && now != Primary::Active {
                        // Leaving active breaks the bond, as nav2's destroyBond does.
                        bond_status(false);
                    }
                }
            });
            let queries = futures::future::join3(
                answer(get, name.clone(), {
                    let life = life.clone();
                    move || GetStateResponse {
                        current_state: life.current().msg(),
                    }
                }),
                answer(states, name.clone(), || GetAvailableStatesResponse {
                    available_states: all_states(),
                }),
                answer(transitions, name.clone(), {
                    let life = life.clone();
                    move || GetAvailableTransitionsResponse {
                        available_transitions: life.available(),
                    }
                }),
            );
            let period = Duration::from_secs_f64(bond.heartbeat_period);
            let beats = async move {
                let mut timer = smol::Timer::interval(period);
                loop {
                    if life.is_active() {
                        bond_status(true);
                    }
                    timer.next().await;
                }
            };
            futures::future::join3(changes, queries, beats).await;
        }
    };
    Ok((life, task))
}

/// A 128-bit id for this bond instance (bond's instance_id is a UUID string).
fn rand_id() -> u128 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let mut x = crate::rng::XorShift::new((t as u64) ^ std::process::id() as u64);
    (x.next_u64() as u128) << 64 | x.next_u64() as u128
}

fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

async fn serve_changes(
    server: ServiceServer<ChangeStateRequest, ChangeStateResponse>,
    life: Arc<Lifecycle>,
    events: Publisher<TransitionEvent>,
    name: String,
    on_change: impl Fn(Primary, Primary),
) {
    let requests = server.receive_request_stream();
    futures::pin_mut!(requests);
    while let Some(item) = requests.next().await {
        let (id, req) = match item {
            Ok(r) => r,
            Err(e) => {
                tracing::error!("{e}");
                continue;
            }
        };
        let success = match life.step_for(&req.transition) {
            Err(e) => {
                tracing::warn!("{name}: ~/change_state: {e}");
                false
            }
            Ok(step) => {
                let via = state(step.via.0, step.via.1);
                let publish = |transition: Transition, start_state: State, goal_state: State| {
                    let ev = TransitionEvent {
                        timestamp: now_ns(),
                        transition,
                        start_state,
                        goal_state,
                    };
                    if let Err(e) = events.publish(ev) {
                        tracing::warn!("{name}: ~/transition_event not sent: {e:?}");
                    }
                };
                let requested = Transition {
                    id: step.id,
                    label: step.label.into(),
                };
                publish(requested, step.from.msg(), via.clone());
                life.state.store(step.to as u8, Ordering::Release);
                on_change(step.from, step.to);
                let done = Transition {
                    id: step.success,
                    label: "transition_success".into(),
                };
                publish(done, via, step.to.msg());
                tracing::info!(
                    "{name}: {} -> {} ({})",
                    step.from.label(),
                    step.to.label(),
                    step.label
                );
                true
            }
        };
        if let Err(e) = server
            .async_send_response(id, ChangeStateResponse { success })
            .await
        {
            tracing::error!("{name}: ~/change_state response lost: {e}");
        }
    }
}

/// Answers every request of `server` with `reply()`.
async fn answer<R: ros2_client::Message + 'static>(
    server: ServiceServer<EmptyRequest, R>,
    name: String,
    reply: impl Fn() -> R,
) {
    let requests = server.receive_request_stream();
    futures::pin_mut!(requests);
    while let Some(item) = requests.next().await {
        match item {
            Ok((id, _)) => {
                if let Err(e) = server.async_send_response(id, reply()).await {
                    tracing::error!("{name}: lifecycle response lost: {e}");
                }
            }
            Err(e) => tracing::error!("{e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(id: u8, label: &str) -> Transition {
        Transition {
            id,
            label: label.into(),
        }
    }

    #[test]
    fn the_state_machine_allows_what_rclcpp_allows() {
        let life = Lifecycle::new(Primary::Unconfigured);
        let go = |tr: Transition| {
            let s = life.step_for(&tr)?;
            life.state.store(s.to as u8, Ordering::Release);
            Ok::<_, String>(life.current())
        };
        assert!(go(t(3, ""))
            .unwrap_err()
            .contains("not available in state unconfigured"));
        assert_eq!(go(t(1, "")), Ok(Primary::Inactive));
        let ids: Vec<u8> = life.available().iter().map(|d| d.transition.id).collect();
        assert_eq!(ids, vec![2, 3, 6]);
        assert_eq!(go(t(0, "activate")), Ok(Primary::Active));
        assert!(life.is_active());
        assert_eq!(go(t(4, "")), Ok(Primary::Inactive));
        assert_eq!(go(t(2, "")), Ok(Primary::Unconfigured));
        assert_eq!(go(t(0, "shutdown")), Ok(Primary::Finalized));
        assert!(life.available().is_empty());
        assert!(go(t(1, "")).is_err());
        assert_eq!(all_states().len(), 10);
    }
}
