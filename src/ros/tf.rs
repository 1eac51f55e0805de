//! A transform buffer as tf2 keeps one: the latest `/tf_static` transform of each frame, and
//! each `/tf` frame's recent history (`CACHE_NS`), looked up between any two frames of one
//! tree at their latest common time, each edge interpolated there (linear translation, slerp
//! rotation). What nav2 asks of tf2 to find the robot (`map -> odom -> base_link`) and to
//! bring a goal into the map's frame.

use std::collections::{HashMap, VecDeque};

use crate::ros::msg::builtin_interfaces::Time;
use crate::ros::msg::geometry_msgs::{
    Point, Pose, Quaternion, Transform, TransformStamped, Vector3,
};

/// tf2's default cache: 10 s of each dynamic frame.
const CACHE_NS: i64 = 10_000_000_000;
/// Chains longer than this are taken as a loop in the tree.
const MAX_DEPTH: usize = 1000;

/// A rigid transform: `p_parent = rotate(q, p_child) + t` (q is x, y, z, w, unit length).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rigid {
    pub t: [f64; 3],
    pub q: [f64; 4],
}

impl Rigid {
    pub const IDENTITY: Rigid = Rigid {
        t: [0.0; 3],
        q: [0.0, 0.0, 0.0, 1.0],
    };

    pub fn from_msg(m: &Transform) -> Rigid {
        let (t, q) = (&m.translation, &m.rotation);
        Rigid {
            t: [t.x, t.y, t.z],
            q: [q.x, q.y, q.z, q.w],
        }
    }

    pub fn from_pose(p: &Pose) -> Rigid {
        Rigid::from_msg(&Transform {
            translation: Vector3 {
                x: p.position.x,
                y: p.position.y,
                z: p.position.z,
            },
            rotation: p.orientation.clone(),
        })
    }

    pub fn to_pose(self) -> Pose {
        let [x, y, z] = self.t;
        let [qx, qy, qz, qw] = self.q;
        Pose {
            position: Point { x, y, z },
            orientation: Quaternion {
                x: qx,
                y: qy,
                z: qz,
                w: qw,
            },
        }
    }

    pub fn rotate(&self, v: [f64; 3]) -> [f64; 3] {
        let [x, y, z, w] = self.q;
        // v + 2 w (u x v) + 2 u x (u x v), u = (x, y, z)
        let c = [
            y * v[2] - z * v[1],
            z * v[0] - x * v[2],
            x * v[1] - y * v[0],
        ];
        let cc = [
            y * c[2] - z * c[1],
            z * c[0] - x * c[2],
            x * c[1] - y * c[0],
        ];
        [
            v[0] + 2.0 * (w * c[0] + cc[0]),
            v[1] + 2.0 * (w * c[1] + cc[1]),
            v[2] + 2.0 * (w * c[2] + cc[2]),
        ]
    }

    /// `self * other`: first `other`, then `self` (a child's transform under its parent's).
    pub fn then(&self, other: &Rigid) -> Rigid {
        let r = self.rotate(other.t);
        Rigid {
            t: [self.t[0] + r[0], self.t[1] + r[1], self.t[2] + r[2]],
            q: qmul(self.q, other.q),
        }
    }

    pub fn inverse(&self) -> Rigid {
        let [x, y, z, w] = self.q;
        let inv = Rigid {
            t: [0.0; 3],
            q: [-x, -y, -z, w],
        };
        let t = inv.rotate(self.t);
        Rigid {
            t: [-t[0], -t[1], -t[2]],
            q: inv.q,
        }
    }

    /// The transform a fraction `s` of the way from `self` to `other`.
    fn interpolate(&self, other: &Rigid, s: f64) -> Rigid {
        let t = std::array::from_fn(|i| self.t[i] + (other.t[i] - self.t[i]) * s);
        Rigid {
            t,
            q: slerp(self.q, other.q, s),
        }
    }
}

fn qmul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

