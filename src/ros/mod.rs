//! ROS 2 on the DDS wire through the pure-Rust `ros2-client` (RustDDS): no ROS installation is
//! needed to build or run, and rclcpp/rclpy nodes over Fast DDS or Cyclone DDS see our topics.

pub mod action;
pub mod args;
pub mod clock;
pub mod context;
pub mod distro;
pub mod idl;
pub mod keystore;
pub mod live_params;
pub mod msg;
pub mod names;
pub mod node_params;
pub mod open_files;
pub mod param_docs;
pub mod params;
pub mod qos;
pub mod runtime;
pub mod security;
pub mod service;
pub mod tf;
pub mod type_hash;
pub mod work;

pub use args::RosArgs;
pub use clock::Clock;
pub use context::NodeContext;
pub use params::ParamsFile;
pub use runtime::RosRuntime;
pub use service::ServiceServer;
