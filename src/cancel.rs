//! Cooperative cancellation of work whose caller stopped waiting.
//!
//! A node answers a request that passed `request_timeout_s` with a deadline error at once; the
//! computation it started on a blocking thread must stop too, or abandoned requests pile up
//! and `max_concurrent_requests` bounds only replies, not work. The node runs that computation
//! inside [`CancelFlag::scope`]; the algorithms' outer loops call [`checkpoint`] (or check
//! [`current`] from rayon workers), which costs one relaxed load and is a no-op outside a scope
//! (the CLI and the benches).

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::error::{Error, Result};

/// Set once, by whoever gave up on the work; read by the work.
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

thread_local! {
    static CURRENT: RefCell<Option<CancelFlag>> = const { RefCell::new(None) };
}

impl CancelFlag {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// `Err(Cancelled)` once cancelled.
    pub fn check(&self) -> Result<()> {
        if self.is_cancelled() {
            Err(Error::Cancelled)
        } else {
            Ok(())
        }
    }

    /// Resolves once the flag is cancelled (looked at every 5 ms), for racing work against a
    /// cancel request that comes from elsewhere (a CancelGoal).
    pub async fn cancelled(&self) {
        while !self.is_cancelled() {
            smol::Timer::after(std::time::Duration::from_millis(5)).await;
        }
    }

    /// Runs `f` on this thread with this flag as the current one (restored afterwards).
    pub fn scope<T>(&self, f: impl FnOnce() -> T) -> T {
        let previous = CURRENT.with(|c| c.replace(Some(self.clone())));
        struct Restore(Option<CancelFlag>);
        impl Drop for Restore {
            fn drop(&mut self) {
                CURRENT.with(|c| *c.borrow_mut() = self.0.take());
            }
        }
        let _restore = Restore(previous);
        f()
    }
}

/// The flag of the scope this thread runs in, for work handed to other threads (rayon).
pub fn current() -> Option<CancelFlag> {
    CURRENT.with(|c| c.borrow().clone())
}

/// `Err(Cancelled)` when the work running on this thread was cancelled.
pub fn checkpoint() -> Result<()> {
    CURRENT.with(|c| c.borrow().as_ref().map_or(Ok(()), CancelFlag::check))
}

/// `smol::unblock` inside `flag`'s scope. Work that ends after its flag was cancelled says so
/// in the log (nobody awaits its result any more): the evidence that it stopped.
pub async fn unblock<T: Send + 'static>(
    flag: &CancelFlag,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let flag = flag.clone();
    smol::unblock(move || {
        let started = std::time::Instant::now();
        let r = flag.scope(f);
        if flag.is_cancelled() {
            tracing::info!(
                "cancelled work stopped after {:.3} s",
                started.elapsed().as_secs_f64()
            );
        }
        r
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoints_see_their_scope_only() {
        assert!(checkpoint().is_ok(), "no scope: never cancelled");
        let flag = CancelFlag::new();
        flag.scope(|| {
            assert!(checkpoint().is_ok());
            flag.cancel();
            assert!(matches!(checkpoint(), Err(Error::Cancelled)));
            let other = CancelFlag::new();
            other.scope(|| assert!(checkpoint().is_ok(), "inner scope has its own flag"));
            assert!(checkpoint().is_err(), "outer scope restored");
        });
        assert!(checkpoint().is_ok(), "scope left");
        assert!(current().is_none());
    }
}
