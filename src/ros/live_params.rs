//! Parameters that `ros2 param set` changes while a node runs. A node names its parameters'
//! ranges, which `ros2 param describe` shows, and which of them are dynamic with [`Param`];
//! every other parameter is read once, at start, and a set of it is refused with that reason,
//! as rclcpp refuses a read-only parameter. A new value is checked twice before it is taken: against its range,
//! then as the node's whole parameter struct with the new value in it (the same parsing and
//! `validate` as at start), so a value the node would have refused at start is refused now,
//! with the same message. The node reads the values in effect through a [`Live`] handle at
//! each request; ros2-client announces each change on `/parameter_events`.

use std::sync::{Arc, Mutex, RwLock};

use ros2_client::parameters::NumericRange;
use ros2_client::ParameterValue;
use serde_yaml::{Mapping, Value};

use crate::error::{Error, Result};
use crate::sync::lock;

/// A parameter's range as `ros2 param describe` gives it, and whether `ros2 param set`
/// changes it while the node runs.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    pub key: &'static str,
    pub range: Range,
    pub dynamic: bool,
}

impl Param {
    /// Changed at run time: the next request uses the new value.
    pub const fn dynamic(key: &'static str, range: Range) -> Param {
        Param {
            key,
            range,
            dynamic: true,
        }
    }

    /// Read once, at start.
    pub const fn fixed(key: &'static str, range: Range) -> Param {
        Param {
            key,
            range,
            dynamic: false,
        }
    }
}

/// The values a numeric parameter may take, both ends included, as rclcpp's ranges are
/// (`Any`: a numeric parameter any value of its type may take, or one that is not numeric).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Range {
    Any,
    Integer(i64, i64),
    /// From the first to the second in steps of the third.
    Steps(i64, i64, i64),
    Float(f64, f64),
}

/// The least positive double: the lower end, both ends included, of a range that takes every
/// number above 0.
pub const ABOVE_ZERO: f64 = f64::from_bits(1);

impl Range {
    /// The range as the node pages show it (`1..=1024`, `(0, 3600]`, `>= 0, finite`), empty for
    /// [`Range::Any`].
    pub fn shown(self) -> String {
        let int = |v: i64| match v {
            v if v == u32::MAX as i64 => "2^32-1".to_string(),
            v => v.to_string(),
        };
        let float = |v: f64| match v {
            v if v != 0.0 && v.abs() < 1e-3 => format!("{v:e}"),
            v => v.to_string(),
        };
        match self {
            Range::Any => String::new(),
            Range::Integer(lo, i64::MAX) => format!(">= {lo}"),
            Range::Integer(lo, hi) => format!("{}..={}", int(lo), int(hi)),
            Range::Steps(lo, hi, step) => format!("{lo}..={hi}, step {step}"),
            Range::Float(lo, hi) => {
                let (open, finite) = (lo == ABOVE_ZERO, hi == f64::MAX);
                match (open, finite) {
                    _ if lo == -f64::MAX && finite => "finite".to_string(),
                    (true, true) => "> 0, finite".to_string(),
                    (false, true) => format!(">= {}, finite", float(lo)),
                    (true, false) => format!("(0, {}]", float(hi)),
                    (false, false) => format!("[{}, {}]", float(lo), float(hi)),
                }
            }
        }
    }

    pub(crate) fn descriptor(self) -> NumericRange {
        match self {
            Range::Any => NumericRange::NotSpecified,
            Range::Integer(from_value, to_value) => NumericRange::IntegerRange {
                from_value,
                to_value,
                step: 0,
            },
            Range::Steps(from_value, to_value, step) => NumericRange::IntegerRange {
                from_value,
                to_value,
                step,
            },
            Range::Float(from_value, to_value) => NumericRange::FloatingPointRange {
                from_value,
                to_value,
                step: 0.0,
            },
        }
    }

