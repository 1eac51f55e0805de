//! lifecycle_msgs: what nav2's lifecycle_manager calls to bring a managed node up and down.

ros_message! {
    /// lifecycle_msgs/State: a primary (1..=4) or transition (10..=15) state.
    "lifecycle_msgs" / "State"
    pub struct State { pub id: u8, pub label: String }
}

ros_message! {
    /// lifecycle_msgs/Transition
    "lifecycle_msgs" / "Transition"
    pub struct Transition { pub id: u8, pub label: String }
}

ros_message! {
    /// lifecycle_msgs/TransitionDescription
    "lifecycle_msgs" / "TransitionDescription"
    pub struct TransitionDescription {
        pub transition: Transition,
        pub start_state: State,
        pub goal_state: State,
    }
}

ros_message! {
    /// lifecycle_msgs/TransitionEvent: published on `~/transition_event` at each step.
    "lifecycle_msgs" / "TransitionEvent"
    pub struct TransitionEvent {
        pub timestamp: u64,
        pub transition: Transition,
        pub start_state: State,
        pub goal_state: State,
    }
}

ros_message! {
    /// lifecycle_msgs/srv/ChangeState request.
    "lifecycle_msgs" / "ChangeState_Request"
    pub struct ChangeStateRequest { pub transition: Transition }
}

ros_message! {
    /// lifecycle_msgs/srv/ChangeState response.
    "lifecycle_msgs" / "ChangeState_Response"
    pub struct ChangeStateResponse { pub success: bool }
}

ros_message! {
    /// An empty request (GetState, GetAvailableStates, GetAvailableTransitions): rosidl's
    /// one placeholder byte.
    "lifecycle_msgs" / "Empty_Request"
    pub struct EmptyRequest { pub structure_needs_at_least_one_member: u8 }
}

ros_message! {
    /// lifecycle_msgs/srv/GetState response.
    "lifecycle_msgs" / "GetState_Response"
    pub struct GetStateResponse { pub current_state: State }
}

ros_message! {
    /// lifecycle_msgs/srv/GetAvailableStates response.
    "lifecycle_msgs" / "GetAvailableStates_Response"
    pub struct GetAvailableStatesResponse { pub available_states: Vec<State> }
}

ros_message! {
    /// lifecycle_msgs/srv/GetAvailableTransitions response.
    "lifecycle_msgs" / "GetAvailableTransitions_Response"
    pub struct GetAvailableTransitionsResponse {
        pub available_transitions: Vec<TransitionDescription>,
    }
}

ros_service! {
    /// lifecycle_msgs/srv/ChangeState
    "lifecycle_msgs" / "ChangeState"
    pub struct ChangeState(ChangeStateRequest, ChangeStateResponse);
}

ros_service! {
    /// lifecycle_msgs/srv/GetState
    "lifecycle_msgs" / "GetState"
    pub struct GetState(EmptyRequest, GetStateResponse);
}

ros_service! {
    /// lifecycle_msgs/srv/GetAvailableStates
    "lifecycle_msgs" / "GetAvailableStates"
    pub struct GetAvailableStates(EmptyRequest, GetAvailableStatesResponse);
}

ros_service! {
    /// lifecycle_msgs/srv/GetAvailableTransitions
    "lifecycle_msgs" / "GetAvailableTransitions"
    pub struct GetAvailableTransitions(EmptyRequest, GetAvailableTransitionsResponse);
}
