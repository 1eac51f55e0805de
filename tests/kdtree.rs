//! k-d tree: the builder's tree passes the checker; k nearest and radius searches equal a brute
//! force (Euclidean and SO(3)) on random inputs with duplicates and coordinate ties; bad inputs
//! are named; the CUDA builder gives the CPU's tree and CUDA queries the CPU's answers.

use gpu_planning::compute::Backend;
use gpu_planning::kdtree::cpu::{build as cpu_build, knn, radius};
use gpu_planning::kdtree::query::dist2;
use gpu_planning::kdtree::{build, Metric, Points, Traversal};
use gpu_planning::rng::XorShift;
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
    let mut t = cpu_build(&p);
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
    use gpu_planning::kdtree::gpu::{DeviceTree, REGISTER_K};
    let seed = gpu_planning::compute::testing::seed(0xd7);
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
        let cpu = cpu_build(&p);
        let (dev, _) = DeviceTree::build(&rt, &p).unwrap();
        assert_eq!(dev.check().unwrap(), Ok(()), "n {n}, dims {dims}");
        let gpu = dev.download(p.len()).unwrap();
        assert_eq!(gpu, cpu, "n {n}, dims {dims}");
        let queries = points(3000, dims, levels, seed ^ 99);
        // 32 and 33: either side of the old register bound; REGISTER_K: the largest k there.
        for (k, traversal) in [1, 8, 32, 33, REGISTER_K]
            .into_iter()
            .flat_map(|k| [(k, Traversal::Plane), (k, Traversal::Boxes)])
        {
            dev.set_traversal(traversal);
            let want = knn(&cpu, &queries.coords, k, Metric::Euclidean).unwrap();
            let got = dev.knn(&queries.coords, k, Metric::Euclidean).unwrap();
            assert_eq!(got, want, "n {n}, dims {dims}, k {k}, {traversal:?}");
            if dims == 4 {
                let want = knn(&cpu, &queries.coords, k, Metric::So3).unwrap();
                let got = dev.knn(&queries.coords, k, Metric::So3).unwrap();
                assert_eq!(got, want, "so3: n {n}, k {k}, {traversal:?}");
            }
        }
        dev.set_traversal(Traversal::Auto);
        // Radius: a radius that finds a handful of points per query, with and without a cap.
        let r = 2.0 * (8.0 / n.max(1) as f32).powf(1.0 / dims as f32);
        for max in [0, 3] {
            let want = radius(&cpu, &queries.coords, r, max, Metric::Euclidean).unwrap();
            let got = dev
                .radius(&queries.coords, r, max, Metric::Euclidean)
                .unwrap();
            assert_eq!(got, want, "radius {r}: n {n}, dims {dims}, max {max}");
            // The write pass in runs of queries (a handful of pairs each, one query when it
            // alone has more), as a radius covering much of a big cloud is cut.
            let runs = dev
                .radius_in_passes(&queries.coords, r, max, Metric::Euclidean, 7)
                .unwrap();
            assert_eq!(
                runs, want,
                "radius {r} in runs: n {n}, dims {dims}, max {max}"
            );
            if dims == 4 {
                // Large enough that q and -q both reach some points (non-unit tuples).
                let want = radius(&cpu, &queries.coords, 0.9, max, Metric::So3).unwrap();
                let got = dev.radius(&queries.coords, 0.9, max, Metric::So3).unwrap();
                assert_eq!(got, want, "so3 radius: n {n}, max {max}");
            }
        }
    }
}

/// Distances beyond f32 (coordinates near 1e30 square to +inf): every such point ties at
/// +inf and is ordered by its index, on the CPU as by brute force, and on the device as on
/// the CPU, whose k best start as (+inf, ~0) entries that every real point, at +inf too, must
/// still come before. Without a device only the CPU's half runs.
#[test]
fn gpu_knn_with_infinite_distances_equals_the_cpu() {
    use gpu_planning::kdtree::gpu::DeviceTree;
    let rt = gpu_planning::compute::testing::cuda_or_skip("gpu_knn_infinite_distances");
    let seed = gpu_planning::compute::testing::seed(0x1f);
    for (n, dims) in [(300usize, 3usize), (301, 4), (40, 2)] {
        let mut rng = XorShift::new(seed ^ n as u64);
        // One point in fifty near 0, the rest far out (their squared distances overflow).
        let coords: Vec<f32> = (0..n * dims)
            .map(|i| {
                let far = (i / dims) % 50 != 3;
                let v = (rng.next_u64() % 1000) as f32 / 1000.0 - 0.5;
                if far {
                    v * 4e30
                } else {
                    v
                }
            })
            .collect();
        let p = Points::new(dims, coords).unwrap();
        let cpu = cpu_build(&p);
        let queries = points(500, dims, 1 << 10, seed ^ 7);
        let metrics: &[Metric] = if dims == 4 {
            &[Metric::Euclidean, Metric::So3]
        } else {
            &[Metric::Euclidean]
        };
        let dev = rt.as_ref().map(|rt| DeviceTree::build(rt, &p).unwrap().0);
        for &metric in metrics {
            for k in [1, 8, 32] {
                let want = knn(&cpu, &queries.coords, k, metric).unwrap();
                for (q, row) in queries.coords.chunks(dims).zip(&want) {
                    assert_eq!(*row, brute_knn(&p, q, k, metric), "cpu: n {n}, k {k}");
                }
                if k > 1 {
                    assert!(
                        want.iter().flatten().any(|&(d, _)| d == f32::INFINITY),
                        "no answer at +inf: the case tests nothing (n {n}, k {k})"
                    );
                }
                if let Some(dev) = &dev {
                    let got = dev.knn(&queries.coords, k, metric).unwrap();
                    assert_eq!(got, want, "n {n}, dims {dims}, k {k}, {metric:?}");
                }
            }
        }
    }
}

