//! Per-service times inside the node, for `gpu_planning bench services`: from a request taken
//! off the DDS reader to its response handed to the writer ("in node"), and the handler's own
//! share of it (the computation with its message conversions). Off unless a process switches it
//! on, so a node in service keeps no history.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static ON: AtomicBool = AtomicBool::new(false);
static TIMES: Mutex<Option<HashMap<String, Vec<Sample>>>> = Mutex::new(None);

/// At most this many samples per service are kept (the oldest are dropped first).
const KEEP: usize = 100_000;

/// One request's times, in milliseconds.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub handler_ms: f64,
    pub in_node_ms: f64,
    /// When the node took the request up: against the client's send time (same process, one
    /// clock), it splits the time outside the node into the request's way and the response's.
    pub received: Instant,
}

/// Starts (or stops) recording in this process.
pub fn record(on: bool) {
    ON.store(on, Ordering::Relaxed);
}

pub(crate) fn enabled() -> bool {
    ON.load(Ordering::Relaxed)
}

pub(crate) fn add(service: &str, handler: Duration, received: Instant) {
    let in_node = received.elapsed();
    let mut all = TIMES.lock().unwrap_or_else(|p| p.into_inner());
    let v = all
        .get_or_insert_with(HashMap::new)
        .entry(service.to_string())
        .or_default();
    if v.len() == KEEP {
        v.remove(0);
    }
    v.push(Sample {
        handler_ms: handler.as_secs_f64() * 1e3,
        in_node_ms: in_node.as_secs_f64() * 1e3,
        received,
    });
}

/// Takes the samples recorded for `service` (as the node names it in its log, e.g.
/// `lee_planner: ~/get_plan`) since the last take.
pub fn take(service: &str) -> Vec<Sample> {
    let mut all = TIMES.lock().unwrap_or_else(|p| p.into_inner());
    all.as_mut()
        .and_then(|m| m.remove(service))
        .unwrap_or_default()
}
