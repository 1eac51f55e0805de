//! Clearance for a robot radius: the exact distance transform against brute force over every
//! obstacle, the blocked cells against a brute-force disk check, the planner's answers with a
//! radius (a start or goal in the inflated zone named, corridors narrower than the robot shut),
//! and the device transform and flags equal to the CPU's bit for bit.

use gpu_planning::compute::testing::{cuda_or_skip, seed};
use gpu_planning::compute::Backend;
use gpu_planning::lee::clearance::{self, cpu, NO_OBSTACLE};
use gpu_planning::lee::{Config, Connectivity, Grid, Planner};
use gpu_planning::rng::XorShift;
use proptest::prelude::*;

/// Squared distance to the nearest obstacle by looking at every obstacle.
fn brute_d2(w: usize, h: usize, obstacle: &[bool]) -> Vec<u64> {
    let obs: Vec<(i64, i64)> = (0..w * h)
        .filter(|&i| obstacle[i])
        .map(|i| ((i % w) as i64, (i / w) as i64))
        .collect();
    (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as i64, (i / w) as i64);
            obs.iter()
                .map(|&(ox, oy)| ((x - ox).pow(2) + (y - oy).pow(2)) as u64)
                .min()
                .unwrap_or(NO_OBSTACLE)
        })
        .collect()
}

/// Blocked for radius r iff some obstacle cell centre lies within r metres (the disk check).
fn brute_blocked(w: usize, h: usize, obstacle: &[bool], res: f64, r: f64) -> Vec<bool> {
    (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as i64, (i / w) as i64);
            (0..w * h).filter(|&j| obstacle[j]).any(|j| {
                let (dx, dy) = (x - (j % w) as i64, y - (j / w) as i64);
                ((dx * dx + dy * dy) as f64).sqrt() * res <= r
            })
        })
        .collect()
}

fn random_obstacles(w: usize, h: usize, density: f64, s: u64) -> Vec<bool> {
    let mut rng = XorShift::new(s);
    (0..w * h)
        .map(|_| (rng.next_u64() % 1000) as f64 / 1000.0 < density)
        .collect()
}

fn occupancy(w: u32, h: u32, obstacle: &[bool], c: Connectivity) -> Grid {
    let data: Vec<i8> = obstacle.iter().map(|&o| if o { 100 } else { 0 }).collect();
    Grid::from_occupancy(w, h, &data, 65, false, c).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 120, ..ProptestConfig::default() })]
    #[test]
    fn transform_equals_brute_force(w in 0usize..40, h in 0usize..40,
                                    density in prop_oneof![Just(0.0), Just(0.02), Just(0.3), Just(1.0)],
                                    s in any::<u64>()) {
        let obstacle = random_obstacles(w, h, density, s);
        prop_assert_eq!(cpu::squared_distances(w, h, &obstacle), brute_d2(w, h, &obstacle));
    }

    #[test]
    fn blocked_cells_are_the_disks(w in 1u32..30, h in 1u32..30, s in any::<u64>(),
                                   res in prop_oneof![Just(0.05), Just(0.1), Just(0.3)],
                                   r in 0.0f64..1.0) {
        let obstacle = random_obstacles(w as usize, h as usize, 0.05, s);
        let grid = occupancy(w, h, &obstacle, Connectivity::Eight);
        let got = clearance::blocked(&Backend::Cpu, &grid, res, r).unwrap();
        prop_assert_eq!(got, brute_blocked(w as usize, h as usize, &obstacle, res, r));
        // Moves: none touches a blocked cell, and every move between two free cells that the
        // map allowed stays (4-connectivity: no detours to account for).
        let g4 = occupancy(w, h, &obstacle, Connectivity::Four);
        let inflated = clearance::inflate(&Backend::Cpu, g4.clone(), res, r).unwrap();
        for c in 0..inflated.len() {
            for k in 0..4 {
                let (dx, dy) = gpu_planning::lee::DIRECTIONS[k];
                let (x, y) = ((c as u32 % w) as i64 + dx as i64, (c as u32 / w) as i64 + dy as i64);
                if x < 0 || y < 0 || x >= w as i64 || y >= h as i64 { continue; }
                let n = (y as u32 * w + x as u32) as usize;
                let both_free = inflated.free[c] && inflated.free[n];
                let had = g4.masks[c] & (1 << k) != 0;
                prop_assert_eq!(inflated.masks[c] & (1 << k) != 0, had && both_free);
            }
        }
    }
}

