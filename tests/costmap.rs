//! Costmap planning: the Dijkstra reference against a Bellman-Ford fixed point, its paths
//! (allowed moves, summed step costs, the stated tie rule), the inflation layer against nav2's
//! formula on brute-force distances, unit costs against the BFS, and the device field equal to
//! the CPU's on random maps, mazes, nav2's real maps, sizes that are not multiples of the tile.

use gpu_planning::compute::testing::{cuda_or_skip, seed};
use gpu_planning::compute::Backend;
use gpu_planning::lee::costmap::config::{MAX_COST_FACTOR, MAX_NEUTRAL_COST};
use gpu_planning::lee::costmap::cpu::{self, UNREACHED_COST};
use gpu_planning::lee::costmap::{inflation_values, CostParams, CostPlanner};
use gpu_planning::lee::synth::maze;
use gpu_planning::lee::{Connectivity, Grid, DIRECTIONS};
use gpu_planning::rng::XorShift;
use proptest::prelude::*;

fn open_grid(w: u32, h: u32, c: Connectivity) -> Grid {
    Grid::from_occupancy(w, h, &vec![0i8; (w * h) as usize], 65, false, c).unwrap()
}

/// nav2's map `name` from tests/data/maps, 8-connected, and its resolution.
fn nav2_map(repo: &std::path::Path, name: &str) -> (Grid, f64) {
    let path = repo.join(format!("tests/data/maps/{name}.yaml"));
    let m = gpu_planning::lee::io::map_yaml::load(&path).unwrap();
    let g =
        Grid::from_occupancy(m.width, m.height, &m.data, 65, false, Connectivity::Eight).unwrap();
    (g, m.meta.resolution)
}

/// Random cost values: mostly low, some inflated, some lethal / inscribed / unknown.
fn random_values(n: usize, s: u64) -> Vec<u8> {
    let mut rng = XorShift::new(s);
    (0..n)
        .map(|_| match rng.next_u64() % 20 {
            0 => 254,
            1 => 253,
            2 => 255,
            3..=6 => (rng.next_u64() % 253) as u8,
            _ => 0,
        })
        .collect()
}

/// The fixed point by plain Bellman-Ford rounds over every cell: an oracle independent of the
/// heap order.
fn bellman_ford(g: &Grid, enter: &[u32], goal: (u32, u32)) -> Vec<u64> {
    let w = g.width as i64;
    let mut f = vec![UNREACHED_COST; g.len()];
    f[g.index(goal.0, goal.1)] = 0;
    loop {
        let mut changed = false;
        for c in 0..g.len() {
            let (x, y) = (c as i64 % w, c as i64 / w);
            for (k, &(dx, dy)) in DIRECTIONS
                .iter()
                .enumerate()
                .take(g.connectivity.directions())
            {
                if g.masks[c] & (1 << k) == 0 {
                    continue;
                }
                let n = ((y + dy as i64) * w + x + dx as i64) as usize;
                if f[n] != UNREACHED_COST && f[n] + cpu::step(k, enter[n]) < f[c] {
                    f[c] = f[n] + cpu::step(k, enter[n]);
                    changed = true;
                }
            }
        }
        if !changed {
            return f;
        }
    }
}