    /// rclcpp's refusal of a value outside the range, or None.
    fn refuses(self, key: &str, value: &ParameterValue) -> Option<String> {
        let inside = match (self, value) {
            (Range::Integer(lo, hi), ParameterValue::Integer(v)) => (lo..=hi).contains(v),
            (Range::Steps(lo, hi, step), ParameterValue::Integer(v)) => {
                (lo..=hi).contains(v) && (v - lo) % step == 0
            }
            (Range::Float(lo, hi), ParameterValue::Double(v)) => (lo..=hi).contains(v),
            _ => return None,
        };
        let kind = match self {
            Range::Integer(..) | Range::Steps(..) => "integer",
            _ => "floating point",
        };
        (!inside).then(|| format!("Parameter {{{key}}} doesn't comply with {kind} range."))
    }
}

/// The parameter struct a node reads: parsed from the node's parameters and validated as at
/// start.
pub trait NodeParams: Send + Sync + Sized + 'static {
    fn parse(all: &Mapping) -> Result<Self>;
}

/// The values in effect of a node's parameter struct `T`.
pub struct Live<T>(Arc<RwLock<Arc<T>>>);

impl<T> Clone for Live<T> {
    fn clone(&self) -> Self {
        Live(self.0.clone())
    }
}

impl<T> Live<T> {
    /// Values that never change (tests, and callers without a node).
    pub fn fixed(value: T) -> Live<T> {
        Live(Arc::new(RwLock::new(Arc::new(value))))
    }

    /// The values in effect now; a later change does not alter what was returned.
    pub fn get(&self) -> Arc<T> {
        self.0.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn set(&self, value: T) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(value);
    }
}

/// Checks and applies a change of one dynamic parameter for one [`Live`] view.
trait Hook: Send + Sync {
    fn check(&self, all: &Mapping) -> Result<()>;
    fn apply(&self, all: &Mapping);
}

struct Typed<T: NodeParams>(Live<T>);

impl<T: NodeParams> Hook for Typed<T> {
    fn check(&self, all: &Mapping) -> Result<()> {
        T::parse(all).map(|_| ())
    }
    fn apply(&self, all: &Mapping) {
        // Checked before: a failure here would mean the parameters changed in between,
        // which the node's one lock rules out.
        if let Ok(v) = T::parse(all) {
            self.0.set(v);
        }
    }
}

/// A node's dynamic parameters: what ros2-client's validator and set action consult.
pub(crate) struct LiveParams {
    node: String,
    dynamic: Vec<Param>,
    /// The node's parameters as they are now (YAML, nested as in the params file).
    all: Mutex<Mapping>,
    hooks: Mutex<Vec<Arc<dyn Hook>>>,
}

