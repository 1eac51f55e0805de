//! Durations given from outside (flags, parameters) as seconds: one rule for all of them, so no
//! value panics when it becomes a `Duration` or wraps when added to an instant.

use std::time::Duration;

use crate::error::{Error, Result};

/// The longest duration accepted anywhere: ten years, far beyond any deadline or run length
/// a robot needs, and far below where `Instant + Duration` overflows.
pub const MAX_SECONDS: f64 = 10.0 * 365.0 * 86_400.0;

/// `s` seconds as a duration when it is finite and in `0..=MAX_SECONDS`; otherwise an error
/// naming `key` and the value.
pub fn duration(key: &str, s: f64) -> Result<Duration> {
    if !(s.is_finite() && s >= 0.0) {
        return Err(Error::invalid(
            key,
            format!("{} is not a finite number of seconds >= 0", shown(s)),
        ));
    }
    if s > MAX_SECONDS {
        return Err(Error::invalid(
            key,
            format!(
                "{} s is above the longest duration accepted, {MAX_SECONDS} s (ten years)",
                shown(s)
            ),
        ));
    }
    Ok(Duration::from_secs_f64(s))
}

/// The shortest duration [`positive_duration`] takes: one nanosecond, a [`Duration`]'s unit.
pub const MIN_POSITIVE_SECONDS: f64 = 1e-9;

/// As [`duration`], refusing anything below [`MIN_POSITIVE_SECONDS`] too.
pub fn positive_duration(key: &str, s: f64) -> Result<Duration> {
    let d = duration(key, s)?;
    if s < MIN_POSITIVE_SECONDS {
        return Err(Error::invalid(
            key,
            format!(
                "{} is not a positive number of seconds (at least 1 ns)",
                shown(s)
            ),
        ));
    }
    Ok(d)
}

/// A number as a person would write it: 1e20 rather than its 21 digits.
pub fn shown(x: f64) -> String {
    if x.is_finite() && x != 0.0 && !(1e-6..1e15).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_non_finite_and_negative_seconds_are_refused_by_name() {
        for bad in [
            1e20,
            1e300,
            f64::INFINITY,
            f64::NAN,
            -1.0,
            MAX_SECONDS * 1.0001,
        ] {
            let e = duration("--duration-s", bad).unwrap_err().to_string();
            assert!(e.contains("--duration-s"), "{e}");
        }
        assert!(positive_duration("x", 0.0).is_err());
        assert!(positive_duration("x", 1e-300).is_err());
    }

    #[test]
    fn seconds_in_range_become_durations() {
        assert_eq!(duration("x", 0.0).unwrap(), Duration::ZERO);
        assert_eq!(duration("x", 1.5).unwrap(), Duration::from_millis(1500));
        assert_eq!(
            duration("x", MAX_SECONDS).unwrap(),
            Duration::from_secs(MAX_SECONDS as u64)
        );
    }
}