fn check_path(p: &CostPlanner, enter: &[u32], field: &[u64], path: &[(u32, u32)]) {
    let g = p.grid();
    let mut total = 0u64;
    for s in path.windows(2) {
        let (a, b) = (g.index(s[0].0, s[0].1), g.index(s[1].0, s[1].1));
        let (dx, dy) = (s[1].0 as i64 - s[0].0 as i64, s[1].1 as i64 - s[0].1 as i64);
        let k = DIRECTIONS
            .iter()
            .position(|&d| (d.0 as i64, d.1 as i64) == (dx, dy))
            .expect("a unit move");
        assert!(g.masks[a] & (1 << k) != 0, "{s:?} is no allowed move");
        total += cpu::step(k, enter[b]);
        // Tie rule: no earlier direction stays on a least-cost path.
        let w = g.width as i64;
        for (j, &(ex, ey)) in DIRECTIONS.iter().enumerate().take(k) {
            if j >= g.connectivity.directions() || g.masks[a] & (1 << j) == 0 {
                continue;
            }
            let n = ((s[0].1 as i64 + ey as i64) * w + s[0].0 as i64 + ex as i64) as usize;
            assert!(
                field[n] == UNREACHED_COST || field[n] + cpu::step(j, enter[n]) != field[a],
                "direction {j} ties at {:?} but {k} was taken",
                s[0]
            );
        }
    }
    let start = path[0];
    assert_eq!(total, field[g.index(start.0, start.1)]);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 60, ..ProptestConfig::default() })]
    #[test]
    fn dijkstra_is_the_fixed_point_and_paths_follow_the_tie_rule(
        w in 1u32..24, h in 1u32..24, s in any::<u64>(), eight in any::<bool>(),
        neutral in 1u32..80, factor in 0u32..200, unknown in any::<bool>()) {
        let c = if eight { Connectivity::Eight } else { Connectivity::Four };
        let values = random_values((w * h) as usize, s);
        let p = CostParams { neutral_cost: neutral, cost_factor: factor, unknown_is_free: unknown, ..CostParams::default() };
        let planner = CostPlanner::new(&Backend::Cpu, open_grid(w, h, c), &values, &p).unwrap();
        let enter = cpu::enter_costs(&values, &p);
        let free: Vec<usize> = (0..(w * h) as usize).filter(|&i| planner.grid().free[i]).collect();
        prop_assume!(!free.is_empty());
        let mut rng = XorShift::new(s ^ 0x77);
        let pick = |rng: &mut XorShift| {
            let i = free[(rng.next_u64() % free.len() as u64) as usize];
            ((i as u32 % w) as i64, (i as u32 / w) as i64)
        };
        let (a, b) = (pick(&mut rng), pick(&mut rng));
        let field = planner.cost_field(b).unwrap();
        prop_assert_eq!(&field, &bellman_ford(planner.grid(), &enter, (b.0 as u32, b.1 as u32)));
        let plan = planner.plan(a, b).unwrap();
        prop_assert_eq!(plan.reachable, field[(a.1 * w as i64 + a.0) as usize] != UNREACHED_COST);
        if plan.reachable {
            check_path(&planner, &enter, &field, &plan.path);
            prop_assert_eq!(plan.cost, Some(field[(a.1 * w as i64 + a.0) as usize]));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 80, ..ProptestConfig::default() })]
    /// NavFn plans from the robot's cell whatever its cost (it clears that cell): a blocked
    /// start is planned from exactly as the same costmap with that one cell free is, path,
    /// cost and reach alike.
    #[test]
    fn a_blocked_start_is_planned_from_as_if_its_cell_were_free(
        w in 1u32..20, h in 1u32..20, s in any::<u64>(), eight in any::<bool>(),
        neutral in 1u32..80, factor in 0u32..200) {
        let c = if eight { Connectivity::Eight } else { Connectivity::Four };
        let values = random_values((w * h) as usize, s);
        let p = CostParams { neutral_cost: neutral, cost_factor: factor, ..CostParams::default() };
        let planner = CostPlanner::new(&Backend::Cpu, open_grid(w, h, c), &values, &p).unwrap();
        let cells = (w * h) as usize;
        let free: Vec<usize> = (0..cells).filter(|&i| planner.grid().free[i]).collect();
        let blocked: Vec<usize> = (0..cells).filter(|&i| !planner.grid().free[i]).collect();
        prop_assume!(!free.is_empty() && !blocked.is_empty());
        let mut rng = XorShift::new(s ^ 0x5eed);
        let xy = |i: usize| ((i as u32 % w) as i64, (i as u32 / w) as i64);
        let start = blocked[(rng.next_u64() % blocked.len() as u64) as usize];
        let goal = xy(free[(rng.next_u64() % free.len() as u64) as usize]);
        let mut cleared = values.clone();
        cleared[start] = 0;
        let oracle = CostPlanner::new(&Backend::Cpu, open_grid(w, h, c), &cleared, &p).unwrap();
        let start = xy(start);
        prop_assert!(planner.plan(start, goal).is_err());
        prop_assert_eq!(planner.plan_from_robot_cell(start, goal).unwrap(), oracle.plan(start, goal).unwrap());
        let reach: Vec<bool> = oracle.cost_field(start).unwrap().into_iter().map(|c| c != UNREACHED_COST).collect();
        prop_assert_eq!(planner.reachable_from_robot_cell(start).unwrap(), reach);
        // An open start is planned as before.
        prop_assert_eq!(planner.plan_from_robot_cell(goal, goal).unwrap(), planner.plan(goal, goal).unwrap());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 80, ..ProptestConfig::default() })]
    /// The CPU backend's A* (early exit, kept between plans, bucket queue or, for huge step
    /// costs, a heap) answers a run of plans exactly as the reference Dijkstra's full field and
    /// descent do: repeated goals, repeated pairs, new starts to an old goal, unreachable
    /// starts.
    #[test]
    fn the_cpu_search_answers_every_plan_as_the_reference(
        w in 1u32..40, h in 1u32..40, s in any::<u64>(), eight in any::<bool>(),
        neutral in 1u32..80, factor in prop_oneof![0u32..300, 20_000u32..100_000],
        unknown in any::<bool>(), walls in any::<bool>()) {
        let c = if eight { Connectivity::Eight } else { Connectivity::Four };
        let mut values = random_values((w * h) as usize, s);
        if walls {
            // Lethal walls with one gap each split the map into rooms: long detours.
            for x in (5..w).step_by(6) {
                let gap = (s >> (x % 60)) as u32 % h;
                for y in (0..h).filter(|&y| y != gap) {
                    values[(y * w + x) as usize] = 254;
                }
            }
        }
        let p = CostParams { neutral_cost: neutral, cost_factor: factor, unknown_is_free: unknown, ..CostParams::default() };
        let planner = CostPlanner::new(&Backend::Cpu, open_grid(w, h, c), &values, &p).unwrap();
        let enter = cpu::enter_costs(&values, &p);
        let free: Vec<usize> = (0..(w * h) as usize).filter(|&i| planner.grid().free[i]).collect();
        prop_assume!(!free.is_empty());
        let mut rng = XorShift::new(s ^ 0x5eed);
        let pick = |rng: &mut XorShift| {
            let i = free[(rng.next_u64() % free.len() as u64) as usize];
            ((i as u32 % w) as i64, (i as u32 / w) as i64)
        };
        let mut goal = pick(&mut rng);
        let mut start = pick(&mut rng);
        for _ in 0..12 {
            match rng.next_u64() % 4 {
                0 => goal = pick(&mut rng),
                1 => start = pick(&mut rng),
                2 => {}
                _ => (goal, start) = (pick(&mut rng), pick(&mut rng)),
            }
            let g = (goal.0 as u32, goal.1 as u32);
            let field = cpu::cost_field(planner.grid(), &enter, g);
            let si = planner.grid().index(start.0 as u32, start.1 as u32);
            let want = cpu::descend(planner.grid(), &enter, &field, (start.0 as u32, start.1 as u32));
            let got = planner.plan(start, goal).unwrap();
            prop_assert_eq!(got.reachable, want.is_some());
            prop_assert_eq!(got.cost, want.as_ref().map(|_| field[si]));
            prop_assert_eq!(got.path, want.unwrap_or_default());
        }
    }
}

