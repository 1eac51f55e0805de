//! Random graphs for tests and benchmarks, reproducible from a seed.

use super::graph::NO_VERTEX;
use super::graph::{Graph, Weights};
use crate::rng::XorShift;

fn unit(rng: &mut XorShift) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Each ordered pair u != v is an edge with probability `density`, weight uniform in
/// `lo..=hi`; then shifted by vertex potentials, w + p(u) - p(v) with p in 0..=`shift`, which
/// keeps every cycle's weight (so none is negative when lo >= 0) while making many edges
/// negative.
pub fn random_graph(n: u32, density: f64, lo: i32, hi: i32, shift: i32, seed: u64) -> Graph {
    let mut rng = XorShift::new(seed);
    let span = (hi as i64 - lo as i64 + 1).max(1) as u64;
    let p: Vec<i32> = (0..n)
        .map(|_| {
            if shift > 0 {
                (rng.next_u64() % (shift as u64 + 1)) as i32
            } else {
                0
            }
        })
        .collect();
    let (mut from, mut to, mut w) = (Vec::new(), Vec::new(), Vec::new());
    for u in 0..n {
        for v in 0..n {
            if u != v && unit(&mut rng) < density {
                let x = lo as i64 + (rng.next_u64() % span) as i64;
                from.push(u);
                to.push(v);
                w.push((x + p[u as usize] as i64 - p[v as usize] as i64) as i32);
            }
        }
    }
    Graph {
        vertices: n,
        from,
        to,
        weights: Weights::Int(w),
    }
}

/// The same graph with float weights: each integer weight times 0.1, which is not dyadic, so
/// path sums round and depend on the order they are added in (a GPU = CPU comparison on them
/// catches a change of summation order; dyadic weights would sum exactly in any order).
pub fn to_float(g: &Graph) -> Graph {
    let w = match &g.weights {
        Weights::Int(w) => w.iter().map(|&x| x as f32 * 0.1).collect(),
        Weights::Float(w) => w.clone(),
    };
    Graph {
        weights: Weights::Float(w),
        ..g.clone()
    }
}

/// Dense start matrices of a random graph straight away (benchmarks at n in the tens of
/// thousands, where an edge list would not fit comfortably): weights in 1..=100.
pub fn random_dense(n: usize, np: usize, density: f64, seed: u64) -> (Vec<i32>, Vec<u32>) {
    let mut rng = XorShift::new(seed);
    let mut d = vec![super::weight::INT_INF; np * np];
    let mut h = vec![NO_VERTEX; np * np];
    for i in 0..np {
        for j in 0..np {
            let c = i * np + j;
            if i == j {
                d[c] = 0;
                h[c] = i as u32;
            } else if i < n && j < n && unit(&mut rng) < density {
                d[c] = 1 + (rng.next_u64() % 100) as i32;
                h[c] = j as u32;
            }
        }
    }
    (d, h)
}
