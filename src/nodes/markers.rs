//! MarkerArrays for RViz: a path as a line with its ends, and a cell graph's representative
//! rotations as arrows on the unit sphere. Every array starts with DELETEALL in its namespace,
//! so a shorter result never leaves markers of the previous one behind.

use crate::ros::msg::geometry_msgs::{Point, Pose, Quaternion, Vector3};
use crate::ros::msg::std_msgs::{ColorRGBA, Header};
use crate::ros::msg::visualization_msgs::{Marker, MarkerArray};

pub const GREEN: ColorRGBA = ColorRGBA {
    r: 0.1,
    g: 0.9,
    b: 0.2,
    a: 1.0,
};
pub const MAGENTA: ColorRGBA = ColorRGBA {
    r: 1.0,
    g: 0.3,
    b: 1.0,
    a: 1.0,
};
const START: ColorRGBA = ColorRGBA {
    r: 0.2,
    g: 0.4,
    b: 1.0,
    a: 1.0,
};
const GOAL: ColorRGBA = ColorRGBA {
    r: 1.0,
    g: 0.2,
    b: 0.1,
    a: 1.0,
};
const EDGE: ColorRGBA = ColorRGBA {
    r: 0.8,
    g: 0.8,
    b: 0.8,
    a: 0.6,
};

