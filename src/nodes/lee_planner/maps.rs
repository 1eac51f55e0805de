//! The map the planner holds: built from each input (map, costmap, elevation_map, the
//! heightmap parameter), checked, inflated for the robot's radius, and put on the backend.

use crate::compute::Backend;
use crate::config::LeeParams;
use crate::error::{Error, PathEnd, Result};
use crate::lee::costmap::{inflation_values, CostModel, CostPlanner};
use crate::lee::io::heightmap;
use crate::lee::Plan;
use crate::lee::{Connectivity, Grid, Planner, UNREACHED};
use crate::nodes::grid_convert::{check_pose, grid_from_gridmap, CellFrame};
use crate::ros::msg::geometry_msgs::{Point, Pose, Quaternion};
use crate::ros::msg::grid_map_msgs::GridMap;
use crate::ros::msg::nav2_msgs::Costmap;
use crate::ros::msg::nav_msgs::OccupancyGrid;

/// The planner of one map, by `cost_model`.
pub(super) enum MapPlanner {
    /// Moves, as the seed (cells within robot_radius blocked).
    Unit(Box<Planner>),
    /// nav2's inflation costs (its cell values kept for ~/costmap), least total cost.
    Costmap {
        planner: Box<CostPlanner>,
        values: Vec<u8>,
    },
}

impl MapPlanner {
    pub(super) fn backend_name(&self) -> &'static str {
        match self {
            MapPlanner::Unit(p) => p.backend_name(),
            MapPlanner::Costmap { planner, .. } => planner.backend_name(),
        }
    }

    /// Whether a path may start at `c` (on the map, free, outside the robot's radius, not
    /// blocked by its cost).
    pub(super) fn is_open(&self, c: (i64, i64)) -> bool {
        match self {
            MapPlanner::Unit(p) => p.grid().check_cell(PathEnd::Start, c).is_ok(),
            MapPlanner::Costmap { planner, .. } => planner.check_cell(PathEnd::Start, c).is_ok(),
        }
    }

    /// The costmap planner when ends follow NavFn's rules (costmap mode, where the node stands
    /// in for NavFn): a blocked start is planned from (NavFn clears the robot's cell), and a
    /// goal is GOAL_OCCUPIED only when lethal with no tolerance (any other failure is
    /// NO_VALID_PATH). None in unit mode, where a blocked start escapes within the tolerance
    /// or is START_OCCUPIED, and a blocked goal is GOAL_OCCUPIED.
    pub(super) fn navfn_ends(&self) -> Option<&CostPlanner> {
        match self {
            MapPlanner::Unit(_) => None,
            MapPlanner::Costmap { planner, .. } => Some(planner),
        }
    }

    /// Per cell: reachable from `start` (moves are symmetric, so also: can reach it); in
    /// costmap mode from a blocked start too, by NavFn's rule.
    pub(super) fn reachable_from(&self, start: (i64, i64)) -> Result<Vec<bool>> {
        Ok(match self {
            MapPlanner::Unit(p) => p
                .distance_field(start)?
                .into_iter()
                .map(|l| l != UNREACHED)
                .collect(),
            MapPlanner::Costmap { planner, .. } => planner.reachable_from_robot_cell(start)?,
        })
    }

    /// The smooth path along a plan's cells, in cell units; None in unit mode (the parameters
    /// refuse `path: smooth` there).
    pub(super) fn smooth(&self, cells: &[(u32, u32)]) -> Option<Vec<(f64, f64)>> {
        match self {
            MapPlanner::Unit(_) => None,
            MapPlanner::Costmap { planner, .. } => Some(planner.smooth(cells)),
        }
    }

    /// A path (and with `with_field`, in unit mode, the wave-number field).
    pub(super) fn plan(&self, s: (i64, i64), g: (i64, i64), with_field: bool) -> Result<Plan> {
        match self {
            MapPlanner::Unit(p) => p.plan(s, g, with_field),
            MapPlanner::Costmap { planner, .. } => {
                let c = planner.plan_from_robot_cell(s, g)?;
                Ok(Plan {
                    reachable: c.reachable,
                    length: (!c.path.is_empty()).then(|| c.path.len() as u32 - 1),
                    path: c.path,
                    labels: None,
                    backend: planner.backend_name(),
                })
            }
        }
    }
}

/// One map, replaced whole: a query holds its own Arc, so it never sees a half-updated grid.
pub(super) struct MapState {
    pub(super) planner: MapPlanner,
    pub(super) frame: CellFrame,
    pub(super) frame_id: String,
}

fn connectivity(p: &LeeParams) -> Result<Connectivity> {
    Connectivity::for_model(p.connectivity, p.cost_model == CostModel::Costmap)
}

/// The planner of a new map (cells within `robot_radius` of an obstacle blocked, the distance
/// transform on the backend), on the CPU when the device has no room and `fallback` allows.
fn planner(
    backend: &Backend,
    p: &LeeParams,
    fallback: bool,
    grid: Grid,
    resolution: f64,
) -> Result<MapPlanner> {
    if p.cost_model == CostModel::Costmap {
        let cp = p.cost_params();
        let values = inflation_values(backend, &grid, resolution, &cp)?;
        let planner = CostPlanner::new(backend, grid, &values, &cp)?;
        return Ok(MapPlanner::Costmap {
            planner: Box::new(planner),
            values,
        });
    }
    let grid = crate::lee::clearance::inflate(backend, grid, resolution, p.robot_radius)?;
    Ok(MapPlanner::Unit(Box::new(if fallback {
        Planner::with_cpu_fallback(backend, grid, p.planner_config())?
    } else {
        Planner::new(backend, grid, p.planner_config())?
    })))
}

