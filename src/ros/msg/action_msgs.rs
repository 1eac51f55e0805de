//! action_msgs: the goal bookkeeping every ROS 2 action shares (rcl_action's status topic
//! and cancel service), and the generic halves rosidl generates for each action's
//! `_SendGoal`, `_GetResult` and `_FeedbackMessage` types.

use serde::{Deserialize, Serialize};

use crate::ros::msg::builtin_interfaces::Time;
use crate::ros::msg::unique_identifier_msgs::Uuid;

ros_message! {
    /// action_msgs/GoalInfo: a goal and when the server accepted it.
    "action_msgs" / "GoalInfo"
    pub struct GoalInfo { pub goal_id: Uuid, pub stamp: Time }
}

ros_message! {
    /// action_msgs/GoalStatus: `status` is one of [`GoalState`]'s values.
    "action_msgs" / "GoalStatus"
    pub struct GoalStatus { pub goal_info: GoalInfo, pub status: i8 }
}

ros_message! {
    /// action_msgs/GoalStatusArray: every goal the server still tracks (`_action/status`).
    "action_msgs" / "GoalStatusArray"
    pub struct GoalStatusArray { pub status_list: Vec<GoalStatus> }
}

ros_message! {
    /// action_msgs/srv/CancelGoal request (zero id and zero stamp: every goal).
    "action_msgs" / "CancelGoal_Request"
    pub struct CancelGoalRequest { pub goal_info: GoalInfo }
}

ros_message! {
    /// action_msgs/srv/CancelGoal response: `return_code` is one of [`CancelCode`]'s values.
    "action_msgs" / "CancelGoal_Response"
    pub struct CancelGoalResponse { pub return_code: i8, pub goals_canceling: Vec<GoalInfo> }
}

ros_service! {
    /// action_msgs/srv/CancelGoal
    "action_msgs" / "CancelGoal"
    pub struct CancelGoal(CancelGoalRequest, CancelGoalResponse);
}

/// action_msgs/GoalStatus's STATUS_* constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i8)]
pub enum GoalState {
    Unknown = 0,
    Accepted = 1,
    Executing = 2,
    Canceling = 3,
    Succeeded = 4,
    Canceled = 5,
    Aborted = 6,
}

impl GoalState {
    /// Succeeded, canceled or aborted: the goal has its result.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            GoalState::Succeeded | GoalState::Canceled | GoalState::Aborted
        )
    }
}

/// action_msgs/srv/CancelGoal's ERROR_* constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i8)]
pub enum CancelCode {
    None = 0,
    Rejected = 1,
    UnknownGoalId = 2,
    GoalTerminated = 3,
}

/// `<Action>_SendGoal_Request`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SendGoalRequest<G> {
    pub goal_id: Uuid,
    pub goal: G,
}
impl<G: ros2_client::Message> ros2_client::Message for SendGoalRequest<G> {}

/// `<Action>_SendGoal_Response`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SendGoalResponse {
    pub accepted: bool,
    pub stamp: Time,
}
impl ros2_client::Message for SendGoalResponse {}

/// `<Action>_GetResult_Request`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GetResultRequest {
    pub goal_id: Uuid,
}
impl ros2_client::Message for GetResultRequest {}

/// `<Action>_GetResult_Response`: `status` is one of [`GoalState`]'s values.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GetResultResponse<R> {
    pub status: i8,
    pub result: R,
}
impl<R: ros2_client::Message> ros2_client::Message for GetResultResponse<R> {}

/// `<Action>_FeedbackMessage`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FeedbackMessage<F> {
    pub goal_id: Uuid,
    pub feedback: F,
}
impl<F: ros2_client::Message> ros2_client::Message for FeedbackMessage<F> {}
