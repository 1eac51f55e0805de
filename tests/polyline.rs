//! Polyline DP: equal to brute force on many small random instances and angles; the Sobel
//! gradient, guide geometry and link scores on hand-checked cases; infeasible limits; input
//! errors; the CLI.

use gpu_planning::polyline::cpu::{brute_force, solve};
use gpu_planning::polyline::geometry::Problem;
use gpu_planning::polyline::score::link;
use gpu_planning::polyline::{Gradient, Gray};
use gpu_planning::rng::XorShift;
use proptest::prelude::*;

fn random_image(w: u32, h: u32, seed: u64) -> Gray {
    let mut rng = XorShift::new(seed);
    let data = (0..w * h).map(|_| (rng.next_u64() % 256) as f64).collect();
    Gray::new(w, h, data).unwrap()
}

/// Left half 0, right half 10, the step between columns x0 - 1 and x0.
fn step_image(w: u32, h: u32, x0: u32) -> Gray {
    let data = (0..h)
        .flat_map(|_| (0..w).map(move |x| if x >= x0 { 10.0 } else { 0.0 }))
        .collect();
    Gray::new(w, h, data).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
    #[test]
    fn dp_equals_brute_force(w in 4u32..30, h in 4u32..30, seed in any::<u64>(),
                             m in 0u32..4, d in 2u32..6, half_width in 0.5f64..8.0,
                             max_angle in 0.0f64..3.5, ax in -2.0f64..32.0, ay in -2.0f64..32.0,
                             bx in -2.0f64..32.0, by in -2.0f64..32.0) {
        prop_assume!((ax - bx).abs() + (ay - by).abs() > 0.5);
        let grad = Gradient::sobel(&random_image(w, h, seed));
        let p = Problem { a: (ax, ay), b: (bx, by), guides: m, points: d, half_width, max_angle };
        let dp = solve(&grad, &p).unwrap();
        let (brute, _ties) = brute_force(&grad, &p).unwrap();
        match brute {
            None => prop_assert!(!dp.feasible),
            Some((score, choice)) => {
                prop_assert!(dp.feasible);
                prop_assert_eq!(dp.score, score);
                // Ties included: the DP's choice is the brute force's.
                prop_assert_eq!(&dp.indices, &choice);
                prop_assert_eq!(dp.points.len(), m as usize + 2);
                prop_assert_eq!(dp.points[0], p.a);
                prop_assert_eq!(*dp.points.last().unwrap(), p.b);
            }
        }
    }
}

#[test]
fn sobel_signs_and_replicated_borders() {
    let g = Gradient::sobel(&step_image(6, 5, 3));
    // At the step (columns 2 and 3) gx = 4 * 10, positive to the right; gy is 0 everywhere,
    // also on the top and bottom rows thanks to replicated borders.
    for y in 0..5 {
        for x in 0..6 {
            let i = y * 6 + x;
            let want = if x == 2 || x == 3 { 40.0 } else { 0.0 };
            assert_eq!(g.gx[i], want, "gx at ({x}, {y})");
            assert_eq!(g.gy[i], 0.0);
        }
    }
    // Downwards brightening gives a positive gy.
    let data = (0..5u32)
        .flat_map(|y| (0..4).map(move |_| if y >= 2 { 1.0 } else { 0.0 }))
        .collect();
    let g = Gradient::sobel(&Gray::new(4, 5, data).unwrap());
    assert_eq!(g.gy[4 + 1], 4.0);
    assert_eq!(g.gy[2 * 4 + 1], 4.0);
    assert_eq!(g.gy[0], 0.0);
}

#[test]
fn guides_are_centred_and_oriented_as_specified() {
    let p = Problem {
        a: (0.0, 0.0),
        b: (10.0, 0.0),
        guides: 4,
        points: 5,
        half_width: 3.0,
        max_angle: 1.0,
    };
    // c_k = a + (b - a) k / 5; n = (-(b - a).y, (b - a).x) / |b - a| = (0, 1).
    assert_eq!(p.vertex(1, 0), (2.0, -3.0));
    assert_eq!(p.vertex(1, 2), (2.0, 0.0));
    assert_eq!(p.vertex(4, 4), (8.0, 3.0));
    assert_eq!(p.vertex(0, 0), p.a);
    assert_eq!(p.vertex(5, 0), p.b);
}

