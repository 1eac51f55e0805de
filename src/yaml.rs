//! YAML from files others write (map YAMLs, parameter files, bag metadata): parsed with
//! serde_yaml after a bound on flow-collection nesting, since a line of 100,000 `[` took the
//! parser 21 s (its work grows with the square of the depth) and no real file nests past a few.

use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

/// The deepest `[`/`{` nesting read.
pub const MAX_DEPTH: usize = 64;

/// `text` as a `T`, or an error naming `what`: not YAML of that shape, or nested deeper than
/// [`MAX_DEPTH`].
pub fn from_str<T: DeserializeOwned>(what: &str, text: &str) -> Result<T> {
    if let Some(at) = too_deep(text) {
        return Err(Error::invalid(
            what,
            format!("not read: collections nested deeper than {MAX_DEPTH} (at byte {at})"),
        ));
    }
    serde_yaml::from_str(text).map_err(|e| Error::invalid(what, e))
}

/// Where the flow nesting first passes [`MAX_DEPTH`]. Brackets inside quotes are skipped;
/// ones in comments or plain scalars can only make it count deeper than the truth.
fn too_deep(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote = None;
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '[' | '{') => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Some(i);
                }
            }
            (None, ']' | '}') => depth = depth.saturating_sub(1),
            _ => {}
        }
        // A quote never spans a line in the files read here; an unmatched one ends with it.
        if c == '\n' {
            quote = None;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_flow_nesting_is_refused_at_once_and_real_files_read() {
        let deep = |n: usize| format!("x: {}{}\n", "[".repeat(n), "]".repeat(n));
        assert!(from_str::<serde_yaml::Value>("map.yaml", &deep(MAX_DEPTH)).is_ok());
        let e = from_str::<serde_yaml::Value>("map.yaml", &deep(100_000))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("map.yaml") && e.contains("nested deeper than 64"),
            "{e}"
        );
        // Brackets in quotes are text.
        let quoted = format!("a: '{}'\n", "[".repeat(1000));
        assert!(from_str::<serde_yaml::Value>("q", &quoted).is_ok());
        let v: serde_yaml::Value =
            from_str("ok", "origin: [0.0, -1.5, 0.0]\nname: \"a [b\"\n").unwrap();
        assert_eq!(v["origin"][1].as_f64(), Some(-1.5));
    }
}