/// knn_into's page-locked answers, kept across calls: equal to knn_rows whether the call
/// grows them, fits in them or asks for fewer rows than they hold, with the heap's k too, for
/// no queries and for k above the points; bad calls are refused and leave them as they were.
#[test]
fn gpu_knn_into_kept_pinned_answers_equals_knn_rows() {
    let Some(rt) = gpu_planning::compute::testing::cuda_or_skip("gpu_knn_into") else {
        return;
    };
    use gpu_planning::kdtree::gpu::{DeviceTree, PinnedKnn};
    let seed = gpu_planning::compute::testing::seed(0x914);
    let p = points(20_000, 3, 1 << 12, seed);
    let (dev, _) = DeviceTree::build(&rt, &p).unwrap();
    let mut out = PinnedKnn::new();
    assert!(out.distances().unwrap().is_empty() && out.indices().unwrap().is_empty());
    for (nq, k) in [(1000usize, 8usize), (3001, 8), (17, 1), (3001, 40), (0, 8)] {
        let q = points(nq, 3, 1 << 12, seed ^ nq as u64 ^ (k as u64) << 20).coords;
        let want = dev.knn_rows(&q, k, Metric::Euclidean).unwrap();
        dev.knn_into(&q, k, Metric::Euclidean, &mut out).unwrap();
        assert_eq!(out.to_rows().unwrap(), want, "{nq} queries, k {k}");
        assert_eq!((out.rows(), out.k()), (want.rows, want.k));
        assert_eq!(out.distances().unwrap().len(), nq * k);
    }
    // Three points drawn from 64 places: about one seed in twenty draws two alike, which the
    // tree keeps once, so k is clamped to the distinct points.
    let small = points(3, 3, 4, seed ^ 7);
    let (tiny, _) = DeviceTree::build(&rt, &small).unwrap();
    let distinct = (0..3)
        .map(|i| {
            small
                .point(i)
                .iter()
                .map(|c| c.to_bits())
                .collect::<Vec<_>>()
        })
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    assert!((1..=3).contains(&distinct) && tiny.len == distinct);
    let q = points(10, 3, 4, seed ^ 8).coords;
    tiny.knn_into(&q, 8, Metric::Euclidean, &mut out).unwrap();
    assert_eq!(out.k(), distinct, "k clamped to the tree's points");
    assert_eq!(
        out.to_rows().unwrap(),
        tiny.knn_rows(&q, 8, Metric::Euclidean).unwrap()
    );
    let e = dev.knn_into(&q[..2], 1, Metric::Euclidean, &mut out);
    assert!(
        e.is_err(),
        "a query of two coordinates in a 3-D tree is refused"
    );
    let e = dev.knn_into(&q, 0, Metric::Euclidean, &mut out);
    assert!(e.unwrap_err().to_string().contains('k'), "k = 0 is refused");
    assert_eq!(out.k(), distinct, "a refused call leaves the last answers");
}

