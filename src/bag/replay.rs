//! The replay check: a bag's inputs (topic messages and recorded service requests) are played
//! into running nodes with their recorded timing, their outputs are recorded, and each is
//! compared with the output the bag holds (see [`super::compare`] for how).

use std::collections::BTreeMap;

use super::compare;
use super::play::{self, PlayOptions, Recording, Step, TimedStep};
use super::reader::Bag;
use super::types;
use crate::compute::Backend;
use crate::error::{Error, Result};
use crate::ros::msg::service_msgs::ServiceEventInfo;
use crate::ros::{ParamsFile, RosArgs, RosRuntime};

/// What the nodes of this package publish as results: in a bag, expected outputs.
pub const OUTPUT_TOPICS: &[&str] = &[
    "/lee_planner/path",
    "/lee_planner/distance_field",
    "/lee_planner/markers",
    "/apsp/status",
    "/polyline/polyline",
    "/polyline/markers",
    "/cell_graph/cell_graph",
    "/cell_graph/markers",
    "/nearest_neighbors/neighbors",
];

pub const EVENT_SUFFIX: &str = "/_service_event";

/// A recorded call: its request and the response the bag holds.
struct ExpectedCall {
    service: String,
    ty: String,
    response: Option<Vec<u8>>,
}

#[derive(Debug, Default)]
pub struct Report {
    /// One line per output topic and per service: what was compared.
    pub lines: Vec<String>,
    pub mismatches: Vec<String>,
    /// Messages and responses compared with the bag's; a replay that compared none proves
    /// nothing and fails.
    pub compared: usize,
    pub recording: Recording,
}

/// A call as the bag names it: service, client gid, sequence number.
type CallKey = (String, [u8; 16], i64);

fn event_key(info: &ServiceEventInfo) -> ([u8; 16], i64) {
    (info.client_gid, info.sequence_number)
}

/// The steps to play from a bag: every non-output topic, and every recorded request.
pub fn steps(bag: &Bag) -> Result<Vec<TimedStep>> {
    let mut out = Vec::new();
    let mut seen_requests = std::collections::BTreeSet::new();
    for (i, m) in bag.messages.iter().enumerate() {
        let t = &bag.topics[&m.topic];
        if OUTPUT_TOPICS.contains(&m.topic.as_str()) {
            continue;
        }
        if let Some(service) = m.topic.strip_suffix(EVENT_SUFFIX) {
            let srv = types::service_of_event(&t.ty).ok_or_else(|| {
                Error::invalid(
                    &m.topic,
                    format!("type '{}' is not a service event this package knows", t.ty),
                )
            })?;
            let ev = srv.decode_event(&format!("{}[{i}]", m.topic), &m.data)?;
            let is_request = matches!(
                ev.info.event_type,
                ServiceEventInfo::REQUEST_SENT | ServiceEventInfo::REQUEST_RECEIVED
            );
            if let (true, Some(request)) = (is_request, ev.request) {
                if seen_requests.insert((service.to_string(), event_key(&ev.info))) {
                    out.push(TimedStep {
                        time_ns: m.time_ns,
                        step: Step::Call {
                            service: service.to_string(),
                            ty: srv.name(),
                            request,
                            client_gid: ev.info.client_gid,
                            sequence_number: ev.info.sequence_number,
                        },
                    });
                }
            }
            continue;
        }
        out.push(TimedStep {
            time_ns: m.time_ns,
            step: Step::Publish {
                topic: m.topic.clone(),
                ty: t.ty.clone(),
                qos: t.qos,
                cdr: m.data.clone(),
            },
        });
    }
    Ok(out)
}

fn expected_calls(bag: &Bag) -> Result<BTreeMap<CallKey, ExpectedCall>> {
    let mut calls = BTreeMap::new();
    for (i, m) in bag.messages.iter().enumerate() {
        let Some(service) = m.topic.strip_suffix(EVENT_SUFFIX) else {
            continue;
        };
        let ty = &bag.topics[&m.topic].ty;
        let Some(srv) = types::service_of_event(ty) else {
            continue;
        };
        let ev = srv.decode_event(&format!("{}[{i}]", m.topic), &m.data)?;
        let (gid, seq) = event_key(&ev.info);
        let e = calls
            .entry((service.to_string(), gid, seq))
            .or_insert_with(|| ExpectedCall {
                service: service.to_string(),
                ty: srv.name(),
                response: None,
            });
        if ev.response.is_some() {
            e.response = ev.response;
        }
    }
    Ok(calls)
}

