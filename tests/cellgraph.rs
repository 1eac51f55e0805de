//! Cell graph: the three algorithms equal the brute force on random arrangements with
//! duplicated and antipodal samples; cells are sorted, counted and represented as specified;
//! bad inputs are named; the rotation path query; the CLI; CUDA equal to the CPU.

use gpu_planning::cellgraph::cells::cmp_int;
use gpu_planning::cellgraph::classify::classify;
use gpu_planning::cellgraph::cpu;
use gpu_planning::cellgraph::edges::brute_force;
use gpu_planning::cellgraph::samples::{normalised, shoemake};
use gpu_planning::cellgraph::{build, Algorithm, Arrangement, CellGraph, Config};
use gpu_planning::compute::Backend;
use proptest::prelude::*;

/// Samples with repeats and antipodes: the second half copies or negates the first.
fn samples_with_twins(n: usize, seed: u64) -> Vec<[f64; 4]> {
    let mut s = shoemake(n.div_ceil(2), seed);
    let k = s.len();
    for i in 0..n - k {
        let q = s[(i * 7) % k];
        s.push(if i % 2 == 0 { q } else { q.map(|v| -v) });
    }
    s
}

fn check_cells(g: &CellGraph) {
    let c = &g.cells;
    let bits = classify(&g.arrangement, &g.samples);
    assert_eq!(
        c.counts.iter().map(|&x| x as usize).sum::<usize>(),
        g.samples.len()
    );
    for i in 0..c.len() {
        if i > 0 {
            assert!(cmp_int(c.bits.row(i - 1), c.bits.row(i)).is_lt());
        }
        let rep = c.representatives[i] as usize;
        assert_eq!(bits.row(rep), c.bits.row(i));
        assert!(
            (0..rep).all(|s| bits.row(s) != c.bits.row(i)),
            "not the first sample"
        );
        let members = (0..g.samples.len())
            .filter(|&s| bits.row(s) == c.bits.row(i))
            .count();
        assert_eq!(members, c.counts[i] as usize);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 60, ..ProptestConfig::default() })]
    #[test]
    fn algorithms_equal_brute_force(l in prop_oneof![0usize..12, 60usize..70, 126usize..131],
                                    n in 0usize..220, seed in any::<u64>(), r in 1u32..9,
                                    h in 1u32..12) {
        let arr = Arrangement::random(l, seed);
        let samples = samples_with_twins(n, seed ^ 1);
        let cfg = Config { algorithm: Algorithm::Hash, r, h };
        let g = build(&Backend::Cpu, &arr, &samples, &cfg).unwrap();
        check_cells(&g);
        let want = brute_force(&g.cells);
        for algorithm in [Algorithm::Heuristic, Algorithm::Tree, Algorithm::Hash] {
            let e = cpu::edges(&g.cells, &Config { algorithm, r, h });
            prop_assert_eq!(&e, &want, "{:?}", algorithm);
        }
    }
}

#[test]
fn few_constraints_give_many_edges() {
    // 6 constraints and 3000 samples: few cells, most of them adjacent to others.
    let arr = Arrangement::random(6, 3);
    let g = build(&Backend::Cpu, &arr, &shoemake(3000, 4), &Config::default()).unwrap();
    check_cells(&g);
    assert!(
        g.cells.len() > 5 && g.edges.len() >= g.cells.len() - 1,
        "{} cells, {} edges",
        g.cells.len(),
        g.edges.len()
    );
    assert_eq!(g.edges, brute_force(&g.cells));
    for e in 0..g.edges.len() {
        let (a, b) = (g.edges.from[e] as usize, g.edges.to[e] as usize);
        assert!(a < b);
        let k = g.edges.bit[e] as usize;
        let mut x = g.cells.bits.row(a).to_vec();
        x[k / 64] ^= 1 << (k % 64);
        assert_eq!(x, g.cells.bits.row(b));
    }
}

#[test]
fn antipodal_quaternions_share_bits() {
    let arr = Arrangement::random(100, 9);
    let s = shoemake(50, 2);
    let neg: Vec<[f64; 4]> = s.iter().map(|q| q.map(|v| -v)).collect();
    assert_eq!(classify(&arr, &s), classify(&arr, &neg));
}