/// k above what registers hold (kd_knn_heap): k past the register limit, past the distinct
/// points, and the device limit itself; ties from coarse coordinates, so3 with its second
/// search from -q; query counts off the block size, and queries all at one point (their
/// Morton range is empty). Every answer equals the CPU's.
#[test]
fn gpu_large_k_answers_equal_the_cpu() {
    let Some(rt) = gpu_planning::compute::testing::cuda_or_skip("gpu_large_k_answers") else {
        return;
    };
    use gpu_planning::kdtree::gpu::{DeviceTree, MAX_K, REGISTER_K};
    let seed = gpu_planning::compute::testing::seed(0x1a7e);
    for (case, (n, dims, levels, nq)) in [
        (3usize, 3usize, 10u64, 65usize),
        (700, 4, 6, 1001),
        (5000, 3, 8, 777),
        (20_011, 4, 1 << 16, 513),
        (50_000, 2, 1 << 20, 300),
    ]
    .into_iter()
    .enumerate()
    {
        let p = points(n, dims, levels, seed ^ case as u64);
        let cpu = cpu_build(&p);
        let (dev, _) = DeviceTree::build(&rt, &p).unwrap();
        let mut queries = points(nq, dims, levels, seed ^ 0x99 ^ case as u64).coords;
        let same: Vec<f32> = queries[..dims].repeat(37);
        for k in [REGISTER_K + 1, 100, 257, MAX_K] {
            for qs in [&queries, &same] {
                let want = knn(&cpu, qs, k, Metric::Euclidean).unwrap();
                let got = dev.knn(qs, k, Metric::Euclidean).unwrap();
                assert!(
                    got == want,
                    "n {n}, dims {dims}, k {k}, {} queries",
                    qs.len() / dims
                );
                if dims == 4 {
                    let want = knn(&cpu, qs, k, Metric::So3).unwrap();
                    let got = dev.knn(qs, k, Metric::So3).unwrap();
                    assert!(got == want, "so3: n {n}, k {k}");
                }
            }
        }
        queries.truncate(0);
        assert!(dev
            .knn(&queries, MAX_K, Metric::Euclidean)
            .unwrap()
            .is_empty());
        let e = dev.knn(&p.coords[..dims], MAX_K + 1, Metric::Euclidean);
        assert!(e.unwrap_err().to_string().contains('k'));
    }
}

/// Calls whose answers pass one batch (`BATCH_ANSWER_BYTES`) are searched in batches of consecutive
/// queries, each batch's answers coming back while the next is searched: counts that leave the
/// last batch short, k in registers and in the heap, both metrics, into fresh vectors and into
/// kept page-locked answers. Every answer equals the CPU's.
#[test]
fn gpu_batched_calls_answer_as_the_cpu() {
    let Some(rt) = gpu_planning::compute::testing::cuda_or_skip("gpu_batched_calls") else {
        return;
    };
    use gpu_planning::kdtree::gpu::{DeviceTree, PinnedKnn, BATCH_ANSWER_BYTES};
    let seed = gpu_planning::compute::testing::seed(0xba7c);
    let mut out = PinnedKnn::new();
    for (dims, nq, k) in [
        (3usize, 600_011usize, 8usize),
        (4, 131_101, 33),
        (4, 65_537, 65),
    ] {
        let p = points(20_000, dims, 1 << 12, seed ^ nq as u64);
        let cpu = cpu_build(&p);
        let (dev, _) = DeviceTree::build(&rt, &p).unwrap();
        let q = points(nq, dims, 1 << 12, seed ^ 0x51 ^ nq as u64).coords;
        assert!(
            nq * k * 8 > BATCH_ANSWER_BYTES,
            "{nq} x {k}: one batch, the case tests nothing"
        );
        let metrics: &[Metric] = if dims == 4 {
            &[Metric::Euclidean, Metric::So3]
        } else {
            &[Metric::Euclidean]
        };
        for &metric in metrics {
            let want = knn(&cpu, &q, k, metric).unwrap();
            let got = dev.knn(&q, k, metric).unwrap();
            assert!(got == want, "{nq} queries, k {k}, {metric:?}");
            dev.knn_into(&q, k, metric, &mut out).unwrap();
            assert!(
                out.to_rows().unwrap().nested() == want,
                "into kept answers: {nq} queries, k {k}, {metric:?}"
            );
        }
    }
}

/// More queries than a heap launch has heaps (k = MAX_K: 32,768 threads, each answering a
/// second query in its own scratch after its first), in both metrics; every answer equals the
/// CPU's.
#[test]
fn gpu_large_k_threads_take_several_queries() {
    let Some(rt) = gpu_planning::compute::testing::cuda_or_skip("gpu_large_k_several_queries")
    else {
        return;
    };
    use gpu_planning::kdtree::gpu::{DeviceTree, MAX_K};
    let seed = gpu_planning::compute::testing::seed(0x5ea7);
    let p = points(3001, 4, 1 << 12, seed);
    let cpu = cpu_build(&p);
    let (dev, _) = DeviceTree::build(&rt, &p).unwrap();
    let queries = points(40_009, 4, 1 << 12, seed ^ 0x77).coords;
    for metric in [Metric::Euclidean, Metric::So3] {
        let want = knn(&cpu, &queries, MAX_K, metric).unwrap();
        let got = dev.knn(&queries, MAX_K, metric).unwrap();
        assert!(got == want, "{metric:?}");
    }
}

