//! k-d tree: the builder's tree passes the checker; k nearest and radius searches equal a brute
//! force (Euclidean and SO(3)) on random inputs with duplicates and coordinate ties; bad inputs
//! are named; the CUDA builder gives the CPU's tree and CUDA queries the CPU's answers.

use gpu_planning::bench::XorShift;
use gpu_planning::compute::Backend;
use gpu_planning::kdtree::query::dist2;
use gpu_planning::kdtree::{build, build_cpu, knn, radius, Metric, Points};
use proptest::prelude::*;

/// n points in [0, 1)^dims on a grid of `levels` values (ties), a quarter of them repeats.
fn points(n: usize, dims: usize, levels: u64, seed: u64) -> Points {
    let mut rng = XorShift::new(seed);
    let mut c = Vec::with_capacity(n * dims);
    for i in 0..n {
        if i >= 4 && rng.next_u64().is_multiple_of(4) {
            let j = (rng.next_u64() % i as u64) as usize;
            let copy: Vec<f32> = c[j * dims..(j + 1) * dims].to_vec();
            c.extend(copy);
        } else {
            c.extend((0..dims).map(|_| (rng.next_u64() % levels) as f32 / levels as f32 - 0.5));
        }
    }
    Points::new(dims, c).unwrap()
}

/// Every distinct point, by (distance, first-copy index), first k.
fn brute_knn(p: &Points, q: &[f32], k: usize, metric: Metric) -> Vec<(f32, u32)> {
    let mut all: Vec<(f32, u32)> = Vec::new();
    for i in 0..p.len() {
        if (0..i).any(|j| p.point(j) == p.point(i)) {
            continue;
        }
        let mut d = dist2(q, p.point(i));
        if metric == Metric::So3 {
            let neg: Vec<f32> = q.iter().map(|v| -v).collect();
            d = d.min(dist2(&neg, p.point(i)));
        }
        all.push((d.sqrt(), i as u32));
    }
    all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    all.truncate(k);
    all
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 80, ..ProptestConfig::default() })]
    #[test]
    fn queries_equal_brute_force(dims in 2usize..9, n in 0usize..300, seed in any::<u64>(),
                                 levels in prop_oneof![Just(4u64), Just(1000u64)],
                                 k in 1usize..12, r in 0.0f32..0.6) {
        let p = points(n, dims, levels, seed);
        let t = build(&Backend::Cpu, &p).unwrap();
        prop_assert!(t.check().is_ok(), "{:?}", t.check());
        let queries = points(20, dims, levels, seed ^ 7);
        let got = knn(&t, &queries.coords, k, Metric::Euclidean).unwrap();
        for (qi, g) in got.iter().enumerate() {
            prop_assert_eq!(g, &brute_knn(&p, queries.point(qi), k, Metric::Euclidean));
        }
        let got = radius(&t, &queries.coords, r, 0, Metric::Euclidean).unwrap();
        for (qi, g) in got.iter().enumerate() {
            let mut want = brute_knn(&p, queries.point(qi), usize::MAX, Metric::Euclidean);
            want.retain(|e| e.0 <= r);
            prop_assert_eq!(g, &want);
        }
        if dims == 4 {
            let got = knn(&t, &queries.coords, k, Metric::So3).unwrap();
            for (qi, g) in got.iter().enumerate() {
                prop_assert_eq!(g, &brute_knn(&p, queries.point(qi), k, Metric::So3));
            }
        }
    }
}

#[test]
fn duplicates_answer_with_their_first_copy() {
    let p = Points::new(2, vec![1.0, 1.0, 0.0, 0.0, 1.0, 1.0, -0.0, 0.0]).unwrap();
    let t = build(&Backend::Cpu, &p).unwrap();
    assert_eq!(t.len(), 2, "-0.0 and 0.0 are one coordinate");
    let r = knn(&t, &[0.9, 0.9], 5, Metric::Euclidean).unwrap();
    assert_eq!(r[0].iter().map(|e| e.1).collect::<Vec<_>>(), vec![0, 1]);
    assert!((r[0][0].0 - (0.02f32).sqrt()).abs() < 1e-6);
}

#[test]
fn a_broken_tree_fails_the_checker() {
    let p = points(500, 3, 1000, 5);
    let mut t = build_cpu::build(&p);
    assert!(t.check().is_ok());
    let m = t.len() / 2;
    t.order.swap(m, m + 1);
    assert!(t.check().is_err());
}

#[test]
fn bad_inputs_are_named() {
    let e = Points::new(3, vec![0.0, 1.0, f32::NAN, 0.0, 0.0, 0.0])
        .unwrap_err()
        .to_string();
    assert!(e.contains("points[0]"), "{e}");
    for dims in [1, 9] {
        let e = Points::new(dims, vec![0.0; 18]).unwrap_err().to_string();
        assert!(e.contains("dimensions"), "{e}");
    }
    let t = build(&Backend::Cpu, &points(10, 3, 100, 1)).unwrap();
    let e = knn(&t, &[0.0; 3], 0, Metric::Euclidean)
        .unwrap_err()
        .to_string();
    assert!(e.contains('k'), "{e}");
    let e = knn(&t, &[0.0; 3], 1, Metric::So3).unwrap_err().to_string();
    assert!(e.contains("so3"), "{e}");
    let e = knn(&t, &[0.0; 4], 1, Metric::Euclidean)
        .unwrap_err()
        .to_string();
    assert!(e.contains("queries"), "{e}");
    let e = radius(&t, &[0.0; 3], -1.0, 0, Metric::Euclidean)
        .unwrap_err()
        .to_string();
    assert!(e.contains("radius"), "{e}");
}

#[test]
fn gpu_builds_the_cpu_tree_and_answers_the_same() {
    let Some(rt) = gpu_planning::compute::testing::cuda_or_skip("gpu_builds_the_cpu_tree") else {
        return;
    };
    use gpu_planning::kdtree::gpu::DeviceTree;
    let seed = 0xd7 ^ std::process::id() as u64;
    for (case, (n, dims, levels)) in [
        (1usize, 3usize, 10u64),
        (2, 2, 10),
        (3, 8, 2),
        (1000, 4, 8),
        (4097, 3, 1 << 20),
        (100_000, 4, 64),
        (300_001, 2, 1 << 24),
        (65_537, 7, 16),
    ]
    .into_iter()
    .enumerate()
    {
        let p = points(n, dims, levels, seed ^ case as u64);
        let cpu = build_cpu::build(&p);
        let (dev, _) = DeviceTree::build(&rt, &p).unwrap();
        assert_eq!(dev.check().unwrap(), Ok(()), "n {n}, dims {dims}");
        let gpu = dev.download(p.len()).unwrap();
        assert_eq!(gpu, cpu, "n {n}, dims {dims}");
        let queries = points(3000, dims, levels, seed ^ 99);
        for k in [1, 8, 32] {
            let want = knn(&cpu, &queries.coords, k, Metric::Euclidean).unwrap();
            let got = dev.knn(&queries.coords, k, Metric::Euclidean).unwrap();
            assert_eq!(got, want, "n {n}, dims {dims}, k {k}");
            if dims == 4 {
                let want = knn(&cpu, &queries.coords, k, Metric::So3).unwrap();
                let got = dev.knn(&queries.coords, k, Metric::So3).unwrap();
                assert_eq!(got, want, "so3: n {n}, k {k}");
            }
        }
    }
}