#[test]
fn bad_inputs_are_named() {
    let mut m = vec![0.0; 32];
    m[16 + 1] = 1.0; // [1][0][1] = 1 but [1][1][0] = 0
    let e = Arrangement::from_full(2, &m).unwrap_err().to_string();
    assert!(
        e.contains("constraints[1]") && e.contains("symmetric"),
        "{e}"
    );
    // A NaN on the diagonal is symmetric yet unequal to itself: named as not finite.
    let mut m = vec![0.0; 32];
    m[16 + 2 * 4 + 2] = f64::NAN;
    let e = Arrangement::from_full(2, &m).unwrap_err().to_string();
    assert!(
        e.contains("constraints[1][2][2]") && e.contains("NaN is not finite"),
        "{e}"
    );
    let e = Arrangement::from_unique(1, &[0.0; 9])
        .unwrap_err()
        .to_string();
    assert!(e.contains("coefficients"), "{e}");
    let mut c = [0.0; 10];
    c[3] = f64::NAN;
    let e = Arrangement::from_unique(1, &c).unwrap_err().to_string();
    assert!(e.contains("coefficients[3]"), "{e}");
    let e = normalised(&[[1.0, 0.0, 0.0, 0.0], [0.0; 4]])
        .unwrap_err()
        .to_string();
    assert!(e.contains("samples[1]"), "{e}");
    let arr = Arrangement::random(3, 1);
    for (cfg, field) in [
        (
            Config {
                r: 0,
                ..Config::default()
            },
            "r",
        ),
        (
            Config {
                r: 9,
                ..Config::default()
            },
            "r",
        ),
        (
            Config {
                h: 0,
                ..Config::default()
            },
            "h",
        ),
    ] {
        let e = build(&Backend::Cpu, &arr, &shoemake(4, 1), &cfg)
            .unwrap_err()
            .to_string();
        assert!(e.contains(field), "{e}");
    }
}

#[test]
fn rotation_paths_walk_adjacent_cells() {
    let arr = Arrangement::random(8, 21);
    let samples = shoemake(5000, 22);
    let g = build(&Backend::Cpu, &arr, &samples, &Config::default()).unwrap();
    let mut found = 0;
    for (i, j) in [(0usize, 1usize), (10, 4000), (77, 3), (5, 5)] {
        let p = g.path(samples[i], samples[j].map(|v| -v)).unwrap();
        if !p.reachable {
            continue;
        }
        found += 1;
        assert_eq!(
            p.cells.first(),
            Some(&g.cell_of("start", samples[i]).unwrap())
        );
        assert_eq!(
            p.cells.last(),
            Some(&g.cell_of("goal", samples[j]).unwrap())
        );
        for w in p.cells.windows(2) {
            let (a, b) = (w[0].min(w[1]), w[0].max(w[1]));
            assert!((0..g.edges.len()).any(|e| g.edges.from[e] == a && g.edges.to[e] == b));
        }
        assert_eq!(p.waypoints.len(), p.cells.len());
    }
    assert!(
        found >= 2,
        "only {found} reachable pairs: the test checks too little"
    );
    assert!(g
        .path([0.0; 4], samples[0])
        .unwrap_err()
        .to_string()
        .contains("start"));
}

