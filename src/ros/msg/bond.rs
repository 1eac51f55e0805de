//! bond: the heartbeat nav2's lifecycle_manager keeps with each node it manages.

use super::std_msgs::Header;

ros_message! {
    /// bond/Status: one side's heartbeat (`active` false: that side broke the bond).
    "bond" / "Status"
    pub struct Status {
        pub header: Header,
        pub id: String,
        pub instance_id: String,
        pub active: bool,
        pub heartbeat_timeout: f32,
        pub heartbeat_period: f32,
    }
}
