//! The one executable: `run` starts the nodes, `info` describes the compute backend, `bench`
//! measures against peers.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tracing_subscriber::EnvFilter;

use gpu_planning::compute::BackendKind;
use gpu_planning::ros::RosArgs;
use gpu_planning::{bench, Result};

#[derive(Parser)]
#[command(
    name = "gpu_planning",
    version,
    about = "ROS 2 nodes with CUDA motion-planning primitives"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Start every node in this process (stop with Ctrl-C or SIGTERM).
    Run(gpu_planning::nodes::cli::RunArgs),
    /// Print the compute backend, device, compute capability, memory and NVRTC version.
    Info {
        #[arg(long, default_value = "auto")]
        backend: BackendKind,
    },
    /// Lee wave: shortest grid path from an elevation .npy or a map_server map.
    Lee(gpu_planning::lee::cli::LeeArgs),
    /// Floyd–Warshall: all-pairs shortest paths of a CSV or DIMACS .gr graph.
    Apsp(gpu_planning::apsp::cli::ApspArgs),
    /// Polyline: the best angle-limited polyline between two pixels of an image.
    Polyline(gpu_planning::polyline::cli::PolylineArgs),
    /// Cell graph of a quadric arrangement on SO(3) from .npy files or generated samples.
    Cellgraph(gpu_planning::cellgraph::cli::CellGraphArgs),
    /// Start every node, feed it demo inputs over DDS, print what each produced, draw pictures.
    Demo(gpu_planning::demo::DemoArgs),
    /// rosbag2 (MCAP) bags: info, play into a domain, replay into the nodes and compare.
    #[command(subcommand)]
    Bag(gpu_planning::bag::cli::BagCommand),
    /// Nearest neighbours (k nearest or radius) of query points in a point file, k-d tree.
    Knn(gpu_planning::kdtree::cli::KnnArgs),
    /// DDS Security keystores in SROS2's layout, without ROS (the `security` feature).
    #[command(subcommand)]
    Security(gpu_planning::ros::keystore::cli::SecurityCommand),
    /// Benchmarks, ours against peers in the same run.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let level = match &cli.command {
        Command::Run(a) => RosArgs::parse(&a.ros_args)
            .ok()
            .and_then(|(a, _)| a.log_level)
            .unwrap_or_else(|| "info".into()),
        _ => "info".into(),
    };
    // The demo prints its own report; the nodes' retries while inputs travel and DDS
    // teardown messages would only bury it.
    let quiet = matches!(
        cli.command,
        Command::Demo(_)
            | Command::Bag(
                gpu_planning::bag::cli::BagCommand::Replay(_)
                    | gpu_planning::bag::cli::BagCommand::Generate { .. }
            )
    );
    let filter = EnvFilter::try_from_env("RUST_LOG").unwrap_or_else(|_| {
        if quiet {
            EnvFilter::new("error,rustdds=off,ros2_client=off")
        } else {
            EnvFilter::new(format!("{level},rustdds=warn,ros2_client=warn"))
        }
    });
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    match dispatch(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn dispatch(command: Command) -> Result<()> {
    match command {
        Command::Run(args) => gpu_planning::nodes::cli::run(args),
        Command::Lee(args) => gpu_planning::lee::cli::run(args),
        Command::Apsp(args) => gpu_planning::apsp::cli::run(args),
        Command::Polyline(args) => gpu_planning::polyline::cli::run(args),
        Command::Cellgraph(args) => gpu_planning::cellgraph::cli::run(args),
        Command::Knn(args) => gpu_planning::kdtree::cli::run(args),
        Command::Demo(args) => gpu_planning::demo::run(args),
        Command::Bag(cmd) => gpu_planning::bag::cli::run(cmd),
        Command::Bench(cmd) => cmd.run(),
        Command::Security(cmd) => gpu_planning::ros::keystore::cli::run(cmd),
        Command::Info { backend } => {
            gpu_planning::compute::info::print(backend);
            Ok(())
        }
    }
}
