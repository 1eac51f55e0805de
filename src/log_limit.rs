//! Log lines a stranger can cause as fast as they send (refusals, overloads), at most one a
//! second per source: the first of each second is logged, the rest counted into the next.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// One source of rate-limited lines.
#[derive(Debug, Default)]
pub struct LogLimit {
    /// The second of the last line logged.
    second: AtomicU64,
    /// Lines held back since then.
    held: AtomicU64,
}

impl LogLimit {
    /// `Some(n)` when a line may be logged now, `n` the lines held back before it; `None` when
    /// this one is held back (and counted).
    pub fn admit(&self) -> Option<u64> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        if self.second.swap(now, Ordering::Relaxed) == now {
            self.held.fetch_add(1, Ordering::Relaxed);
            None
        } else {
            Some(self.held.swap(0, Ordering::Relaxed))
        }
    }
}

/// The tail of a line [`LogLimit::admit`] let through: how many like it were held back.
pub fn held_back(n: u64) -> String {
    match n {
        0 => String::new(),
        n => format!(" ({n} more like it in the last second not logged)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_a_second_and_the_rest_counted() {
        let l = LogLimit::default();
        assert_eq!(l.admit(), Some(0));
        let held = (0..1000).filter(|_| l.admit().is_none()).count();
        // Unless the second turned meanwhile, all 1000 were held back.
        assert!(held >= 999, "{held}");
        std::thread::sleep(std::time::Duration::from_millis(1100));
        assert_eq!(l.admit(), Some(held as u64));
    }
}
