//! Lee wave planning: the CPU BFS against hand-checked cases and the BFS optimality
//! conditions, then every GPU memory model against the CPU on random and maze grids of odd
//! sizes, block shapes that do not divide them, 4- and 8-connectivity.

use gpu_planning::compute::testing::cuda_or_skip;
use gpu_planning::compute::Backend;
use gpu_planning::lee::gpu::{LongDescent, Schedule};
use gpu_planning::lee::synth::{maze, nearest_open, occupancy, random_terrain};
use gpu_planning::lee::{
    cpu, Config, Connectivity, Grid, MemoryModel, Planner, DIRECTIONS, UNREACHED,
};
use proptest::prelude::*;

fn neighbours(g: &Grid, c: usize) -> impl Iterator<Item = usize> + '_ {
    let w = g.width as i64;
    let (x, y) = (c as i64 % w, c as i64 / w);
    DIRECTIONS
        .iter()
        .enumerate()
        .take(g.connectivity.directions())
        .filter(move |(k, _)| g.masks[c] & (1 << k) != 0)
        .map(move |(_, &(dx, dy))| ((y + dy as i64) * w + x + dx as i64) as usize)
}

/// BFS labels are exactly the fixed point: goal 0; a reached cell is 1 + its best neighbour;
/// an unreached cell has no reached neighbour.
fn assert_bfs_field(g: &Grid, labels: &[u32], goal: usize) {
    assert_eq!(labels[goal], 0);
    for c in 0..g.len() {
        let best = neighbours(g, c)
            .map(|n| labels[n])
            .min()
            .unwrap_or(UNREACHED);
        if c == goal {
            continue;
        }
        if labels[c] == UNREACHED {
            assert_eq!(best, UNREACHED, "cell {c} unreached next to a reached cell");
        } else {
            assert_eq!(
                labels[c],
                best + 1,
                "cell {c} is not 1 + its best neighbour"
            );
        }
    }
}

fn assert_valid_path(
    g: &Grid,
    labels: &[u32],
    p: &[(u32, u32)],
    start: (u32, u32),
    goal: (u32, u32),
) {
    assert_eq!(p.first(), Some(&start));
    assert_eq!(p.last(), Some(&goal));
    assert_eq!(p.len() as u32 - 1, labels[g.index(start.0, start.1)]);
    for w in p.windows(2) {
        let a = g.index(w[0].0, w[0].1);
        let b = g.index(w[1].0, w[1].1);
        assert!(
            neighbours(g, a).any(|n| n == b),
            "{:?} -> {:?} is no allowed move",
            w[0],
            w[1]
        );
    }
}

#[test]
fn open_grid_distances_are_manhattan_or_chebyshev() {
    let h = vec![0.0f32; 5 * 4];
    let g4 = Grid::from_elevation(5, 4, &h, 0.0, Connectivity::Four).unwrap();
    let g8 = Grid::from_elevation(5, 4, &h, 0.0, Connectivity::Eight).unwrap();
    let l4 = cpu::distance_field(&g4, (1, 2));
    let l8 = cpu::distance_field(&g8, (1, 2));
    for y in 0..4i64 {
        for x in 0..5i64 {
            let (dx, dy) = ((x - 1).unsigned_abs() as u32, (y - 2).unsigned_abs() as u32);
            assert_eq!(l4[(y * 5 + x) as usize], dx + dy);
            assert_eq!(l8[(y * 5 + x) as usize], dx.max(dy));
        }
    }
}

#[test]
fn path_follows_the_seed_priority() {
    // Open 3 x 3, goal at the centre: from the corner (0, 0) both (1, 0) and (0, 1) descend;
    // the priority left, up, right, down picks right (x + 1) before down.
    let g = Grid::from_elevation(3, 3, &[0.0; 9], 0.0, Connectivity::Four).unwrap();
    let l = cpu::distance_field(&g, (1, 1));
    assert_eq!(
        cpu::descend(&g, &l, (0, 0)).unwrap(),
        vec![(0, 0), (1, 0), (1, 1)]
    );
}

