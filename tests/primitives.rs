//! Parallel primitives: the CPU references against plain definitions, and the CUDA versions
//! against the CPU references on random and adversarial inputs. GPU tests skip without CUDA
//! and fail when GPU_PLANNING_REQUIRE_CUDA=1.

use gpu_planning::compute::primitives::gpu::{Primitives, SortConfig, SortMethod};
use gpu_planning::compute::primitives::{self, cpu};
use gpu_planning::compute::testing::cuda_or_skip;
use gpu_planning::compute::Backend;
use gpu_planning::rng::XorShift;
use proptest::prelude::*;

/// Sizes around the 2048-element tiles and warp widths, plus multi-level scans.
const SIZES: &[usize] = &[
    0, 1, 2, 31, 32, 33, 255, 256, 257, 2047, 2048, 2049, 4096, 6143, 100_003,
];

fn keys_of(kind: &str, n: usize, rng: &mut XorShift) -> Vec<u64> {
    (0..n)
        .map(|i| match kind {
            "random" => rng.next_u64(),
            "few_distinct" => rng.next_u64() % 7,
            "high_bits" => rng.next_u64() & 0xff00_0000_0000_0000,
            "narrow" => rng.next_u64() & 0x3fff_ffff,
            "equal" => 42,
            "descending" => (n - i) as u64,
            "extremes" => [0, u64::MAX, 1 << 63, (1 << 63) - 1][(rng.next_u64() % 4) as usize],
            _ => unreachable!(),
        })
        .collect()
}

const KEY_KINDS: &[&str] = &[
    "random",
    "few_distinct",
    "high_bits",
    "narrow",
    "equal",
    "descending",
    "extremes",
];

fn check_stable_sorted(keys: &[u64], values: &[u32], sk: &[u64], sv: &[u32]) {
    assert_eq!(sk.len(), keys.len());
    for i in 1..sk.len() {
        assert!(sk[i - 1] <= sk[i], "unsorted at {i}");
        if sk[i - 1] == sk[i] {
            assert!(sv[i - 1] < sv[i], "unstable at {i}");
        }
    }
    for (&k, &v) in sk.iter().zip(sv) {
        assert_eq!(keys[v as usize], k, "value {v} lost its key");
    }
    let _ = values;
}

/// A request's buffers, freed when it ends, must still be in the pool after the request's
/// synchronisation, or the next request maps fresh pages for them on its own time.
#[test]
fn freed_device_memory_stays_in_the_pool_across_a_synchronisation() {
    let Some(rt) = cuda_or_skip("freed_device_memory_stays_in_the_pool_across_a_synchronisation")
    else {
        return;
    };
    const BYTES: usize = 64 << 20;
    let buffer = rt.alloc_zeros::<u8>(BYTES).expect("alloc");
    rt.synchronize().expect("sync");
    drop(buffer);
    rt.synchronize().expect("sync");
    let kept = rt.pool_reserved().expect("pool attribute");
    assert!(
        kept >= BYTES as u64,
        "the pool kept {kept} bytes after a synchronisation, less than the {BYTES} just freed"
    );
}

proptest! {
    #[test]
    fn cpu_scan_matches_definition(input in prop::collection::vec(any::<u32>(), 0..600)) {
        let (out, total) = cpu::exclusive_scan(&input);
        let mut acc = 0u32;
        for (i, &x) in input.iter().enumerate() {
            prop_assert_eq!(out[i], acc);
            acc = acc.wrapping_add(x);
        }
        prop_assert_eq!(total, acc);
    }

    #[test]
    fn cpu_sorts_are_stable(keys in prop::collection::vec(0u64..20, 0..600)) {
        let values: Vec<u32> = (0..keys.len() as u32).collect();
        let (sk, sv) = cpu::sort_pairs(&keys, &values);
        check_stable_sorted(&keys, &values, &sk, &sv);
        let (pk, pv) = cpu::sort_pairs_parallel(&keys, &values);
        prop_assert_eq!(pk, sk);
        prop_assert_eq!(pv, sv);
    }

    #[test]
    fn cpu_compact_keeps_flagged_in_order(flags in prop::collection::vec(0u8..3, 0..600)) {
        let values: Vec<u32> = (0..flags.len() as u32).map(|i| i * 3).collect();
        let kept = cpu::compact(&values, &flags);
        let expected: Vec<u32> = (0..flags.len()).filter(|&i| flags[i] != 0).map(|i| values[i]).collect();
        prop_assert_eq!(kept, expected);
    }
}

