//! Plays timed steps (topic messages and service calls) into the nodes of a DDS domain and
//! records what comes back: the outputs on chosen topics and each call's response. The bag
//! generator and the replay check share it, so a bag is recorded exactly as it is replayed.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;

use super::qos::TopicQos;
use super::types::{self, RawClient, RawPublisher};
use crate::error::{Error, Result};
use crate::ros::{NodeContext, RosRuntime};
use crate::sync::lock;

#[derive(Debug, Clone)]
pub enum Step {
    Publish {
        topic: String,
        ty: String,
        qos: TopicQos,
        cdr: Vec<u8>,
    },
    /// A call of `service` (`/lee_planner/get_plan`) of type `ty` (`nav_msgs/srv/GetPlan`).
    Call {
        service: String,
        ty: String,
        request: Vec<u8>,
        client_gid: [u8; 16],
        sequence_number: i64,
    },
}

#[derive(Debug, Clone)]
pub struct TimedStep {
    /// Nanoseconds; only differences between steps matter.
    pub time_ns: u64,
    pub step: Step,
}

#[derive(Debug, Clone)]
pub struct CallRecord {
    pub service: String,
    pub ty: String,
    pub client_gid: [u8; 16],
    pub sequence_number: i64,
    pub request: Vec<u8>,
    /// Since the first step.
    pub sent_ns: u64,
    pub answered_ns: u64,
    pub response: Vec<u8>,
}

/// Per recorded topic: (nanoseconds since the first step, message).
pub type Outputs = BTreeMap<String, Vec<(u64, Vec<u8>)>>;

#[derive(Debug, Default)]
pub struct Recording {
    pub outputs: Outputs,
    pub calls: Vec<CallRecord>,
}

pub struct PlayOptions {
    /// 1: the recorded timing; 2: twice as fast; 0: no waiting between steps.
    pub rate: f64,
    /// Topics to record, with their types.
    pub record: Vec<(String, String)>,
    /// Wait after the last step until each recorded topic has this many messages (or 60 s).
    pub expect: BTreeMap<String, usize>,
    /// Outputs a recording saw, as (time, topic) on the steps' clock: before a step, wait (at
    /// most 30 s) until every output recorded before it has arrived, so that a slower node
    /// (a cold GPU compiling its kernels) sees its inputs in the recorded order.
    pub after: Vec<(u64, String)>,
}

/// Waits on a discovery future, at most `s` seconds: ros2-client can miss the graph event that
/// completes a match, so a timeout only means "rely on retries and transient local".
async fn within<T>(s: f64, f: impl std::future::Future<Output = T>) -> Option<T> {
    match futures::future::select(
        Box::pin(f),
        Box::pin(smol::Timer::after(Duration::from_secs_f64(s))),
    )
    .await
    {
        futures::future::Either::Left((v, _)) => Some(v),
        futures::future::Either::Right(_) => None,
    }
}

