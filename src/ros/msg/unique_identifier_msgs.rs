//! unique_identifier_msgs: the 16-byte ids actions name their goals with.

ros_message! {
    /// unique_identifier_msgs/UUID: all zeros means "no goal" in action_msgs/CancelGoal.
    "unique_identifier_msgs" / "UUID"
    pub struct Uuid { pub uuid: [u8; 16] }
}

impl Uuid {
    pub fn is_zero(&self) -> bool {
        self.uuid == [0; 16]
    }
}

impl std::fmt::Display for Uuid {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        self.uuid.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}
