//! Action servers that answer every RMW's clients, laid out on DDS as rcl_action lays an
//! action out: three services (`<action>/_action/send_goal`, `get_result`, `cancel_goal`) and
//! two topics (`_action/feedback`, and `_action/status`, latched). The services are
//! [`ServiceServer`]s, so each request is read and answered in the layout its client wrote it
//! (rmw_fastrtps's or rmw_cyclonedds's, [`crate::ros::service`]); ros2-client's action server
//! sits on its one-mapping `Server` and answered only one RMW's clients.
//!
//! Goals run one at a time; a new goal preempts the one running and any waiting (they end
//! ABORTED, as nav2's SimpleActionServer ends them: [`goals::Goals::preempt`]); a goal id
//! sent again is acknowledged again and not run twice. A result request is answered when its
//! goal ends (at once if it has); one for a goal the server does not know gets
//! STATUS_UNKNOWN, as rclcpp_action answers it, and so does one above
//! [`goals::MAX_WAITING_RESULTS`] waiting (with a log line). Cancel requests follow
//! rcl_action's policy ([`goals::Goals::cancel`]). Every change of a goal's state is
//! published on the status topic.

pub mod goals;

use std::future::Future;
use std::sync::Mutex;
use std::time::Instant;

use futures::StreamExt;
use ros2_client::{Message, Publisher};

use crate::cancel::CancelFlag;
use crate::error::Result;
use crate::ros::clock::Clock;
use crate::ros::msg::action_msgs::{
    CancelGoalRequest, CancelGoalResponse, FeedbackMessage, GetResultRequest, GetResultResponse,
    GoalState, GoalStatusArray, SendGoalRequest, SendGoalResponse,
};
use crate::ros::msg::unique_identifier_msgs::Uuid;
use crate::ros::qos;
use crate::ros::service::{RequestId, ServiceServer};
use crate::ros::NodeContext;
use crate::sync::lock;

use goals::{Ended, Goals, Lookup, ResultBytes};

/// `server`'s requests; one that cannot be read is logged and skipped (it has no id to answer).
fn readable<Q: Message, S: Message>(
    server: &ServiceServer<Q, S>,
) -> impl futures::Stream<Item = (RequestId, Q)> + '_ {
    server
        .receive_request_stream()
        .filter_map(|item| async move { item.map_err(|e| tracing::warn!("{e}")).ok() })
}

/// An action server of goal `G`, result `R` and feedback `F`.
pub struct ActionServer<G, R, F: Message> {
    name: String,
    send_goal: ServiceServer<SendGoalRequest<G>, SendGoalResponse>,
    get_result: ServiceServer<GetResultRequest, GetResultResponse<R>>,
    cancel_goal: ServiceServer<CancelGoalRequest, CancelGoalResponse>,
    status: Publisher<GoalStatusArray>,
    /// Held so the graph shows the action's feedback topic, as rcl_action creates it.
    _feedback: Publisher<FeedbackMessage<F>>,
    clock: Clock,
    goals: Mutex<Goals<R, RequestId>>,
}