#[test]
fn dispatch_rejects_mismatched_lengths() {
    let e = primitives::sort_pairs(&Backend::Cpu, &[1, 2], &[0])
        .unwrap_err()
        .to_string();
    assert!(e.contains("values") && e.contains("length 1"), "{e}");
    let e = primitives::compact(&Backend::Cpu, &[1, 2], &[1])
        .unwrap_err()
        .to_string();
    assert!(e.contains("flags"), "{e}");
}

#[test]
fn gpu_sort_matches_cpu_reference() {
    let Some(rt) = cuda_or_skip("gpu_sort_matches_cpu_reference") else {
        return;
    };
    let p = Primitives::new(&rt).unwrap();
    let mut rng = XorShift::new(gpu_planning::compute::testing::seed(0x5eed_0001));
    for &n in SIZES.iter().chain(&[1 << 20 | 17]) {
        for kind in KEY_KINDS {
            let keys = keys_of(kind, n, &mut rng);
            let values: Vec<u32> = (0..n as u32).collect();
            let (ck, cv) = cpu::sort_pairs(&keys, &values);
            for method in [
                SortMethod::Onesweep,
                SortMethod::ThreeKernel,
                SortMethod::Queued,
            ] {
                let (gk, gv) = p.sort_pairs_host_with(&keys, &values, method).unwrap();
                assert_eq!(gk, ck, "keys differ: n={n} kind={kind} {method:?}");
                assert_eq!(gv, cv, "values differ: n={n} kind={kind} {method:?}");
            }
        }
    }
}

/// A sort by the keys' top bytes alone equals the CPU's stable sort of the keys masked to
/// those bytes, for every byte count (a sort whose low bytes do not matter takes fewer passes).
#[test]
fn gpu_sort_by_top_bytes_is_a_stable_sort_of_those_bytes() {
    let Some(rt) = cuda_or_skip("gpu_sort_by_top_bytes_is_a_stable_sort_of_those_bytes") else {
        return;
    };
    let p = Primitives::new(&rt).unwrap();
    let mut rng = XorShift::new(gpu_planning::compute::testing::seed(0x5eed_0007));
    for &n in &[1usize, 2, 2049, 100_003] {
        for kind in ["random", "high_bits", "extremes", "few_distinct"] {
            let keys = keys_of(kind, n, &mut rng);
            let values: Vec<u32> = (0..n as u32).collect();
            for digits in 1..=8usize {
                let mask = u64::MAX << (64 - 8 * digits);
                let masked: Vec<u64> = keys.iter().map(|k| k & mask).collect();
                let (ck, cv) = cpu::sort_pairs(&masked, &values);
                let (mut dk, mut dv) = (rt.upload(&keys).unwrap(), rt.upload(&values).unwrap());
                p.sort_pairs_queued_by_top(&mut dk, &mut dv, n, digits)
                    .unwrap();
                let gk = rt.download(&dk, n).unwrap();
                let gv = rt.download(&dv, n).unwrap();
                let gk_masked: Vec<u64> = gk.iter().map(|k| k & mask).collect();
                assert_eq!(gv, cv, "order differs: n={n} kind={kind} digits={digits}");
                assert_eq!(
                    gk_masked, ck,
                    "keys differ: n={n} kind={kind} digits={digits}"
                );
                let kept: Vec<u64> = gv.iter().map(|&v| keys[v as usize]).collect();
                assert_eq!(
                    gk, kept,
                    "a key left its value: n={n} kind={kind} digits={digits}"
                );
            }
        }
    }
}