fn marker(header: &Header, ns: &str, id: i32, kind: i32) -> Marker {
    Marker {
        header: header.clone(),
        ns: ns.into(),
        id,
        r#type: kind,
        action: Marker::ADD,
        pose: Pose {
            orientation: Quaternion::identity(),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn delete_all(header: &Header, ns: &str) -> Marker {
    Marker {
        action: Marker::DELETEALL,
        ..marker(header, ns, 0, Marker::ARROW)
    }
}

fn uniform(s: f64) -> Vector3 {
    Vector3 { x: s, y: s, z: s }
}

/// The points as a line strip `width` wide, a blue sphere at the first and a red one at the
/// last; only the DELETEALL when there are no points.
pub fn path(
    header: &Header,
    ns: &str,
    points: &[Point],
    color: ColorRGBA,
    width: f64,
) -> MarkerArray {
    let mut markers = vec![delete_all(header, ns)];
    if let (Some(first), Some(last)) = (points.first(), points.last()) {
        if points.len() >= 2 {
            markers.push(Marker {
                scale: Vector3 {
                    x: width,
                    ..Default::default()
                },
                color,
                points: points.to_vec(),
                ..marker(header, ns, 0, Marker::LINE_STRIP)
            });
        }
        for (id, at, c) in [(1, first, START), (2, last, GOAL)] {
            let mut m = Marker {
                scale: uniform(width * 3.0),
                color: c,
                ..marker(header, ns, id, Marker::SPHERE)
            };
            m.pose.position = at.clone();
            markers.push(m);
        }
    }
    MarkerArray { markers }
}

/// Hamilton product a ⊗ b of (x, y, z, w) quaternions.
fn mul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

/// R e_x for the rotation of unit quaternion q.
fn x_axis([x, y, z, w]: [f64; 4]) -> Point {
    Point {
        x: 1.0 - 2.0 * (y * y + z * z),
        y: 2.0 * (x * y + w * z),
        z: 2.0 * (x * z - w * y),
    }
}

/// A colour per index, far apart for neighbouring indices (golden-ratio hues).
fn hue(i: usize) -> ColorRGBA {
    let h = (i as f64 * 0.618_033_988_75).fract() * 6.0;
    let f = (h.fract()) as f32;
    let (r, g, b) = match h as u32 {
        0 => (1.0, f, 0.0),
        1 => (1.0 - f, 1.0, 0.0),
        2 => (0.0, 1.0, f),
        3 => (0.0, 1.0 - f, 1.0),
        4 => (f, 0.0, 1.0),
        _ => (1.0, 0.0, 1.0 - f),
    };
    ColorRGBA { r, g, b, a: 1.0 }
}

/// Each cell's representative rotation R as an arrow at R e_x on the unit sphere pointing
/// along R e_y (position and direction together fix R), the `limit` most-sampled cells
/// (ties: lower index), and the graph's edges among them as lines.
pub fn rotations(
    header: &Header,
    ns: &str,
    representatives: &[[f64; 4]],
    counts: &[u32],
    edges: impl Iterator<Item = (u32, u32)>,
    limit: usize,
) -> MarkerArray {
    let mut order: Vec<usize> = (0..representatives.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(counts.get(i).copied().unwrap_or(0)), i));
    order.truncate(limit);
    let mut shown = vec![false; representatives.len()];
    let mut markers = vec![delete_all(header, ns)];
    // Rotating the arrow's own x axis onto e_y: a quarter turn about z.
    let quarter_z = [
        0.0,
        0.0,
        std::f64::consts::FRAC_1_SQRT_2,
        std::f64::consts::FRAC_1_SQRT_2,
    ];
    for &i in &order {
        shown[i] = true;
        let q = representatives[i];
        let [x, y, z, w] = mul(q, quarter_z);
        let mut m = Marker {
            scale: Vector3 {
                x: 0.15,
                y: 0.015,
                z: 0.03,
            },
            color: hue(i),
            ..marker(header, ns, i as i32 + 1, Marker::ARROW)
        };
        m.pose = Pose {
            position: x_axis(q),
            orientation: Quaternion { x, y, z, w },
        };
        markers.push(m);
    }
    let lines: Vec<Point> = edges
        .filter(|&(a, b)| {
            shown.get(a as usize).copied().unwrap_or(false)
                && shown.get(b as usize).copied().unwrap_or(false)
        })
        .flat_map(|(a, b)| {
            [
                x_axis(representatives[a as usize]),
                x_axis(representatives[b as usize]),
            ]
        })
        .collect();
    if !lines.is_empty() {
        markers.push(Marker {
            scale: Vector3 {
                x: 0.005,
                ..Default::default()
            },
            color: EDGE,
            points: lines,
            ..marker(header, ns, 0, Marker::LINE_LIST)
        });
    }
    MarkerArray { markers }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: f64, y: f64) -> Point {
        Point { x, y, z: 0.0 }
    }

    #[test]
    fn path_is_a_strip_with_two_ends_after_delete_all() {
        let h = Header::default();
        let m = path(
            &h,
            "lee",
            &[p(0.0, 0.0), p(1.0, 0.0), p(1.0, 2.0)],
            GREEN,
            0.1,
        )
        .markers;
        let kinds: Vec<(i32, i32)> = m.iter().map(|m| (m.r#type, m.action)).collect();
        assert_eq!(
            kinds,
            [
                (Marker::ARROW, Marker::DELETEALL),
                (Marker::LINE_STRIP, Marker::ADD),
                (Marker::SPHERE, Marker::ADD),
                (Marker::SPHERE, Marker::ADD)
            ]
        );
        assert_eq!(m[1].points.len(), 3);
        assert_eq!(m[3].pose.position, p(1.0, 2.0));
        assert_eq!(path(&h, "lee", &[], GREEN, 0.1).markers.len(), 1);
        // One point: the two ends, no line.
        assert_eq!(path(&h, "lee", &[p(3.0, 4.0)], GREEN, 0.1).markers.len(), 3);
    }

    #[test]
    fn arrows_fix_the_rotation() {
        // A quarter turn about z: R e_x = e_y, and the arrow must point along R e_y = -e_x.
        let s = std::f64::consts::FRAC_1_SQRT_2;
        let q = [0.0, 0.0, s, s];
        let m = rotations(
            &Header::default(),
            "cells",
            &[q],
            &[5],
            std::iter::empty(),
            10,
        )
        .markers;
        assert_eq!(m.len(), 2);
        let a = &m[1];
        assert!((a.pose.position.x).abs() < 1e-12 && (a.pose.position.y - 1.0).abs() < 1e-12);
        let o = &a.pose.orientation;
        let dir = x_axis([o.x, o.y, o.z, o.w]);
        assert!(
            (dir.x + 1.0).abs() < 1e-12 && dir.y.abs() < 1e-12,
            "{dir:?}"
        );
    }

    #[test]
    fn limit_keeps_the_largest_cells_and_their_edges() {
        let id = [0.0, 0.0, 0.0, 1.0];
        let reps = [id; 4];
        let counts = [1, 9, 9, 3];
        let edges = [(0u32, 1u32), (1, 2), (2, 3), (1, 7)];
        let m = rotations(
            &Header::default(),
            "c",
            &reps,
            &counts,
            edges.into_iter(),
            2,
        )
        .markers;
        let ids: Vec<i32> = m
            .iter()
            .filter(|m| m.r#type == Marker::ARROW && m.action == Marker::ADD)
            .map(|m| m.id)
            .collect();
        assert_eq!(
            ids,
            [2, 3],
            "cells 1 and 2 (ids + 1), larger first, ties by index"
        );
        let lines = m.iter().find(|m| m.r#type == Marker::LINE_LIST).unwrap();
        assert_eq!(lines.points.len(), 2, "only edge 1-2 joins shown cells");
    }
}