#[test]
fn unit_step_costs_give_the_bfs() {
    let heights = maze(37, 29, 3);
    let g = Grid::from_elevation(37, 29, &heights, 1.0, Connectivity::Four).unwrap();
    let p = CostParams {
        neutral_cost: 1,
        cost_factor: 0,
        ..CostParams::default()
    };
    let values = vec![0u8; g.len()];
    let planner = CostPlanner::new(&Backend::Cpu, g.clone(), &values, &p).unwrap();
    let goal = gpu_planning::lee::synth::nearest_open(&heights, 37, 18, 14).unwrap();
    let bfs = gpu_planning::lee::cpu::distance_field(&g, goal);
    let field = planner.cost_field((goal.0 as i64, goal.1 as i64)).unwrap();
    for (b, f) in bfs.iter().zip(&field) {
        let want = if *b == u32::MAX {
            UNREACHED_COST
        } else {
            *b as u64
        };
        assert_eq!(*f, want);
    }
}

#[test]
fn inflation_follows_nav2s_formula() {
    let (w, h) = (41usize, 23usize);
    let mut rng = XorShift::new(seed(0x1f1));
    let occ: Vec<i8> = (0..w * h)
        .map(|_| {
            if rng.next_u64().is_multiple_of(40) {
                100
            } else {
                0
            }
        })
        .collect();
    let g = Grid::from_occupancy(w as u32, h as u32, &occ, 65, false, Connectivity::Four).unwrap();
    for (res, r, infl, k) in [
        (0.05, 0.2, 0.55, 10.0),
        (0.1, 0.0, 0.5, 3.0),
        (0.05, 0.1, 0.1, 10.0),
        // A radius of ~10^6 cells (a tiny resolution), one of 1e300 m and one of 1000 m: every
        // cell is within the radius, and the values are exact without a table of reach²
        // entries (which took minutes and gigabytes, or wrapped to no inflation at all).
        (1e-6, 0.0, 0.55, 10.0),
        (0.05, 0.2, 1e300, 0.5),
        (0.05, 0.0, 1000.0, 0.5),
    ] {
        let p = CostParams {
            robot_radius: r,
            inflation_radius: infl,
            cost_scaling_factor: k,
            ..CostParams::default()
        };
        let values = inflation_values(&Backend::Cpu, &g, res, &p).unwrap();
        for (i, &value) in values.iter().enumerate() {
            let (x, y) = ((i % w) as i64, (i / w) as i64);
            let d = (0..w * h)
                .filter(|&j| occ[j] == 100)
                .map(|j| {
                    let (dx, dy) = (x - (j % w) as i64, y - (j / w) as i64);
                    ((dx * dx + dy * dy) as f64).sqrt() * res
                })
                .fold(f64::INFINITY, f64::min);
            let want = if d == 0.0 {
                254
            } else if d <= r {
                253
            } else if d <= infl {
                (252.0 * (-k * (d - r)).exp()).floor() as u8
            } else {
                0
            };
            assert_eq!(
                value, want,
                "cell ({x}, {y}) at {d} m, radius {r}, inflation {infl}"
            );
        }
    }
    // Bad parameters are refused, named.
    let bad = CostParams {
        robot_radius: 0.5,
        inflation_radius: 0.2,
        ..CostParams::default()
    };
    let e = inflation_values(&Backend::Cpu, &g, 0.05, &bad).unwrap_err();
    assert!(e.to_string().contains("inflation_radius"), "{e}");
}