impl LiveParams {
    pub(crate) fn new(node: String, dynamic: Vec<Param>, all: Mapping) -> LiveParams {
        LiveParams {
            node,
            dynamic,
            all: Mutex::new(all),
            hooks: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn dynamic(&self, key: &str) -> Option<Param> {
        self.dynamic
            .iter()
            .find(|d| d.dynamic && d.key == key)
            .copied()
    }

    /// A [`Live`] view of `T`, updated with every accepted change.
    pub(crate) fn view<T: NodeParams>(&self) -> Result<Live<T>> {
        let live = Live::fixed(T::parse(&lock(&self.all))?);
        lock(&self.hooks).push(Arc::new(Typed(live.clone())));
        Ok(live)
    }

    /// The validator: Ok for a value the node takes now, else the reason.
    pub(crate) fn check(
        &self,
        key: &str,
        value: &ParameterValue,
    ) -> std::result::Result<(), String> {
        let Some(d) = self.dynamic(key) else {
            return Err(format!(
                "{} reads {key} at start: restart it with --ros-args -p {key}:=VALUE (or the \
                 params file)",
                self.node
            ));
        };
        if let Some(why) = d.range.refuses(key, value) {
            return Err(why);
        }
        let all = with(&lock(&self.all), key, value).map_err(|e| e.to_string())?;
        for h in lock(&self.hooks).iter() {
            h.check(&all).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// The set action: takes a value [`Self::check`] accepted.
    pub(crate) fn apply(
        &self,
        key: &str,
        value: &ParameterValue,
    ) -> std::result::Result<(), String> {
        if self.dynamic(key).is_none() {
            // ros2-client runs the action for every declared value at start: nothing changes.
            return Ok(());
        }
        let mut all = lock(&self.all);
        let next = with(&all, key, value).map_err(|e| e.to_string())?;
        if next == *all {
            return Ok(());
        }
        for h in lock(&self.hooks).iter() {
            h.apply(&next);
        }
        *all = next;
        tracing::info!("{}: parameter {key} set to {}", self.node, shown(value));
        Ok(())
    }
}

/// `all` with the dotted `key` set to `value`.
fn with(all: &Mapping, key: &str, value: &ParameterValue) -> Result<Mapping> {
    let v = match value {
        ParameterValue::Boolean(b) => Value::Bool(*b),
        ParameterValue::Integer(i) => Value::Number((*i).into()),
        ParameterValue::Double(d) => Value::Number((*d).into()),
        ParameterValue::String(s) => Value::String(s.clone()),
        other => {
            return Err(Error::invalid(
                key,
                format!("{other:?}: not a value this parameter takes"),
            ))
        }
    };
    let mut out = all.clone();
    let mut at = &mut out;
    let mut parts = key.split('.').peekable();
    while let Some(part) = parts.next() {
        let k = Value::String(part.to_string());
        if parts.peek().is_none() {
            at.insert(k, v);
            break;
        }
        let next = at
            .entry(k)
            .or_insert_with(|| Value::Mapping(Mapping::new()));
        let Value::Mapping(m) = next else {
            return Err(Error::invalid(key, "is not a map of parameters"));
        };
        at = m;
    }
    Ok(out)
}

fn shown(v: &ParameterValue) -> String {
    match v {
        ParameterValue::Boolean(b) => b.to_string(),
        ParameterValue::Integer(i) => i.to_string(),
        ParameterValue::Double(d) => d.to_string(),
        ParameterValue::String(s) => format!("'{s}'"),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ros::node_params::ServiceParams;

    const DYNAMIC: &[Param] = &[
        Param::dynamic("request_timeout_s", Range::Float(0.0, 86400.0)),
        Param::fixed("max_pending_requests", Range::Integer(1, 9)),
    ];

    fn params(text: &str) -> LiveParams {
        LiveParams::new(
            "/n".into(),
            DYNAMIC.to_vec(),
            serde_yaml::from_str(text).unwrap(),
        )
    }

    #[test]
    fn a_dynamic_parameter_changes_what_the_view_reads() {
        let p = params("request_timeout_s: 5.0\nmax_pending_requests: 7\n");
        let live = p.view::<ServiceParams>().unwrap();
        let before = live.get();
        assert_eq!(before.request_timeout_s, 5.0);
        let v = ParameterValue::Double(0.5);
        p.check("request_timeout_s", &v).unwrap();
        p.apply("request_timeout_s", &v).unwrap();
        assert_eq!(live.get().request_timeout_s, 0.5);
        assert_eq!(live.get().max_pending_requests, 7);
        // What was read before stays as it was.
        assert_eq!(before.request_timeout_s, 5.0);
    }

    #[test]
    fn read_only_out_of_range_and_invalid_values_are_refused_with_the_reason() {
        let p = params("request_timeout_s: 5.0\n");
        let live = p.view::<ServiceParams>().unwrap();
        let e = p
            .check("max_pending_requests", &ParameterValue::Integer(3))
            .unwrap_err();
        assert!(e.contains("/n reads max_pending_requests at start"), "{e}");
        let e = p
            .check("request_timeout_s", &ParameterValue::Double(-1.0))
            .unwrap_err();
        assert!(e.contains("range"), "{e}");
        let e = p
            .check("request_timeout_s", &ParameterValue::Double(f64::NAN))
            .unwrap_err();
        assert!(e.contains("request_timeout_s"), "{e}");
        assert_eq!(live.get().request_timeout_s, 5.0);
    }

    #[test]
    fn dotted_keys_set_nested_values() {
        let all: Mapping = serde_yaml::from_str("a:\n  b: 1\n  c: 2\n").unwrap();
        let m = with(&all, "a.b", &ParameterValue::Integer(5)).unwrap();
        assert_eq!(serde_yaml::to_string(&m).unwrap(), "a:\n  b: 5\n  c: 2\n");
        assert!(with(&m, "a.b.c", &ParameterValue::Integer(1)).is_err());
    }
}
