//! The one executable: `run` starts the nodes, `info` describes the compute backend, `bench`
//! measures against peers.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tracing_subscriber::EnvFilter;

use gpu_planning::compute::primitives::gpu::SortConfig;
use gpu_planning::compute::{Backend, BackendKind, CudaRuntime};
use gpu_planning::ros::{ParamsFile, RosArgs, RosRuntime};
use gpu_planning::{bench, nodes, Error, Result};

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
    Run {
        /// ROS 2 parameter file (`node: ros__parameters: ...`); more can follow --ros-args.
        #[arg(long)]
        params: Option<PathBuf>,
        /// Override the `backend` parameter of every node.
        #[arg(long)]
        backend: Option<BackendKind>,
        /// DDS domain (default: ROS_DOMAIN_ID, else 0).
        #[arg(long)]
        domain_id: Option<u16>,
        /// Stop by itself after this many seconds (for demos and scripted checks).
        #[arg(long)]
        duration_s: Option<f64>,
        /// Start only these nodes (comma-separated; default: all of them).
        #[arg(long, value_delimiter = ',')]
        nodes: Vec<String>,
        /// Executor threads.
        #[arg(long, default_value_t = 2)]
        threads: usize,
        /// `--ros-args ...` as ros2 run / ros2 launch pass them.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
        ros_args: Vec<String>,
    },
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
    /// Benchmarks, ours against peers in the same run.
    Bench {
        #[command(subcommand)]
        what: BenchWhat,
    },
}

