//! Compares a recorded output with a replayed one, as JSON trees: integers, strings and bools
//! exactly, floats within a tolerance, and fields that differ between runs by nature (stamps,
//! compute times, which backend answered) not at all.

use serde_json::Value;

/// Field names not compared between runs: wall-clock stamps (and the map load time a node
/// stamps), measured times, the backend that answered.
pub const RUN_DEPENDENT: &[&str] = &["stamp", "map_load_time", "compute_time_s", "backend"];

/// Relative tolerance of floats (absolute below 1): f32 results of the GPU and the CPU agree
/// to the last bit in this package, so this only absorbs printing and summing order.
pub const FLOAT_TOLERANCE: f64 = 1e-6;

/// The differences, each as `path: expected X, got Y`; at most `limit` of them.
pub fn differences(expected: &Value, actual: &Value, limit: usize) -> Vec<String> {
    let mut out = Vec::new();
    walk("", expected, actual, RUN_DEPENDENT, &mut out, limit);
    out
}

/// As [`differences`], every field compared (two decodings of the same bytes).
pub fn differences_all(expected: &Value, actual: &Value, limit: usize) -> Vec<String> {
    let mut out = Vec::new();
    walk("", expected, actual, &[], &mut out, limit);
    out
}

fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 80 {
        format!(
            "{}…",
            &s[..s.char_indices().nth(77).map_or(s.len(), |(i, _)| i)]
        )
    } else {
        s
    }
}

fn walk(path: &str, e: &Value, a: &Value, skip: &[&str], out: &mut Vec<String>, limit: usize) {
    if out.len() >= limit {
        return;
    }
    match (e, a) {
        (Value::Object(eo), Value::Object(ao)) => {
            for (k, ev) in eo {
                if skip.contains(&k.as_str()) {
                    continue;
                }
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match ao.get(k) {
                    Some(av) => walk(&p, ev, av, skip, out, limit),
                    None => out.push(format!("{p}: missing")),
                }
            }
        }
        (Value::Array(ea), Value::Array(aa)) => {
            if ea.len() != aa.len() {
                out.push(format!(
                    "{path}: expected {} elements, got {}",
                    ea.len(),
                    aa.len()
                ));
                return;
            }
            for (i, (ev, av)) in ea.iter().zip(aa).enumerate() {
                walk(&format!("{path}[{i}]"), ev, av, skip, out, limit);
            }
        }
        (Value::Number(en), Value::Number(an)) => {
            let same = if en.is_f64() || an.is_f64() {
                let (x, y) = (
                    en.as_f64().unwrap_or(f64::NAN),
                    an.as_f64().unwrap_or(f64::NAN),
                );
                x == y || (x - y).abs() <= FLOAT_TOLERANCE * x.abs().max(y.abs()).max(1.0)
            } else {
                en == an
            };
            if !same {
                out.push(format!("{path}: expected {en}, got {an}"));
            }
        }
        _ => {
            if e != a {
                out.push(format!("{path}: expected {}, got {}", show(e), show(a)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integers_exact_floats_close_run_fields_ignored() {
        let e = json!({"a": 3, "f": 1.0, "v": [1, 2], "stamp": {"sec": 1}, "backend": "cpu"});
        let same =
            json!({"a": 3, "f": 1.0 + 1e-9, "v": [1, 2], "stamp": {"sec": 9}, "backend": "cuda"});
        assert!(differences(&e, &same, 10).is_empty());
        let off = json!({"a": 4, "f": 1.1, "v": [1, 2, 3], "stamp": {"sec": 1}, "backend": "cpu"});
        let d = differences(&e, &off, 10);
        assert_eq!(d.len(), 3, "{d:?}");
        assert!(d[0].starts_with("a: expected 3, got 4"), "{d:?}");
        assert!(differences(&json!({"s": "x"}), &json!({"s": "y"}), 10)[0].contains("\"x\""));
        assert_eq!(
            differences(&json!({"k": 1}), &json!({}), 10),
            ["k: missing"]
        );
    }
}