/// `occupancy` (bench lee's occupancy terrain): the fraction asked for, reproducible from its
/// seed, and its occupied cells blocked in the grid.
#[test]
fn occupancy_terrain_occupies_its_fraction() {
    let (w, h) = (301u32, 199u32);
    let cells = (w * h) as usize;
    let heights = occupancy(w, h, 0.2, 7);
    assert_eq!(heights.len(), cells);
    let occupied = heights.iter().filter(|v| v.is_nan()).count();
    let share = occupied as f64 / cells as f64;
    assert!((0.19..0.21).contains(&share), "{share}");
    assert_eq!(
        heights.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        occupancy(w, h, 0.2, 7)
            .iter()
            .map(|v| v.to_bits())
            .collect::<Vec<_>>()
    );
    let grid = Grid::from_elevation(w, h, &heights, 1.0, Connectivity::Four).unwrap();
    assert_eq!(grid.free.iter().filter(|&&f| !f).count(), occupied);
    assert!(occupancy(w, h, 0.0, 7).iter().all(|v| *v == 0.0));
    assert!(occupancy(w, h, 1.0, 7).iter().all(|v| v.is_nan()));
}

#[test]
fn walls_make_detours_and_islands_are_unreachable() {
    // 5 x 3 with a wall in column 2 except at the bottom row.
    #[rustfmt::skip]
    let h = [
        0.0, 0.0, 9.0, 0.0, 0.0,
        0.0, 0.0, 9.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0,
    ];
    let g = Grid::from_elevation(5, 3, &h, 1.0, Connectivity::Four).unwrap();
    let l = cpu::distance_field(&g, (0, 0));
    assert_eq!(l[4], 8); // (4, 0): down 2, right 4, up 2
    assert_eq!(l[2], UNREACHED); // the wall cells themselves are unreachable (step 9)
    let p = Planner::new(&Backend::Cpu, g, Config::default()).unwrap();
    let plan = p.plan((4, 0), (0, 0), false).unwrap();
    assert!(plan.reachable);
    assert_eq!(plan.length, Some(8));
    let e = p.plan((2, 0), (0, 0), false).unwrap();
    assert!(!e.reachable && e.path.is_empty() && e.length.is_none());
    assert!(p
        .plan((9, 0), (0, 0), false)
        .unwrap_err()
        .to_string()
        .contains("start"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn cpu_field_is_the_bfs_fixed_point(w in 1u32..40, h in 1u32..40, seed in any::<u64>(), eight in any::<bool>(), blocked in 0.0f64..0.7) {
        let heights = random_terrain(w, h, blocked, seed);
        let conn = if eight { Connectivity::Eight } else { Connectivity::Four };
        let g = Grid::from_elevation(w, h, &heights, 1.0, conn).unwrap();
        let goal = ((seed % w as u64) as u32, ((seed >> 20) % h as u64) as u32);
        let labels = cpu::distance_field(&g, goal);
        assert_bfs_field(&g, &labels, g.index(goal.0, goal.1));
        let start = (((seed >> 7) % w as u64) as u32, ((seed >> 33) % h as u64) as u32);
        if let Some(p) = cpu::descend(&g, &labels, start) {
            assert_valid_path(&g, &labels, &p, start, goal);
        } else {
            prop_assert_eq!(labels[g.index(start.0, start.1)], UNREACHED);
        }
    }
}

const MODELS: [MemoryModel; 4] = [
    MemoryModel::Bitwave,
    MemoryModel::Shared,
    MemoryModel::Global,
    MemoryModel::Texture,
];

#[allow(clippy::too_many_arguments)]
fn check_gpu_equals_cpu(
    models: &[MemoryModel],
    backend: &Backend,
    heights: &[f32],
    w: u32,
    h: u32,
    conn: Connectivity,
    blocks: &[(u32, u32)],
    what: &str,
) {
    let grid = Grid::from_elevation(w, h, heights, 1.0, conn).unwrap();
    let goal = nearest_open(heights, w, w / 2, h / 2).unwrap();
    let start = nearest_open(heights, w, 0, 0).unwrap();
    let expected = cpu::distance_field(&grid, goal);
    let expected_path = cpu::descend(&grid, &expected, start).unwrap_or_default();
    for &model in models {
        for &(bx, by) in blocks {
            let config = Config {
                memory_model: model,
                block_x: bx,
                block_y: by,
                portal_table_mib: None,
            };
            let p = Planner::new(backend, grid.clone(), config).unwrap();
            let field = p.distance_field((goal.0 as i64, goal.1 as i64)).unwrap();
            assert!(
                field == expected,
                "{what} {w}x{h} {conn:?} {model:?} {bx}x{by}: labels differ"
            );
            let path = || {
                p.plan(
                    (start.0 as i64, start.1 as i64),
                    (goal.0 as i64, goal.1 as i64),
                    false,
                )
                .unwrap()
                .path
            };
            // The device-side descent must find the same path as the CPU.
            assert_eq!(
                path(),
                expected_path,
                "{what} {w}x{h} {conn:?} {model:?}: path differs"
            );
            // Every device descent on the field just computed (the same goal descends it
            // again): the tiles' jumps, the cells' jumps, then the window walk, each for
            // every path.
            for (long_from, how) in [
                (0, LongDescent::Tiles),
                (0, LongDescent::Jumps),
                (u32::MAX, LongDescent::Tiles),
            ] {
                p.set_long_path_from(long_from);
                p.set_long_descent(how);
                assert_eq!(
                    path(),
                    expected_path,
                    "{what} {w}x{h} {conn:?} {model:?}: path differs when paths over \
                     {long_from} moves descend by {how:?}"
                );
            }
            p.set_long_descent(LongDescent::Tiles);
        }
    }
}

#[test]
fn gpu_models_match_cpu_on_random_terrain() {
    let Some(rt) = cuda_or_skip("gpu_models_match_cpu_on_random_terrain") else {
        return;
    };
    let backend = Backend::Cuda(rt);
    let seed = gpu_planning::compute::testing::seed(0x1ee);
    for (w, h) in [
        (1, 1),
        (1, 37),
        (37, 1),
        (33, 31),
        (101, 67),
        (257, 129),
        (513, 1001),
    ] {
        for conn in [Connectivity::Four, Connectivity::Eight] {
            for blocked in [0.0, 0.3, 0.55] {
                let heights = random_terrain(w, h, blocked, seed ^ (w as u64 * 31 + h as u64));
                check_gpu_equals_cpu(
                    &MODELS,
                    &backend,
                    &heights,
                    w,
                    h,
                    conn,
                    &[(32, 32), (16, 8), (7, 5)],
                    "random",
                );
            }
        }
    }
}

#[test]
fn gpu_models_match_cpu_on_mazes() {
    let Some(rt) = cuda_or_skip("gpu_models_match_cpu_on_mazes") else {
        return;
    };
    let backend = Backend::Cuda(rt);
    let seed = gpu_planning::compute::testing::seed(0x3a2e);
    for (w, h) in [(3, 3), (63, 65), (199, 101), (301, 301)] {
        for conn in [Connectivity::Four, Connectivity::Eight] {
            let heights = maze(w, h, seed ^ w as u64);
            check_gpu_equals_cpu(
                &MODELS,
                &backend,
                &heights,
                w,
                h,
                conn,
                &[(32, 32), (13, 9)],
                "maze",
            );
        }
    }
}

/// A corridor that winds through every row: from the corner to the centre its path is
/// longer than the cells that come back in one copy with the descent's status (4,096), so the
/// device's path is downloaded once its length is known; on every descent, equal to the CPU's.
#[test]
fn gpu_winding_path_longer_than_one_copy_matches_cpu() {
    let (w, h) = (161u32, 161u32);
    let heights: Vec<f32> = (0..h)
        .flat_map(|y| {
            (0..w).map(move |x| {
                let gap = if (y / 2) % 2 == 0 { w - 1 } else { 0 };
                if y % 2 == 1 && x != gap {
                    f32::NAN
                } else {
                    0.0
                }
            })
        })
        .collect();
    let grid = Grid::from_elevation(w, h, &heights, 1.0, Connectivity::Four).unwrap();
    let goal = nearest_open(&heights, w, w / 2, h / 2).unwrap();
    let start = nearest_open(&heights, w, 0, 0).unwrap();
    let path = cpu::descend(&grid, &cpu::distance_field(&grid, goal), start).unwrap();
    assert!(
        path.len() > 4097,
        "the corridor's path has {} cells",
        path.len()
    );
    let Some(rt) = cuda_or_skip("gpu_winding_path_longer_than_one_copy_matches_cpu") else {
        return;
    };
    let backend = Backend::Cuda(rt);
    check_gpu_equals_cpu(
        &MODELS,
        &backend,
        &heights,
        w,
        h,
        Connectivity::Four,
        &[(32, 32)],
        "winding corridor",
    );
}

#[test]
fn gpu_default_model_matches_cpu_on_a_large_grid() {
    let Some(rt) = cuda_or_skip("gpu_default_model_matches_cpu_on_a_large_grid") else {
        return;
    };
    let backend = Backend::Cuda(rt);
    let (w, h) = (2001, 1999);
    let heights = random_terrain(w, h, 0.3, gpu_planning::compute::testing::seed(77));
    let grid = Grid::from_elevation(w, h, &heights, 1.0, Connectivity::Four).unwrap();
    let expected = cpu::distance_field(&grid, (1000, 999));
    let p = Planner::new(&backend, grid, Config::default()).unwrap();
    for _ in 0..3 {
        // Repeated queries reuse the device buffers.
        assert!(p.distance_field((1000, 999)).unwrap() == expected);
    }
}

/// The field from `goal` on every bitwave schedule of `p`, each equal to `expected`; `after`
/// is called with each schedule once its field passed (the planner still holds its counts).
fn check_every_schedule(
    p: &Planner,
    goal: (u32, u32),
    expected: &[u32],
    what: &str,
    mut after: impl FnMut(Schedule),
) {
    for schedule in [
        Schedule::Adaptive,
        Schedule::Queue,
        Schedule::Rounds,
        Schedule::Portals,
        Schedule::PortalQueue,
    ] {
        p.set_bitwave_schedule(schedule);
        let field = p.distance_field((goal.0 as i64, goal.1 as i64)).unwrap();
        assert!(field == expected, "{what} {schedule:?}: labels differ");
        after(schedule);
    }
}

/// Bitwave tiles are 64 x 32 cells whatever the block: sizes just around tile multiples, goals
/// on tile borders and corners, and 1, 2 and 5 warps per block.
#[test]
fn gpu_bitwave_matches_cpu_across_tile_edges() {
    let Some(rt) = cuda_or_skip("gpu_bitwave_matches_cpu_across_tile_edges") else {
        return;
    };
    let backend = Backend::Cuda(rt);
    let seed = gpu_planning::compute::testing::seed(0xb17);
    let mut case = 0u64;
    for (w, h) in [
        (64, 32),
        (65, 33),
        (63, 31),
        (128, 1),
        (1, 96),
        (193, 97),
        (300, 170),
    ] {
        for conn in [Connectivity::Four, Connectivity::Eight] {
            for terrain in 0..4 {
                case += 1;
                let s = seed ^ case.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                let heights = match terrain {
                    0 => random_terrain(w, h, 0.3, s),
                    1 => random_terrain(w, h, 0.55, s),
                    2 => maze(w, h, s),
                    _ => occupancy(w, h, 0.2, s),
                };
                let grid = Grid::from_elevation(w, h, &heights, 1.0, conn).unwrap();
                // Goals on tile corners and borders, and one anywhere.
                let picks = [
                    (63.min(w - 1), 31.min(h - 1)),
                    (64.min(w - 1), 32.min(h - 1)),
                    (0, h - 1),
                    ((s % w as u64) as u32, ((s >> 32) % h as u64) as u32),
                ];
                for (gx, gy) in picks {
                    let Some(goal) = nearest_open(&heights, w, gx, gy) else {
                        continue;
                    };
                    let expected = cpu::distance_field(&grid, goal);
                    for (bx, by) in [(32, 1), (7, 5), (32, 32)] {
                        let config = Config {
                            memory_model: MemoryModel::Bitwave,
                            block_x: bx,
                            block_y: by,
                            portal_table_mib: None,
                        };
                        let p = Planner::new(&backend, grid.clone(), config).unwrap();
                        let what =
                            format!("{w}x{h} {conn:?} terrain {terrain} goal {goal:?} {bx}x{by}");
                        check_every_schedule(&p, goal, &expected, &what, |_| {});
                    }
                }
            }
        }
    }
}

/// The work queue's tiles run in whatever order the warps take them, so its races show only
/// over many runs: fields on mid-size grids of every terrain from many goals, each equal to
/// the CPU's, on every schedule. Where the tables fit (every grid here) the adaptive default
/// goes over the portals, on a maze in one block; the 1000² maze also runs without tables (a
/// cap of 0 MiB), where the adaptive rounds hand the narrow wave to the queue and the portal
/// schedule falls back to it.
#[test]
fn gpu_bitwave_queue_matches_cpu_from_many_goals() {
    let Some(rt) = cuda_or_skip("gpu_bitwave_queue_matches_cpu_from_many_goals") else {
        return;
    };
    let backend = Backend::Cuda(rt);
    let seed = gpu_planning::compute::testing::seed(0x9e7e);
    // Adaptive fields that went over the portals, and those whose portals-only field (from the
    // same goal) did not do the same: where the tables fit, adaptive is the portal schedule.
    let mut adaptive = (0u32, 0u32);
    // Portals-only fields on mazes, those that went over the portals, and those whose wave ran
    // in one block; and portal-queue fields whose wave ran in one block.
    let mut maze_fields = (0u32, 0u32, 0u32);
    let mut queue_in_block = 0u32;
    // Without tables, on the 1000² maze: an adaptive field that went from rounds to the queue,
    // a portals-only field that ran on the queue, and any field that went over the portals.
    let (mut handed_over, mut fell_back, mut tableless_portals) = (false, false, false);
    for (case, (w, h)) in [(517u32, 301u32), (1000, 1000), (2049, 127)]
        .into_iter()
        .enumerate()
    {
        for terrain in 0..3u64 {
            let s = seed ^ (case as u64 * 3 + terrain).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let heights = match terrain {
                0 => random_terrain(w, h, 0.3, s),
                1 => random_terrain(w, h, 0.5, s),
                _ => maze(w, h, s),
            };
            let conn = if s & 1 == 0 {
                Connectivity::Four
            } else {
                Connectivity::Eight
            };
            let grid = Grid::from_elevation(w, h, &heights, 1.0, conn).unwrap();
            let p = Planner::new(&backend, grid.clone(), Config::default()).unwrap();
            let tableless = (terrain == 2 && w == 1000).then(|| {
                let t = Planner::new(&backend, grid.clone(), Config::default()).unwrap();
                t.set_portal_table_mib(0).unwrap();
                t
            });
            for g in 0..8u64 {
                let r = s.rotate_left(8 * g as u32);
                let Some(goal) = nearest_open(
                    &heights,
                    w,
                    (r % w as u64) as u32,
                    ((r >> 32) % h as u64) as u32,
                ) else {
                    continue;
                };
                let expected = cpu::distance_field(&grid, goal);
                let what = format!("{w}x{h} {conn:?} terrain {terrain} goal {goal:?}");
                let mut adaptive_portals = false;
                check_every_schedule(&p, goal, &expected, &what, |schedule| {
                    let portals = p.last_used_portals() == Some(true);
                    if schedule == Schedule::Adaptive {
                        adaptive.0 += portals as u32;
                        adaptive_portals = portals;
                    }
                    if schedule == Schedule::Portals {
                        adaptive.1 += (portals != adaptive_portals) as u32;
                        if terrain == 2 {
                            maze_fields.0 += 1;
                            maze_fields.1 += portals as u32;
                            maze_fields.2 += (p.last_used_portal_block() == Some(true)) as u32;
                        }
                    }
                    if schedule == Schedule::PortalQueue {
                        queue_in_block += (p.last_used_portal_block() == Some(true)) as u32;
                    }
                });
                let Some(t) = &tableless else { continue };
                let what = format!("{what}, no tables");
                check_every_schedule(t, goal, &expected, &what, |schedule| {
                    let queued = t.last_tile_runs().unwrap_or(0) > 0;
                    tableless_portals |= t.last_used_portals() == Some(true);
                    if schedule == Schedule::Adaptive {
                        handed_over |= t.last_rounds().unwrap_or(0) > 1 && queued;
                    }
                    if schedule == Schedule::Portals {
                        fell_back |= queued;
                    }
                });
            }
        }
    }
    assert!(
        adaptive.0 > 0 && adaptive.1 == 0,
        "{} adaptive fields went over the portals; {} went otherwise than the portal schedule \
         from the same goal (the tables fit every grid here)",
        adaptive.0,
        adaptive.1
    );
    // A maze spans its grid, and every grid here is many tiles: the goal's tile alone never
    // holds the whole field.
    assert!(
        maze_fields.0 > 0 && maze_fields.1 == maze_fields.0,
        "{} of {} portals-only maze fields went over the portals",
        maze_fields.1,
        maze_fields.0
    );
    // A maze's portals (about 23,000 on the 1000² grid) fit one block's shared memory, and
    // its moves are symmetric: its wave runs in one block, unless the schedule says the queue.
    assert!(
        maze_fields.2 == maze_fields.0 && queue_in_block == 0,
        "{} of {} portals-only maze fields ran their wave in one block; {queue_in_block} \
         portal-queue fields did",
        maze_fields.2,
        maze_fields.0
    );
    assert!(
        handed_over && fell_back && !tableless_portals,
        "without tables on the 1000² maze: adaptive rounds handed over to the queue: \
         {handed_over}, the portal schedule fell back to the queue: {fell_back}, a field \
         went over the portals: {tableless_portals}"
    );
}

/// A path longer than the descent buffer first holds (65,536 cells) makes it grow.
#[test]
fn gpu_long_maze_path_matches_cpu() {
    let Some(rt) = cuda_or_skip("gpu_long_maze_path_matches_cpu") else {
        return;
    };
    let (w, h) = (1001, 1003);
    // A fresh maze each run, but one whose corner-to-centre path is long enough: some seeds
    // give a shorter one, which would not test the growth.
    let long_path = |seed: u64| {
        let heights = maze(w, h, seed);
        let grid = Grid::from_elevation(w, h, &heights, 1.0, Connectivity::Four).unwrap();
        let goal = nearest_open(&heights, w, w / 2, h / 2).unwrap();
        let start = nearest_open(&heights, w, 0, 0).unwrap();
        let labels = cpu::distance_field(&grid, goal);
        let length = labels[grid.index(start.0, start.1)];
        (length != UNREACHED && length > 1 << 16).then_some(heights)
    };
    let first = gpu_planning::compute::testing::seed(0x10f6);
    let heights = (first..first + 32)
        .find_map(long_path)
        .expect("32 mazes in a row with a corner-to-centre path under 65,536 cells");
    check_gpu_equals_cpu(
        &[MemoryModel::Bitwave],
        &Backend::Cuda(rt),
        &heights,
        w,
        h,
        Connectivity::Four,
        &[(32, 32)],
        "long maze",
    );
}

/// A Gazebo world with a heightmap: a 5 x 5 8-bit PNG over 4 x 4 m (1 m cells), 2 m high,
/// centred at (1, 2, 0.5); a white column in the middle blocks every climb but at the top row.
#[test]
fn gazebo_heightmap_loads_and_plans_around_its_wall() {
    use gpu_planning::lee::io::heightmap;
    let dir = std::env::temp_dir().join(format!("gpu_planning_heightmap_{}", std::process::id()));
    std::fs::create_dir_all(dir.join("media")).unwrap();
    let mut img = image::GrayImage::new(5, 5);
    for (x, y, p) in img.enumerate_pixels_mut() {
        p.0[0] = if x == 2 && y > 0 {
            255
        } else {
            51 * (y as u8 % 2)
        };
    }
    img.save(dir.join("media/hills.png")).unwrap();
    let sdf = r#"<?xml version="1.0"?>
<sdf version="1.9"><world name="w"><model name="terrain"><static>true</static>
  <link name="l"><collision name="c"><geometry><heightmap>
    <uri>file://media/hills.png</uri><size>4 4 2</size><pos>1 2 0.5</pos>
  </heightmap></geometry></collision></link></model></world></sdf>"#;
    std::fs::write(dir.join("world.sdf"), sdf).unwrap();
    let m = heightmap::load(&dir.join("world.sdf"), None, [0.0; 3]).unwrap();
    assert_eq!((m.width, m.height), (5, 5));
    assert_eq!(m.resolution(), 1.0);
    assert_eq!(m.origin_xy(), (-1.5, -0.5));
    // Row 1 (odd): 51 / 255 * 2 + 0.5; the wall: 2.5; row 0: 0.5.
    assert!((m.heights[5] - 0.9).abs() < 1e-6, "{}", m.heights[5]);
    assert!((m.heights[5 + 2] - 2.5).abs() < 1e-6);
    assert!((m.heights[0] - 0.5).abs() < 1e-6);
    // World rows run the other way: the image's top row is the world's last.
    assert_eq!(m.world_rows()[20..25], m.heights[0..5]);
    // max_step 0.5 climbs the 0.4 m ripples but not the 1.6+ m wall: (0, 4) -> (4, 4) goes
    // up to row 0, across, and down again: 4 + 4 + 4 moves.
    let g = Grid::from_elevation(5, 5, &m.heights, 0.5, Connectivity::Four).unwrap();
    let plan = Planner::new(&Backend::Cpu, g, Config::default())
        .unwrap()
        .plan((0, 4), (4, 4), false)
        .unwrap();
    assert_eq!(plan.length, Some(12));
    assert!(plan.path.contains(&(2, 0)));

    // The same PNG with its size given by hand, and the CLI on the SDF.
    let png = heightmap::load(
        &dir.join("media/hills.png"),
        Some([4.0, 4.0, 2.0]),
        [1.0, 2.0, 0.5],
    )
    .unwrap();
    assert_eq!(png.heights, m.heights);
    let exe = gpu_planning::env::BIN
        .get()
        .ok_or(())
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_gpu_planning").to_string());
    let out = std::process::Command::new(&exe)
        .args(["lee", "--heightmap"])
        .arg(dir.join("world.sdf"))
        .args([
            "--max-step",
            "0.5",
            "--start",
            "0,4",
            "--goal",
            "4,4",
            "--json",
        ])
        .args(["--backend", "cpu"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["length"], 12);

    // What is wrong is named.
    let e = heightmap::load(&dir.join("media/hills.png"), None, [0.0; 3]).unwrap_err();
    assert!(e.to_string().contains("size"), "{e}");
    let e =
        heightmap::load_png(&dir.join("media/hills.png"), [4.0, 8.0, 1.0], [0.0; 3]).unwrap_err();
    assert!(e.to_string().contains("square"), "{e}");
    let e = heightmap::parse_sdf("<sdf><world/></sdf>", &dir).unwrap_err();
    assert!(e.to_string().contains("<heightmap>"), "{e}");
    let e = heightmap::parse_sdf(
        "<sdf><heightmap><uri>a.png</uri><size>4 4</size></heightmap></sdf>",
        &dir,
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("size") && e.to_string().contains("4 4"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A query to the previous query's goal descends the field already computed (counted), and
/// its path equals a fresh planner's; another goal computes a new field. On the CPU always,
/// and with every memory model on CUDA.
fn check_field_reuse(backend: &Backend, model: MemoryModel) {
    let (w, h) = (97u32, 61u32);
    let heights = maze(w, h, 0x5eed);
    let grid = || Grid::from_elevation(w, h, &heights, 0.5, Connectivity::Four).unwrap();
    let config = Config {
        memory_model: model,
        ..Config::default()
    };
    let planner = Planner::new(backend, grid(), config).unwrap();
    let open = |x: u32, y: u32| nearest_open(&heights, w, x, y).unwrap();
    let goal = open(w / 2, h / 2);
    let starts = [open(1, 1), open(w - 2, h - 2), open(w - 2, 1)];
    let as_i = |c: (u32, u32)| (c.0 as i64, c.1 as i64);
    for (i, &s) in starts.iter().enumerate() {
        let fresh = Planner::new(&Backend::Cpu, grid(), Config::default()).unwrap();
        let want = fresh.plan(as_i(s), as_i(goal), false).unwrap();
        let got = planner.plan(as_i(s), as_i(goal), i == 2).unwrap();
        assert_eq!(got.path, want.path, "{model:?}: start {s:?}");
        assert_eq!(planner.fields_reused(), i as u64, "{model:?}");
    }
    // A new goal: a new field, not a reuse.
    let other = open(3, h - 3);
    let fresh = Planner::new(&Backend::Cpu, grid(), Config::default()).unwrap();
    let want = fresh.plan(as_i(starts[0]), as_i(other), false).unwrap();
    let got = planner.plan(as_i(starts[0]), as_i(other), false).unwrap();
    assert_eq!(got.path, want.path);
    assert_eq!(planner.fields_reused(), 2, "{model:?}");
}

#[test]
fn repeated_goal_reuses_its_field_on_cpu() {
    check_field_reuse(&Backend::Cpu, MemoryModel::Bitwave);
}

#[test]
fn repeated_goal_reuses_its_field_on_cuda() {
    let Some(rt) = cuda_or_skip("repeated_goal_reuses_its_field_on_cuda") else {
        return;
    };
    let backend = Backend::Cuda(rt);
    for model in MODELS {
        check_field_reuse(&backend, model);
    }
}

/// A plan cancelled while its wave runs ends `Cancelled` and leaves no field behind: the same
/// goal planned again is computed anew (not counted as reused) and equals the CPU's plan. The
/// flag is cancelled before the plan starts, so the wave stops at its first checkpoint, after
/// its first launch or batch (a 1001 x 999 maze needs many), on whichever backend runs it.
fn check_cancel_keeps_no_field(backend: &Backend, model: MemoryModel) {
    let (w, h) = (1001u32, 999u32);
    let heights = maze(w, h, gpu_planning::compute::testing::seed(0xca9c));
    let grid = || Grid::from_elevation(w, h, &heights, 1.0, Connectivity::Four).unwrap();
    let config = Config {
        memory_model: model,
        ..Config::default()
    };
    let planner = Planner::new(backend, grid(), config).unwrap();
    let as_i = |c: (u32, u32)| (c.0 as i64, c.1 as i64);
    let goal = as_i(nearest_open(&heights, w, w / 2, h / 2).unwrap());
    let start = as_i(nearest_open(&heights, w, 0, 0).unwrap());
    let cancelled = gpu_planning::cancel::CancelFlag::new();
    cancelled.cancel();
    let r = cancelled.scope(|| planner.plan(start, goal, false));
    assert!(
        matches!(r, Err(gpu_planning::Error::Cancelled)),
        "{model:?} on {}: a cancelled plan answered {:?}",
        backend.name(),
        r.map(|p| p.length)
    );
    let want = Planner::new(&Backend::Cpu, grid(), Config::default())
        .unwrap()
        .plan(start, goal, false)
        .unwrap();
    assert!(want.reachable);
    let got = planner.plan(start, goal, false).unwrap();
    assert_eq!(
        planner.fields_reused(),
        0,
        "{model:?}: a cancelled field was kept"
    );
    assert_eq!(got.path, want.path, "{model:?} after a cancel");
}

#[test]
fn a_cancelled_plan_keeps_no_field_on_cpu() {
    check_cancel_keeps_no_field(&Backend::Cpu, MemoryModel::Bitwave);
}

/// A whole field asked for in a cancelled scope is `Cancelled`, never labels cut short (the
/// CPU wave stops in its fill or its first steps); outside the scope it is the full field.
#[test]
fn a_cancelled_whole_field_is_an_error_not_labels() {
    let (w, h) = (1501u32, 1499u32);
    let heights = maze(w, h, gpu_planning::compute::testing::seed(0xca9e));
    let grid = Grid::from_elevation(w, h, &heights, 1.0, Connectivity::Four).unwrap();
    let planner = Planner::new(&Backend::Cpu, grid.clone(), Config::default()).unwrap();
    let goal = nearest_open(&heights, w, w / 2, h / 2).unwrap();
    let g = (goal.0 as i64, goal.1 as i64);
    let cancelled = gpu_planning::cancel::CancelFlag::new();
    cancelled.cancel();
    let r = cancelled.scope(|| planner.distance_field(g));
    assert!(
        matches!(r, Err(gpu_planning::Error::Cancelled)),
        "a cancelled field answered {:?} labels",
        r.map(|l| l.len())
    );
    let r = cancelled.scope(|| cpu::try_distance_field(&grid, goal));
    assert!(matches!(r, Err(gpu_planning::Error::Cancelled)));
    let whole = planner.distance_field(g).unwrap();
    assert_eq!(whole, cpu::distance_field(&grid, goal));
    assert_eq!(whole.len(), grid.len());
    assert!(whole.iter().filter(|&&l| l != UNREACHED).count() > 1);
}

#[test]
fn a_cancelled_plan_keeps_no_field_on_cuda() {
    let Some(rt) = cuda_or_skip("a_cancelled_plan_keeps_no_field_on_cuda") else {
        return;
    };
    let backend = Backend::Cuda(rt);
    for model in MODELS {
        check_cancel_keeps_no_field(&backend, model);
    }
}
