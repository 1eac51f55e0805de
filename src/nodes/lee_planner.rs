//! Node `lee_planner`: Lee wave paths on the latest map.
//!
//! In: `map` (nav_msgs/OccupancyGrid) or `elevation_map` (grid_map_msgs/GridMap, layer and
//! max_step from parameters), whichever came last; `start_pose` and `goal_pose`
//! (geometry_msgs/PoseStamped, as RViz's tools publish: a goal plans from the last start).
//! Service `~/get_plan` (nav_msgs/srv/GetPlan). Out: `~/path` (nav_msgs/Path, poses at cell
//! centres in the map frame) and `~/distance_field` (nav_msgs/OccupancyGrid on the map's cells:
//! wave number scaled to 0..100 of the largest reached one, -1 unreached).
//! GetPlan has no error field: a bad request gets an empty path and a log line naming the
//! field and value. Poses must be in the map's frame (an empty frame_id is taken as the map's).

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use ros2_client::{Publisher, Subscription};

use crate::cancel::{self, CancelFlag};
use crate::compute::Backend;
use crate::config::LeeParams;
use crate::error::{Error, Result};
use crate::lee::costmap::config::occupancy_value;
use crate::lee::costmap::{inflation_values, CostModel, CostPlanner};
use crate::lee::io::heightmap;
use crate::lee::Plan;
use crate::lee::{Connectivity, Grid, Planner, UNREACHED};
use crate::nodes::grid_convert::{check_pose, grid_from_gridmap, CellFrame};
use crate::nodes::markers;
use crate::nodes::serve::serve;
use crate::nodes::subscribe::messages;
use crate::ros::msg::geometry_msgs::{Point, Pose, PoseStamped, Quaternion};
use crate::ros::msg::grid_map_msgs::GridMap;
use crate::ros::msg::nav2_msgs::Costmap;
use crate::ros::msg::nav_msgs::{
    GetPlan, GetPlanRequest, GetPlanResponse, MapMetaData, OccupancyGrid, Path,
};
use crate::ros::msg::std_msgs::Header;
use crate::ros::msg::visualization_msgs::MarkerArray;
use crate::ros::{qos, NodeContext, RosRuntime};
use crate::sync::lock;

pub const NODE_NAME: &str = "lee_planner";

/// The planner of one map, by `cost_model`.
enum MapPlanner {
    /// Moves, as the seed (cells within robot_radius blocked).
    Unit(Box<Planner>),
    /// nav2's inflation costs (its cell values kept for ~/costmap), least total cost.
    Costmap {
        planner: Box<CostPlanner>,
        values: Vec<u8>,
    },
}

impl MapPlanner {
    fn backend_name(&self) -> &'static str {
        match self {
            MapPlanner::Unit(p) => p.backend_name(),
            MapPlanner::Costmap { planner, .. } => planner.backend_name(),
        }
    }

    /// Per cell: reachable from `start` (moves are symmetric, so also: can reach it).
    fn reachable_from(&self, start: (i64, i64)) -> Result<Vec<bool>> {
        Ok(match self {
            MapPlanner::Unit(p) => p
                .distance_field(start)?
                .into_iter()
                .map(|l| l != UNREACHED)
                .collect(),
            MapPlanner::Costmap { planner, .. } => planner
                .cost_field(start)?
                .into_iter()
                .map(|c| c != crate::lee::costmap::cpu::UNREACHED_COST)
                .collect(),
        })
    }

    /// A path (and with `with_field`, in unit mode, the wave-number field).
    fn plan(&self, s: (i64, i64), g: (i64, i64), with_field: bool) -> Result<Plan> {
        match self {
            MapPlanner::Unit(p) => p.plan(s, g, with_field),
            MapPlanner::Costmap { planner, .. } => {
                let c = planner.plan(s, g)?;
                Ok(Plan {
                    reachable: c.reachable,
                    length: (!c.path.is_empty()).then(|| c.path.len() as u32 - 1),
                    path: c.path,
                    labels: None,
                })
            }
        }
    }
}

/// One map, replaced whole: a query holds its own Arc, so it never sees a half-updated grid.
struct MapState {
    planner: MapPlanner,
    frame: CellFrame,
    frame_id: String,
}

type Shared = Arc<Mutex<Option<Arc<MapState>>>>;

struct Outputs {
    path: Publisher<Path>,
    field: Publisher<OccupancyGrid>,
    markers: Publisher<MarkerArray>,
    /// The node that owns the publishers: it knows how many readers `field` has.
    ctx: Arc<NodeContext>,
    /// `publish_distance_field`: the field with every plan even when nobody subscribes.
    always_field: bool,
    /// ~/costmap: the cell costs a costmap-mode map plans on (latched).
    costmap: Publisher<OccupancyGrid>,
}