fn device_equals_cpu(
    rt: &std::sync::Arc<gpu_planning::compute::CudaRuntime>,
    g: Grid,
    values: &[u8],
    p: &CostParams,
    s: u64,
    what: &str,
) {
    let cpu = CostPlanner::new(&Backend::Cpu, g.clone(), values, p).unwrap();
    let dev = CostPlanner::new(&Backend::Cuda(rt.clone()), g, values, p).unwrap();
    let w = cpu.grid().width;
    let free: Vec<usize> = (0..cpu.grid().len())
        .filter(|&i| cpu.grid().free[i])
        .collect();
    if free.is_empty() {
        return;
    }
    let mut rng = XorShift::new(s);
    for _ in 0..3 {
        let pick = |rng: &mut XorShift| {
            let i = free[(rng.next_u64() % free.len() as u64) as usize];
            ((i as u32 % w) as i64, (i as u32 / w) as i64)
        };
        let (a, b, a2) = (pick(&mut rng), pick(&mut rng), pick(&mut rng));
        // A new goal's field stops once the start's paths are final; further starts to that
        // goal go on from there (a blocked start plans from each move out of it); the whole
        // field last.
        assert_eq!(
            dev.plan(a, b).unwrap(),
            cpu.plan(a, b).unwrap(),
            "{what}, seed {s:#x}"
        );
        assert_eq!(
            dev.plan(a2, b).unwrap(),
            cpu.plan(a2, b).unwrap(),
            "{what}: a second start, seed {s:#x}"
        );
        assert_eq!(
            dev.plan(b, b).unwrap(),
            cpu.plan(b, b).unwrap(),
            "{what}: start = goal"
        );
        // From a blocked start, as NavFn plans from the robot's cell.
        if let Some(i) = (0..cpu.grid().len()).find(|&i| !cpu.grid().free[i]) {
            let blocked = ((i as u32 % w) as i64, (i as u32 / w) as i64);
            assert_eq!(
                dev.plan_from_robot_cell(blocked, b).unwrap(),
                cpu.plan_from_robot_cell(blocked, b).unwrap(),
                "{what}: from the blocked cell {blocked:?}, seed {s:#x}"
            );
        }
        assert_eq!(
            dev.cost_field(b).unwrap(),
            cpu.cost_field(b).unwrap(),
            "{what}, goal {b:?}, seed {s:#x}"
        );
        assert_eq!(
            dev.plan(a, b).unwrap(),
            cpu.plan(a, b).unwrap(),
            "{what}: on the whole field, seed {s:#x}"
        );
    }
}

