//! The demo's robot planner: nav2's depot map (tests/data/maps, built in) planned in costmap
//! mode as a nav2 user runs `lee_planner` (a TurtleBot3's radius, nav2's inflation), across the
//! open region around the map's centre (its leftmost cell and the cell farthest from that),
//! drawn with its costs.

use std::path::Path;
use std::time::Instant;

use crate::compute::Backend;
use crate::error::{Error, Result};
use crate::lee::costmap::{smooth, CostModel, CostParams};
use crate::lee::io::map_yaml;
use crate::lee::{Connectivity, Grid, RobotConfig, RobotPlanner};

const DEPOT_YAML: &str = include_str!("../../tests/data/maps/depot.yaml");
const DEPOT_PGM: &[u8] = include_bytes!("../../tests/data/maps/depot.pgm");
/// A TurtleBot3's radius and nav2's inflation layer's defaults, as in the NavFn race.
const ROBOT_RADIUS: f64 = 0.22;
const INFLATION_RADIUS: f64 = 0.55;
/// Pixels per cell of the picture.
const SCALE: u32 = 2;

/// Plans across the depot map on `backend`, draws `out`/costmap_path.png, and says what it did.
pub fn plan(backend: &Backend, out: &Path) -> Result<Vec<String>> {
    let m = map_yaml::parse("depot.yaml", DEPOT_YAML, "depot.pgm", DEPOT_PGM)?;
    let res = m.meta.resolution;
    let grid = Grid::from_occupancy(m.width, m.height, &m.data, 65, false, Connectivity::Eight)?;
    let config = RobotConfig {
        cost_model: CostModel::Costmap,
        costs: CostParams {
            robot_radius: ROBOT_RADIUS,
            inflation_radius: INFLATION_RADIUS,
            ..CostParams::default()
        },
        ..RobotConfig::default()
    };
    let planner = RobotPlanner::new(backend, grid, res, &config)?;
    let (w, h) = (m.width as i64, m.height as i64);
    let cell = |i: usize| (i as i64 % w, i as i64 / w);
    // The open region around the map's centre (the depot's floor), then its leftmost cell and
    // the reachable cell farthest from that.
    let centre = (0..(w * h) as usize)
        .map(cell)
        .filter(|&c| planner.is_open(c))
        .min_by_key(|&(x, y)| (x - w / 2).pow(2) + (y - h / 2).pow(2))
        .ok_or_else(|| Error::invalid("demo", "the depot map has no open cell"))?;
    let reach = planner.reachable_from(centre)?;
    let region = || (0..reach.len()).filter(|&i| reach[i]).map(cell);
    let start = region()
        .min_by_key(|&(x, y)| (x, y))
        .ok_or_else(|| Error::invalid("demo", "nothing reachable on the depot map"))?;
    let goal = region()
        .max_by_key(|&(x, y)| (x - start.0).pow(2) + (y - start.1).pow(2))
        .ok_or_else(|| Error::invalid("demo", "nothing reachable on the depot map"))?;
    // The first plan compiles the device's kernels where none are yet; the one timed plans to
    // a new goal, so its whole field is computed.
    planner.plan(start, goal, false)?;
    let t = Instant::now();
    let plan = planner.plan(goal, start, false)?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    if plan.path.is_empty() {
        return Err(Error::invalid("demo", "no path across the depot map"));
    }
    let smooth = planner.smooth(&plan.path).unwrap_or_default();
    let grid_m = smooth::length(
        &plan
            .path
            .iter()
            .map(|&(x, y)| (x as f64, y as f64))
            .collect::<Vec<_>>(),
    ) * res;
    let picture = out.join("costmap_path.png");
    draw(&planner, m.width, m.height, &smooth, &picture)?;
    Ok(vec![
        format!(
            "costmap mode on nav2's depot map ({} x {} cells of {res} m, robot_radius {ROBOT_RADIUS} m, inflation {INFLATION_RADIUS} m): {:?} -> {:?} in {ms:.2} ms on {}",
            m.width, m.height, goal, start, plan.backend
        ),
        format!(
            "least-cost grid path {grid_m:.2} m ({} cells, cost {}), smooth path {:.2} m; picture {}",
            plan.path.len(),
            plan.cost.unwrap_or_default(),
            smooth::length(&smooth) * res,
            picture.display()
        ),
    ])
}

/// The costs shaded (free white, inflation yellow to red, inscribed dark red, lethal black,
/// unknown grey) and the smooth path over them in blue, from its start (green) to its goal
/// (magenta).
fn draw(p: &RobotPlanner, w: u32, h: u32, path: &[(f64, f64)], out: &Path) -> Result<()> {
    let values = p.cost_values().unwrap_or(&[]);
    let mut img = image::RgbImage::from_fn(w * SCALE, h * SCALE, |x, y| {
        let v = values
            .get(((y / SCALE) * w + x / SCALE) as usize)
            .copied()
            .unwrap_or(0);
        match v {
            0 => image::Rgb([245, 245, 240]),
            254 => image::Rgb([20, 20, 20]),
            253 => image::Rgb([120, 25, 25]),
            255 => image::Rgb([150, 150, 170]),
            v => {
                let t = v as f32 / 252.0;
                let mix = |a: f32, b: f32| (a + (b - a) * t) as u8;
                image::Rgb([mix(250.0, 225.0), mix(235.0, 80.0), mix(175.0, 40.0)])
            }
        }
    });
    let mut dot = |x: f64, y: f64, r: i64, c: image::Rgb<u8>| {
        let (cx, cy) = (
            ((x + 0.5) * SCALE as f64) as i64,
            ((y + 0.5) * SCALE as f64) as i64,
        );
        for dy in -r..=r {
            for dx in -r..=r {
                let (px, py) = (cx + dx, cy + dy);
                if px >= 0 && py >= 0 && px < (w * SCALE) as i64 && py < (h * SCALE) as i64 {
                    img.put_pixel(px as u32, py as u32, c);
                }
            }
        }
    };
    for seg in path.windows(2) {
        let ((ax, ay), (bx, by)) = (seg[0], seg[1]);
        let steps = (((bx - ax).abs() + (by - ay).abs()) * SCALE as f64 * 2.0).ceil() as usize;
        for k in 0..=steps.max(1) {
            let t = k as f64 / steps.max(1) as f64;
            dot(
                ax + (bx - ax) * t,
                ay + (by - ay) * t,
                1,
                image::Rgb([30, 80, 220]),
            );
        }
    }
    if let (Some(a), Some(b)) = (path.first(), path.last()) {
        dot(a.0, a.1, 3, image::Rgb([40, 170, 60]));
        dot(b.0, b.1, 3, image::Rgb([200, 40, 200]));
    }
    img.save(out)
        .map_err(|e| Error::invalid(out.display().to_string(), e))
}