impl<G, R, F> ActionServer<G, R, F>
where
    G: Message + Clone + 'static,
    R: Message + Clone + Default + ResultBytes + 'static,
    F: Message + 'static,
{
    /// The action `package/action` on `name` (resolved like a service) of `ctx`'s node, with
    /// rcl_action's QoS: the rmw default for the services and feedback, a latched status.
    pub fn new(
        ctx: &mut NodeContext,
        name: &str,
        package: &str,
        action: &str,
    ) -> Result<ActionServer<G, R, F>> {
        let fq = ctx.resolve(name)?;
        let at = |part: &str| format!("{}/_action/{part}", fq.trim_end_matches('/'));
        let of_action = |half: &str| format!("{package}::action::dds_::{action}_{half}_");
        let send_goal = ctx.server_of_types(
            &at("send_goal"),
            &of_action("SendGoal_Request"),
            &of_action("SendGoal_Response"),
        )?;
        let get_result = ctx.server_of_types(
            &at("get_result"),
            &of_action("GetResult_Request"),
            &of_action("GetResult_Response"),
        )?;
        let cancel_goal = ctx.server_of_types(
            &at("cancel_goal"),
            "action_msgs::srv::dds_::CancelGoal_Request_",
            "action_msgs::srv::dds_::CancelGoal_Response_",
        )?;
        let _feedback = ctx.publisher_of_dds_type(
            &at("feedback"),
            &of_action("FeedbackMessage"),
            qos::service(),
        )?;
        let status = ctx.publisher_of_dds_type(
            &at("status"),
            "action_msgs::msg::dds_::GoalStatusArray_",
            qos::map(),
        )?;
        Ok(ActionServer {
            name: fq,
            send_goal,
            get_result,
            cancel_goal,
            status,
            _feedback,
            clock: ctx.clock(),
            goals: Mutex::new(Goals::default()),
        })
    }

    /// Serves goals until the node stops: `admit` accepts a goal or says why not (the
    /// client gets `accepted: false`), seeing how many accepted goals wait to run; `execute`
    /// runs an accepted one with its cancel flag, `Ok` for success, `Err` for failure (ABORTED, or CANCELED after a cancel request).
    pub async fn serve<A, E, Fut>(&self, admit: A, execute: E)
    where
        A: Fn(&G, usize) -> std::result::Result<(), String>,
        E: Fn(G, CancelFlag) -> Fut,
        Fut: Future<Output = std::result::Result<R, R>>,
    {
        // Admission bounds what waits in it (`admit` sees the count).
        let (queue, mut queued) = futures::channel::mpsc::unbounded::<(Uuid, G)>();
        // Rejections come as fast as a client sends goals: one line a second.
        let rejections = crate::log_limit::LogLimit::default();
        let refusals = crate::log_limit::LogLimit::default();
        let goals = async {
            let requests = readable(&self.send_goal);
            futures::pin_mut!(requests);
            while let Some((rid, req)) = requests.next().await {
                let now = self.clock.now();
                let queued = lock(&self.goals).queued();
                let verdict = admit(&req.goal, queued)
                    .and_then(|()| lock(&self.goals).accept(req.goal_id.clone(), now.clone()));
                let (accepted, stamp, new) = match verdict {
                    Ok((stamp, new)) => (true, stamp, new),
                    Err(why) => {
                        if let Some(held) = rejections.admit() {
                            tracing::warn!(
                                "{}: goal {} rejected: {why}{}",
                                self.name,
                                req.goal_id,
                                crate::log_limit::held_back(held)
                            );
                        }
                        (false, now, false)
                    }
                };
                self.reply(&self.send_goal, rid, SendGoalResponse { accepted, stamp })
                    .await;
                if new {
                    // nav2's preemption: the new goal supersedes those before it.
                    let superseded = lock(&self.goals).preempt(&req.goal_id, Instant::now());
                    if !superseded.is_empty() {
                        tracing::info!(
                            "{}: goal {} supersedes {} waiting goal(s)",
                            self.name,
                            req.goal_id,
                            superseded.len()
                        );
                    }
                    for e in superseded {
                        self.answer(e).await;
                    }
                    self.publish_status();
                    // The receiver lives as long as this future: sending cannot fail.
                    let _ = queue.unbounded_send((req.goal_id, req.goal));
                }
            }
        };
        let run = async {
            while let Some((id, goal)) = queued.next().await {
                let Some(flag) = lock(&self.goals).start(&id) else {
                    continue;
                };
                self.publish_status();
                let outcome = execute(goal, flag).await;
                let ended = lock(&self.goals).finish(&id, outcome, Instant::now());
                if let Some(e) = ended {
                    tracing::info!("{}: goal {id} {:?}", self.name, e.state);
                    self.answer(e).await;
                }
                self.publish_status();
            }
        };
        let results = async {
            let requests = readable(&self.get_result);
            futures::pin_mut!(requests);
            while let Some((rid, req)) = requests.next().await {
                // Results past their time are gone even when no goal changed since.
                let lookup = {
                    let mut goals = lock(&self.goals);
                    goals.expire(Instant::now());
                    goals.result(&req.goal_id, rid)
                };
                let (state, result) = match lookup {
                    Lookup::Now(state, result) => (state, result),
                    Lookup::Later => continue,
                    Lookup::Refused => {
                        if let Some(held) = refusals.admit() {
                            tracing::warn!(
                                "{}: result request for goal {} answered STATUS_UNKNOWN: {} \
                                 result requests wait already{}",
                                self.name,
                                req.goal_id,
                                goals::MAX_WAITING_RESULTS,
                                crate::log_limit::held_back(held)
                            );
                        }
                        (GoalState::Unknown, R::default())
                    }
                };
                let status = state as i8;
                self.reply(&self.get_result, rid, GetResultResponse { status, result })
                    .await;
            }
        };
        let cancels = async {
            let requests = readable(&self.cancel_goal);
            futures::pin_mut!(requests);
            while let Some((rid, req)) = requests.next().await {
                let (response, ended) = lock(&self.goals).cancel(&req.goal_info, Instant::now());
                tracing::info!(
                    "{}: cancel request: {} goal(s) canceling, return_code {}",
                    self.name,
                    response.goals_canceling.len(),
                    response.return_code
                );
                self.reply(&self.cancel_goal, rid, response).await;
                for e in ended {
                    self.answer(e).await;
                }
                self.publish_status();
            }
        };
        futures::future::join4(goals, run, results, cancels).await;
    }

    /// Answers the result requests that waited for a goal to end.
    async fn answer(&self, e: Ended<R, RequestId>) {
        let status = e.state as i8;
        for rid in e.waiting {
            let result = e.result.clone();
            self.reply(&self.get_result, rid, GetResultResponse { status, result })
                .await;
        }
    }

    async fn reply<Q: Message, S: Message>(
        &self,
        server: &ServiceServer<Q, S>,
        rid: RequestId,
        response: S,
    ) {
        if let Err(e) = server.async_send_response(rid, response).await {
            tracing::error!("{}: {e}", self.name);
        }
    }

    fn publish_status(&self) {
        let status = {
            let mut goals = lock(&self.goals);
            goals.expire(Instant::now());
            goals.status()
        };
        if let Err(e) = self.status.publish(status) {
            tracing::error!("{}: status not published: {e:?}", self.name);
        }
    }
}