#[test]
fn point_files_pcd_and_ply_read_xyz() {
    use gpu_planning::kdtree::io::{read_pcd, read_ply};
    let pcd = b"# .PCD v0.7\nVERSION 0.7\nFIELDS x y z rgb\nSIZE 4 4 4 4\nTYPE F F F U\nCOUNT 1 1 1 1\nWIDTH 2\nHEIGHT 1\nPOINTS 2\nDATA ascii\n1 2 3 0\n-4 5.5 6 7\n";
    assert_eq!(
        read_pcd("a.pcd", pcd).unwrap(),
        vec![1.0, 2.0, 3.0, -4.0, 5.5, 6.0]
    );
    let mut bin =
        b"FIELDS intensity x y z\nSIZE 1 4 4 8\nTYPE U F F F\nPOINTS 2\nDATA binary\n".to_vec();
    for (i, x, y, z) in [(9u8, 1.5f32, 2.5f32, 3.5f64), (1, -1.0, 0.0, 8.0)] {
        bin.push(i);
        bin.extend(x.to_le_bytes());
        bin.extend(y.to_le_bytes());
        bin.extend(z.to_le_bytes());
    }
    assert_eq!(
        read_pcd("b.pcd", &bin).unwrap(),
        vec![1.5, 2.5, 3.5, -1.0, 0.0, 8.0]
    );
    let mut ply = b"ply\nformat binary_little_endian 1.0\nelement vertex 2\nproperty double x\nproperty float y\nproperty float z\nproperty uchar red\nelement face 0\nproperty list uchar int vertex_indices\nend_header\n".to_vec();
    for (x, y, z) in [(1.0f64, 2.0f32, 3.0f32), (4.0, 5.0, 6.0)] {
        ply.extend(x.to_le_bytes());
        ply.extend(y.to_le_bytes());
        ply.extend(z.to_le_bytes());
        ply.push(255);
    }
    assert_eq!(
        read_ply("c.ply", &ply).unwrap(),
        vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    );
    let ascii = b"ply\nformat ascii 1.0\nelement vertex 1\nproperty float z\nproperty float y\nproperty float x\nend_header\n3 2 1\n";
    assert_eq!(read_ply("d.ply", ascii).unwrap(), vec![1.0, 2.0, 3.0]);
    let e = read_pcd(
        "e.pcd",
        b"FIELDS x y\nSIZE 4 4\nTYPE F F\nPOINTS 1\nDATA ascii\n1 2\n",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("'z'"), "{e}");
}

