//! service_msgs (ROS 2 Iron and later): what service introspection publishes on
//! `<service>/_service_event`, and what `ros2 bag record --all-services` stores. Bags of this
//! package carry service calls in this form, so `ros2 bag play --publish-service-requests`
//! can replay them.

use serde::{Deserialize, Serialize};

use super::builtin_interfaces::Time;

ros_message! {
    /// service_msgs/ServiceEventInfo
    "service_msgs" / "ServiceEventInfo"
    pub struct ServiceEventInfo {
        pub event_type: u8,
        pub stamp: Time,
        pub client_gid: [u8; 16],
        pub sequence_number: i64,
    }
}

impl ServiceEventInfo {
    pub const REQUEST_SENT: u8 = 0;
    pub const REQUEST_RECEIVED: u8 = 1;
    pub const RESPONSE_SENT: u8 = 2;
    pub const RESPONSE_RECEIVED: u8 = 3;
}

/// `pkg/srv/Name_Event`: the event info and, bounded to one, the request or the response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ServiceEvent<Q, R> {
    pub info: ServiceEventInfo,
    pub request: Vec<Q>,
    pub response: Vec<R>,
}