#[test]
fn gpu_cost_fields_equal_the_cpu() {
    let Some(rt) = cuda_or_skip("gpu_cost_fields_equal_the_cpu") else {
        return;
    };
    let base = seed(0xc057);
    for (i, &(w, h)) in [
        (1, 1),
        (1, 77),
        (77, 1),
        (31, 33),
        (64, 32),
        (100, 67),
        (333, 129),
    ]
    .iter()
    .enumerate()
    {
        for (j, c) in [Connectivity::Four, Connectivity::Eight]
            .into_iter()
            .enumerate()
        {
            let s = base ^ ((i as u64) << 4 | j as u64);
            let values = random_values((w * h) as usize, s);
            let p = CostParams::default();
            device_equals_cpu(
                &rt,
                open_grid(w, h, c),
                &values,
                &p,
                s,
                &format!("random {w} x {h}"),
            );
            // The dearest steps the parameters allow: a tile's costs spread past the scans'
            // 32-bit offsets, which the passes then take.
            let dear = CostParams {
                neutral_cost: MAX_NEUTRAL_COST,
                cost_factor: MAX_COST_FACTOR,
                ..CostParams::default()
            };
            device_equals_cpu(
                &rt,
                open_grid(w, h, c),
                &values,
                &dear,
                s,
                &format!("random {w} x {h}, dearest steps"),
            );
            // A maze: corridors one cell wide, costs on top.
            let heights = maze(w, h, s);
            let g = Grid::from_elevation(w, h, &heights, 1.0, c).unwrap();
            let values: Vec<u8> = random_values((w * h) as usize, s ^ 1)
                .into_iter()
                .map(|v| if v >= 253 { 0 } else { v })
                .collect();
            device_equals_cpu(&rt, g, &values, &p, s, &format!("maze {w} x {h}"));
        }
    }
}

#[test]
fn real_nav2_maps_in_costmap_mode_on_every_backend() {
    let cuda = cuda_or_skip("real_nav2_maps_in_costmap_mode_on_every_backend (CUDA part)");
    let repo = gpu_planning::testing::repo();
    let s = seed(0xde90);
    for name in ["depot", "tb3_sandbox"] {
        let (g, resolution) = nav2_map(&repo, name);
        let p = CostParams {
            robot_radius: 0.2,
            ..CostParams::default()
        };
        let values = inflation_values(&Backend::Cpu, &g, resolution, &p).unwrap();
        if let Some(rt) = &cuda {
            let dev_values =
                inflation_values(&Backend::Cuda(rt.clone()), &g, resolution, &p).unwrap();
            assert_eq!(dev_values, values, "{name}: device inflation differs");
            device_equals_cpu(rt, g.clone(), &values, &p, s, name);
        }
        // The path keeps to the cheapest cells: a costmap plan never costs more than the unit
        // plan's cells priced the same way, and never enters a blocked cell.
        let planner = CostPlanner::new(&Backend::Cpu, g, &values, &p).unwrap();
        let free: Vec<usize> = (0..planner.grid().len())
            .filter(|&i| planner.grid().free[i])
            .collect();
        let w = planner.grid().width;
        let (a, b) = (free[free.len() / 7], free[free.len() * 5 / 7]);
        let plan = planner
            .plan(
                ((a as u32 % w) as i64, (a as u32 / w) as i64),
                ((b as u32 % w) as i64, (b as u32 / w) as i64),
            )
            .unwrap();
        for &(x, y) in &plan.path {
            assert!(
                values[(y * w + x) as usize] < 253,
                "{name}: ({x}, {y}) is blocked"
            );
        }
    }
}

