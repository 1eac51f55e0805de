//! `gpu_planning run`: the nodes of this process, their parameters and ROS arguments.

use std::path::PathBuf;

use crate::compute::BackendKind;
use crate::error::{Error, Result};
use crate::ros::{ParamsFile, RosArgs, RosRuntime};

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// ROS 2 parameter file (`node: ros__parameters: ...`); more can follow --ros-args.
    #[arg(long)]
    pub params: Option<PathBuf>,
    /// Override the `backend` parameter of every node.
    #[arg(long)]
    pub backend: Option<BackendKind>,
    /// DDS domain (default: ROS_DOMAIN_ID, else 0).
    #[arg(long, value_parser = crate::ros::runtime::parse_domain_id)]
    pub domain_id: Option<u16>,
    /// Stop by itself after this many seconds (for demos and scripted checks).
    #[arg(long)]
    pub duration_s: Option<f64>,
    /// Start only these nodes (comma-separated; default: all of them).
    #[arg(long, value_delimiter = ',')]
    pub nodes: Vec<String>,
    /// Executor threads.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// `--ros-args ...` as ros2 run / ros2 launch pass them.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub ros_args: Vec<String>,
}

/// The most executor threads `run` starts: the executor's work is DDS and dispatch (the
/// computations have pools of their own), so more than a few never helps.
const MAX_THREADS: usize = 256;

/// Starts the nodes and spins until shutdown (a signal, or `--duration-s`).
pub fn run(a: RunArgs) -> Result<()> {
    let RunArgs {
        params,
        backend,
        domain_id,
        duration_s,
        nodes: only,
        threads,
        ros_args,
    } = a;
    let deadline = duration_s
        .map(|s| crate::seconds::duration("--duration-s", s))
        .transpose()?;
    if threads > MAX_THREADS {
        return Err(Error::invalid(
            "--threads",
            format!("{threads} is above {MAX_THREADS} executor threads"),
        ));
    }
    let (mut args, rest) = RosArgs::parse(&ros_args)?;
    if let Some(extra) = rest.first() {
        return Err(Error::invalid(
            "arguments",
            format!("unexpected '{extra}' (ROS arguments follow --ros-args)"),
        ));
    }
    let mut file = match &params {
        Some(p) => ParamsFile::load(p)?,
        None => ParamsFile::default(),
    };
    for p in &args.params_files {
        file.extend(ParamsFile::load(p)?);
    }
    if let Some(b) = backend {
        args.params
            .push(("backend".into(), serde_yaml::Value::from(b.to_string())));
    }
    let rt = RosRuntime::new(args, file, domain_id)?;
    rt.handle_signals()?;
    let started = if only.is_empty() {
        super::start_all(&rt)?
    } else {
        super::start(&rt, &only.iter().map(String::as_str).collect::<Vec<_>>())?
    };
    tracing::info!(
        "DDS domain {}: running {}",
        rt.domain_id(),
        started.join(", ")
    );
    if let Some(d) = deadline {
        let shutdown = rt.shutdown().clone();
        std::thread::spawn(move || {
            std::thread::sleep(d);
            shutdown.trigger();
        });
    }
    rt.run(threads);
    tracing::info!("shut down");
    Ok(())
}
