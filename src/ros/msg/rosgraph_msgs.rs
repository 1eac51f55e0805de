use super::builtin_interfaces::Time;

ros_message! {
    /// rosgraph_msgs/Clock: the simulation time a simulator (Gazebo, `ros2 bag play --clock`)
    /// publishes on `/clock`.
    "rosgraph_msgs" / "Clock"
    pub struct Clock { pub clock: Time }
}