/// On CUDA a plan to the previous plan's goal descends that plan's field (counted); on the
/// CPU, whose search stops at the start, only a plan with the same ends does. Every plan
/// equals a fresh planner's; another goal computes anew.
#[test]
fn repeated_goal_reuses_its_cost_field() {
    let mut backends = vec![Backend::Cpu];
    if let Some(rt) = cuda_or_skip("repeated_goal_reuses_its_cost_field (CUDA part)") {
        backends.push(Backend::Cuda(rt));
    }
    let (w, h) = (83u32, 47u32);
    let values = random_values((w * h) as usize, 0xc057);
    let p = CostParams::default();
    for backend in &backends {
        let planner =
            CostPlanner::new(backend, open_grid(w, h, Connectivity::Eight), &values, &p).unwrap();
        let fresh = || {
            CostPlanner::new(
                &Backend::Cpu,
                open_grid(w, h, Connectivity::Eight),
                &values,
                &p,
            )
            .unwrap()
        };
        let open: Vec<(i64, i64)> = (0..w * h)
            .filter(|&c| !p.blocks(values[c as usize]))
            .map(|c| ((c % w) as i64, (c / w) as i64))
            .collect();
        let goal = open[open.len() / 2];
        for (i, &s) in [open[0], open[open.len() - 1], open[open.len() / 3]]
            .iter()
            .enumerate()
        {
            assert_eq!(
                planner.plan(s, goal).unwrap(),
                fresh().plan(s, goal).unwrap()
            );
            let per_goal = matches!(backend, Backend::Cuda(_));
            assert_eq!(planner.fields_reused(), if per_goal { i as u64 } else { 0 });
        }
        let reused = planner.fields_reused();
        let last = open[open.len() / 3];
        assert_eq!(
            planner.plan(last, goal).unwrap(),
            fresh().plan(last, goal).unwrap()
        );
        assert_eq!(planner.fields_reused(), reused + 1, "the same ends again");
        let other = open[open.len() / 4];
        assert_eq!(
            planner.plan(open[0], other).unwrap(),
            fresh().plan(open[0], other).unwrap()
        );
        assert_eq!(planner.fields_reused(), reused + 1);
    }
}

/// A serpentine of one-cell corridors whose path (about 90,000 cells) outgrows the device
/// descent's first path buffer: the descent grows it once and the path equals the CPU's.
#[test]
fn serpentine_path_longer_than_the_first_buffer_descends_on_the_device() {
    let Some(rt) =
        cuda_or_skip("serpentine_path_longer_than_the_first_buffer_descends_on_the_device")
    else {
        return;
    };
    let (w, h) = (301u32, 599u32);
    // Odd rows are walls with one gap, alternately at the right and the left end.
    let data: Vec<i8> = (0..w * h)
        .map(|i| {
            let (x, y) = (i % w, i / w);
            let gap = if (y / 2) % 2 == 0 { w - 1 } else { 0 };
            if y % 2 == 1 && x != gap {
                100
            } else {
                0
            }
        })
        .collect();
    let g = Grid::from_occupancy(w, h, &data, 65, false, Connectivity::Eight).unwrap();
    let values: Vec<u8> = data
        .iter()
        .enumerate()
        .map(|(i, &d)| if d > 0 { 254 } else { (i % 7) as u8 * 30 })
        .collect();
    let p = CostParams::default();
    let cpu = CostPlanner::new(&Backend::Cpu, g.clone(), &values, &p).unwrap();
    let dev = CostPlanner::new(&Backend::Cuda(rt), g, &values, &p).unwrap();
    let (start, goal) = ((0, 0), (0, h as i64 - 1));
    let want = cpu.plan(start, goal).unwrap();
    assert!(want.path.len() > 1 << 16, "{} cells", want.path.len());
    assert_eq!(dev.plan(start, goal).unwrap(), want);
    // And back the other way on a fresh field.
    assert_eq!(
        dev.plan(goal, start).unwrap(),
        cpu.plan(goal, start).unwrap()
    );
}