impl Outputs {
    /// Whether a plan should compute and publish the whole distance field. Without a reader
    /// for it, a plan on the GPU descends on the device and downloads only the path (what
    /// BENCHMARKS.md's "field + path" times), not the width x height labels.
    fn wants_field(&self) -> bool {
        self.always_field || self.field.get_subscription_count(self.ctx.node()) > 0
    }
}

pub fn start(rt: &RosRuntime) -> Result<String> {
    let mut ctx = NodeContext::new(rt, NODE_NAME)?;
    let params: LeeParams = ctx.params()?;
    params.validate().map_err(|e| prefixed(&ctx, e))?;
    let limits = ctx.service_params()?;
    let backend = Backend::select(params.backend)?;
    let fq = ctx.fully_qualified_name();
    let state: Shared = Arc::new(Mutex::new(None));
    let map_sub: Subscription<OccupancyGrid> = ctx.subscription("map", qos::map())?;
    let elev_sub: Subscription<GridMap> = ctx.subscription("elevation_map", qos::map())?;
    let costmap_sub: Subscription<Costmap> = ctx.subscription("costmap", qos::map())?;
    let start_sub: Subscription<PoseStamped> = ctx.subscription("start_pose", qos::sensor())?;
    let goal_sub: Subscription<PoseStamped> = ctx.subscription("goal_pose", qos::sensor())?;
    let server = ctx.server::<GetPlan>("~/get_plan")?;
    let (path, field, markers, costmap) = (
        ctx.publisher("~/path", qos::result())?,
        ctx.publisher("~/distance_field", qos::result())?,
        ctx.publisher("~/markers", qos::result())?,
        ctx.publisher("~/costmap", qos::map())?,
    );
    let ctx = Arc::new(ctx);
    let out = Arc::new(Outputs {
        path,
        field,
        markers,
        ctx: ctx.clone(),
        always_field: params.publish_distance_field,
        costmap,
    });
    if !params.heightmap.is_empty() {
        // A bad heightmap stops the node at start: it was asked for by name.
        let m = heightmap_state(&backend, &params, limits.cpu_fallback)
            .map_err(|e| prefixed(&ctx, e))?;
        replace(&state, &out, m);
    }
    let params = Arc::new(params);
    let shutdown = rt.shutdown().clone();

    let maps = {
        let (state, params, backend) = (state.clone(), params.clone(), backend.clone());
        let out = out.clone();
        async move {
            let s = messages(&map_sub, NODE_NAME, "map");
            futures::pin_mut!(s);
            while let Some(map) = s.next().await {
                let (p, b) = (params.clone(), backend.clone());
                let fallback = limits.cpu_fallback;
                match smol::unblock(move || occupancy_state(&b, &p, fallback, map)).await {
                    Ok(m) => replace(&state, &out, m),
                    Err(e) => tracing::error!("{NODE_NAME}: map rejected: {e}"),
                }
            }
        }
    };
    let elevations = {
        let (state, params, backend) = (state.clone(), params.clone(), backend.clone());
        let out = out.clone();
        async move {
            let s = messages(&elev_sub, NODE_NAME, "elevation_map");
            futures::pin_mut!(s);
            while let Some(map) = s.next().await {
                let (p, b) = (params.clone(), backend.clone());
                let fallback = limits.cpu_fallback;
                match smol::unblock(move || elevation_state(&b, &p, fallback, map)).await {
                    Ok(m) => replace(&state, &out, m),
                    Err(e) => tracing::error!("{NODE_NAME}: elevation_map rejected: {e}"),
                }
            }
        }
    };
    let costmaps = {
        let (state, params, backend) = (state.clone(), params.clone(), backend.clone());
        let out = out.clone();
        async move {
            let s = messages(&costmap_sub, NODE_NAME, "costmap");
            futures::pin_mut!(s);
            while let Some(map) = s.next().await {
                let (p, b) = (params.clone(), backend.clone());
                let fallback = limits.cpu_fallback;
                match smol::unblock(move || costmap_state(&b, &p, fallback, map)).await {
                    Ok(m) => replace(&state, &out, m),
                    Err(e) => tracing::error!("{NODE_NAME}: costmap rejected: {e}"),
                }
            }
        }
    };
    let last_start: Arc<Mutex<Option<PoseStamped>>> = Arc::new(Mutex::new(None));
    let starts = {
        let last_start = last_start.clone();
        async move {
            let s = messages(&start_sub, NODE_NAME, "start_pose");
            futures::pin_mut!(s);
            while let Some(p) = s.next().await {
                *lock(&last_start) = Some(p);
            }
        }
    };
    let goals = {
        let (state, out) = (state.clone(), out.clone());
        async move {
            let s = messages(&goal_sub, NODE_NAME, "goal_pose");
            futures::pin_mut!(s);
            while let Some(goal) = s.next().await {
                let Some(start) = lock(&last_start).clone() else {
                    tracing::error!("{NODE_NAME}: goal_pose received but no start_pose yet");
                    continue;
                };
                let cancel = CancelFlag::new();
                if let Err(e) = solve_and_publish(&state, &out, start, goal, 0.0, &cancel).await {
                    tracing::error!("{NODE_NAME}: goal_pose: {e}");
                }
            }
        }
    };
    let requests = {
        let (state, out) = (state.clone(), out.clone());
        serve(
            rt,
            server,
            format!("{NODE_NAME}: ~/get_plan"),
            &limits,
            move |req: GetPlanRequest, cancel: CancelFlag| {
                let (state, out) = (state.clone(), out.clone());
                async move {
                    let tolerance = req.tolerance as f64;
                    let plan =
                        solve_and_publish(&state, &out, req.start, req.goal, tolerance, &cancel)
                            .await?;
                    Ok(GetPlanResponse { plan })
                }
            },
        )
    };
    rt.spawn(async move {
        let _ctx = ctx;
        let maps = futures::future::join(maps, costmaps);
        let all = futures::future::join5(maps, elevations, starts, goals, requests);
        futures::future::select(Box::pin(all), Box::pin(shutdown.wait())).await;
    });
    tracing::info!("{fq}: started");
    Ok(fq)
}