fn slerp(a: [f64; 4], b: [f64; 4], s: f64) -> [f64; 4] {
    let mut dot: f64 = (0..4).map(|i| a[i] * b[i]).sum();
    let b = if dot < 0.0 {
        dot = -dot;
        b.map(|v| -v)
    } else {
        b
    };
    let (wa, wb) = if dot > 0.9995 {
        (1.0 - s, s)
    } else {
        let th = dot.clamp(-1.0, 1.0).acos();
        let sin = th.sin();
        (((1.0 - s) * th).sin() / sin, (s * th).sin() / sin)
    };
    let q: [f64; 4] = std::array::from_fn(|i| wa * a[i] + wb * b[i]);
    let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    q.map(|v| v / n)
}

fn nanos(t: &Time) -> i64 {
    t.sec as i64 * 1_000_000_000 + t.nanosec as i64
}

/// tf2 drops a leading slash from frame ids.
fn frame(id: &str) -> &str {
    id.strip_prefix('/').unwrap_or(id)
}

/// Why a transform could not be given: the frames, and for a stale one its age.
#[derive(Debug, Clone, PartialEq)]
pub enum TfError {
    /// A frame the buffer has never heard of.
    UnknownFrame {
        target: String,
        source: String,
        frame: String,
        known: Vec<String>,
    },
    /// Both frames are known but no chain of transforms joins them.
    NotConnected { target: String, source: String },
    /// The chain's latest common time is older than a dynamic edge's cache holds.
    Extrapolation { child: String, parent: String },
    /// The newest transform joining them is older than the tolerance allows.
    Stale {
        target: String,
        source: String,
        age_s: f64,
        tolerance_s: f64,
    },
}

impl std::fmt::Display for TfError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TfError::UnknownFrame {
                target,
                source,
                frame,
                known,
            } => {
                write!(f, "no transform from '{source}' to '{target}': frame '{frame}' unknown")?;
                if known.is_empty() {
                    write!(f, ", no transform received yet")
                } else {
                    write!(f, " (known: {})", known.join(", "))
                }
            }
            TfError::NotConnected { target, source } => {
                write!(f, "no chain of transforms joins '{source}' to '{target}'")
            }
            TfError::Extrapolation { child, parent } => write!(
                f,
                "transform '{parent}' -> '{child}' has no sample at the chain's common time"
            ),
            TfError::Stale {
                target,
                source,
                age_s,
                tolerance_s,
            } => write!(
                f,
                "transform '{target}' -> '{source}' is {age_s:.3} s old, above transform_tolerance {tolerance_s} s"
            ),
        }
    }
}

/// A transform found: `source`'s pose in `target`, at `stamp` (None when every edge is static).
#[derive(Debug, Clone, PartialEq)]
pub struct Lookup {
    pub transform: Rigid,
    pub stamp_ns: Option<i64>,
}

struct Dynamic {
    parent: String,
    /// (stamp, transform), oldest first.
    history: VecDeque<(i64, Rigid)>,
}

impl Dynamic {
    fn latest(&self) -> i64 {
        self.history.back().map_or(i64::MIN, |s| s.0)
    }

    fn at(&self, t: i64) -> Option<Rigid> {
        let i = self.history.partition_point(|s| s.0 < t);
        let hit = self.history.get(i)?;
        if hit.0 == t {
            return Some(hit.1);
        }
        let before = self.history.get(i.checked_sub(1)?)?;
        let s = (t - before.0) as f64 / (hit.0 - before.0) as f64;
        Some(before.1.interpolate(&hit.1, s))
    }
}

#[derive(Default)]
pub struct TfBuffer {
    statics: HashMap<String, (String, Rigid)>,
    dynamic: HashMap<String, Dynamic>,
}

impl TfBuffer {
    pub fn is_empty(&self) -> bool {
        self.statics.is_empty() && self.dynamic.is_empty()
    }