/// Plays `bag` into the nodes on `rt`'s domain (`rt`'s executor running) at `rate` and
/// compares. Errors are for what stops the replay; differences go into the report.
pub fn replay(rt: &RosRuntime, bag: &Bag, rate: f64) -> Result<Report> {
    let steps = steps(bag)?;
    let outputs: Vec<(String, String)> = bag
        .topics
        .values()
        .filter(|t| OUTPUT_TOPICS.contains(&t.name.as_str()))
        .map(|t| (t.name.clone(), t.ty.clone()))
        .collect();
    let expect = outputs
        .iter()
        .map(|(t, _)| (t.clone(), bag.on(t).count()))
        .collect();
    let recording = play::play(
        rt,
        &steps,
        &PlayOptions {
            rate,
            record: outputs.clone(),
            expect,
            after: outputs
                .iter()
                .flat_map(|(t, _)| bag.on(t).map(|m| (m.time_ns, t.clone())))
                .collect(),
        },
    )?;
    let mut report = Report::default();
    for (topic, ty) in &outputs {
        let want: Vec<&[u8]> = bag.on(topic).map(|m| m.data.as_slice()).collect();
        let got = recording
            .outputs
            .get(topic)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        if want.len() != got.len() {
            report.mismatches.push(format!(
                "{topic}: expected {} messages, got {}",
                want.len(),
                got.len()
            ));
        }
        for (i, (w, (_, g))) in want.iter().zip(got).enumerate() {
            report.compared += 1;
            let what = format!("{topic}[{i}]");
            let (w, g) = (types::to_json(ty, &what, w)?, types::to_json(ty, &what, g)?);
            for d in compare::differences(&w, &g, 5) {
                report.mismatches.push(format!("{what}.{d}"));
            }
        }
        report
            .lines
            .push(format!("{topic}: {} of {} messages", got.len(), want.len()));
    }
    let expected = expected_calls(bag)?;
    let mut per_service: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for c in &recording.calls {
        let Some(e) = expected.get(&(c.service.clone(), c.client_gid, c.sequence_number)) else {
            continue;
        };
        let srv = types::service(&e.ty)
            .ok_or_else(|| Error::invalid(&e.service, format!("unknown service type {}", e.ty)))?;
        let counts = per_service.entry(e.service.as_str()).or_default();
        counts.1 += 1;
        let Some(want) = &e.response else {
            continue;
        };
        counts.0 += 1;
        report.compared += 1;
        let what = format!("{} call {}", c.service, c.sequence_number);
        let (w, g) = (
            srv.response_to_json(&what, want)?,
            srv.response_to_json(&what, &c.response)?,
        );
        for d in compare::differences(&w, &g, 5) {
            report.mismatches.push(format!("{what}: {d}"));
        }
    }
    for (service, (compared, called)) in per_service {
        report.lines.push(format!(
            "{service}: {called} calls, {compared} responses compared"
        ));
    }
    if report.compared == 0 {
        report.mismatches.push(
            "nothing compared: the bag holds no output of the nodes and no recorded response \
             that the replay reproduced"
                .into(),
        );
    }
    report.recording = recording;
    Ok(report)
}

/// The `i`-th of consecutive DDS domains from `base` (valid ids are 0..=232). Runs in one
/// process take a domain each: participants of a run just stopped linger in the next one's
/// discovery for a while, and a player would count their readers as matched.
pub fn nth_domain(base: u16, i: usize) -> u16 {
    ((base as usize + i) % (crate::ros::runtime::MAX_DOMAIN_ID as usize + 1)) as u16
}

/// The radius (m) of the robot the bundled lee_planner bag plans for.
pub const DEMO_ROBOT_RADIUS: f64 = 0.2;

/// Starts every node of this build on `domain_id` with `backend`, runs `f` with a second
/// runtime on that domain (executor running) for a player, then stops both.
pub fn with_fresh_nodes<T>(
    backend: &Backend,
    domain_id: u16,
    f: impl FnOnce(&RosRuntime) -> Result<T>,
) -> Result<T> {
    let (args, _) = RosArgs::parse(&[
        "--ros-args".to_string(),
        "-p".to_string(),
        format!("backend:={}", backend.name()),
    ])?;
    // Bags record ~/distance_field: the field goes out with every plan, whether or not the
    // player's reader has been matched by the time the first goal arrives. The bags' robot
    // keeps DEMO_ROBOT_RADIUS off the walls.
    let params = ParamsFile::parse(&format!(
        "lee_planner:\n  ros__parameters:\n    publish_distance_field: true\n    robot_radius: {DEMO_ROBOT_RADIUS}\n"
    ))?;
    let nodes = RosRuntime::new(args, params, Some(domain_id))?;
    crate::nodes::start_all(&nodes)?;
    let player = RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain_id))?;
    let threads: Vec<_> = [&nodes, &player]
        .into_iter()
        .map(|rt| {
            let (ex, sd) = (rt.executor().clone(), rt.shutdown().clone());
            std::thread::spawn(move || smol::block_on(ex.run(sd.wait())))
        })
        .collect();
    let out = f(&player);
    nodes.shutdown().trigger();
    player.shutdown().trigger();
    for t in threads {
        let _ = t.join();
    }
    out
}

/// Starts every node on `domain_id` with `backend`, replays `bag` into them, stops them.
pub fn replay_into_fresh_nodes(
    bag: &Bag,
    backend: &Backend,
    domain_id: u16,
    rate: f64,
) -> Result<Report> {
    with_fresh_nodes(backend, domain_id, |player| replay(player, bag, rate))
}

/// Plays `bag`'s inputs into fresh nodes with the recorded timing, recording nothing and
/// waiting for nothing: a first pass that makes the nodes compile their CUDA kernels.
pub fn warm_up(backend: &Backend, bag: &Bag, domain_id: u16) -> Result<()> {
    let steps = steps(bag)?;
    with_fresh_nodes(backend, domain_id, |player| {
        play::play(
            player,
            &steps,
            &PlayOptions {
                rate: 1.0,
                record: vec![],
                expect: BTreeMap::new(),
                after: vec![],
            },
        )
        .map(|_| ())
    })
}
