//! rosbag2 bags (a folder with `metadata.yaml` and `<name>_0.mcap`, or Humble's sqlite3 `.db3`; CDR
//! messages, `ros2msg` schemas), read and written without a ROS install, and the replay check
//! built on them: inputs of a bag are played into the nodes over DDS, their outputs recorded
//! and compared with the outputs the bag holds. Service calls travel as rosbag2 records them
//! (Iron and later): `<service>/_service_event` topics of `pkg/srv/Name_Event`.

pub mod cdr;
pub mod cli;
pub mod compare;
pub mod dynamic;
pub mod generate;
pub mod metadata;
pub mod play;
pub mod qos;
pub mod raw;
pub mod reader;
pub mod record;
pub mod replay;
pub mod scenes;
pub mod schema;
mod sqlite3;
pub mod types;
pub mod writer;

pub use reader::{Bag, BagMessage, TopicInfo};
pub use writer::BagWriter;