/// One call, retried with growing patience: a request sent before discovery matched is lost,
/// while a slow answer must not be asked for twice (the node would publish twice).
/// Each wait that ends without an answer is logged, so that a player on a domain where no node
/// serves the call says so at once rather than after the last.
async fn call(client: &dyn RawClient, service: &str, request: &[u8]) -> Result<Vec<u8>> {
    let mut waited = 0.0;
    for wait_s in [3.0, 6.0, 12.0, 24.0, 45.0] {
        if let Some(r) = within(wait_s, client.call(request)).await {
            return r;
        }
        waited += wait_s;
        if waited < 90.0 {
            tracing::warn!(
                "{service}: no response after {waited} s; asking again (up to 90 s): is a node \
                 serving it on this DDS domain?"
            );
        }
    }
    Err(Error::invalid(service, "no response within 90 s over DDS"))
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Plays `steps` with a node of `rt` (whose executor must be running) named `bag_player`.
pub fn play(rt: &RosRuntime, steps: &[TimedStep], opts: &PlayOptions) -> Result<Recording> {
    let mut ctx = NodeContext::new(rt, "bag_player")?;
    let mut publishers: BTreeMap<String, Box<dyn RawPublisher>> = BTreeMap::new();
    let mut clients: BTreeMap<String, Box<dyn RawClient>> = BTreeMap::new();
    for s in steps {
        match &s.step {
            Step::Publish { topic, ty, qos, .. } if !publishers.contains_key(topic) => {
                // A mirrored type goes out through its node's typed publisher (checked, and
                // listed in the graph); any other as the recorded bytes.
                let p = match types::message(ty) {
                    Some(m) => m.publisher(&mut ctx, topic, *qos)?,
                    None => super::raw::publisher(&mut ctx, topic, ty, *qos)?,
                };
                publishers.insert(topic.clone(), p);
            }
            Step::Call { service, ty, .. } if !clients.contains_key(service) => {
                let s = types::service(ty).ok_or_else(|| {
                    Error::invalid(
                        service,
                        format!("type '{ty}' is not one this package calls"),
                    )
                })?;
                clients.insert(service.clone(), s.client(&mut ctx, service)?);
            }
            _ => {}
        }
    }
    let outputs: Arc<Mutex<Outputs>> = Arc::default();
    let started = Arc::new(Mutex::new(Instant::now()));
    let record_qos = TopicQos {
        reliable: true,
        transient_local: false,
        depth: 100,
    };
    for (topic, ty) in &opts.record {
        let m = types::message(ty).ok_or_else(|| {
            Error::invalid(
                topic,
                format!("type '{ty}' is not one this package records"),
            )
        })?;
        let mut stream = m.subscribe(&mut ctx, topic, record_qos)?;
        let (sink, topic, started) = (outputs.clone(), topic.clone(), started.clone());
        lock(&sink).entry(topic.clone()).or_default();
        rt.spawn(async move {
            while let Some(bytes) = stream.next().await {
                let t = nanos(lock(&started).elapsed());
                lock(&sink)
                    .entry(topic.clone())
                    .or_default()
                    .push((t, bytes));
            }
        });
    }
    let node = ctx.node();
    let result: Result<Vec<CallRecord>> = smol::block_on(async {
        let waits = publishers
            .values()
            .map(|p| p.wait_matched(node))
            .chain(clients.values().map(|c| c.wait_matched(node)));
        if within(10.0, futures::future::join_all(waits))
            .await
            .is_none()
        {
            tracing::warn!(
                "not every topic and service of the bag was matched within 10 s (no node on DDS \
                 domain {}, or a discovery event missed); playing on",
                rt.domain_id()
            );
        }
        // Our own subscriptions need their writers' matches too; there is no cheap signal
        // for that in ros2-client, and loopback discovery settles well within this.
        smol::Timer::after(Duration::from_millis(500)).await;
        let t0 = Instant::now();
        *lock(&started) = t0;
        let base = steps.first().map_or(0, |s| s.time_ns);
        let mut calls = Vec::new();
        // Time spent waiting for late outputs; the schedule moves by it, keeping the gaps.
        let mut late = Duration::ZERO;
        // Each topic's messages counted as `bag info --echo` counts them (`/map[0]`), so an
        // error names the message.
        let mut published: BTreeMap<&str, usize> = BTreeMap::new();
        for s in steps {
            if opts.rate > 0.0 {
                // Library callers may pass any rate: a wait that does not fit a Duration is
                // capped, not a panic.
                let due = Duration::try_from_secs_f64(
                    s.time_ns.saturating_sub(base) as f64 * 1e-9 / opts.rate,
                )
                .unwrap_or(Duration::MAX)
                .saturating_add(late);
                if let Some(left) = due.checked_sub(t0.elapsed()) {
                    smol::Timer::after(left).await;
                }
            }
            let due: BTreeMap<&str, usize> = opts
                .after
                .iter()
                .filter(|(t, _)| *t < s.time_ns)
                .fold(BTreeMap::new(), |mut m, (_, topic)| {
                    *m.entry(topic.as_str()).or_default() += 1;
                    m
                });
            let waiting = Instant::now();
            while waiting.elapsed() < Duration::from_secs(30)
                && due
                    .iter()
                    .any(|(t, n)| lock(&outputs).get(*t).map_or(0, Vec::len) < *n)
            {
                smol::Timer::after(Duration::from_millis(10)).await;
            }
            late += waiting.elapsed();
            match &s.step {
                Step::Publish { topic, cdr, .. } => {
                    let n = published.entry(topic.as_str()).or_default();
                    if let Some(p) = publishers.get(topic) {
                        p.publish(cdr)
                            .await
                            .map_err(|e| e.under(format!("{topic}[{n}]: ")))?;
                    }
                    *n += 1;
                }
                Step::Call {
                    service,
                    ty,
                    request,
                    client_gid,
                    sequence_number,
                } => {
                    let Some(c) = clients.get(service) else {
                        continue;
                    };
                    let sent_ns = nanos(t0.elapsed());
                    let response = call(c.as_ref(), service, request).await?;
                    calls.push(CallRecord {
                        service: service.clone(),
                        ty: ty.clone(),
                        client_gid: *client_gid,
                        sequence_number: *sequence_number,
                        request: request.clone(),
                        sent_ns,
                        answered_ns: nanos(t0.elapsed()),
                        response,
                    });
                }
            }
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let done = {
                let got = lock(&outputs);
                opts.expect
                    .iter()
                    .all(|(t, n)| got.get(t).map_or(0, Vec::len) >= *n)
            };
            if done || Instant::now() > deadline {
                break;
            }
            smol::Timer::after(Duration::from_millis(20)).await;
        }
        // Anything beyond the expected would show up in this time.
        smol::Timer::after(Duration::from_millis(300)).await;
        Ok(calls)
    });
    let calls = result?;
    let outputs = std::mem::take(&mut *lock(&outputs));
    Ok(Recording { outputs, calls })
}
