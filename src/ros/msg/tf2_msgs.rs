use super::geometry_msgs::TransformStamped;

ros_message! {
    /// tf2_msgs/TFMessage: what `/tf` and `/tf_static` carry.
    "tf2_msgs" / "TFMessage"
    pub struct TFMessage { pub transforms: Vec<TransformStamped> }
}
