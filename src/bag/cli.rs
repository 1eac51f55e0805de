//! `gpu_planning bag info|play|replay|generate`: bags on machines without ROS 2. On a robot,
//! `ros2 bag play` plays the same bags (service calls with `--publish-service-requests`).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{generate, play, replay, types, Bag};
use crate::compute::{Backend, BackendKind};
use crate::error::{Error, Result};
use crate::ros::{ParamsFile, RosArgs, RosRuntime};

#[derive(Debug, Subcommand)]
pub enum BagCommand {
    /// Topics, types, message counts and duration; `--echo TOPIC` prints its messages as JSON.
    Info {
        bag: PathBuf,
        #[arg(long)]
        echo: Option<String>,
    },
    /// Play a bag's inputs (topics and recorded service calls) to the nodes of a DDS domain.
    Play(PlayArgs),
    /// Record topics of a DDS domain into a new bag until --duration-s or Ctrl-C.
    Record {
        /// The bag folder to create.
        out: PathBuf,
        /// A topic of this package's nodes (`/map`, `/lee_planner/path`, ...) or NAME:pkg/msg/Type;
        /// repeat for more.
        #[arg(long = "topic", required = true)]
        topics: Vec<String>,
        #[arg(long)]
        duration_s: Option<f64>,
        /// DDS domain (default: ROS_DOMAIN_ID, else 0).
        #[arg(long, value_parser = crate::ros::runtime::parse_domain_id)]
        domain_id: Option<u16>,
    },
    /// Start the nodes here, play each bag into them and compare their outputs with the bag's.
    Replay(ReplayArgs),
    /// Write the scenario bags (default: all) as the CPU backend answers them.
    Generate {
        #[arg(long, default_value = "tests/data/bags")]
        out: PathBuf,
        #[arg(long, default_value_t = 143, value_parser = crate::ros::runtime::parse_domain_id)]
        domain_id: u16,
        names: Vec<String>,
    },
}

#[derive(Debug, Args)]
pub struct PlayArgs {
    pub bag: PathBuf,
    /// 1: recorded timing; 2: twice as fast; 0: as fast as possible (0.001..=1000 or 0).
    #[arg(long, default_value_t = 1.0, value_parser = parse_rate)]
    pub rate: f64,
    /// DDS domain (default: ROS_DOMAIN_ID, else 0).
    #[arg(long, value_parser = crate::ros::runtime::parse_domain_id)]
    pub domain_id: Option<u16>,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    #[arg(required = true)]
    pub bags: Vec<PathBuf>,
    #[arg(long, default_value = "auto")]
    pub backend: BackendKind,
    /// As for `bag play`.
    #[arg(long, default_value_t = 1.0, value_parser = parse_rate)]
    pub rate: f64,
    /// First DDS domain; each bag gets the next one.
    #[arg(long, default_value_t = 144, value_parser = crate::ros::runtime::parse_domain_id)]
    pub domain_id: u16,
}

fn background(rt: &RosRuntime) -> std::thread::JoinHandle<()> {
    let (ex, sd) = (rt.executor().clone(), rt.shutdown().clone());
    std::thread::spawn(move || smol::block_on(ex.run(sd.wait())))
}

fn info(path: &std::path::Path, echo: Option<&str>) -> Result<()> {
    let bag = Bag::open(path)?;
    let (first, last) = (
        bag.messages.first().map_or(0, |m| m.time_ns),
        bag.messages.last().map_or(0, |m| m.time_ns),
    );
    println!(
        "{}: {} messages, {:.3} s",
        path.display(),
        bag.messages.len(),
        (last - first) as f64 * 1e-9
    );
    for t in bag.topics.values() {
        println!("  {:<44} {:<44} {:>5}", t.name, t.ty, t.count);
    }
    if let Some(topic) = echo {
        let t = bag
            .topics
            .get(topic)
            .ok_or_else(|| Error::invalid("--echo", format!("'{topic}' is not in the bag")))?;
        // Types this package mirrors decode through their mirrors; any other from the bag's
        // own schema.
        let schema = match (types::known(&t.ty), &t.schema) {
            (false, Some((encoding, text))) if encoding == "ros2msg" => {
                Some(super::dynamic::Schema::parse(&t.ty, text)?)
            }
            _ => None,
        };
        for (i, m) in bag.on(topic).enumerate() {
            let what = format!("{topic}[{i}]");
            let v = match &schema {
                Some(s) => s.to_json(&what, &m.data)?,
                None => types::to_json(&t.ty, &what, &m.data)?,
            };
            println!("{v}");
        }
    }
    Ok(())
}

