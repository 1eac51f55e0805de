//! The map the planner holds: built from each input (map, costmap, elevation_map, the
//! heightmap parameter), checked, inflated for the robot's radius, and put on the backend.

use crate::compute::Backend;
use crate::error::{Error, Result};
use crate::lee::costmap::CostModel;
use crate::lee::io::heightmap;
use crate::lee::{Connectivity, Grid, RobotPlanner};

use crate::nodes::grid_convert::{check_pose, grid_from_gridmap, CellFrame};
use crate::nodes::lee_planner::LeeParams;
use crate::nodes::planner_server::MapState;
use crate::ros::msg::geometry_msgs::{Point, Pose, Quaternion};
use crate::ros::msg::grid_map_msgs::GridMap;
use crate::ros::msg::nav2_msgs::Costmap;
use crate::ros::msg::nav_msgs::OccupancyGrid;

fn connectivity(p: &LeeParams) -> Result<Connectivity> {
    Connectivity::for_model(p.connectivity, p.cost_model == CostModel::Costmap)
}

/// The planner of a new map, on the CPU when the device has no room and `fallback` allows.
fn planner(
    backend: &Backend,
    p: &LeeParams,
    fallback: bool,
    grid: Grid,
    resolution: f64,
) -> Result<RobotPlanner> {
    RobotPlanner::new(backend, grid, resolution, &p.robot_config(fallback))
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
        planner: Box::new(planner(backend, p, fallback, grid, frame.resolution)?),
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
    let planner = RobotPlanner::from_costmap(
        backend,
        (w, h),
        map.data,
        frame.resolution,
        connectivity(p)?,
        &p.robot_config(fallback),
    )?;
    Ok(MapState {
        planner: Box::new(planner),
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
        planner: Box::new(planner(backend, p, fallback, grid, frame.resolution)?),
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
        planner: Box::new(planner(backend, p, fallback, grid, frame.resolution)?),
        frame,
        frame_id: p.heightmap_frame.clone(),
    })
}
