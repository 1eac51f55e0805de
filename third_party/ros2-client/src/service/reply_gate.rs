//! gpu_planning patch: a service reply waits for its client's reply reader.
//!
//! Replies are volatile: one written before the server's reply writer has
//! matched the client's reader never reaches it, and a client that waits
//! without a timeout (rclpy's `spin_until_future_complete` in `ros2 param`)
//! waits for ever. A client calls when it has matched, on its side, the
//! server's request reader and reply writer; when the server matches the
//! client's reader is another matter (discovery is not symmetric in time),
//! and on a loaded machine the request can come first. rmw_cyclonedds and
//! rmw_fastrtps servers wait for the client's reader too, for a bounded time.

use std::{
  collections::VecDeque,
  sync::Mutex,
  time::{Duration, Instant},
};

#[allow(unused_imports)]
use log::{debug, error, info, warn};
use rustdds::GuidPrefix;

/// The longest a reply waits for its client's reader. Longer than rmw's own
/// (100 ms): a participant with hundreds of endpoints (a node process) can take
/// that long to process a new client's discovery on a loaded machine.
pub const REPLY_WAIT: Duration = Duration::from_secs(2);

/// How often a waiting reply looks again.
const POLL: Duration = Duration::from_millis(2);

/// How many participants a wait ran out on are remembered.
const REMEMBERED: usize = 64;

/// The waits of one server's replies.
#[derive(Default)]
pub struct ReplyGate {
  /// Participants a wait ran out on, newest last: their replies are not made to
  /// wait again. A writer without a reply reader (a stranger's) would otherwise
  /// cost every one of its requests the whole wait, and each other request
  /// queued behind it.
  gave_up_on: Mutex<VecDeque<GuidPrefix>>,
}

impl ReplyGate {
  /// Waits until `reaches()` (the reply writer has matched a reader of
  /// participant `client`), at most [`REPLY_WAIT`], and answers whether it does.
  /// Whichever it answers, the reply is then written: a reader matched late may
  /// still see it, and a client is never left unanswered on this side.
  pub async fn wait(&self, client: GuidPrefix, reaches: impl Fn() -> bool) -> bool {
    if reaches() {
      self.forget(client);
      return true;
    }
    if self.gave_up_on.lock().is_ok_and(|g| g.contains(&client)) {
      return false;
    }
    let start = Instant::now();
    while start.elapsed() < REPLY_WAIT {
      async_io::Timer::after(POLL).await;
      if reaches() {
        debug!(
          "reply to {client:?} waited {} ms for its reader",
          start.elapsed().as_millis()
        );
        return true;
      }
    }
    warn!(
      "reply to participant {client:?} written without its reader matched after {} s: it may not \
       arrive (its later replies are not made to wait)",
      REPLY_WAIT.as_secs()
    );
    if let Ok(mut g) = self.gave_up_on.lock() {
      if g.len() == REMEMBERED {
        g.pop_front();
      }
      g.push_back(client);
    }
    false
  }

  /// How many participants a wait ran out on are remembered now.
  pub fn given_up_on(&self) -> usize {
    self.gave_up_on.lock().map_or(0, |g| g.len())
  }

  fn forget(&self, client: GuidPrefix) {
    if let Ok(mut g) = self.gave_up_on.lock() {
      g.retain(|p| *p != client);
    }
  }
}
