//! `gpu_planning lee`: one planning query from files.

use std::path::PathBuf;

use clap::Args;

use super::costmap::{CostModel, CostParams};
use super::io::{heightmap, map_yaml, npy};
use super::{Config, Connectivity, Grid, MemoryModel, Plan, RobotConfig, RobotPlanner, UNREACHED};
use crate::compute::{Backend, BackendKind};
use crate::error::{Error, Result};

#[derive(Debug, Args)]
// One of the three grids is needed: the error names all of them, not --elevation alone.
/// `gpu_planning lee`'s flags: a grid from a file, the ends, the cost model and its settings.
#[command(group(clap::ArgGroup::new("grid").required(true).args(["elevation", "map", "heightmap"])))]
pub struct LeeArgs {
    /// Elevation grid: 2-D float32/float64 .npy, shape (rows, cols), C order; NaN = blocked.
    #[arg(long, conflicts_with_all = ["map", "heightmap"], requires = "max_step")]
    pub elevation: Option<PathBuf>,
    /// Largest height difference a move may climb (with --elevation or --heightmap).
    #[arg(long, allow_negative_numbers = true)]
    pub max_step: Option<f32>,
    /// ROS map_server YAML (trinary); y counts image rows from the top.
    #[arg(long, conflicts_with = "heightmap")]
    pub map: Option<PathBuf>,
    /// Gazebo heightmap: an SDF world/model (its first `<heightmap>`: uri, size, pos) or a
    /// grayscale PNG with --heightmap-size; one cell per pixel, y counts image rows from the
    /// top.
    #[arg(long, requires = "max_step")]
    pub heightmap: Option<PathBuf>,
    /// "X,Y,Z" metres a PNG heightmap spans (Z: the height of a white pixel).
    #[arg(long)]
    pub heightmap_size: Option<String>,
    /// Start cell "X,Y" (column, row).
    #[arg(long, allow_hyphen_values = true)]
    pub start: String,
    /// Goal cell "X,Y".
    #[arg(long, allow_hyphen_values = true)]
    pub goal: String,
    /// 4, 8, or 0: the cost model's own moves (4 for unit, 8 for costmap: NavFn's); the
    /// node's default too.
    #[arg(long, default_value_t = 0)]
    pub connectivity: u32,
    /// CUDA variant: bitwave (default), global, shared or texture.
    #[arg(long, default_value = Config::default().memory_model.name())]
    pub memory_model: String,
    /// CUDA block width (threads per block with bitwave: block_x x block_y).
    #[arg(long, default_value_t = Config::default().block_x)]
    pub block_x: u32,
    /// CUDA block height.
    #[arg(long, default_value_t = Config::default().block_y)]
    pub block_y: u32,
    /// auto (CUDA when a device is there), cpu or cuda.
    #[arg(long, default_value = "auto")]
    pub backend: BackendKind,
    /// Robot radius in metres: cells within it of an obstacle are blocked (0: none).
    #[arg(long, default_value_t = CostParams::default().robot_radius, allow_negative_numbers = true)]
    pub robot_radius: f64,
    /// Metres per cell of an --elevation grid (a map YAML and a heightmap carry their own).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub resolution: f64,
    /// unit (moves, the default) or costmap (nav2's inflation costs, least total cost).
    #[arg(long, default_value = CostModel::default().name())]
    pub cost_model: String,
    /// Costmap: cost of entering a cell of value 0 (NavFn's neutral_cost).
    #[arg(long, default_value_t = CostParams::default().neutral_cost)]
    pub neutral_cost: u32,
    /// Costmap: percent of a cell's value added when entering it (NavFn's cost_factor 0.8).
    #[arg(long, default_value_t = CostParams::default().cost_factor)]
    pub cost_factor: u32,
    /// Costmap: metres from an obstacle within which cells get the decaying inflation cost.
    #[arg(long, default_value_t = CostParams::default().inflation_radius, allow_negative_numbers = true)]
    pub inflation_radius: f64,
    /// Costmap: decay per metre of the inflation cost.
    #[arg(long, default_value_t = CostParams::default().cost_scaling_factor, allow_negative_numbers = true)]
    pub cost_scaling_factor: f64,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Draw terrain, distance field and path to this PNG.
    #[arg(long)]
    pub png: Option<PathBuf>,
}

fn max_step(v: Option<f32>) -> Result<f32> {
    let step = v.ok_or_else(|| {
        Error::invalid("--max-step", "is required with --elevation and --heightmap")
    })?;
    if step.is_nan() || step < 0.0 {
        return Err(Error::invalid(
            "--max-step",
            format!("{step} is not a non-negative number"),
        ));
    }
    Ok(step)
}

