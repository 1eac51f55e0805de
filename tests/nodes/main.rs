//! Every test that runs nodes over DDS, in one test binary (each links the whole ROS stack, so
//! one binary instead of six keeps builds and the GPU machine's bundle small).

#[path = "../common/mod.rs"]
mod common;

mod apsp_node;
mod bad_input;
mod bag_replay;
mod bench_services;
mod bursts;
mod cell_graph_node;
mod cyclone_interop;
mod cyclone_services;
mod dds_loopback;
mod demo;
mod fallback_oom;
mod fast_dds;
mod garbage_topics;
mod graph_matches;
mod large_messages;
mod latched;
mod late_reply_reader;
mod lee_node;
mod load;
mod nav2_planner;
mod navfn_ends;
mod nearest_neighbors_node;
mod open_files;
mod polyline_node;
#[cfg(feature = "security")]
mod security;
#[cfg(feature = "security")]
mod security_capture;
#[cfg(feature = "security")]
mod security_stranger;
mod service_mappings;
mod sim_time;
mod spoofed_fragments;
mod teardown;