/// Makes `m` the current map; in costmap mode its cell costs go out on ~/costmap first, as
/// nav2's costmap publisher translates them.
fn replace(state: &Shared, out: &Outputs, m: MapState) {
    if let MapPlanner::Costmap { values, .. } = &m.planner {
        let header = Header {
            stamp: out.ctx.clock().now(),
            frame_id: m.frame_id.clone(),
        };
        let grid = OccupancyGrid {
            info: MapMetaData {
                map_load_time: header.stamp.clone(),
                resolution: m.frame.resolution as f32,
                width: m.frame.width,
                height: m.frame.height,
                origin: m.frame.origin.clone(),
            },
            header,
            data: values.iter().map(|&v| occupancy_value(v)).collect(),
        };
        if let Err(e) = out.costmap.publish(grid) {
            tracing::warn!("{NODE_NAME}: publishing ~/costmap failed: {e:?}");
        }
    }
    tracing::info!(
        "{NODE_NAME}: map {} x {} ({}) on {}",
        m.frame.width,
        m.frame.height,
        m.frame_id,
        m.planner.backend_name()
    );
    *lock(state) = Some(Arc::new(m));
}

fn connectivity(p: &LeeParams) -> Result<Connectivity> {
    Connectivity::from_number(p.connectivity)
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

fn occupancy_state(
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
    .map_err(|e| rename(e, "map."))?;
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
fn costmap_state(
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

fn elevation_state(
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
fn heightmap_state(backend: &Backend, p: &LeeParams, fallback: bool) -> Result<MapState> {
    let path = std::path::Path::new(&p.heightmap);
    let m = heightmap::load(path, p.heightmap_size()?, [0.0; 3])
        .map_err(|e| rename(e, "heightmap: "))?;
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

fn rename(e: Error, prefix: &str) -> Error {
    match e {
        Error::InvalidInput { field, reason } => Error::invalid(format!("{prefix}{field}"), reason),
        other => other,
    }
}

async fn solve_and_publish(
    state: &Shared,
    out: &Outputs,
    start: PoseStamped,
    goal: PoseStamped,
    tolerance: f64,
    cancel: &CancelFlag,
) -> Result<Path> {
    if !(tolerance.is_finite() && tolerance >= 0.0) {
        return Err(Error::invalid(
            "tolerance",
            format!("{tolerance} is not a finite non-negative number of metres"),
        ));
    }
    let map = lock(state)
        .clone()
        .ok_or_else(|| Error::invalid("map", "no map received yet"))?;
    for (what, p) in [("start", &start), ("goal", &goal)] {
        if !p.header.frame_id.is_empty() && p.header.frame_id != map.frame_id {
            return Err(Error::invalid(
                format!("{what}.header.frame_id"),
                format!(
                    "'{}' is not the map frame '{}' (no tf lookup here)",
                    p.header.frame_id, map.frame_id
                ),
            ));
        }
    }
    let s = map
        .frame
        .cell_of(&start.pose.position)
        .map_err(|e| rename(e, "start."))?;
    let g = map
        .frame
        .cell_of(&goal.pose.position)
        .map_err(|e| rename(e, "goal."))?;
    let m = map.clone();
    let with_field = out.wants_field();
    let goal_point = goal.pose.position.clone();
    let plan = cancel::unblock(cancel, move || {
        let first = m.planner.plan(s, g, with_field);
        let missed = match &first {
            Ok(p) => !p.reachable,
            Err(Error::InvalidInput { field, .. }) => field == "goal",
            Err(_) => false,
        };
        if tolerance == 0.0 || !missed {
            return first;
        }
        let near = nearest_reachable(&m, s, &goal_point, g, tolerance)?;
        let Some((cell, d)) = near else {
            return first.and_then(|_| {
                Err(Error::invalid(
                    "goal",
                    format!(
                        "no cell reachable from the start within tolerance {tolerance} m of ({}, {})",
                        goal_point.x, goal_point.y
                    ),
                ))
            });
        };
        tracing::info!(
            "{NODE_NAME}: goal cell ({}, {}) is blocked or unreachable; planning to ({}, {}), {d:.3} m from the goal (tolerance {tolerance} m)",
            g.0,
            g.1,
            cell.0,
            cell.1
        );
        m.planner.plan(s, cell, with_field)
    })
    .await?;
    // As nav2's planner server: the plan is stamped with the node clock (sim time under
    // use_sim_time), the moment it was made.
    let header = Header {
        stamp: out.ctx.clock().now(),
        frame_id: map.frame_id.clone(),
    };
    let path = Path {
        header: header.clone(),
        poses: plan
            .path
            .iter()
            .map(|&(x, y)| PoseStamped {
                header: header.clone(),
                pose: Pose {
                    position: map.frame.centre(x, y),
                    orientation: Quaternion::identity(),
                },
            })
            .collect(),
    };
    if let Err(e) = out.path.publish(path.clone()) {
        tracing::warn!("{NODE_NAME}: publishing ~/path failed: {e:?}");
    }
    let points: Vec<_> = path.poses.iter().map(|p| p.pose.position.clone()).collect();
    let width = 0.5 * map.frame.resolution;
    let marks = markers::path(&header, "lee_path", &points, markers::GREEN, width);
    if let Err(e) = out.markers.publish(marks) {
        tracing::warn!("{NODE_NAME}: publishing ~/markers failed: {e:?}");
    }
    if let Some(labels) = &plan.labels {
        let field = field_grid(&map.frame, header, labels);
        if let Err(e) = out.field.publish(field) {
            tracing::warn!("{NODE_NAME}: publishing ~/distance_field failed: {e:?}");
        }
    }
    Ok(path)
}

/// GetPlan's `tolerance`, as nav2 users expect it: the cell reachable from `s` whose centre is
/// nearest to the goal position, if it is within `tolerance` metres (ties: the smaller row,
/// then column). One field from the start answers it.
fn nearest_reachable(
    map: &MapState,
    s: (i64, i64),
    goal: &Point,
    g: (i64, i64),
    tolerance: f64,
) -> Result<Option<((i64, i64), f64)>> {
    let reach = map.planner.reachable_from(s)?;
    let f = &map.frame;
    let r = (tolerance / f.resolution).ceil() as i64 + 1;
    let (w, h) = (f.width as i64, f.height as i64);
    let mut best: Option<((i64, i64), f64)> = None;
    for y in (g.1 - r).max(0)..=(g.1 + r).min(h - 1) {
        for x in (g.0 - r).max(0)..=(g.0 + r).min(w - 1) {
            if !reach[(y * w + x) as usize] {
                continue;
            }
            let c = f.centre(x as u32, y as u32);
            let d = (c.x - goal.x).hypot(c.y - goal.y);
            if d <= tolerance && best.is_none_or(|(_, bd)| d < bd) {
                best = Some(((x, y), d));
            }
        }
    }
    Ok(best)
}

/// Wave numbers scaled to 0..100 of the largest reached one; -1 where unreached.
pub fn field_grid(frame: &CellFrame, header: Header, labels: &[u32]) -> OccupancyGrid {
    let max = labels
        .iter()
        .copied()
        .filter(|&l| l != UNREACHED)
        .max()
        .unwrap_or(0)
        .max(1) as u64;
    OccupancyGrid {
        info: MapMetaData {
            map_load_time: header.stamp.clone(),
            resolution: frame.resolution as f32,
            width: frame.width,
            height: frame.height,
            origin: frame.origin.clone(),
        },
        header,
        data: labels
            .iter()
            .map(|&l| {
                if l == UNREACHED {
                    -1
                } else {
                    ((l as u64 * 100 + max / 2) / max) as i8
                }
            })
            .collect(),
    }
}

fn prefixed(ctx: &NodeContext, e: Error) -> Error {
    rename(e, &format!("{}.", ctx.fully_qualified_name()))
}