#[test]
fn radius_zero_changes_nothing_and_bad_radii_are_refused() {
    let obstacle = random_obstacles(17, 9, 0.2, 5);
    let grid = occupancy(17, 9, &obstacle, Connectivity::Four);
    let same = clearance::inflate(&Backend::Cpu, grid.clone(), 0.05, 0.0).unwrap();
    assert_eq!(same, grid);
    for r in [-0.1, f64::NAN, f64::INFINITY] {
        let e = clearance::inflate(&Backend::Cpu, grid.clone(), 0.05, r).unwrap_err();
        assert!(e.to_string().contains("robot_radius"), "{e}");
    }
    let e = clearance::inflate(&Backend::Cpu, grid, f64::NAN, 0.2).unwrap_err();
    assert!(e.to_string().contains("resolution"), "{e}");
}

#[test]
fn planner_keeps_the_robot_off_the_walls() {
    // 21 x 9 room, 0.1 m cells, a wall across x = 10 with a 5-cell gap at y 2..=6, obstacles
    // along the outer border.
    let (w, h) = (21u32, 9u32);
    let mut obstacle = vec![false; (w * h) as usize];
    for y in 0..h {
        for x in 0..w {
            let border = x == 0 || y == 0 || x == w - 1 || y == h - 1;
            let wall = x == 10 && !(2..=6).contains(&y);
            obstacle[(y * w + x) as usize] = border || wall;
        }
    }
    let grid = occupancy(w, h, &obstacle, Connectivity::Four);
    // 0.2 m: the gap's centre row y = 4 is 0.3 m from the wall ends at y = 1 and 7, free.
    let inflated = clearance::inflate(&Backend::Cpu, grid.clone(), 0.1, 0.2).unwrap();
    let p = Planner::new(&Backend::Cpu, inflated, Config::default()).unwrap();
    let plan = p.plan((3, 4), (17, 4), false).unwrap();
    assert!(plan.reachable);
    for &(x, y) in &plan.path {
        let d2 = (0..w * h)
            .filter(|&j| obstacle[j as usize])
            .map(|j| (x as i64 - (j % w) as i64).pow(2) + (y as i64 - (j / w) as i64).pow(2))
            .min()
            .unwrap();
        assert!(
            (d2 as f64).sqrt() * 0.1 > 0.2,
            "({x}, {y}) is within 0.2 m of a wall"
        );
    }
    // A start next to the wall is named as such.
    let e = p.plan((1, 1), (17, 4), false).unwrap_err().to_string();
    assert!(
        e.contains("start") && e.contains("(1, 1) is within robot_radius 0.2 m of an obstacle"),
        "{e}"
    );
    let e = p.plan((3, 4), (19, 7), false).unwrap_err().to_string();
    assert!(
        e.contains("goal") && e.contains("within robot_radius"),
        "{e}"
    );
    // 0.35 m: the gap (2.5 cells to either wall end) is narrower than the robot: no path.
    let shut = clearance::inflate(&Backend::Cpu, grid, 0.1, 0.35).unwrap();
    let p = Planner::new(&Backend::Cpu, shut, Config::default()).unwrap();
    assert!(!p.plan((5, 4), (15, 4), false).unwrap().reachable);
}

#[test]
fn gpu_transform_and_flags_equal_the_cpu() {
    let Some(rt) = cuda_or_skip("gpu_transform_and_flags_equal_the_cpu") else {
        return;
    };
    let backend = Backend::Cuda(rt.clone());
    let base = seed(0xc1ea);
    let shapes = [
        (1, 1),
        (0, 5),
        (5, 0),
        (1, 300),
        (300, 1),
        (33, 31),
        (127, 129),
        (1000, 257),
        (517, 1531),
    ];
    for (i, &(w, h)) in shapes.iter().enumerate() {
        for (j, density) in [0.0, 0.001, 0.05, 0.4, 1.0].into_iter().enumerate() {
            let s = base ^ ((i as u64) << 8 | j as u64);
            let obstacle = random_obstacles(w, h, density, s);
            let want = cpu::squared_distances(w, h, &obstacle);
            let got = clearance::gpu::squared_distances(&rt, w, h, &obstacle).unwrap();
            assert_eq!(got, want, "{w} x {h}, density {density}, seed {s:#x}");
            if w > 0 && h > 0 {
                let grid = occupancy(w as u32, h as u32, &obstacle, Connectivity::Eight);
                for (res, r) in [(0.05, 0.2), (0.1, 0.3), (0.07, 0.21), (1.0, 1.0)] {
                    let cpu = clearance::blocked(&Backend::Cpu, &grid, res, r).unwrap();
                    let gpu = clearance::blocked(&backend, &grid, res, r).unwrap();
                    assert_eq!(gpu, cpu, "{w} x {h}, res {res}, radius {r}, seed {s:#x}");
                }
            }
        }
    }
}