#[test]
fn links_score_only_the_gradient_across_them() {
    let g = Gradient::sobel(&step_image(20, 20, 10));
    // Along the edge (vertical link on column 10): |gx| = 40 per pixel, 10 pixels.
    assert_eq!(link(&g, (10.0, 5.0), (10.0, 15.0)), 400.0);
    // Across the edge: the gradient is parallel to the link and scores nothing.
    assert_eq!(link(&g, (2.0, 5.0), (18.0, 5.0)), 0.0);
    // Pixels outside the image add nothing.
    assert_eq!(link(&g, (-30.0, -30.0), (-20.0, -30.0)), 0.0);
}

#[test]
fn the_best_polyline_follows_an_edge() {
    let g = Gradient::sobel(&step_image(40, 40, 20));
    let p = Problem {
        a: (17.0, 2.0),
        b: (22.0, 37.0),
        guides: 6,
        points: 41,
        half_width: 8.0,
        max_angle: 40f64.to_radians(),
    };
    let r = solve(&g, &p).unwrap();
    assert!(r.feasible);
    // The edge pixels are columns 19 and 20, i.e. x in [18.5, 20.5) after rounding.
    for &(x, _) in &r.points[1..r.points.len() - 1] {
        assert!(
            (18.5..20.5).contains(&x),
            "guide point at x = {x}: {:?}",
            r.points
        );
    }
}

#[test]
fn a_straight_only_limit_without_a_collinear_choice_is_infeasible() {
    let g = Gradient::sobel(&random_image(16, 16, 3));
    let p = Problem {
        a: (1.0, 1.0),
        b: (14.0, 12.0),
        guides: 3,
        points: 4, // even: no guide point lies on a–b
        half_width: 2.0,
        max_angle: 0.0,
    };
    let r = solve(&g, &p).unwrap();
    assert!(!r.feasible && r.points.is_empty());
    assert!(brute_force(&g, &p).unwrap().0.is_none());
}

#[test]
fn bad_problems_are_named() {
    let g = Gradient::sobel(&random_image(8, 8, 1));
    let base = Problem {
        a: (1.0, 1.0),
        b: (6.0, 6.0),
        guides: 2,
        points: 3,
        half_width: 2.0,
        max_angle: 0.5,
    };
    for (p, field) in [
        (
            Problem {
                b: (1.0, 1.0),
                ..base.clone()
            },
            "b",
        ),
        (
            Problem {
                points: 1,
                ..base.clone()
            },
            "points_per_guide",
        ),
        (
            Problem {
                half_width: 0.0,
                ..base.clone()
            },
            "half_width",
        ),
        (
            Problem {
                max_angle: f64::NAN,
                ..base.clone()
            },
            "max_angle",
        ),
        (
            Problem {
                a: (f64::INFINITY, 0.0),
                ..base.clone()
            },
            "a.x",
        ),
    ] {
        let e = solve(&g, &p).unwrap_err().to_string();
        assert!(e.contains(field), "{field}: {e}");
    }
    let e = Gray::new(3, 3, vec![0.0; 8]).unwrap_err().to_string();
    assert!(e.contains("image.data"), "{e}");
    let e = Gray::new(1, 2, vec![0.0, f64::NAN])
        .unwrap_err()
        .to_string();
    assert!(e.contains("pixel 1"), "{e}");
}