/// Checks a smooth path against its grid path with oracles of its own: it starts and ends at
/// the grid path's end cells' centres, has a point at least every cell, never enters a cell
/// whose value blocks (sampled every 1/64 cell), is no longer than the grid path, and its
/// integral of step costs (sampled, midpoint rule) is at most the grid path's (exact:
/// each step of length l from a to b costs l (e_a + e_b) / 2), within the sampling error.
/// Returns the two lengths in cells.
fn check_smooth(
    what: &str,
    values: &[u8],
    enter: &[u32],
    w: u32,
    grid: &[(u32, u32)],
    smooth: &[(f64, f64)],
) -> (f64, f64) {
    let centre = |c: (u32, u32)| (c.0 as f64 + 0.5, c.1 as f64 + 0.5);
    assert_eq!(
        smooth.first().copied(),
        grid.first().map(|&c| centre(c)),
        "{what}: start"
    );
    assert_eq!(
        smooth.last().copied(),
        grid.last().map(|&c| centre(c)),
        "{what}: goal"
    );
    let cell = |p: (f64, f64)| (p.1.floor() as usize) * w as usize + p.0.floor() as usize;
    let (mut length, mut cost) = (0.0, 0.0);
    for s in smooth.windows(2) {
        let (a, b) = (s[0], s[1]);
        let l = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
        assert!(
            l <= 1.0 + 1e-9,
            "{what}: points {a:?} and {b:?} are {l} cells apart"
        );
        length += l;
        let n = 64;
        for k in 0..n {
            let f = (k as f64 + 0.5) / n as f64;
            let p = (a.0 + f * (b.0 - a.0), a.1 + f * (b.1 - a.1));
            let i = cell(p);
            assert!(
                values[i] < 253,
                "{what}: {p:?} is in a cell of value {}",
                values[i]
            );
            cost += l / n as f64 * enter[i] as f64;
        }
    }
    let (mut grid_length, mut grid_cost) = (0.0, 0.0);
    for s in grid.windows(2) {
        let (a, b) = (centre(s[0]), centre(s[1]));
        let l = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
        grid_length += l;
        grid_cost += l * (enter[cell(a)] + enter[cell(b)]) as f64 / 2.0;
    }
    assert!(
        length <= grid_length + 1e-9,
        "{what}: {length} > grid {grid_length}"
    );
    // Sampling a segment 1/64 cell at a time misprices at most 1/64 cell of it per cell
    // boundary it crosses; 1 % of the grid path's cost covers that here.
    assert!(
        cost <= grid_cost * 1.01 + 1e-9,
        "{what}: integral cost {cost} > the grid path's {grid_cost}"
    );
    (length, grid_length)
}

/// `path: smooth`: on random costmaps (every kind of value, both connectivities' grid paths)
/// and on nav2's maps with pairs across them, every smooth path keeps check_smooth's
/// promises; on nav2's maps it is shorter than the grid path on the median pair.
#[test]
fn smooth_paths_stay_free_are_no_longer_and_cost_no_more() {
    let s = seed(0x5300);
    let p = CostParams::default();
    for round in 0..40u64 {
        let mut rng = XorShift::new(s ^ round.wrapping_mul(0x9e37_79b9));
        let (w, h) = (
            5 + (rng.next_u64() % 60) as u32,
            3 + (rng.next_u64() % 50) as u32,
        );
        let values = random_values((w * h) as usize, s + round);
        let g = open_grid(w, h, Connectivity::Eight);
        let planner = CostPlanner::new(&Backend::Cpu, g, &values, &p).unwrap();
        let enter = cpu::enter_costs(&values, &p);
        let free: Vec<usize> = (0..(w * h) as usize)
            .filter(|&i| planner.grid().free[i])
            .collect();
        if free.len() < 2 {
            continue;
        }
        for _ in 0..5 {
            let a = free[(rng.next_u64() % free.len() as u64) as usize] as u32;
            let b = free[(rng.next_u64() % free.len() as u64) as usize] as u32;
            let plan = planner
                .plan(
                    ((a % w) as i64, (a / w) as i64),
                    ((b % w) as i64, (b / w) as i64),
                )
                .unwrap();
            if !plan.reachable {
                continue;
            }
            let smooth = planner.smooth(&plan.path);
            let what = format!("random {w} x {h}, round {round}");
            check_smooth(&what, &values, &enter, w, &plan.path, &smooth);
        }
    }
    let repo = gpu_planning::testing::repo();
    for name in ["depot", "tb3_sandbox"] {
        let (g, resolution) = nav2_map(&repo, name);
        let p = CostParams {
            robot_radius: 0.22,
            ..CostParams::default()
        };
        let values = inflation_values(&Backend::Cpu, &g, resolution, &p).unwrap();
        let enter = cpu::enter_costs(&values, &p);
        let planner = CostPlanner::new(&Backend::Cpu, g, &values, &p).unwrap();
        let w = planner.grid().width;
        let free: Vec<usize> = (0..planner.grid().len())
            .filter(|&i| planner.grid().free[i])
            .collect();
        let mut rng = XorShift::new(s ^ 0xa11);
        let mut ratios = Vec::new();
        while ratios.len() < 20 {
            let a = free[(rng.next_u64() % free.len() as u64) as usize] as u32;
            let b = free[(rng.next_u64() % free.len() as u64) as usize] as u32;
            let plan = planner
                .plan(
                    ((a % w) as i64, (a / w) as i64),
                    ((b % w) as i64, (b / w) as i64),
                )
                .unwrap();
            if plan.path.len() < 10 {
                continue;
            }
            let smooth = planner.smooth(&plan.path);
            let (l, gl) = check_smooth(name, &values, &enter, w, &plan.path, &smooth);
            ratios.push(l / gl);
        }
        ratios.sort_by(f64::total_cmp);
        let median = ratios[ratios.len() / 2];
        println!("{name}: smooth / grid length, median of 20 pairs: {median:.4}");
        assert!(
            median < 1.0,
            "{name}: the smooth path is not shorter on the median pair"
        );
    }
}