fn parse_vec3(field: &str, s: &str) -> Result<[f64; 3]> {
    let bad = || Error::invalid(field, format!("'{s}' is not X,Y,Z (three numbers)"));
    let v: Vec<f64> = s
        .split(',')
        .map(|t| t.trim().parse().map_err(|_| bad()))
        .collect::<Result<_>>()?;
    <[f64; 3]>::try_from(v.as_slice()).map_err(|_| bad())
}

fn parse_point(field: &str, s: &str) -> Result<(i64, i64)> {
    let bad = || Error::invalid(field, format!("'{s}' is not X,Y (two integers)"));
    let (x, y) = s.split_once(',').ok_or_else(bad)?;
    Ok((
        x.trim().parse().map_err(|_| bad())?,
        y.trim().parse().map_err(|_| bad())?,
    ))
}

/// Reads the grid, plans from start to goal, prints the plan (and draws it with `--png`).
pub fn run(a: LeeArgs) -> Result<()> {
    let start = parse_point("--start", &a.start)?;
    let goal = parse_point("--goal", &a.goal)?;
    let cost_model: CostModel = a.cost_model.parse().map_err(|_| {
        Error::invalid(
            "--cost-model",
            format!("'{}' is not unit or costmap", a.cost_model),
        )
    })?;
    let connectivity = Connectivity::for_model(a.connectivity, cost_model == CostModel::Costmap)
        .map_err(|_| {
            Error::invalid(
                "--connectivity",
                format!("{} is not 0, 4 or 8", a.connectivity),
            )
        })?;
    let memory_model: MemoryModel = a.memory_model.parse().map_err(|_| {
        Error::invalid(
            "--memory-model",
            format!(
                "'{}' is not one of bitwave, global, shared, texture",
                a.memory_model
            ),
        )
    })?;
    crate::lee::clearance::check_radius("--robot-radius", a.robot_radius)?;
    let (grid, heights, resolution) = if let Some(path) = &a.elevation {
        let name = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| Error::io(&name, e))?;
        let (rows, cols, h) = npy::read_f32_2d(&name, &bytes)?;
        let step = max_step(a.max_step)?;
        if !(a.resolution.is_finite() && a.resolution > 0.0) {
            return Err(Error::invalid(
                "--resolution",
                format!(
                    "{} is not a positive number of metres per cell",
                    a.resolution
                ),
            ));
        }
        (
            Grid::from_elevation(cols, rows, &h, step, connectivity)?,
            Some(h),
            a.resolution,
        )
    } else if let Some(path) = &a.heightmap {
        let size = a
            .heightmap_size
            .as_deref()
            .map(|t| parse_vec3("--heightmap-size", t))
            .transpose()?;
        let m = heightmap::load(path, size, [0.0; 3])?;
        let step = max_step(a.max_step)?;
        let resolution = m.resolution();
        (
            Grid::from_elevation(m.width, m.height, &m.heights, step, connectivity)?,
            Some(m.heights),
            resolution,
        )
    } else if let Some(path) = &a.map {
        let m = map_yaml::load(path)?;
        (
            Grid::from_occupancy(m.width, m.height, &m.data, 65, false, connectivity)?,
            None,
            m.meta.resolution,
        )
    } else {
        return Err(Error::invalid(
            "--elevation/--map",
            "one of them is required",
        ));
    };
    let backend = Backend::select(a.backend)?;
    let config = RobotConfig {
        cost_model,
        planner: Config {
            memory_model,
            block_x: a.block_x,
            block_y: a.block_y,
            portal_table_mib: None,
        },
        costs: CostParams {
            neutral_cost: a.neutral_cost,
            cost_factor: a.cost_factor,
            robot_radius: a.robot_radius,
            inflation_radius: a.inflation_radius,
            cost_scaling_factor: a.cost_scaling_factor,
            unknown_is_free: false,
        },
        cpu_fallback: false,
    };
    if cost_model == CostModel::Costmap {
        config.costs.validate().map_err(as_flag)?;
    }
    let planner = RobotPlanner::new(&backend, grid, resolution, &config).map_err(as_flag)?;
    let plan = planner.plan(start, goal, a.png.is_some())?;
    let summary = match cost_model {
        CostModel::Unit => format!(
            "reachable: {} moves, {} cells, backend {} ({:?})",
            plan.length.unwrap_or(0),
            plan.path.len(),
            planner.backend_name(),
            memory_model
        ),
        CostModel::Costmap => format!(
            "reachable: cost {}, {} moves, backend {} (costmap)",
            plan.cost.unwrap_or(0),
            plan.length.unwrap_or(0),
            planner.backend_name()
        ),
    };
    report(
        a.json,
        &plan.path,
        plan.length,
        plan.cost,
        &summary,
        planner.backend_name(),
    );
    if let Some(png) = &a.png {
        draw(
            planner.grid(),
            heights.as_deref(),
            planner.cost_values(),
            &plan,
            png,
        )?;
    }
    Ok(())
}

