ros_message! {
    /// builtin_interfaces/Time
    "builtin_interfaces" / "Time"
    pub struct Time { pub sec: i32, pub nanosec: u32 }
}

ros_message! {
    /// builtin_interfaces/Duration
    "builtin_interfaces" / "Duration"
    pub struct Duration { pub sec: i32, pub nanosec: u32 }
}

impl Time {
    /// Wall-clock now (ROS time without a /clock source).
    pub fn now() -> Time {
        let d = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Time {
            sec: i32::try_from(d.as_secs()).unwrap_or(i32::MAX),
            nanosec: d.subsec_nanos(),
        }
    }
}