/// A costmap plan cancelled while its field settles ends `Cancelled` and keeps no field: the
/// same goal planned again is computed anew and equals the CPU's plan. The flag is cancelled
/// before the plan, so the field stops at its first checkpoint (a 601 x 599 maze takes many
/// launches on the device and many steps on the CPU).
#[test]
fn a_cancelled_cost_plan_keeps_no_field() {
    let mut backends = vec![Backend::Cpu];
    if let Some(rt) = cuda_or_skip("a_cancelled_cost_plan_keeps_no_field (CUDA part)") {
        backends.push(Backend::Cuda(rt));
    }
    let (w, h) = (601u32, 599u32);
    let s = seed(0xca9d);
    let heights = maze(w, h, s);
    let grid = || Grid::from_elevation(w, h, &heights, 1.0, Connectivity::Eight).unwrap();
    let values: Vec<u8> = random_values((w * h) as usize, s ^ 1)
        .into_iter()
        .map(|v| if v >= 253 { 0 } else { v })
        .collect();
    let p = CostParams::default();
    let free = grid().free;
    let open: Vec<(i64, i64)> = (0..w * h)
        .filter(|&c| free[c as usize])
        .map(|c| ((c % w) as i64, (c / w) as i64))
        .collect();
    let (start, goal) = (open[0], open[open.len() / 2]);
    let want = CostPlanner::new(&Backend::Cpu, grid(), &values, &p)
        .unwrap()
        .plan(start, goal)
        .unwrap();
    assert!(want.reachable);
    for backend in &backends {
        let planner = CostPlanner::new(backend, grid(), &values, &p).unwrap();
        let cancelled = gpu_planning::cancel::CancelFlag::new();
        cancelled.cancel();
        let r = cancelled.scope(|| planner.plan(start, goal));
        assert!(
            matches!(r, Err(gpu_planning::Error::Cancelled)),
            "{}: a cancelled plan answered {:?}",
            backend.name(),
            r.map(|p| p.cost)
        );
        assert_eq!(
            planner.plan(start, goal).unwrap(),
            want,
            "{}",
            backend.name()
        );
        assert_eq!(
            planner.fields_reused(),
            0,
            "{}: a cancelled field was kept",
            backend.name()
        );
    }
}

#[test]
fn a_step_cost_past_the_kernels_32_bits_is_refused_by_name() {
    let Some(rt) = cuda_or_skip("a_step_cost_past_the_kernels_32_bits_is_refused_by_name") else {
        return;
    };
    use gpu_planning::lee::costmap::gpu::DeviceCosts;
    use gpu_planning::lee::costmap::search::Heuristic;
    let g = open_grid(4, 3, Connectivity::Eight);
    let limit = u32::MAX / 141;
    let mut enter = vec![1u32; 12];
    enter[5] = limit;
    let h = Heuristic::new(8, 1);
    assert!(DeviceCosts::upload(&rt, &g, &enter, &h).is_ok());
    enter[5] = limit + 1;
    let e = DeviceCosts::upload(&rt, &g, &enter, &h)
        .err()
        .expect("refused");
    assert!(
        e.to_string().contains("enter") && e.to_string().contains(&(limit + 1).to_string()),
        "{e}"
    );
}