#[test]
fn gpu_planner_with_radius_equals_the_cpu() {
    let Some(rt) = cuda_or_skip("gpu_planner_with_radius_equals_the_cpu") else {
        return;
    };
    let backend = Backend::Cuda(rt);
    let s = seed(0xc1eb);
    let (w, h) = (301u32, 203u32);
    let obstacle = random_obstacles(w as usize, h as usize, 0.01, s);
    let grid = occupancy(w, h, &obstacle, Connectivity::Eight);
    let cpu_grid = clearance::inflate(&Backend::Cpu, grid.clone(), 0.05, 0.12).unwrap();
    let gpu_grid = clearance::inflate(&backend, grid, 0.05, 0.12).unwrap();
    assert_eq!(gpu_grid, cpu_grid, "seed {s:#x}");
    let cells: Vec<(i64, i64)> = (0..w * h)
        .filter(|&c| cpu_grid.free[c as usize])
        .map(|c| ((c % w) as i64, (c / w) as i64))
        .collect();
    let Some((&start, &goal)) = cells.first().zip(cells.last()) else {
        return;
    };
    let c = Planner::new(&Backend::Cpu, cpu_grid, Config::default()).unwrap();
    let g = Planner::new(&backend, gpu_grid, Config::default()).unwrap();
    assert_eq!(
        g.plan(start, goal, true).unwrap(),
        c.plan(start, goal, true).unwrap(),
        "seed {s:#x}"
    );
}

/// The repository (GPU_PLANNING_REPO where the tests travel, as on the device).
fn repo_file(rel: &str) -> std::path::PathBuf {
    let repo = gpu_planning::testing::repo();
    std::path::Path::new(&repo).join(rel)
}

/// Free cells of a grid, as planner coordinates, in scan order.
fn free_cells(g: &Grid) -> Vec<(i64, i64)> {
    (0..g.len())
        .filter(|&c| g.free[c])
        .map(|c| ((c % g.width as usize) as i64, (c / g.width as usize) as i64))
        .collect()
}

#[test]
fn real_nav2_maps_plan_clear_of_walls_on_every_backend() {
    let cuda = cuda_or_skip("real_nav2_maps_plan_clear_of_walls_on_every_backend (CUDA part)");
    let s = seed(0x3a95);
    let mut rng = XorShift::new(s);
    for name in ["depot", "tb3_sandbox"] {
        let m = gpu_planning::lee::io::map_yaml::load(&repo_file(&format!(
            "tests/data/maps/{name}.yaml"
        )))
        .unwrap();
        let res = m.meta.resolution;
        for c in [Connectivity::Four, Connectivity::Eight] {
            let base = Grid::from_occupancy(m.width, m.height, &m.data, 65, false, c).unwrap();
            let r = 0.2;
            let grid = clearance::inflate(&Backend::Cpu, base.clone(), res, r).unwrap();
            let (w, h) = (grid.width as i64, grid.height as i64);
            let reach = (r / res).ceil() as i64;
            let cells = free_cells(&grid);
            assert!(!cells.is_empty(), "{name}: nothing is free at radius {r}");
            let cpu = Planner::new(&Backend::Cpu, grid.clone(), Config::default()).unwrap();
            let gpu = match &cuda {
                Some(rt) => {
                    let b = Backend::Cuda(rt.clone());
                    let g = clearance::inflate(&b, base.clone(), res, r).unwrap();
                    assert_eq!(g, grid, "{name}: device clearance differs, seed {s:#x}");
                    Some(Planner::new(&b, g, Config::default()).unwrap())
                }
                None => None,
            };
            let mut reached = 0;
            for _ in 0..20 {
                let a = cells[(rng.next_u64() % cells.len() as u64) as usize];
                let b = cells[(rng.next_u64() % cells.len() as u64) as usize];
                let plan = cpu.plan(a, b, false).unwrap();
                if let Some(g) = &gpu {
                    assert_eq!(g.plan(a, b, false).unwrap(), plan, "{name} {a:?} -> {b:?}");
                }
                reached += usize::from(plan.reachable);
                // Every cell of the path: no obstacle cell centre within the radius (a local
                // disk check over the cells within ceil(r / resolution)).
                for &(x, y) in &plan.path {
                    for oy in (y as i64 - reach).max(0)..=(y as i64 + reach).min(h - 1) {
                        for ox in (x as i64 - reach).max(0)..=(x as i64 + reach).min(w - 1) {
                            let (dx, dy) = (ox - x as i64, oy - y as i64);
                            let near = ((dx * dx + dy * dy) as f64).sqrt() * res <= r;
                            assert!(
                                !near || base.free[(oy * w + ox) as usize],
                                "{name}: path cell ({x}, {y}) within {r} m of ({ox}, {oy})"
                            );
                        }
                    }
                }
            }
            assert!(
                reached > 0,
                "{name}: no random pair was connected, seed {s:#x}"
            );
        }
    }
}