#[test]
fn cli_prints_cells_and_edges_as_json() {
    use gpu_planning::npy::write_f64_nd;
    let dir = std::env::temp_dir().join(format!("gpu_planning_cellgraph_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let arr = Arrangement::random(5, 7);
    let full: Vec<f64> = arr
        .coefficients
        .iter()
        .flat_map(|c| {
            let idx = [[0, 1, 2, 3], [1, 4, 5, 6], [2, 5, 7, 8], [3, 6, 8, 9]];
            idx.into_iter().flat_map(move |row| row.map(|i| c[i]))
        })
        .collect();
    std::fs::write(dir.join("c.npy"), write_f64_nd(&[5, 4, 4], &full)).unwrap();
    let raw: Vec<[f64; 4]> = shoemake(400, 8)
        .iter()
        .map(|q| q.map(|v| 3.0 * v))
        .collect();
    let flat: Vec<f64> = raw.iter().flatten().copied().collect();
    std::fs::write(dir.join("s.npy"), write_f64_nd(&[400, 4], &flat)).unwrap();
    let exe = gpu_planning::env::BIN
        .get()
        .ok_or(())
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_gpu_planning").to_string());
    let out = std::process::Command::new(&exe)
        .args(["cellgraph", "--constraints"])
        .arg(dir.join("c.npy"))
        .arg("--samples")
        .arg(dir.join("s.npy"))
        .args([
            "--algorithm",
            "tree",
            "--r",
            "2",
            "--backend",
            "cpu",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let g = build(&Backend::Cpu, &arr, &raw, &Config::default()).unwrap();
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells.len(), g.cells.len());
    for (i, c) in cells.iter().enumerate() {
        let want = format!("{:02x}", g.cells.bits.row(i)[0]);
        assert_eq!(c["bits"].as_str().unwrap(), want);
        assert_eq!(c["count"].as_u64().unwrap(), g.cells.counts[i] as u64);
        assert_eq!(
            c["representative"].as_u64().unwrap(),
            g.cells.representatives[i] as u64
        );
    }
    let edges: Vec<[u32; 3]> = serde_json::from_value(v["edges"].clone()).unwrap();
    assert_eq!(edges.len(), g.edges.len());
    for (e, x) in edges.iter().enumerate() {
        assert_eq!(*x, [g.edges.from[e], g.edges.to[e], g.edges.bit[e]]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn gpu_equals_cpu() {
    let Some(rt) = gpu_planning::compute::testing::cuda_or_skip("gpu_equals_cpu") else {
        return;
    };
    let gpu = Backend::Cuda(rt);
    let seed = gpu_planning::compute::testing::seed(0xce11);
    let mut edges_seen = 0;
    for (case, (l, n)) in [
        (0, 5),
        (1, 1),
        (3, 0),
        (6, 4001),
        (12, 20_000),
        (63, 3333),
        (64, 1000),
        (65, 2049),
        (200, 30_000),
        (1024, 1500),
    ]
    .into_iter()
    .enumerate()
    {
        let arr = Arrangement::random(l, seed ^ case as u64);
        let samples = samples_with_twins(n, seed ^ (case as u64 + 100));
        for algorithm in [Algorithm::Hash, Algorithm::Tree, Algorithm::Heuristic] {
            let cfg = Config {
                algorithm,
                r: 1 + (case as u32 % 8),
                h: 1 + case as u32,
            };
            let cpu = build(&Backend::Cpu, &arr, &samples, &cfg).unwrap();
            let dev = build(&gpu, &arr, &samples, &cfg).unwrap();
            assert_eq!(cpu.cells, dev.cells, "l {l}, n {n}, {algorithm:?}");
            assert_eq!(cpu.edges, dev.edges, "l {l}, n {n}, {algorithm:?}");
            edges_seen += dev.edges.len();
        }
    }
    assert!(
        edges_seen > 100,
        "only {edges_seen} edges: the test checks too little"
    );
}

/// The sign of q^T A q with A the dense symmetric 4 x 4 matrix, summed over all 16 entries:
/// the definition of a constraint's bit, independent of the library's 10-term `form`.
fn dense_sign(c: &[f64; 10], q: &[f64; 4]) -> Option<bool> {
    // Upper triangle row by row: a00 a01 a02 a03 a11 a12 a13 a22 a23 a33.
    let at = |r: usize, col: usize| {
        let (r, col) = (r.min(col), r.max(col));
        let start = [0, 4, 7, 9][r];
        c[start + col - r]
    };
    let mut v = 0.0;
    for (r, qr) in q.iter().enumerate() {
        for (col, qc) in q.iter().enumerate() {
            v += qr * at(r, col) * qc;
        }
    }
    // Rounding may differ from the library's order within a few ulps of zero: no claim there.
    (v.abs() > 1e-12).then_some(v >= 0.0)
}

/// Every cell's bits on every backend are the signs of q^T A q of its representative sample,
/// computed from the dense matrices (T6: the classification against its definition, not
/// against the library's own `classify`).
#[test]
fn cell_bits_are_the_signs_of_the_dense_quadratic_forms() {
    let seed = gpu_planning::compute::testing::seed(0xde45e);
    let arr = Arrangement::random(70, seed);
    let samples = shoemake(5000, seed);
    let mut backends = vec![Backend::Cpu];
    if let Some(rt) = gpu_planning::compute::testing::cuda_or_skip("dense form check on CUDA") {
        backends.push(Backend::Cuda(rt));
    }
    for backend in &backends {
        let g = build(backend, &arr, &samples, &Config::default()).unwrap();
        let words = g.cells.bits.words;
        let mut checked = 0;
        for (cell, &rep) in g.cells.representatives.iter().enumerate() {
            let q = g.samples[rep as usize];
            let row = &g.cells.bits.data[cell * words..(cell + 1) * words];
            for (i, c) in arr.coefficients.iter().enumerate() {
                if let Some(sign) = dense_sign(c, &q) {
                    let bit = row[i / 64] >> (i % 64) & 1 == 1;
                    assert_eq!(bit, sign, "{}: cell {cell}, constraint {i}", backend.name());
                    checked += 1;
                }
            }
        }
        assert!(
            checked > 1000,
            "{}: only {checked} bits checked",
            backend.name()
        );
    }
}
