use super::builtin_interfaces::Time;
use super::geometry_msgs::Pose;
use super::std_msgs::Header;

ros_message! {
    /// nav2_msgs/CostmapMetaData
    "nav2_msgs" / "CostmapMetaData"
    pub struct CostmapMetaData {
        pub map_load_time: Time,
        pub update_time: Time,
        pub layer: String,
        pub resolution: f32,
        pub size_x: u32,
        pub size_y: u32,
        pub origin: Pose,
    }
}

ros_message! {
    /// nav2_msgs/Costmap: what nav2's costmaps publish on `costmap_raw` (row-major from cell
    /// (0, 0); 254 lethal, 253 inscribed, 255 unknown, 0..=252 free to inflated).
    "nav2_msgs" / "Costmap"
    pub struct Costmap {
        pub header: Header,
        pub metadata: CostmapMetaData,
        #[serde(with = "super::bulk")] pub data: Vec<u8>,
    }
}

// nav2's planner actions (nav2_msgs/action/ComputePathToPose, ComputePathThroughPoses). The
// goals are the same in Humble and Jazzy; Jazzy's results add `error_code` and `error_msg`, so
// each distro has its own result mirror (interfaces/nav2_msgs/action/{humble,jazzy}/).

use super::builtin_interfaces::Duration;
use super::geometry_msgs::PoseStamped;
use super::nav_msgs::Path;
use crate::ros::action::goals::ResultBytes;

ros_message! {
    /// nav2_msgs/action/ComputePathToPose goal.
    "nav2_msgs" / "ComputePathToPose_Goal"
    pub struct ComputePathToPoseGoal {
        pub goal: PoseStamped,
        pub start: PoseStamped,
        pub planner_id: String,
        /// false: plan from the robot's current pose.
        pub use_start: bool,
    }
}

ros_message! {
    /// nav2_msgs/action/ComputePathThroughPoses goal.
    "nav2_msgs" / "ComputePathThroughPoses_Goal"
    pub struct ComputePathThroughPosesGoal {
        pub goals: Vec<PoseStamped>,
        pub start: PoseStamped,
        pub planner_id: String,
        pub use_start: bool,
    }
}

ros_message! {
    /// The planner actions' feedback: empty in nav2, so one placeholder byte on the wire as
    /// rosidl gives every empty message.
    "nav2_msgs" / "ComputePath_Feedback"
    pub struct EmptyFeedback { pub structure_needs_at_least_one_member: u8 }
}

/// An action result either distro's mirror can be built from.
pub trait PlanResult:
    ros2_client::Message + Clone + Default + Send + Sync + ResultBytes + 'static
{
    fn from_parts(path: Path, planning_time: Duration, error_code: u16, error_msg: String) -> Self;
}

/// The bytes a path holds in memory: its poses and frame names.
fn path_bytes(p: &Path) -> usize {
    std::mem::size_of::<Path>()
        + p.header.frame_id.len()
        + p.poses
            .iter()
            .map(|s| std::mem::size_of::<PoseStamped>() + s.header.frame_id.len())
            .sum::<usize>()
}

/// Humble's results: no error fields (a failed goal is told only by its ABORTED status).
pub mod humble {
    use super::*;

    ros_message! {
        /// nav2_msgs/action/ComputePathToPose result (Humble).
        "nav2_msgs" / "ComputePathToPose_Result"
        pub struct ComputePathToPoseResult { pub path: Path, pub planning_time: Duration }
    }

    ros_message! {
        /// nav2_msgs/action/ComputePathThroughPoses result (Humble).
        "nav2_msgs" / "ComputePathThroughPoses_Result"
        pub struct ComputePathThroughPosesResult { pub path: Path, pub planning_time: Duration }
    }

    impl PlanResult for ComputePathToPoseResult {
        fn from_parts(path: Path, planning_time: Duration, _: u16, _: String) -> Self {
            Self {
                path,
                planning_time,
            }
        }
    }

    impl PlanResult for ComputePathThroughPosesResult {
        fn from_parts(path: Path, planning_time: Duration, _: u16, _: String) -> Self {
            Self {
                path,
                planning_time,
            }
        }
    }

    impl ResultBytes for ComputePathToPoseResult {
        fn result_bytes(&self) -> usize {
            path_bytes(&self.path)
        }
    }

    impl ResultBytes for ComputePathThroughPosesResult {
        fn result_bytes(&self) -> usize {
            path_bytes(&self.path)
        }
    }
}

/// Jazzy's results, with nav2's error codes.
pub mod jazzy {
    use super::*;

    ros_message! {
        /// nav2_msgs/action/ComputePathToPose result (Jazzy).
        "nav2_msgs" / "ComputePathToPose_Result"
        pub struct ComputePathToPoseResult {
            pub path: Path,
            pub planning_time: Duration,
            pub error_code: u16,
            pub error_msg: String,
        }
    }

    ros_message! {
        /// nav2_msgs/action/ComputePathThroughPoses result (Jazzy).
        "nav2_msgs" / "ComputePathThroughPoses_Result"
        pub struct ComputePathThroughPosesResult {
            pub path: Path,
            pub planning_time: Duration,
            pub error_code: u16,
            pub error_msg: String,
        }
    }

    impl PlanResult for ComputePathToPoseResult {
        fn from_parts(
            path: Path,
            planning_time: Duration,
            error_code: u16,
            error_msg: String,
        ) -> Self {
            Self {
                path,
                planning_time,
                error_code,
                error_msg,
            }
        }
    }

    impl PlanResult for ComputePathThroughPosesResult {
        fn from_parts(
            path: Path,
            planning_time: Duration,
            error_code: u16,
            error_msg: String,
        ) -> Self {
            Self {
                path,
                planning_time,
                error_code,
                error_msg,
            }
        }
    }

    impl ResultBytes for ComputePathToPoseResult {
        fn result_bytes(&self) -> usize {
            path_bytes(&self.path) + self.error_msg.len()
        }
    }

    impl ResultBytes for ComputePathThroughPosesResult {
        fn result_bytes(&self) -> usize {
            path_bytes(&self.path) + self.error_msg.len()
        }
    }
}