#[derive(Subcommand)]
enum BenchWhat {
    /// Radix sort, scan and compaction: CUDA against rayon on the CPU.
    Primitives {
        #[arg(long, default_value_t = 1 << 24)]
        n: usize,
        #[arg(long, default_value_t = 10)]
        reps: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value = "auto")]
        backend: BackendKind,
        /// Also time one-sweep sort shapes, as ITEMS:BLOCKS pairs (e.g. 12:3,16:2).
        #[arg(long, value_delimiter = ',')]
        sweep: Vec<String>,
    },
    /// Cell graph: every algorithm on Shoemake samples and random arrangements, and the CPU.
    Cellgraph {
        #[arg(long, value_delimiter = ',', default_value = "44000,1000000,4000000")]
        samples: Vec<usize>,
        #[arg(long, value_delimiter = ',', default_value = "64,256,1024")]
        constraints: Vec<usize>,
        #[arg(long, default_value_t = 3)]
        reps: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value = "auto")]
        backend: BackendKind,
        /// Run the CPU only up to this many samples.
        #[arg(long, default_value_t = 1_000_000)]
        cpu_limit: usize,
        /// Run the O(n^2) heuristic only up to this many samples.
        #[arg(long, default_value_t = 44_000)]
        heuristic_limit: usize,
    },
    /// k-d tree: build phases and exact kNN queries, CUDA against the CPU.
    Kdtree {
        /// POINTS:DIMS:K cases.
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "16777216:4:1,1048576:3:8"
        )]
        cases: Vec<String>,
        #[arg(long, default_value_t = 1 << 20)]
        queries: usize,
        #[arg(long, default_value_t = 3)]
        reps: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value = "auto")]
        backend: BackendKind,
        /// The CPU builds and queries only up to this many points.
        #[arg(long, default_value_t = 1 << 20)]
        cpu_limit: usize,
    },
    /// Floyd–Warshall: every memory model and the CPU solvers on random graphs.
    Apsp {
        #[arg(long, value_delimiter = ',', default_value = "500,2000,8192")]
        sizes: Vec<usize>,
        #[arg(long, value_delimiter = ',', default_value = "0.15,0.85")]
        densities: Vec<f64>,
        #[arg(long, default_value_t = 5)]
        reps: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value = "auto")]
        backend: BackendKind,
        /// Run the per-k models and `blocked` only up to this n.
        #[arg(long, default_value_t = 8192)]
        slow_limit: usize,
        /// Run the CPU blocked solver up to this n (the textbook loop to a quarter of it).
        #[arg(long, default_value_t = 2000)]
        cpu_limit: usize,
        /// Also time tiled shapes, as TILE:THREAD_TILE pairs (e.g. 32:4,64:8).
        #[arg(long, value_delimiter = ',')]
        shapes: Vec<String>,
    },
    /// Polyline: the seed's guides x points table, CUDA against the CPU DP.
    Polyline {
        /// GUIDES:POINTS pairs.
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "5:128,5:256,5:512,5:1024,8:128,8:256,8:512,8:1024,32:2048"
        )]
        shapes: Vec<String>,
        #[arg(long, default_value_t = 5)]
        reps: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value = "auto")]
        backend: BackendKind,
        /// Run the CPU DP only up to this many points per guide.
        #[arg(long, default_value_t = 512)]
        cpu_limit: u32,
    },
    /// Lee wave: every memory model and the CPU BFS on random terrain and mazes.
    Lee {
        #[arg(long, value_delimiter = ',', default_value = "1000,4000")]
        sizes: Vec<u32>,
        #[arg(long, default_value_t = 10)]
        reps: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value = "auto")]
        backend: BackendKind,
        /// Skip sweep models on mazes above this many cells.
        #[arg(long, default_value_t = 1_000_000)]
        sweep_limit_cells: u64,
        /// Write the terrains as .npy here, for the peer scripts.
        #[arg(long)]
        npy_dir: Option<PathBuf>,
        /// CUDA memory models to run (the CPU reference always runs).
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "global,texture,shared,bitwave"
        )]
        models: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let level = match &cli.command {
        Command::Run { ros_args, .. } => RosArgs::parse(ros_args)
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
        Command::Run {
            params,
            backend,
            domain_id,
            duration_s,
            nodes: only,
            threads,
            ros_args,
        } => {
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
                nodes::start_all(&rt)?
            } else {
                nodes::start(&rt, &only.iter().map(String::as_str).collect::<Vec<_>>())?
            };
            tracing::info!(
                "DDS domain {}: running {}",
                rt.domain_id(),
                started.join(", ")
            );
            if let Some(s) = duration_s {
                if !(s.is_finite() && s >= 0.0) {
                    return Err(Error::invalid(
                        "--duration-s",
                        format!("{s} is not a duration"),
                    ));
                }
                let shutdown = rt.shutdown().clone();
                std::thread::spawn(move || {
                    std::thread::sleep(std::time::Duration::from_secs_f64(s));
                    shutdown.trigger();
                });
            }
            rt.run(threads);
            tracing::info!("shut down");
            Ok(())
        }
        Command::Bench {
            what: w @ BenchWhat::Lee { .. },
        } => bench_lee(w),
        Command::Lee(args) => gpu_planning::lee::cli::run(args),
        Command::Apsp(args) => gpu_planning::apsp::cli::run(args),
        Command::Polyline(args) => gpu_planning::polyline::cli::run(args),
        Command::Cellgraph(args) => gpu_planning::cellgraph::cli::run(args),
        Command::Knn(args) => gpu_planning::kdtree::cli::run(args),
        Command::Demo(args) => gpu_planning::demo::run(args),
        Command::Bag(cmd) => gpu_planning::bag::cli::run(cmd),
        Command::Bench {
            what:
                BenchWhat::Polyline {
                    shapes,
                    reps,
                    seed,
                    backend,
                    cpu_limit,
                },
        } => {
            let backend = Backend::select(backend)?;
            let shapes = shapes
                .iter()
                .map(|s| parse_pair_u32("--shapes", s))
                .collect::<Result<Vec<_>>>()?;
            let options = bench::polyline::Options {
                shapes,
                reps,
                seed,
                cpu_limit,
            };
            bench::polyline::run(&backend, &options)
        }
        Command::Bench {
            what:
                BenchWhat::Cellgraph {
                    samples,
                    constraints,
                    reps,
                    seed,
                    backend,
                    cpu_limit,
                    heuristic_limit,
                },
        } => {
            let backend = Backend::select(backend)?;
            let options = bench::cellgraph::Options {
                samples,
                constraints,
                reps,
                seed,
                cpu_limit,
                heuristic_limit,
            };
            bench::cellgraph::run(&backend, &options)?;
            Ok(())
        }
        Command::Bench {
            what:
                BenchWhat::Kdtree {
                    cases,
                    queries,
                    reps,
                    seed,
                    backend,
                    cpu_limit,
                },
        } => {
            let backend = Backend::select(backend)?;
            let cases = cases
                .iter()
                .map(|c| {
                    let v: Vec<usize> = c.split(':').filter_map(|x| x.parse().ok()).collect();
                    match v[..] {
                        [n, d, k] => Ok((n, d, k)),
                        _ => Err(gpu_planning::Error::invalid(
                            "--cases",
                            format!("'{c}' is not POINTS:DIMS:K"),
                        )),
                    }
                })
                .collect::<Result<Vec<_>>>()?;
            let options = bench::kdtree::Options {
                cases,
                queries,
                reps,
                seed,
                cpu_limit,
            };
            bench::kdtree::run(&backend, &options)?;
            Ok(())
        }
        Command::Bench {
            what:
                BenchWhat::Apsp {
                    sizes,
                    densities,
                    reps,
                    seed,
                    backend,
                    slow_limit,
                    cpu_limit,
                    shapes,
                },
        } => {
            let backend = Backend::select(backend)?;
            let shapes = shapes
                .iter()
                .map(|s| parse_pair_u32("--shapes", s))
                .collect::<Result<Vec<_>>>()?;
            let options = bench::apsp::Options {
                sizes,
                densities,
                reps,
                seed,
                slow_limit,
                cpu_limit,
                shapes,
            };
            bench::apsp::run(&backend, &options)?;
            Ok(())
        }
        Command::Info { backend } => {
            print_info(backend);
            Ok(())
        }
        Command::Bench {
            what:
                BenchWhat::Primitives {
                    n,
                    reps,
                    seed,
                    backend,
                    sweep,
                },
        } => {
            let backend = Backend::select(backend)?;
            let sweep = sweep
                .iter()
                .map(|s| parse_sort_config(s))
                .collect::<Result<Vec<_>>>()?;
            let options = bench::primitives::Options {
                n,
                reps,
                seed,
                sweep,
            };
            let table = bench::primitives::run(&backend, &options)?;
            println!("{table}");
            Ok(())
        }
    }
}