#[test]
fn cli_prints_the_solution_as_json() {
    let dir = std::env::temp_dir().join(format!("gpu_planning_polyline_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("step.png");
    let img = ::image::GrayImage::from_fn(30, 30, |x, _| {
        ::image::Luma([if x >= 15 { 200 } else { 10 }])
    });
    img.save(&path).unwrap();
    let exe = gpu_planning::env::BIN
        .get()
        .ok_or(())
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_gpu_planning").to_string());
    let out = std::process::Command::new(&exe)
        .args([
            "polyline",
            "--image",
            path.to_str().unwrap(),
            "--a",
            "14,1",
            "--b",
            "16,28",
        ])
        .args([
            "--guides",
            "4",
            "--points",
            "9",
            "--half-width",
            "4",
            "--max-angle",
            "30",
        ])
        .args(["--backend", "cpu", "--json", "--png"])
        .arg(dir.join("drawn.png"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let gray = Gray::from_dynamic(&::image::open(&path).unwrap()).unwrap();
    let want = solve(
        &Gradient::sobel(&gray),
        &Problem {
            a: (14.0, 1.0),
            b: (16.0, 28.0),
            guides: 4,
            points: 9,
            half_width: 4.0,
            max_angle: 30f64.to_radians(),
        },
    )
    .unwrap();
    assert_eq!(v["feasible"], true);
    assert_eq!(v["score"].as_f64().unwrap(), want.score);
    let pts: Vec<(f64, f64)> = v["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_f64().unwrap(), p[1].as_f64().unwrap()))
        .collect();
    assert_eq!(pts, want.points);
    // The picture: scaled up, with the polyline's vertices in red.
    let drawn = ::image::open(dir.join("drawn.png")).unwrap().to_rgb8();
    assert_eq!(drawn.dimensions(), (240, 240));
    let (x, y) = want.points[2];
    let at = drawn.get_pixel(((x + 0.5) * 8.0) as u32, ((y + 0.5) * 8.0) as u32);
    assert_eq!(at.0, [230, 30, 30]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn gpu_matches_cpu_bit_for_bit() {
    let Some(rt) = gpu_planning::compute::testing::cuda_or_skip("gpu_matches_cpu_bit_for_bit")
    else {
        return;
    };
    let seed = gpu_planning::compute::testing::seed(0x9017);
    let mut rng = XorShift::new(seed);
    let mut unit = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let mut feasible = 0;
    for case in 0..90u64 {
        let (w, h) = (20 + (case * 7 % 90) as u32, 15 + (case * 11 % 70) as u32);
        // Random images have few equal scores; flat and step images have many, which the
        // best-first scan must break towards the smallest index like the full scan.
        let img = match case % 3 {
            0 => random_image(w, h, seed ^ case),
            1 => Gray::new(w, h, vec![7.0; (w * h) as usize]).unwrap(),
            _ => step_image(w, h, w / 2),
        };
        let grad = Gradient::sobel(&img);
        let p = Problem {
            a: (
                unit() * (w as f64 + 10.0) - 5.0,
                unit() * (h as f64 + 10.0) - 5.0,
            ),
            b: (
                unit() * (w as f64 + 10.0) - 5.0,
                unit() * (h as f64 + 10.0) - 5.0,
            ),
            guides: (case % 9) as u32,
            points: 2 + (case * 13 % 70) as u32,
            half_width: 0.5 + unit() * 20.0,
            max_angle: unit() * 3.3,
        };
        feasible += check_gpu_against_cpu(&rt, &grad, &p, case) as u32;
    }
    assert!(
        feasible > 15,
        "only {feasible} feasible cases: the test checks too little"
    );
    // More predecessors than the sort's block has threads (several pairs per thread), and a
    // narrow limit that makes the best-first scan go deep.
    let grad = Gradient::sobel(&random_image(300, 200, seed));
    for (points, max_angle) in [(1100, 0.6), (700, 0.02)] {
        let p = Problem {
            a: (10.0, 90.0),
            b: (290.0, 120.0),
            guides: 2,
            points,
            half_width: 60.0,
            max_angle,
        };
        check_gpu_against_cpu(&rt, &grad, &p, points as u64);
    }
}

/// Both device scans (best-first after a sort, and over all predecessors) against the CPU DP,
/// bit for bit; returns whether the case is feasible.
fn check_gpu_against_cpu(
    rt: &std::sync::Arc<gpu_planning::compute::cuda::CudaRuntime>,
    grad: &Gradient,
    p: &Problem,
    case: u64,
) -> bool {
    use gpu_planning::polyline::gpu::DeviceGradient;
    let cpu = solve(grad, p).unwrap();
    for limit in [usize::MAX, 0] {
        let dev = DeviceGradient::upload(rt, grad)
            .unwrap()
            .with_sort_limit(limit);
        let gpu = dev.solve(p).unwrap();
        let what = format!("case {case}, sort limit {limit}: {p:?}");
        assert_eq!(cpu.feasible, gpu.feasible, "{what}");
        assert_eq!(cpu.score.to_bits(), gpu.score.to_bits(), "{what}");
        assert_eq!(cpu.indices, gpu.indices, "{what}");
        assert_eq!(cpu.points, gpu.points, "{what}");
    }
    cpu.feasible
}

#[test]
fn images_convert_from_every_supported_encoding() {
    use gpu_planning::nodes::image_convert::gray_from_image;
    use gpu_planning::ros::msg::sensor_msgs::Image;
    let img = |enc: &str, step: u32, data: Vec<u8>, big: u8| Image {
        height: 2,
        width: 2,
        encoding: enc.into(),
        is_bigendian: big,
        step,
        data,
        ..Default::default()
    };
    let g = gray_from_image(&img("mono8", 3, vec![1, 2, 9, 3, 4, 9], 0), 100).unwrap();
    assert_eq!(g.data, vec![1.0, 2.0, 3.0, 4.0]);
    let g = gray_from_image(&img("mono16", 4, vec![0, 1, 1, 0, 0, 2, 2, 0], 1), 100).unwrap();
    assert_eq!(g.data, vec![1.0, 256.0, 2.0, 512.0]);
    let f: Vec<u8> = [1.5f32, -2.0, 0.25, 8.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let g = gray_from_image(&img("32FC1", 8, f, 0), 100).unwrap();
    assert_eq!(g.data, vec![1.5, -2.0, 0.25, 8.0]);
    let px = vec![10, 20, 30, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let rgb = gray_from_image(&img("rgb8", 6, px.clone(), 0), 100).unwrap();
    let bgr = gray_from_image(&img("bgr8", 6, px, 0), 100).unwrap();
    assert_eq!(rgb.data[0], 0.299 * 10.0 + 0.587 * 20.0 + 0.114 * 30.0);
    assert_eq!(bgr.data[0], 0.299 * 30.0 + 0.587 * 20.0 + 0.114 * 10.0);
    for (bad, max, field) in [
        (img("yuv422", 4, vec![0; 8], 0), 100, "image.encoding"),
        (img("mono8", 1, vec![0; 4], 0), 100, "image.step"),
        (img("mono8", 2, vec![0; 3], 0), 100, "image.data"),
        (img("mono8", 2, vec![0; 4], 0), 3, "pixels"),
    ] {
        let e = gray_from_image(&bad, max).unwrap_err().to_string();
        assert!(e.contains(field), "{field}: {e}");
    }
    let mut nan = img("32FC1", 8, vec![0; 16], 0);
    nan.data[0..4].copy_from_slice(&f32::NAN.to_le_bytes());
    let e = gray_from_image(&nan, 100).unwrap_err().to_string();
    assert!(e.contains("image.data") && e.contains("NaN"), "{e}");
}

/// T7: on a flat image every link scores 0, so every feasible choice ties: the DP must return
/// the brute force's choice by the stated rule (smallest index at each guide, from b back).
#[test]
fn polyline_ties_follow_the_stated_rule() {
    let flat = Gradient::sobel(&Gray::new(24, 24, vec![50.0; 24 * 24]).unwrap());
    let seed = gpu_planning::compute::testing::seed(0x71e5);
    let mut rng = gpu_planning::rng::XorShift::new(seed);
    let mut unit = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let cuda = gpu_planning::compute::testing::cuda_or_skip("polyline ties on CUDA");
    let mut tied = 0;
    for case in 0..200 {
        let p = Problem {
            a: (2.0 + 20.0 * unit(), 2.0 + 20.0 * unit()),
            b: (2.0 + 20.0 * unit(), 2.0 + 20.0 * unit()),
            guides: 1 + case % 4,
            points: 2 + case % 5,
            half_width: 1.0 + 6.0 * unit(),
            max_angle: 0.2 + 2.0 * unit(),
        };
        if (p.a.0 - p.b.0).abs() + (p.a.1 - p.b.1).abs() < 0.5 {
            continue;
        }
        let dp = solve(&flat, &p).unwrap();
        if let Some(rt) = &cuda {
            let backend = gpu_planning::compute::Backend::Cuda(rt.clone());
            let gpu = gpu_planning::polyline::solve(&backend, &flat, &p).unwrap();
            assert_eq!(gpu, dp, "case {case}: CUDA on ties");
        }
        let (brute, ties) = brute_force(&flat, &p).unwrap();
        match brute {
            None => assert!(!dp.feasible, "case {case}: {p:?}"),
            Some((score, choice)) => {
                assert_eq!(dp.score, score, "case {case}");
                assert_eq!(dp.indices, choice, "case {case}: {p:?}, {ties} tied");
                tied += (ties > 1) as usize;
            }
        }
    }
    assert!(tied > 100, "only {tied} cases had ties");
}