/// A map's metres per cell: finite and positive.
fn check_resolution(field: &str, resolution: f32) -> Result<()> {
    if !(resolution.is_finite() && resolution > 0.0) {
        return Err(Error::invalid(
            field,
            format!("{resolution} is not positive"),
        ));
    }
    Ok(())
}

/// Empty maps, and maps above `max_cells` (before anything is allocated for them), are refused.
fn check_cells(p: &LeeParams, field: &str, width: u32, height: u32) -> Result<()> {
    let cells = width as u64 * height as u64;
    if cells == 0 {
        // An empty map would replace a useful one with one nothing can be planned on.
        return Err(Error::invalid(
            field,
            format!("{width} x {height} has no cells"),
        ));
    }
    if cells > p.max_cells {
        return Err(Error::invalid(
            field,
            format!(
                "{width} x {height} = {cells} cells is above max_cells {}",
                p.max_cells
            ),
        ));
    }
    Ok(())
}

pub(super) fn occupancy_state(
    backend: &Backend,
    p: &LeeParams,
    fallback: bool,
    map: OccupancyGrid,
) -> Result<MapState> {
    let i = &map.info;
    check_cells(p, "map.info.width x height", i.width, i.height)?;
    check_resolution("map.info.resolution", i.resolution)?;
    check_pose("map.info.origin", &i.origin)?;
    let grid = Grid::from_occupancy(
        i.width,
        i.height,
        &map.data,
        p.occupied_threshold,
        p.unknown_is_free,
        connectivity(p)?,
    )
    .map_err(|e| e.under("map."))?;
    let frame = CellFrame {
        origin: i.origin.clone(),
        resolution: i.resolution as f64,
        width: i.width,
        height: i.height,
    };
    Ok(MapState {
        planner: planner(backend, p, fallback, grid, frame.resolution)?,
        frame,
        frame_id: map.header.frame_id,
    })
}

/// A nav2 costmap (`costmap_raw`): in costmap mode its values are used as they come (nav2 has
/// inflated them); in unit mode its blocking values (>= 253, 255 unless unknown_is_free) are
/// the obstacles, and robot_radius applies as on any map.
pub(super) fn costmap_state(
    backend: &Backend,
    p: &LeeParams,
    fallback: bool,
    map: Costmap,
) -> Result<MapState> {
    let md = &map.metadata;
    check_cells(p, "costmap.metadata.size_x x size_y", md.size_x, md.size_y)?;
    check_resolution("costmap.metadata.resolution", md.resolution)?;
    check_pose("costmap.metadata.origin", &md.origin)?;
    let (w, h) = (md.size_x, md.size_y);
    let cells = w as u64 * h as u64;
    if map.data.len() as u64 != cells {
        return Err(Error::invalid(
            "costmap.data",
            format!(
                "length {} differs from size_x x size_y = {w} x {h} = {cells}",
                map.data.len()
            ),
        ));
    }
    let frame = CellFrame {
        origin: md.origin.clone(),
        resolution: md.resolution as f64,
        width: w,
        height: h,
    };
    let cp = p.cost_params();
    let planner = match p.cost_model {
        CostModel::Costmap => {
            let all_free = vec![0i8; map.data.len()];
            let grid = Grid::from_occupancy(w, h, &all_free, 101, true, connectivity(p)?)?;
            let planner = CostPlanner::new(backend, grid, &map.data, &cp)?;
            MapPlanner::Costmap {
                planner: Box::new(planner),
                values: map.data,
            }
        }
        CostModel::Unit => {
            let occ: Vec<i8> = map
                .data
                .iter()
                .map(|&v| if cp.blocks(v) { 100 } else { 0 })
                .collect();
            let grid = Grid::from_occupancy(w, h, &occ, 65, false, connectivity(p)?)?;
            planner(backend, p, fallback, grid, frame.resolution)?
        }
    };
    Ok(MapState {
        planner,
        frame,
        frame_id: map.header.frame_id,
    })
}

pub(super) fn elevation_state(
    backend: &Backend,
    p: &LeeParams,
    fallback: bool,
    map: GridMap,
) -> Result<MapState> {
    let (grid, frame) = grid_from_gridmap(&map, &p.layer, p.max_step as f32, connectivity(p)?)?;
    check_cells(p, "elevation_map.info.length", frame.width, frame.height)?;
    Ok(MapState {
        planner: planner(backend, p, fallback, grid, frame.resolution)?,
        frame,
        frame_id: map.header.frame_id,
    })
}

/// The `heightmap` parameter's Gazebo heightmap as the first map, in `heightmap_frame`.
pub(super) fn heightmap_state(
    backend: &Backend,
    p: &LeeParams,
    fallback: bool,
) -> Result<MapState> {
    let path = std::path::Path::new(&p.heightmap);
    let m =
        heightmap::load(path, p.heightmap_size()?, [0.0; 3]).map_err(|e| e.under("heightmap: "))?;
    check_cells(p, "heightmap", m.width, m.height)?;
    let grid = Grid::from_elevation(
        m.width,
        m.height,
        &m.world_rows(),
        p.max_step as f32,
        connectivity(p)?,
    )?;
    let (ox, oy) = m.origin_xy();
    let frame = CellFrame {
        origin: Pose {
            position: Point {
                x: ox,
                y: oy,
                z: m.pos[2],
            },
            orientation: Quaternion::identity(),
        },
        resolution: m.resolution(),
        width: m.width,
        height: m.height,
    };
    Ok(MapState {
        planner: planner(backend, p, fallback, grid, frame.resolution)?,
        frame,
        frame_id: p.heightmap_frame.clone(),
    })
}