/// Host buffers cross both ways, through the stream's pinned chunks (the default on discrete
/// GPUs), the driver's staging and registered pages (the default on integrated GPUs), byte for
/// byte: sizes around the registration threshold, odd lengths and
/// unaligned starts (a slice one element into a vector); and a sort through registered copies
/// matches the CPU.
#[test]
fn gpu_host_copies_are_exact_pinned_staged_and_registered() {
    use gpu_planning::compute::host_copies::{HostCopies, Registration, REGISTER_FROM_BYTES};
    let Some(shared) = cuda_or_skip("gpu_host_copies_are_exact_pinned_staged_and_registered")
    else {
        return;
    };
    let mut rng = XorShift::new(gpu_planning::compute::testing::seed(0x5eed_00c0));
    for mode in [
        HostCopies::Pinned,
        HostCopies::Staged,
        HostCopies::Registered,
    ] {
        let rt = shared.with_host_copies(mode);
        let granted = Registration::granted();
        let words = REGISTER_FROM_BYTES / 8;
        // Chunk boundaries too: one pinned chunk, one more word, several chunks and a part.
        let chunk = gpu_planning::compute::staging::CHUNK_BYTES / 8;
        for n in [
            0,
            1,
            1000,
            words - 1,
            words,
            words + 1,
            3 * words + 7,
            chunk,
            chunk + 1,
            5 * chunk / 2 + 3,
        ] {
            let data: Vec<u64> = (0..n + 1).map(|_| rng.next_u64()).collect();
            for start in [0, 1.min(n)] {
                let host = &data[start..start + n];
                let dev = rt.upload(host).unwrap();
                let back = rt.download(&dev, n).unwrap();
                assert!(
                    back == host,
                    "{mode:?} n={n} start={start}: round trip differs"
                );
                if n > 2 {
                    let mid = rt.download_range(&dev, 1..n - 1).unwrap();
                    assert!(mid == host[1..n - 1], "{mode:?} n={n}: range differs");
                }
            }
        }
        let p = Primitives::new(&rt).unwrap();
        let keys = keys_of("random", 1 << 20 | 5, &mut rng);
        let values: Vec<u32> = (0..keys.len() as u32).collect();
        let (ck, cv) = cpu::sort_pairs(&keys, &values);
        let (gk, gv) = p
            .sort_pairs_host_with(&keys, &values, SortMethod::Onesweep)
            .unwrap();
        assert!(gk == ck && gv == cv, "{mode:?}: sort differs");
        // A refused registration copies the staged way: the registered pass must have had
        // its copies registered, or it tested the staged path twice. (The count is the
        // process's: only where no other test registers, the default on a discrete GPU, does
        // it speak for this pass alone.)
        if mode == HostCopies::Registered {
            assert!(
                Registration::granted() > granted,
                "no host pages were registered in the registered pass"
            );
        }
    }
}

#[test]
fn gpu_scan_matches_cpu_reference() {
    let Some(rt) = cuda_or_skip("gpu_scan_matches_cpu_reference") else {
        return;
    };
    let p = Primitives::new(&rt).unwrap();
    let mut rng = XorShift::new(gpu_planning::compute::testing::seed(0x5eed_0002));
    // 4_194_305 = 2048 * 2048 + 1 needs three levels of tile sums.
    for &n in SIZES.iter().chain(&[4_194_305, 5_000_011]) {
        let small: Vec<u32> = (0..n).map(|_| (rng.next_u64() % 5) as u32).collect();
        let wrapping: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
        for input in [&small, &wrapping] {
            let (g, gt) = p.exclusive_scan_host(input).unwrap();
            let (c, ct) = cpu::exclusive_scan(input);
            assert_eq!(gt, ct, "total differs: n={n}");
            assert!(g == c, "scan differs: n={n}");
        }
    }
}