#[test]
fn cli_prints_neighbours_as_json_and_writes_npz() {
    use gpu_planning::npy::write_f64_nd;
    let dir = std::env::temp_dir().join(format!("gpu_planning_knn_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = points(500, 3, 50, 3);
    let q = points(40, 3, 50, 4);
    let f64s = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<_>>();
    std::fs::write(dir.join("p.npy"), write_f64_nd(&[500, 3], &f64s(&p.coords))).unwrap();
    std::fs::write(dir.join("q.npy"), write_f64_nd(&[40, 3], &f64s(&q.coords))).unwrap();
    let exe = gpu_planning::env::BIN
        .get()
        .ok_or(())
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_gpu_planning").to_string());
    let out = std::process::Command::new(&exe)
        .args(["knn", "--points"])
        .arg(dir.join("p.npy"))
        .arg("--queries")
        .arg(dir.join("q.npy"))
        .args(["--k", "4", "--backend", "auto", "--json", "--out"])
        .arg(dir.join("r.npz"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = build(&Backend::Cpu, &p).unwrap();
    let want = knn(&t, &q.coords, 4, Metric::Euclidean).unwrap();
    let idx: Vec<Vec<u32>> = serde_json::from_value(v["indices"].clone()).unwrap();
    let dist: Vec<Vec<f32>> = serde_json::from_value(v["distances"].clone()).unwrap();
    for (r, w) in want.iter().enumerate() {
        assert_eq!(idx[r], w.iter().map(|e| e.1).collect::<Vec<_>>());
        assert_eq!(dist[r], w.iter().map(|e| e.0).collect::<Vec<_>>());
    }
    // The .npz is a valid zip whose members pass their CRC (Python's zipfile, when present).
    let npz = dir.join("r.npz");
    match std::process::Command::new("python3")
        .args(["-c", "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; print(sorted(z.namelist()))"])
        .arg(&npz)
        .output()
    {
        Ok(o) if o.status.success() => {
            assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "['distances.npy', 'indices.npy']");
        }
        Ok(o) => panic!("npz rejected: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => gpu_planning::testing::announce_skip("npz check", &format!("no python3 ({e})")),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Found by `fuzz/point_files`: a header's POINTS count sized a buffer before the data was
/// checked (capacity overflow). A count the bytes cannot hold is an error, not an abort.
#[test]
fn point_files_claiming_more_points_than_bytes_are_refused() {
    let pcd = "VERSION 0.7\nFIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\n\
               POINTS 5555555555555555552\nDATA ascii\n0 0 0\n";
    assert!(gpu_planning::kdtree::io::read_pcd("p.pcd", pcd.as_bytes()).is_err());
    let ply = "ply\nformat ascii 1.0\nelement vertex 5555555555555555552\nproperty float x\n\
               property float y\nproperty float z\nend_header\n0 0 0\n";
    assert!(gpu_planning::kdtree::io::read_ply("p.ply", ply.as_bytes()).is_err());
}

/// PCL's own sample clouds (ascii, and LZF binary_compressed as PCL saves clouds; its tutorials'
/// LMS400 scan with six fields and its organized stereo frame, NaN where stereo found nothing)
/// decode to exactly the points pypcd4 (an independent reader) gives, NaN bits included. Skips
/// without python3 and pypcd4, unless GPU_PLANNING_REQUIRE_INTEROP=1 (CI).
#[test]
fn pcl_sample_clouds_decode_as_pypcd4_does() {
    let dir = gpu_planning::testing::repo().join("tests/data/clouds");
    // pypcd4 reads PCD v0.7 only; a v.5 header (PCL's bunny) differs from it by the version
    // and the VIEWPOINT line v0.7 added, so those two are brought to v0.7 for it.
    let script = r#"
import io, sys
from pypcd4 import PointCloud
raw = open(sys.argv[1], 'rb').read()
if b'\nVERSION .5' in raw:
    raw = raw.replace(b'\nVERSION .5', b'\nVERSION 0.7', 1)
    if b'\nVIEWPOINT' not in raw:
        raw = raw.replace(b'\nPOINTS', b'\nVIEWPOINT 0 0 0 1 0 0 0\nPOINTS', 1)
a = PointCloud.from_fileobj(io.BytesIO(raw)).numpy(('x', 'y', 'z')).astype('<f4')
sys.stdout.buffer.write(a.tobytes())
"#;
    for (file, points) in [
        ("bunny.pcd", 397usize),
        ("car6.pcd", 10_031),
        ("pcl-tutorials/table_scene_lms400.pcd", 460_400),
        (
            "pcl-tutorials/table_scene_mug_stereo_textured.pcd",
            640 * 480,
        ),
    ] {
        let path = dir.join(file);
        let (d, ours) = gpu_planning::kdtree::io::read_points(&path).unwrap();
        assert_eq!((d, ours.len()), (3, points * 3), "{file}");
        let out = std::process::Command::new("python3")
            .args(["-c", script])
            .arg(&path)
            .output();
        let theirs = match out {
            Ok(o) if o.status.success() => o.stdout,
            other => {
                let why = format!("python3 with pypcd4 unavailable: {other:?}");
                gpu_planning::testing::peer_missing("pypcd4 comparison", &why);
                return;
            }
        };
        let theirs: Vec<f32> = theirs
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        assert_eq!(ours.len(), theirs.len(), "{file}");
        for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
            assert_eq!(a.to_bits(), b.to_bits(), "{file}: value {i}");
        }
    }
}

/// PCL's tutorial clouds (tests/data/clouds/pcl-tutorials): a SICK LMS400 scan of a table,
/// 460,400 points of which 868 repeat an earlier one, and an organized stereo frame whose
/// 209,280 finite points lie on a few surfaces. Real, skewed clouds with copies: the CPU tree
/// passes its checker and answers a sample of the cloud's own points as the brute force does;
/// with a device, the CUDA tree is the CPU's and every point's k nearest are the CPU's, by
/// either traversal (the boxes were found faster on the table scan with these clouds).
/// Auto's choice by k is a unit test beside [`Traversal`].
#[test]
fn pcl_tutorial_clouds_answer_as_brute_force_and_the_device_as_the_cpu() {
    let dir = gpu_planning::testing::repo().join("tests/data/clouds/pcl-tutorials");
    let device = gpu_planning::compute::testing::cuda_or_skip("pcl_tutorial_clouds on CUDA");
    for (file, finite) in [
        ("table_scene_lms400.pcd", 460_400usize),
        ("table_scene_mug_stereo_textured.pcd", 209_280),
    ] {
        let (dims, coords) = gpu_planning::kdtree::io::read_points(&dir.join(file)).unwrap();
        let kept = gpu_planning::kdtree::FiniteRows::new(dims, coords);
        let p = Points::new(dims, kept.coords).unwrap();
        assert_eq!(p.len(), finite, "{file}");
        let cpu = cpu_build(&p);
        assert_eq!(cpu.check(), Ok(()), "{file}");
        let sample: Vec<usize> = (0..p.len()).step_by(2003).collect();
        let queries: Vec<f32> = sample.iter().flat_map(|&i| p.point(i).to_vec()).collect();
        for k in [1, 8, 64] {
            let got = knn(&cpu, &queries, k, Metric::Euclidean).unwrap();
            let want: Vec<Vec<(f32, u32)>> = sample
                .iter()
                .map(|&i| gpu_planning::kdtree::brute::knn_distinct(&p, p.point(i), k))
                .collect();
            for (qi, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{file}: point {}, k {k}", sample[qi]);
            }
        }
        let Some(rt) = &device else { continue };
        use gpu_planning::kdtree::gpu::DeviceTree;
        let (dev, _) = DeviceTree::build(rt, &p).unwrap();
        assert_eq!(dev.check().unwrap(), Ok(()), "{file}");
        assert_eq!(dev.download(p.len()).unwrap(), cpu, "{file}");
        for k in [1, 8, 64] {
            let want = knn(&cpu, &p.coords, k, Metric::Euclidean).unwrap();
            for traversal in [Traversal::Plane, Traversal::Boxes] {
                dev.set_traversal(traversal);
                let got = dev.knn(&p.coords, k, Metric::Euclidean).unwrap();
                assert!(
                    got == want,
                    "{file}: device and CPU differ at k {k}, {traversal:?}"
                );
            }
        }
    }
}

/// The point files with one of `exts` in `dir`, in name order.
fn files_in(dir: &std::path::Path, exts: &[&str]) -> Vec<std::path::PathBuf> {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| exts.iter().any(|x| e == *x)))
        .collect();
    files.sort();
    files
}

/// A conformance suite against an independent reader: `script` prints, per file it is given,
/// "error" or the file's x y z as f32 bits in hex. Where `peer` decodes a file, ours must give
/// the same values bit for bit; where it refuses one, ours must refuse it too. Returns (files
/// decoded, files refused), or None (after `peer_missing`) without python3 and the peer.
fn decodes_as_peer(
    peer: &str,
    files: &[std::path::PathBuf],
    script: &str,
) -> Option<(usize, usize)> {
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .args(files)
        .output();
    let theirs = match out {
        Ok(o) if o.status.success() => String::from_utf8(o.stdout).unwrap(),
        other => {
            let why = format!("python3 with {peer} unavailable: {other:?}");
            gpu_planning::testing::peer_missing(&format!("{peer} conformance suite"), &why);
            return None;
        }
    };
    let lines: Vec<&str> = theirs.lines().collect();
    assert_eq!(lines.len(), files.len());
    let (mut decoded, mut refused) = (0, 0);
    for (path, line) in files.iter().zip(lines) {
        if line == "skip" {
            continue;
        }
        let ours = gpu_planning::kdtree::io::read_points(path);
        if line == "error" {
            assert!(
                ours.is_err(),
                "{}: {peer} refuses it, ours read {ours:?}",
                path.display()
            );
            refused += 1;
            continue;
        }
        let (d, ours) = ours.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(d, 3);
        let want: Vec<u32> = (0..line.len() / 8)
            .map(|i| {
                let b = u32::from_str_radix(&line[i * 8..i * 8 + 8], 16).unwrap();
                u32::from_le_bytes(b.to_be_bytes())
            })
            .collect();
        let got: Vec<u32> = ours.iter().map(|v| v.to_bits()).collect();
        assert_eq!(got, want, "{}", path.display());
        decoded += 1;
    }
    Some((decoded, refused))
}

/// laspy's test clouds (tests/data/clouds/laspy: LAS 1.1 to 1.4, point formats 0 to 7, extra
/// bytes, extended VLRs, two LAZ files, one of them 110,000 points of airborne LiDAR) as a
/// conformance suite against laspy, an independent
/// reader (with its lazrs backend for LAZ): ours gives the same x y z (its f64 coordinates
/// rounded to f32) bit for bit on every file. Skips without python3 and laspy, unless
/// GPU_PLANNING_REQUIRE_INTEROP=1 (CI, which installs lazrs too).
#[test]
fn laspy_test_clouds_decode_as_laspy_does() {
    let dir = gpu_planning::testing::repo().join("tests/data/clouds/laspy");
    let files = files_in(&dir, &["las", "laz"]);
    assert_eq!(files.len(), 11, "{}", dir.display());
    let script = r#"
import sys
import numpy as np
import laspy
lazrs = laspy.LazBackend.Lazrs in laspy.LazBackend.detect_available()
for f in sys.argv[1:]:
    if f.endswith('.laz') and not lazrs:
        print('skip')
        continue
    try:
        l = laspy.read(f)
        a = np.stack([np.asarray(l.x), np.asarray(l.y), np.asarray(l.z)], axis=1).astype('<f4')
        print(a.tobytes().hex())
    except Exception:
        print('error')
"#;
    if let Some((decoded, refused)) = decodes_as_peer("laspy", &files, script) {
        assert_eq!(refused, 0, "laspy decodes every file");
        let interop =
            std::env::var(gpu_planning::testing::REQUIRE_INTEROP_ENV).is_ok_and(|v| v == "1");
        if decoded < 11 {
            assert!(
                !interop,
                "laspy without its lazrs backend: the LAZ files were not compared"
            );
            gpu_planning::testing::announce_skip(
                "laspy on the LAZ files",
                "laspy has no lazrs backend (pip install lazrs)",
            );
        }
    }
}

/// A LAZ file decodes to the coordinates of the LAS file it compresses (laspy's simple.laz
/// and simple.las, 1,065 points of format 3), bit for bit, without any peer; a cut or
/// overclaiming LAZ file is refused with the file's name and the reason, never a panic.
#[test]
fn laz_decodes_as_its_las_twin_and_bad_laz_is_refused() {
    use gpu_planning::kdtree::las::read_las;
    let dir = gpu_planning::testing::repo().join("tests/data/clouds/laspy");
    let (dl, las) = gpu_planning::kdtree::io::read_points(&dir.join("simple.las")).unwrap();
    let (dz, laz) = gpu_planning::kdtree::io::read_points(&dir.join("simple.laz")).unwrap();
    assert_eq!((dl, dz), (3, 3));
    assert_eq!(las.len(), 3 * 1065);
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&laz), bits(&las));
    let bytes = std::fs::read(dir.join("simple.laz")).unwrap();
    let refuse = |b: &[u8], words: &str| {
        let e = read_las("s.laz", b).unwrap_err().to_string();
        assert!(e.contains("s.laz") && e.contains(words), "{e}");
    };
    for cut in [bytes.len() - 1, bytes.len() / 2, 400] {
        let e = read_las("s.laz", &bytes[..cut]);
        assert!(e.is_err(), "cut at {cut} decoded");
    }
    // Twice the points the data holds: the decoder runs out after the real ones.
    let mut more = bytes.clone();
    more[107..111].copy_from_slice(&(2 * 1065u32).to_le_bytes());
    refuse(&more, "of 2130 points");
    // The record length the laszip VLR describes must be the header's.
    let mut other = bytes.clone();
    let len = u16::from_le_bytes([other[105], other[106]]);
    other[105..107].copy_from_slice(&(len + 1).to_le_bytes());
    refuse(&other, "laszip VLR describes");
}

/// pypcd4's own test clouds (tests/data/clouds/pypcd4: ascii, binary, binary_compressed,
/// organized, COUNT > 1, an `_` field, zero points, an empty file, a cut header) as a
/// conformance suite: where pypcd4 decodes a file, ours gives the same x y z bit for bit;
/// where it refuses one, ours refuses it too. Skips without python3 and pypcd4, unless
/// GPU_PLANNING_REQUIRE_INTEROP=1 (CI).
#[test]
fn pypcd4_test_clouds_decode_as_pypcd4_does() {
    let dir = gpu_planning::testing::repo().join("tests/data/clouds/pypcd4");
    let files = files_in(&dir, &["pcd"]);
    assert_eq!(files.len(), 10, "{}", dir.display());
    let script = r#"
import sys
from pypcd4 import PointCloud
for f in sys.argv[1:]:
    try:
        a = PointCloud.from_path(f).numpy(('x', 'y', 'z')).astype('<f4')
        print(a.tobytes().hex())
    except Exception:
        print('error')
"#;
    if let Some(counts) = decodes_as_peer("pypcd4", &files, script) {
        assert_eq!(counts, (8, 2));
    }
}

/// An organized cloud (WIDTH x HEIGHT, NaN where a return is missing, as PCL saves a depth
/// camera's frame) in each PCD encoding: `knn` leaves the NaN points out and names neighbours
/// by their index in the file, as PCL's KdTreeFLANN does; checked by brute force.
#[test]
fn organized_pcd_clouds_answer_with_file_indices() {
    let (w, h) = (7usize, 5usize);
    let mut rng = gpu_planning::rng::XorShift::new(gpu_planning::compute::testing::seed(0));
    let mut unit = move || (rng.next_u64() % 1000) as f32 / 250.0;
    let mut pts: Vec<[f32; 3]> = (0..w * h).map(|_| [unit(), unit(), unit()]).collect();
    for i in [0, 3, 8, 9, 10, 11, 12, 13, 34] {
        pts[i] = [f32::NAN; 3];
    }
    let head = |data: &str| {
        format!(
            "# .PCD v0.7\nVERSION 0.7\nFIELDS intensity x y z\nSIZE 4 4 4 4\nTYPE F F F F\n\
             COUNT 1 1 1 1\nWIDTH {w}\nHEIGHT {h}\nVIEWPOINT 0 0 0 1 0 0 0\nPOINTS {}\n\
             DATA {data}\n",
            w * h
        )
    };
    let mut ascii = head("ascii");
    for (i, p) in pts.iter().enumerate() {
        let v = |x: f32| {
            if x.is_nan() {
                "nan".to_string()
            } else {
                format!("{x}")
            }
        };
        ascii += &format!("{i} {} {} {}\n", v(p[0]), v(p[1]), v(p[2]));
    }
    let mut binary = head("binary").into_bytes();
    for (i, p) in pts.iter().enumerate() {
        binary.extend((i as f32).to_le_bytes());
        binary.extend(p.iter().flat_map(|v| v.to_le_bytes()));
    }
    let queries: Vec<[f32; 3]> = (0..23).map(|_| [unit(), unit(), unit()]).collect();
    let dir = std::env::temp_dir().join(format!("gp-organized-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let q: Vec<f32> = queries.iter().flatten().copied().collect();
    std::fs::write(
        dir.join("q.npy"),
        gpu_planning::npy::write_f32_2d(queries.len() as u32, 3, &q),
    )
    .unwrap();
    std::fs::write(dir.join("ascii.pcd"), ascii).unwrap();
    std::fs::write(dir.join("binary.pcd"), binary).unwrap();
    // Brute force over the finite points, ties to the lower index.
    let k = 4;
    let want: Vec<Vec<u32>> = queries
        .iter()
        .map(|q| {
            let mut d: Vec<(f32, u32)> = pts
                .iter()
                .enumerate()
                .filter(|(_, p)| p[0].is_finite())
                .map(|(i, p)| {
                    let s: f32 = (0..3).map(|j| (p[j] - q[j]) * (p[j] - q[j])).sum();
                    (s, i as u32)
                })
                .collect();
            d.sort_by(|a, b| a.partial_cmp(b).unwrap());
            d.iter().take(k).map(|e| e.1).collect()
        })
        .collect();
    let exe = gpu_planning::env::BIN
        .get()
        .ok_or(())
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_gpu_planning").to_string());
    for (file, traversal) in [
        ("ascii.pcd", "plane"),
        ("binary.pcd", "plane"),
        ("binary.pcd", "boxes"),
    ] {
        let out = std::process::Command::new(&exe)
            .args(["knn", "--points"])
            .arg(dir.join(file))
            .arg("--queries")
            .arg(dir.join("q.npy"))
            .args(["--k", &k.to_string(), "--backend", "auto", "--json"])
            .args(["--traversal", traversal])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{file}: {err}");
        assert!(err.contains("9 points of"), "{file}: {err}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let idx: Vec<Vec<u32>> = serde_json::from_value(v["indices"].clone()).unwrap();
        assert_eq!(idx, want, "{file}, {traversal}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// PCD headers that claim what the data cannot hold are refused, naming the field, before
/// anything sized by them is allocated or looped over: a COUNT or SIZE of 0 (every point would
/// read byte 0, for POINTS 10^12 points), POINTS beyond the data, a compressed cloud claiming
/// 4 GB raw from a few bytes.
#[test]
fn pcd_headers_that_lie_about_sizes_are_refused_by_name() {
    use gpu_planning::kdtree::io::read_pcd;
    let body = [0u8; 64];
    for (head, want) in [
        (
            "FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 0 0 0\nPOINTS 1000000000000\nDATA binary\n",
            "field x: COUNT 0",
        ),
        (
            "FIELDS x y z\nSIZE 0 4 4\nTYPE F F F\nCOUNT 1 1 1\nPOINTS 1000000000000\nDATA binary\n",
            "field x: TYPE F SIZE 0",
        ),
        (
            "FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\nPOINTS 1000000\nDATA binary\n",
            "POINTS 1000000 of 12 bytes need 12000000 bytes; the data has 64",
        ),
        (
            "FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 0 1\nPOINTS 1000000\nDATA binary_compressed\n",
            "field y: COUNT 0",
        ),
    ] {
        let mut file = head.as_bytes().to_vec();
        file.extend(body);
        let e = read_pcd("lie.pcd", &file).unwrap_err().to_string();
        assert!(e.contains("lie.pcd") && e.contains(want), "{head}: {e}");
    }
    // 4,294,967,292 raw bytes claimed (POINTS x 12), a 4-byte stream: refused without
    // reserving the claimed size first.
    let mut file =
        b"FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\nPOINTS 357913941\nDATA binary_compressed\n"
            .to_vec();
    file.extend(4u32.to_le_bytes());
    file.extend(4_294_967_292u32.to_le_bytes());
    file.extend([0x1f, 1, 2, 3]);
    let e = read_pcd("bomb.pcd", &file).unwrap_err().to_string();
    assert!(e.contains("bomb.pcd") && e.contains("LZF"), "{e}");
}
