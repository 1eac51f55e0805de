//! The one error type of the crate. Every variant carries enough context to be shown to a ROS
//! user as-is (service response `error` field or a log line).

use std::fmt;

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Input data (message, file, parameter) is not acceptable. `field` names where it came from.
    #[error("invalid input: {field}: {reason}")]
    InvalidInput { field: String, reason: String },

    /// CUDA was asked for but cannot be used (no driver, no device, NVRTC missing).
    #[error("no CUDA device: {0}")]
    NoDevice(String),

    /// NVRTC refused a kernel source; `log` is the compiler's own output.
    #[error("kernel compile failed for {kernel}: {log}")]
    KernelCompile { kernel: String, log: String },

    /// A kernel launch or an asynchronous CUDA error surfaced.
    #[error("kernel launch failed for {kernel}: {reason}")]
    Launch { kernel: String, reason: String },

    /// The device could not give us the memory asked for.
    #[error("out of device memory: {requested_bytes} bytes requested ({detail})")]
    OutOfMemory {
        requested_bytes: usize,
        detail: String,
    },

    /// A graph has a cycle of negative total weight, so shortest paths do not exist.
    #[error("negative cycle through vertex {vertex}{}", cycle_text(.cycle))]
    NegativeCycle {
        vertex: u32,
        cycle: Option<Vec<u32>>,
    },

    /// A service request was not answered within the node's `request_timeout_s`; its
    /// computation was abandoned.
    #[error("deadline exceeded: not answered within request_timeout_s = {limit_s} s")]
    DeadlineExceeded { limit_s: f64 },

    /// The work was stopped because its caller gave up on it (a request past its deadline).
    #[error("cancelled: the request's deadline passed, so its computation was stopped")]
    Cancelled,

    /// A service had `max_pending_requests` requests waiting; this one was refused at once.
    #[error("overloaded: {pending} requests pending (max_pending_requests); try again later")]
    Overloaded { pending: usize },

    /// A CUDA driver call failed; the driver's error is the source.
    #[error("CUDA error: {0}")]
    Driver(#[from] cudarc::driver::DriverError),

    /// Any other GPU failure (a device answer that differs from the CPU's, a device that
    /// cannot run a variant).
    #[error("CUDA error: {0}")]
    Gpu(String),

    /// ROS 2 / DDS plumbing failed (entity creation, write, read).
    #[error("ROS 2 error: {0}")]
    Ros(String),

    /// A path's start or goal the planner cannot use: off the grid, or on a cell that blocks
    /// it (the reason says which and why). Typed, so that a planner server tells nav2's
    /// START_OCCUPIED from GOAL_OCCUPIED without reading text.
    #[error("invalid input: {end}: {reason}")]
    EndRefused { end: PathEnd, reason: String },

    /// A pose could not be brought into the map's frame: the frames, and a stale transform's
    /// age, are in the text.
    #[error("transform: {0}")]
    Transform(String),

    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Which end of a path an [`Error::EndRefused`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathEnd {
    Start,
    Goal,
}

impl fmt::Display for PathEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PathEnd::Start => "start",
            PathEnd::Goal => "goal",
        })
    }
}

impl Error {
    /// Shorthand for [`Error::InvalidInput`].
    pub fn invalid(field: impl Into<String>, reason: impl fmt::Display) -> Self {
        Error::InvalidInput {
            field: field.into(),
            reason: reason.to_string(),
        }
    }

    /// An invalid input's field put under `prefix` (a file, a node's name and a dot): what a
    /// checker names by its own field reaches the user with where it came from. Other errors
    /// pass unchanged.
    pub fn under(self, prefix: impl fmt::Display) -> Self {
        match self {
            Error::InvalidInput { field, reason } => Error::InvalidInput {
                field: format!("{prefix}{field}"),
                reason,
            },
            other => other,
        }
    }

    pub fn io(path: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

fn cycle_text(cycle: &Option<Vec<u32>>) -> String {
    match cycle {
        Some(c) => {
            let v: Vec<String> = c.iter().map(|x| x.to_string()).collect();
            format!(": {}", v.join(" -> "))
        }
        None => String::new(),
    }
}
