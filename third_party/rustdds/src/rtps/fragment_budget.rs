//! Process-wide bounds on DATA_FRAG reassembly (a gpu_planning patch, see PATCHED.md).
//!
//! A DATA_FRAG announces the whole sample's size before any of it has arrived, so an
//! assembly buffer sized from it is memory a sender claims, not memory it sent. Two bounds
//! hold here: no sample above `max_sample_bytes` is reassembled at all, and the buffers in
//! flight in the whole process (every reader of every participant) stay within
//! `budget_bytes`. A reader that would exceed the budget first drops its own oldest
//! buffers; if that is not enough the new sample is refused (a reliable writer re-sends it
//! once room is made, a best-effort one loses it, as it would lose a dropped fragment).

use std::{
  sync::atomic::{AtomicU64, AtomicUsize, Ordering},
  time::{SystemTime, UNIX_EPOCH},
};

/// The largest sample reassembled by default: a GridMap layer of 2^28 float32 cells with
/// room for its header, the largest message gpu_planning's readers accept at their default caps.
pub const DEFAULT_MAX_SAMPLE_BYTES: usize = (1 << 30) + (1 << 20);

/// The default budget for every buffer in flight: one sample at the cap and as much again.
pub const DEFAULT_BUDGET_BYTES: usize = 2 * DEFAULT_MAX_SAMPLE_BYTES;

static MAX_SAMPLE_BYTES: AtomicUsize = AtomicUsize::new(DEFAULT_MAX_SAMPLE_BYTES);
static BUDGET_BYTES: AtomicUsize = AtomicUsize::new(DEFAULT_BUDGET_BYTES);
static IN_FLIGHT_BYTES: AtomicUsize = AtomicUsize::new(0);

/// Sets the largest sample any reader reassembles and the bytes all readers' assembly
/// buffers may hold together (raised to at least `max_sample_bytes`).
pub fn set_fragment_reassembly_limits(max_sample_bytes: usize, budget_bytes: usize) {
  MAX_SAMPLE_BYTES.store(max_sample_bytes, Ordering::Relaxed);
  BUDGET_BYTES.store(budget_bytes.max(max_sample_bytes), Ordering::Relaxed);
}

/// The largest sample reassembled.
pub fn max_sample_bytes() -> usize {
  MAX_SAMPLE_BYTES.load(Ordering::Relaxed)
}

/// Bytes held by assembly buffers in this process now.
pub fn in_flight_bytes() -> usize {
  IN_FLIGHT_BYTES.load(Ordering::Relaxed)
}

/// Whether `bytes` more would fit the budget now.
pub(crate) fn fits(bytes: usize) -> bool {
  in_flight_bytes().saturating_add(bytes) <= BUDGET_BYTES.load(Ordering::Relaxed)
}

/// Bytes of the budget held by one assembly buffer, given back when it is dropped.
#[derive(Debug)]
pub(crate) struct Reservation(usize);

impl Reservation {
  /// Takes `bytes` of the budget, or `None` when they do not fit.
  pub(crate) fn take(bytes: usize) -> Option<Reservation> {
    let budget = BUDGET_BYTES.load(Ordering::Relaxed);
    IN_FLIGHT_BYTES
      .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
        held.checked_add(bytes).filter(|&after| after <= budget)
      })
      .ok()
      .map(|_| Reservation(bytes))
  }
}

impl Drop for Reservation {
  fn drop(&mut self) {
    IN_FLIGHT_BYTES.fetch_sub(self.0, Ordering::AcqRel);
  }
}

/// Whether a refusal may be logged now: at most one line a second for the whole process,
/// so that a sender spraying refused fragments cannot flood the log.
pub(crate) fn may_log_refusal() -> bool {
  static LAST_SECOND: AtomicU64 = AtomicU64::new(0);
  let now = SystemTime::now()
    .duration_since(UNIX_EPOCH)
    .map_or(0, |d| d.as_secs());
  LAST_SECOND.swap(now, Ordering::Relaxed) != now
}