#[test]
fn gpu_compact_matches_cpu_reference() {
    let Some(rt) = cuda_or_skip("gpu_compact_matches_cpu_reference") else {
        return;
    };
    let p = Primitives::new(&rt).unwrap();
    let mut rng = XorShift::new(gpu_planning::compute::testing::seed(0x5eed_0003));
    for &n in SIZES.iter().chain(&[3_000_017]) {
        let values: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
        let patterns: [Vec<u8>; 4] = [
            (0..n).map(|_| (rng.next_u64() % 3) as u8).collect(),
            vec![0; n],
            vec![1; n],
            (0..n).map(|i| u8::from(i % 1000 == 999)).collect(),
        ];
        for flags in &patterns {
            assert_eq!(
                p.compact_host(&values, flags).unwrap(),
                cpu::compact(&values, flags),
                "n={n}"
            );
        }
    }
}

#[test]
fn gpu_backend_dispatch_matches_cpu() {
    let Some(rt) = cuda_or_skip("gpu_backend_dispatch_matches_cpu") else {
        return;
    };
    let gpu = Backend::Cuda(rt);
    let mut rng = XorShift::new(99);
    let keys: Vec<u64> = (0..10_001).map(|_| rng.next_u64() % 1000).collect();
    let values: Vec<u32> = (0..10_001).collect();
    assert_eq!(
        primitives::sort_pairs(&gpu, &keys, &values).unwrap(),
        primitives::sort_pairs(&Backend::Cpu, &keys, &values).unwrap()
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn gpu_primitives_match_cpu_on_arbitrary_inputs(
        keys in prop::collection::vec(prop_oneof![any::<u64>(), 0u64..4], 0..5000),
        flags_seed in any::<u64>(),
    ) {
        let Some(rt) = cuda_or_skip("gpu_primitives_match_cpu_on_arbitrary_inputs") else { return Ok(()) };
        let p = Primitives::new(&rt).unwrap();
        let values: Vec<u32> = (0..keys.len() as u32).collect();
        let expected = cpu::sort_pairs(&keys, &values);
        prop_assert_eq!(&p.sort_pairs_host_with(&keys, &values, SortMethod::Onesweep).unwrap(), &expected);
        prop_assert_eq!(&p.sort_pairs_host_with(&keys, &values, SortMethod::ThreeKernel).unwrap(), &expected);
        let small: Vec<u32> = keys.iter().map(|&k| k as u32).collect();
        prop_assert_eq!(p.exclusive_scan_host(&small).unwrap(), cpu::exclusive_scan(&small));
        let mut rng = XorShift::new(flags_seed);
        let flags: Vec<u8> = keys.iter().map(|_| (rng.next_u64() & 1) as u8).collect();
        prop_assert_eq!(p.compact_host(&values, &flags).unwrap(), cpu::compact(&values, &flags));
    }
}

#[test]
fn gpu_sort_is_exact_for_every_tile_shape() {
    let Some(rt) = cuda_or_skip("gpu_sort_is_exact_for_every_tile_shape") else {
        return;
    };
    let mut rng = XorShift::new(gpu_planning::compute::testing::seed(0x5eed_0004));
    for (items, blocks) in [(1, 1), (5, 2), (12, 3), (18, 1)] {
        let config = SortConfig {
            items_per_thread: items,
            min_blocks_per_sm: blocks,
        };
        let p = Primitives::with_config(&rt, config).unwrap();
        for n in [
            1usize,
            255,
            256 * items as usize,
            256 * items as usize + 1,
            77_777,
        ] {
            for kind in ["random", "few_distinct"] {
                let keys = keys_of(kind, n, &mut rng);
                let values: Vec<u32> = (0..n as u32).collect();
                let expected = cpu::sort_pairs(&keys, &values);
                for method in [SortMethod::Onesweep, SortMethod::ThreeKernel] {
                    let got = p.sort_pairs_host_with(&keys, &values, method).unwrap();
                    assert!(got == expected, "{config:?} {method:?} n={n} {kind}");
                }
            }
        }
    }
}

#[test]
fn sort_config_out_of_range_is_an_error() {
    let Some(rt) = cuda_or_skip("sort_config_out_of_range_is_an_error") else {
        return;
    };
    let bad = SortConfig {
        items_per_thread: 19,
        min_blocks_per_sm: 1,
    };
    assert!(Primitives::with_config(&rt, bad).is_err());
}

#[test]
fn kernels_load_and_run_from_fresh_threads() {
    let Some(rt) = cuda_or_skip("kernels_load_and_run_from_fresh_threads") else {
        return;
    };
    use gpu_planning::compute::kernels::PRIMITIVES;
    rt.function(&PRIMITIVES, "scan_tiles").unwrap();
    // Nodes serve requests on worker threads where the context was never made current.
    for _ in 0..3 {
        let rt = rt.clone();
        std::thread::spawn(move || {
            rt.function(&PRIMITIVES, "scan_reduce_tiles").unwrap();
            let g = gpu_planning::polyline::Gradient::sobel(
                &gpu_planning::polyline::Gray::new(8, 8, vec![1.0; 64]).unwrap(),
            );
            let p = gpu_planning::polyline::Problem {
                a: (1.0, 1.0),
                b: (6.0, 6.0),
                guides: 2,
                points: 3,
                half_width: 1.0,
                max_angle: 1.0,
            };
            gpu_planning::polyline::solve(&Backend::Cuda(rt), &g, &p).unwrap();
        })
        .join()
        .unwrap();
    }
    // Buffers dropped on a thread that never used CUDA must free cleanly, not leave an error
    // for the next call (a node replaces its map or image on the executor thread).
    let g = gpu_planning::polyline::Gradient::sobel(
        &gpu_planning::polyline::Gray::new(8, 8, vec![1.0; 64]).unwrap(),
    );
    let dev = gpu_planning::polyline::gpu::DeviceGradient::upload(&rt, &g).unwrap();
    std::thread::spawn(move || drop(dev)).join().unwrap();
    let grid = gpu_planning::lee::Grid::from_elevation(
        4,
        4,
        &[0.0; 16],
        1.0,
        gpu_planning::lee::Connectivity::Four,
    )
    .unwrap();
    let planner = gpu_planning::lee::Planner::new(
        &Backend::Cuda(rt.clone()),
        grid,
        gpu_planning::lee::Config::default(),
    )
    .unwrap();
    std::thread::spawn(move || drop(planner)).join().unwrap();
    rt.synchronize().unwrap();
    rt.function(&PRIMITIVES, "scan_tiles").unwrap();
    let mut d = vec![0i32; 64 * 64];
    let mut h = vec![0u32; 64 * 64];
    gpu_planning::apsp::run(
        &Backend::Cuda(rt.clone()),
        &mut d,
        &mut h,
        64,
        &gpu_planning::apsp::Config::default(),
    )
    .unwrap();
}

/// Every module a node prepares when it starts compiles (the definitions each list names are
/// the ones its kernels need), and once prepared is not compiled again: what a request then
/// asks for is already loaded.
#[test]
fn every_nodes_start_up_kernels_compile_once() {
    let Some(rt) = cuda_or_skip("every_nodes_start_up_kernels_compile_once") else {
        return;
    };
    let lists = [
        gpu_planning::lee::gpu::modules(),
        gpu_planning::lee::costmap::gpu::modules(),
        gpu_planning::lee::clearance::gpu::modules(),
        gpu_planning::apsp::gpu::modules(&gpu_planning::apsp::Config::default()),
        gpu_planning::cellgraph::gpu::modules(),
        gpu_planning::polyline::gpu::modules(),
        gpu_planning::kdtree::gpu::modules(8, gpu_planning::kdtree::Traversal::Plane),
        gpu_planning::kdtree::gpu::modules(8, gpu_planning::kdtree::Traversal::Boxes),
        gpu_planning::compute::primitives::gpu::modules(),
    ];
    for m in lists.iter().flatten() {
        rt.prepare(&m.source, &m.defines)
            .unwrap_or_else(|e| panic!("kernel module {} {:?}: {e}", m.source.name, m.defines));
        assert!(
            !rt.prepare(&m.source, &m.defines).unwrap(),
            "kernel module {} {:?} compiled twice",
            m.source.name,
            m.defines
        );
    }
}