fn play_into_domain(a: &PlayArgs) -> Result<()> {
    let bag = Bag::open(&a.bag)?;
    let steps = replay::steps(&bag)?;
    let rt = RosRuntime::new(RosArgs::default(), ParamsFile::default(), a.domain_id)?;
    let thread = background(&rt);
    let rec = play::play(
        &rt,
        &steps,
        &play::PlayOptions {
            rate: a.rate,
            record: vec![],
            expect: Default::default(),
            after: vec![],
        },
    );
    rt.shutdown().trigger();
    let _ = thread.join();
    let rec = rec?;
    println!(
        "played {} steps ({} calls answered) on domain {}",
        steps.len(),
        rec.calls.len(),
        rt.domain_id()
    );
    Ok(())
}

/// Replays each bag into freshly started nodes; the number of bags that differed.
pub fn replay_bags(a: &ReplayArgs) -> Result<usize> {
    let backend = Backend::select(a.backend)?;
    let mut failed = 0;
    for (i, path) in a.bags.iter().enumerate() {
        let bag = Bag::open(path)?;
        let domain = replay::nth_domain(a.domain_id, i);
        let report = replay::replay_into_fresh_nodes(&bag, &backend, domain, a.rate)?;
        println!("{} ({} backend):", path.display(), backend.name());
        for l in &report.lines {
            println!("  {l}");
        }
        if report.mismatches.is_empty() {
            println!("  same as recorded");
        } else {
            failed += 1;
            for m in &report.mismatches {
                println!("  DIFFERS {m}");
            }
        }
    }
    Ok(failed)
}

pub fn run(cmd: BagCommand) -> Result<()> {
    match cmd {
        BagCommand::Info { bag, echo } => info(&bag, echo.as_deref()),
        BagCommand::Play(a) => play_into_domain(&a),
        BagCommand::Replay(a) => match replay_bags(&a)? {
            0 => Ok(()),
            n => Err(Error::invalid(
                "replay",
                format!(
                    "{n} of {} bags differ from their recorded outputs",
                    a.bags.len()
                ),
            )),
        },
        BagCommand::Record {
            out,
            topics,
            duration_s,
            domain_id,
        } => {
            let topics = topics
                .iter()
                .map(|t| super::record::parse_topic(t))
                .collect::<Result<Vec<_>>>()?;
            let duration = match duration_s {
                Some(s) => Some(crate::seconds::positive_duration("--duration-s", s)?),
                None => None,
            };
            let rt = RosRuntime::new(RosArgs::default(), ParamsFile::default(), domain_id)?;
            rt.handle_signals()?;
            let thread = background(&rt);
            let n = super::record::record(&rt, &out, &topics, duration);
            rt.shutdown().trigger();
            let _ = thread.join();
            println!("{}: {} messages", out.display(), n?);
            Ok(())
        }
        BagCommand::Generate {
            out,
            domain_id,
            names,
        } => generate::generate(&out, &names, domain_id),
    }
}

/// A playback rate: 0 (no waiting) or a finite factor in 0.001..=1000 (below that a step's
/// wait would not fit a Duration; NaN and negatives used to mean "as fast as possible"
/// silently).
pub fn parse_rate(s: &str) -> std::result::Result<f64, String> {
    let r: f64 = s.parse().map_err(|_| format!("'{s}' is not a number"))?;
    if r == 0.0 || (r.is_finite() && (1e-3..=1e3).contains(&r)) {
        Ok(r)
    } else {
        Err(format!(
            "{s} is not 0 (as fast as possible) or a factor between 0.001 and 1000"
        ))
    }
}