/// A parameter's refusal named as the flag that set it (`robot_radius` -> `--robot-radius`).
fn as_flag(e: Error) -> Error {
    match e {
        Error::InvalidInput { field, reason } if !field.starts_with("--") => {
            Error::invalid(format!("--{}", field.replace('_', "-")), reason)
        }
        other => other,
    }
}

/// Prints a plan: one JSON object (`--json`; `cost` is the integer total, the length in unit
/// mode), or `summary` when reachable, else "unreachable".
fn report(
    json: bool,
    path: &[(u32, u32)],
    length: Option<u32>,
    cost: Option<u64>,
    summary: &str,
    backend: &str,
) {
    if json {
        let cells: Vec<[u32; 2]> = path.iter().map(|&(x, y)| [x, y]).collect();
        let v = serde_json::json!({
            "reachable": !path.is_empty(),
            "length": length,
            "cost": cost,
            "path": cells
        });
        println!("{v}");
    } else if !path.is_empty() {
        println!("{summary}");
    } else {
        println!("unreachable (backend {backend})");
    }
}

/// Terrain in grey (blocked black, the robot radius's inflated zone dark red), distance field tinted blue (near) to yellow (far), path
/// red, start green, goal magenta; small grids scaled up so a person can see cells.
/// With `values` (costmap mode), free cells are tinted red by their cost value.
fn draw(
    grid: &Grid,
    heights: Option<&[f32]>,
    values: Option<&[u8]>,
    plan: &Plan,
    out: &std::path::Path,
) -> Result<()> {
    let (w, h) = (grid.width, grid.height);
    let scale = (768 / w.max(h)).clamp(1, 16);
    let labels = plan.labels.as_deref().unwrap_or(&[]);
    let max_label = labels
        .iter()
        .copied()
        .filter(|&l| l != UNREACHED)
        .max()
        .unwrap_or(1)
        .max(1);
    let (hmin, hmax) = heights
        .map(|hs| {
            hs.iter()
                .filter(|v| !v.is_nan())
                .fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)))
        })
        .unwrap_or((0.0, 1.0));
    let mut img = image::RgbImage::new(w * scale, h * scale);
    let on_path: std::collections::HashSet<(u32, u32)> = plan.path.iter().copied().collect();
    for y in 0..h {
        for x in 0..w {
            let i = grid.index(x, y);
            let inflated = grid.clearance.as_ref().is_some_and(|c| c.inflated[i]);
            let mut c = if inflated {
                [90, 30, 30]
            } else if !grid.free[i] {
                [0, 0, 0]
            } else {
                let g = heights
                    .map(|hs| ((hs[i] - hmin) / (hmax - hmin).max(1e-6) * 80.0) as u8 + 60)
                    .unwrap_or(110);
                match labels.get(i) {
                    Some(&l) if l != UNREACHED => {
                        let t = l as f32 / max_label as f32;
                        [
                            (g as f32 * 0.4 + 150.0 * t) as u8,
                            (g as f32 * 0.4 + 140.0 * t) as u8,
                            (g as f32 * 0.4 + 150.0 * (1.0 - t)) as u8,
                        ]
                    }
                    _ => match values.map(|v| v[i]) {
                        Some(v) if v > 0 => {
                            let t = v as f32 / 252.0;
                            [
                                (g as f32 + (220.0 - g as f32) * t) as u8,
                                (g as f32 * (1.0 - 0.6 * t)) as u8,
                                (g as f32 * (1.0 - 0.6 * t)) as u8,
                            ]
                        }
                        _ => [g, g, g],
                    },
                }
            };
            if on_path.contains(&(x, y)) {
                c = [230, 30, 30];
            }
            if plan.path.first() == Some(&(x, y)) {
                c = [20, 220, 20];
            }
            if plan.path.last() == Some(&(x, y)) {
                c = [230, 20, 230];
            }
            for dy in 0..scale {
                for dx in 0..scale {
                    img.put_pixel(x * scale + dx, y * scale + dy, image::Rgb(c));
                }
            }
        }
    }
    img.save(out)
        .map_err(|e| Error::invalid(out.display().to_string(), e))
}