    /// Takes one transform (from `/tf_static` when `is_static`). Returns why it was refused,
    /// as tf2's `setTransform` refuses: empty or equal frame ids, non-finite values, a rotation
    /// that is not a unit quaternion (within 0.01, then normalised).
    pub fn insert(&mut self, ts: &TransformStamped, is_static: bool) -> Result<(), String> {
        let (parent, child) = (frame(&ts.header.frame_id), frame(&ts.child_frame_id));
        if parent.is_empty() || child.is_empty() {
            return Err(format!(
                "transform '{parent}' -> '{child}' has an empty frame id"
            ));
        }
        if parent == child {
            return Err(format!(
                "transform '{parent}' -> '{child}' joins a frame to itself"
            ));
        }
        let mut r = Rigid::from_msg(&ts.transform);
        if !r.t.iter().chain(r.q.iter()).all(|v| v.is_finite()) {
            return Err(format!("transform '{parent}' -> '{child}' is not finite"));
        }
        let n = r.q.iter().map(|v| v * v).sum::<f64>().sqrt();
        if (n - 1.0).abs() > 0.01 {
            return Err(format!(
                "transform '{parent}' -> '{child}': rotation norm {n} is not 1"
            ));
        }
        r.q = r.q.map(|v| v / n);
        if is_static {
            self.statics.insert(child.into(), (parent.into(), r));
            self.dynamic.remove(child);
            return Ok(());
        }
        let stamp = nanos(&ts.header.stamp);
        let d = self.dynamic.entry(child.into()).or_insert_with(|| Dynamic {
            parent: parent.into(),
            history: VecDeque::new(),
        });
        if d.parent != parent {
            // Re-parented: the old chain's history no longer applies.
            d.parent = parent.into();
            d.history.clear();
        }
        let i = d.history.partition_point(|s| s.0 < stamp);
        match d.history.get_mut(i) {
            Some(s) if s.0 == stamp => s.1 = r,
            _ => d.history.insert(i, (stamp, r)),
        }
        let horizon = d.latest() - CACHE_NS;
        while d.history.front().is_some_and(|s| s.0 < horizon) {
            d.history.pop_front();
        }
        Ok(())
    }

    fn parent_of(&self, f: &str) -> Option<&str> {
        self.statics
            .get(f)
            .map(|(p, _)| p.as_str())
            .or_else(|| self.dynamic.get(f).map(|d| d.parent.as_str()))
    }

    fn known(&self, f: &str) -> bool {
        self.parent_of(f).is_some()
            || self.statics.values().any(|(p, _)| p == f)
            || self.dynamic.values().any(|d| d.parent == f)
    }

