//! A robot's plan on a small occupancy map, under both cost models: `unit` (the seed's Lee
//! wave, moves counted, the robot's radius kept clear of walls) and `costmap` (nav2's
//! inflation costs, NavFn's least total cost). Runs on CUDA when a device is there, else on
//! the CPU; both give the same path.
//!
//!     cargo run --release --example lee_plan

use gpu_planning::compute::{Backend, BackendKind};
use gpu_planning::lee::costmap::{CostModel, CostParams};
use gpu_planning::lee::{Grid, RobotConfig, RobotPlanner};

const MAP: &str = "\
....................
....................
..######..######....
..#............#....
..#............#....
..#............#....
..######..######....
....................
....................";

fn main() -> gpu_planning::error::Result<()> {
    let rows: Vec<&str> = MAP.lines().collect();
    let (w, h) = (rows[0].len() as u32, rows.len() as u32);
    // Occupancy as a map_server map has it: 100 occupied, 0 free.
    let data: Vec<i8> = rows
        .iter()
        .flat_map(|r| r.bytes().map(|b| if b == b'#' { 100 } else { 0 }))
        .collect();
    let backend = Backend::select(BackendKind::Auto)?;
    for cost_model in [CostModel::Unit, CostModel::Costmap] {
        let config = RobotConfig {
            cost_model,
            costs: CostParams {
                robot_radius: 0.05,
                inflation_radius: 0.3,
                ..CostParams::default()
            },
            ..RobotConfig::default()
        };
        // 0: the cost model's own moves (4 for unit, 8 for costmap).
        let connectivity = config.connectivity(0)?;
        let grid = Grid::from_occupancy(w, h, &data, 65, false, connectivity)?;
        let planner = RobotPlanner::new(&backend, grid, 0.1, &config)?;
        // From inside the room, out through its doorway, to the far corner.
        let plan = planner.plan((5, 4), (19, 8), false)?;
        println!(
            "{cost_model:?}: {} cells, cost {:?}, on {}",
            plan.path.len(),
            plan.cost,
            plan.backend
        );
        println!("{}", draw(&rows, &plan.path));
    }
    Ok(())
}

fn draw(rows: &[&str], path: &[(u32, u32)]) -> String {
    let mut out: Vec<Vec<u8>> = rows.iter().map(|r| r.as_bytes().to_vec()).collect();
    for &(x, y) in path {
        out[y as usize][x as usize] = b'*';
    }
    out.into_iter()
        .map(|r| String::from_utf8_lossy(&r).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}