fn bench_lee(w: BenchWhat) -> Result<()> {
    if let BenchWhat::Lee {
        sizes,
        reps,
        seed,
        backend,
        sweep_limit_cells,
        npy_dir,
        models,
    } = w
    {
        let backend = Backend::select(backend)?;
        let models = models
            .iter()
            .map(|m| m.parse())
            .collect::<Result<Vec<gpu_planning::lee::MemoryModel>>>()?;
        let options = bench::lee::Options {
            sizes,
            reps,
            seed,
            sweep_limit_cells,
            npy_dir,
            models,
        };
        println!("{}", bench::lee::run(&backend, &options)?);
    }
    Ok(())
}

fn parse_pair_u32(flag: &str, s: &str) -> Result<(u32, u32)> {
    let bad = || Error::invalid(flag, format!("'{s}' is not A:B (two integers)"));
    let (a, b) = s.split_once(':').ok_or_else(bad)?;
    Ok((a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?))
}

fn parse_sort_config(s: &str) -> Result<SortConfig> {
    let bad = || Error::invalid("--sweep", format!("'{s}' is not ITEMS:BLOCKS"));
    let (items, blocks) = s.split_once(':').ok_or_else(bad)?;
    Ok(SortConfig {
        items_per_thread: items.parse().map_err(|_| bad())?,
        min_blocks_per_sm: blocks.parse().map_err(|_| bad())?,
    })
}

fn print_info(kind: BackendKind) {
    println!("gpu_planning {}", env!("CARGO_PKG_VERSION"));
    println!("backend requested: {kind}");
    match CudaRuntime::shared() {
        Ok(rt) => {
            let i = rt.info();
            let (free, total) = rt.memory().unwrap_or((0, i.total_memory));
            println!("cuda: available");
            println!("device: {}", i.name);
            println!(
                "compute capability: {}.{} ({})",
                i.compute_capability.0,
                i.compute_capability.1,
                i.arch()
            );
            println!("multiprocessors: {}", i.multiprocessors);
            println!(
                "memory: {:.1} GiB free of {:.1} GiB",
                free as f64 / 1073741824.0,
                total as f64 / 1073741824.0
            );
            println!(
                "driver: {}.{}",
                i.driver_version / 1000,
                (i.driver_version % 1000) / 10
            );
            println!("nvrtc: {}.{}", i.nvrtc_version.0, i.nvrtc_version.1);
        }
        Err(e) => println!("cuda: unavailable ({e})"),
    }
    match Backend::select(kind) {
        Ok(b) => println!("backend selected: {}", b.name()),
        Err(e) => println!("backend selected: none ({e})"),
    }
}