    fn known_frames(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .statics
            .iter()
            .flat_map(|(c, (p, _))| [c.clone(), p.clone()])
            .chain(
                self.dynamic
                    .iter()
                    .flat_map(|(c, d)| [c.clone(), d.parent.clone()]),
            )
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// `f`, its parent, its parent's parent, ... up to the root.
    fn chain(&self, f: &str) -> Vec<String> {
        let mut out = vec![f.to_string()];
        while let Some(p) = self.parent_of(out.last().map(String::as_str).unwrap_or("")) {
            if out.len() > MAX_DEPTH || out.iter().any(|x| x == p) {
                break;
            }
            out.push(p.to_string());
        }
        out
    }

    /// `source`'s pose in `target` at the latest time every edge between them has (tf2's
    /// lookup at time zero).
    pub fn lookup_latest(&self, target: &str, source: &str) -> Result<Lookup, TfError> {
        let (target, source) = (frame(target), frame(source));
        for f in [source, target] {
            if !self.known(f) && target != source {
                return Err(TfError::UnknownFrame {
                    target: target.into(),
                    source: source.into(),
                    frame: f.into(),
                    known: self.known_frames(),
                });
            }
        }
        let (up_s, up_t) = (self.chain(source), self.chain(target));
        let Some(common) = up_s.iter().find(|f| up_t.contains(f)).cloned() else {
            return Err(TfError::NotConnected {
                target: target.into(),
                source: source.into(),
            });
        };
        let below = |up: &[String]| -> Vec<String> {
            up.iter().take_while(|f| **f != common).cloned().collect()
        };
        let (edges_s, edges_t) = (below(&up_s), below(&up_t));
        let stamp = edges_s
            .iter()
            .chain(&edges_t)
            .filter_map(|c| self.dynamic.get(c).map(Dynamic::latest))
            .min();
        let to_common = |edges: &[String]| -> Result<Rigid, TfError> {
            let mut acc = Rigid::IDENTITY;
            for child in edges {
                let step = match (self.statics.get(child), self.dynamic.get(child)) {
                    (Some((_, r)), _) => *r,
                    (None, Some(d)) => {
                        d.at(stamp.unwrap_or(i64::MIN))
                            .ok_or_else(|| TfError::Extrapolation {
                                child: child.clone(),
                                parent: d.parent.clone(),
                            })?
                    }
                    (None, None) => {
                        unreachable!("every frame of a chain below its root has a parent")
                    }
                };
                acc = step.then(&acc);
            }
            Ok(acc)
        };
        let (common_source, common_target) = (to_common(&edges_s)?, to_common(&edges_t)?);
        Ok(Lookup {
            transform: common_target.inverse().then(&common_source),
            stamp_ns: stamp,
        })
    }

    /// [`TfBuffer::lookup_latest`], refused when its stamp is more than `tolerance_s` older
    /// than `now` (static chains never are).
    pub fn lookup_fresh(
        &self,
        target: &str,
        source: &str,
        now: &Time,
        tolerance_s: f64,
    ) -> Result<Lookup, TfError> {
        let l = self.lookup_latest(target, source)?;
        if let Some(stamp) = l.stamp_ns {
            let age_s = (nanos(now) - stamp) as f64 * 1e-9;
            if age_s > tolerance_s {
                return Err(TfError::Stale {
                    target: frame(target).into(),
                    source: frame(source).into(),
                    age_s,
                    tolerance_s,
                });
            }
        }
        Ok(l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ros::msg::std_msgs::Header;

    fn ts(parent: &str, child: &str, sec: i32, t: [f64; 3], yaw: f64) -> TransformStamped {
        TransformStamped {
            header: Header {
                stamp: Time { sec, nanosec: 0 },
                frame_id: parent.into(),
            },
            child_frame_id: child.into(),
            transform: Transform {
                translation: Vector3 {
                    x: t[0],
                    y: t[1],
                    z: t[2],
                },
                rotation: Quaternion {
                    x: 0.0,
                    y: 0.0,
                    z: (yaw / 2.0).sin(),
                    w: (yaw / 2.0).cos(),
                },
            },
        }
    }

    fn close(a: [f64; 3], b: [f64; 3]) -> bool {
        (0..3).all(|i| (a[i] - b[i]).abs() < 1e-9)
    }

    #[test]
    fn chain_map_odom_base_composes_static_and_dynamic() {
        let mut b = TfBuffer::default();
        b.insert(&ts("map", "odom", 0, [1.0, 2.0, 0.0], 0.0), true)
            .unwrap();
        let half_pi = std::f64::consts::FRAC_PI_2;
        b.insert(&ts("odom", "base_link", 5, [3.0, 0.0, 0.0], half_pi), false)
            .unwrap();
        b.insert(&ts("base_link", "laser", 0, [0.5, 0.0, 0.0], 0.0), true)
            .unwrap();
        let l = b.lookup_latest("map", "base_link").unwrap();
        assert!(close(l.transform.t, [4.0, 2.0, 0.0]), "{:?}", l.transform);
        assert_eq!(l.stamp_ns, Some(5_000_000_000));
        // The laser sits 0.5 m ahead of a base turned 90°: +y in map.
        let l = b.lookup_latest("map", "laser").unwrap();
        assert!(close(l.transform.t, [4.0, 2.5, 0.0]), "{:?}", l.transform);
        // And back: the map origin seen from the laser.
        let inv = b.lookup_latest("laser", "map").unwrap().transform;
        let p = inv.then(&l.transform);
        assert!(close(p.t, [0.0; 3]) && (p.q[3].abs() - 1.0).abs() < 1e-9);
        // Sibling branches meet at their common ancestor.
        b.insert(&ts("odom", "dock", 0, [0.0, 1.0, 0.0], 0.0), true)
            .unwrap();
        let l = b.lookup_latest("dock", "base_link").unwrap();
        assert!(close(l.transform.t, [3.0, -1.0, 0.0]), "{:?}", l.transform);
    }

    #[test]
    fn dynamic_edges_meet_at_their_latest_common_time_interpolated() {
        let mut b = TfBuffer::default();
        b.insert(&ts("map", "odom", 10, [0.0; 3], 0.0), false)
            .unwrap();
        b.insert(&ts("map", "odom", 12, [2.0, 0.0, 0.0], 0.0), false)
            .unwrap();
        b.insert(&ts("odom", "base_link", 11, [0.0, 1.0, 0.0], 0.0), false)
            .unwrap();
        let l = b.lookup_latest("map", "base_link").unwrap();
        assert_eq!(l.stamp_ns, Some(11_000_000_000));
        assert!(close(l.transform.t, [1.0, 1.0, 0.0]), "{:?}", l.transform);
        // Fresh within 2 s of t = 12, stale at t = 20 (naming the age).
        let now = Time {
            sec: 12,
            nanosec: 0,
        };
        assert!(b.lookup_fresh("map", "base_link", &now, 2.0).is_ok());
        let now = Time {
            sec: 20,
            nanosec: 0,
        };
        let e = b.lookup_fresh("map", "base_link", &now, 2.0).unwrap_err();
        assert!(e.to_string().contains("9.000 s old"), "{e}");
    }

    #[test]
    fn unknown_disconnected_and_bad_transforms_are_named() {
        let mut b = TfBuffer::default();
        let e = b.lookup_latest("map", "base_link").unwrap_err();
        assert!(
            e.to_string()
                .contains("frame 'base_link' unknown, no transform received yet"),
            "{e}"
        );
        b.insert(&ts("map", "odom", 1, [0.0; 3], 0.0), false)
            .unwrap();
        b.insert(&ts("world", "base_link", 1, [0.0; 3], 0.0), false)
            .unwrap();
        let e = b.lookup_latest("map", "base_link").unwrap_err();
        assert_eq!(
            e,
            TfError::NotConnected {
                target: "map".into(),
                source: "base_link".into()
            }
        );
        let e = b.lookup_latest("map", "gripper").unwrap_err();
        assert!(
            e.to_string()
                .contains("'gripper' unknown (known: base_link, map, odom, world)"),
            "{e}"
        );
        let mut bad = ts("map", "x", 1, [f64::NAN, 0.0, 0.0], 0.0);
        assert!(b.insert(&bad, false).unwrap_err().contains("not finite"));
        bad.transform.translation.x = 0.0;
        bad.transform.rotation.w = 2.0;
        assert!(b.insert(&bad, false).unwrap_err().contains("norm"));
        assert!(b.insert(&ts("", "x", 1, [0.0; 3], 0.0), false).is_err());
        assert!(b.insert(&ts("a", "a", 1, [0.0; 3], 0.0), false).is_err());
        // A leading slash names the same frame.
        assert!(b.lookup_latest("/map", "odom").is_ok());
    }

    #[test]
    fn old_samples_leave_the_cache_and_reparenting_restarts_history() {
        let mut b = TfBuffer::default();
        for s in 0..30 {
            b.insert(
                &ts("odom", "base_link", s, [s as f64, 0.0, 0.0], 0.0),
                false,
            )
            .unwrap();
        }
        assert_eq!(b.dynamic["base_link"].history.len(), 11);
        b.insert(&ts("map", "base_link", 31, [0.0; 3], 0.0), false)
            .unwrap();
        assert_eq!(b.dynamic["base_link"].history.len(), 1);
        assert!(b.lookup_latest("odom", "base_link").is_err());
    }

    #[test]
    fn rigid_inverse_and_composition_agree() {
        let a = Rigid {
            t: [1.0, -2.0, 0.5],
            q: slerp([0.0, 0.0, 0.0, 1.0], [0.6, 0.0, 0.0, 0.8], 0.7),
        };
        let id = a.inverse().then(&a);
        assert!(close(id.t, [0.0; 3]));
        assert!((id.q[3].abs() - 1.0).abs() < 1e-12);
    }
}
