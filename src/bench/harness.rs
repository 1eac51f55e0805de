//! What every bench shares: medians of timings, `A:B` flag pairs, and the files the peers
//! read so that they run on exactly our inputs.

use std::time::Instant;

use crate::error::{Error, Result};

/// `A:B` as two integers, for shape lists (`--shapes 5:128,8:256`).
pub(super) fn parse_pair_u32(flag: &str, s: &str) -> Result<(u32, u32)> {
    let bad = || Error::invalid(flag, format!("'{s}' is not A:B (two integers)"));
    let (a, b) = s.split_once(':').ok_or_else(bad)?;
    Ok((a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?))
}

/// The median of timings: the middle one, or the mean of the two middle ones for an even
/// count (so a "median of 2" is not the slower run). 0 for no timings.
pub fn median(mut t: Vec<f64>) -> f64 {
    if t.is_empty() {
        return 0.0;
    }
    t.sort_by(f64::total_cmp);
    let m = t.len() / 2;
    if t.len() % 2 == 1 {
        t[m]
    } else {
        (t[m - 1] + t[m]) / 2.0
    }
}

/// Median wall time in milliseconds of `reps` runs of `f` after one warm-up run.
pub fn median_ms<F: FnMut()>(reps: usize, mut f: F) -> f64 {
    f();
    median(
        (0..reps.max(1))
            .map(|_| {
                let s = Instant::now();
                f();
                s.elapsed().as_secs_f64() * 1e3
            })
            .collect(),
    )
}

/// As `median_ms`, for work that can fail (the first error ends the timing).
pub fn try_median_ms<F: FnMut() -> Result<()>>(reps: usize, mut f: F) -> Result<f64> {
    f()?;
    let mut t = Vec::with_capacity(reps.max(1));
    for _ in 0..reps.max(1) {
        let s = Instant::now();
        f()?;
        t.push(s.elapsed().as_secs_f64() * 1e3);
    }
    Ok(median(t))
}

/// Writes a NumPy array file for the peer scripts, so they run on exactly our inputs.
pub fn write_npy<T: crate::npy::Element>(
    dir: &std::path::Path,
    name: &str,
    shape: &[usize],
    values: &[T],
) -> Result<()> {
    write_file(dir, name, &crate::npy::write(shape, values))
}

/// Writes `bytes` to `dir/name`, making `dir` (and its parents) first, as `--npy-dir` asks.
pub fn write_file(dir: &std::path::Path, name: &str, bytes: &[u8]) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display().to_string(), e))?;
    let path = dir.join(name);
    std::fs::write(&path, bytes).map_err(|e| Error::io(path.display().to_string(), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_files_go_into_a_directory_made_for_them() {
        let root = std::env::temp_dir().join(format!("gp-npy-{}", std::process::id()));
        let dir = root.join("not").join("there");
        write_npy(&dir, "a.npy", &[2], &[1.0f32, 2.0]).expect("write into a new directory");
        let bytes = std::fs::read(dir.join("a.npy")).expect("the file is there");
        assert!(
            bytes.starts_with(b"\x93NUMPY"),
            "{:?}",
            &bytes[..8.min(bytes.len())]
        );
        let _ = std::fs::remove_dir_all(&root);
    }
}
