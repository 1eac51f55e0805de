//! Node `lee_planner`: Lee wave paths on the latest map, as a nav2 global planner: the maps
//! built into a [`crate::lee::RobotPlanner`] here, everything nav2 sees of a planner in
//! [`crate::nodes::planner_server`].
//!
//! In: `map` (nav_msgs/OccupancyGrid), `costmap` (nav2_msgs/Costmap, nav2's `costmap_raw`) or
//! `elevation_map` (grid_map_msgs/GridMap, layer and max_step from parameters), whichever came
//! last; `/tf` and `/tf_static` (the robot's pose, and poses in other frames); `start_pose`
//! and `goal_pose` (geometry_msgs/PoseStamped, as RViz's tools publish: a goal plans from the
//! last start, or without one from the robot's pose).
//! Service `~/get_plan` (nav_msgs/srv/GetPlan: a start with an empty frame_id is the robot's
//! pose once any transform has arrived; before that, a position in the map's frame). Actions
//! `compute_path_to_pose` and `compute_path_through_poses` (nav2_msgs, Humble's or Jazzy's
//! results by `ros_distro`). Out: `~/path` (nav_msgs/Path, poses at cell centres in the map
//! frame, each facing the next), `~/distance_field` (nav_msgs/OccupancyGrid on the map's
//! cells: wave number scaled to 0..100 of the largest reached one, -1 unreached) and, in
//! costmap mode, `~/costmap` (the costs planned on).
//! GetPlan has no error field: a bad request gets an empty path and a log line naming the
//! field and value; the actions answer with nav2's error codes.

mod grid_planner;
mod maps;
pub mod params;

pub use crate::nodes::planner_server::field_grid;
pub use params::{LeeParams, LEE_GPU_PRIORITY, MAX_VIAPOINTS, NODE_NAME};

use std::sync::Arc;

use futures::StreamExt;
use ros2_client::Subscription;

use crate::compute::{warmup, Backend};
use crate::error::{Error, Result};
use crate::nodes::lifecycle::{BondTiming, Primary};
use crate::nodes::planner_server::{Endpoints, Frames, Settings, Setup};
use crate::nodes::subscribe::messages;
use crate::ros::live_params::Live;
use crate::ros::msg::grid_map_msgs::GridMap;
use crate::ros::msg::nav2_msgs::Costmap;
use crate::ros::msg::nav_msgs::OccupancyGrid;
use crate::ros::node_params::ServiceParams;
use crate::ros::{qos, NodeContext, RosRuntime};

use maps::{costmap_state, elevation_state, heightmap_state, occupancy_state};

/// The planner server's settings from the node's parameters as they are now.
fn settings(p: &LeeParams) -> Settings {
    Settings {
        frames: Frames {
            global_frame: p.global_frame.clone(),
            robot_base_frame: p.robot_base_frame.clone(),
            transform_tolerance: p.transform_tolerance,
        },
        tolerance: p.tolerance,
        final_approach: p.use_final_approach_orientation,
        max_viapoints: p.max_viapoints,
        publish_distance_field: p.publish_distance_field,
        smooth: p.path.smooth(p.cost_model),
    }
}

pub fn start(rt: &RosRuntime) -> Result<String> {
    let defaults = crate::ros::node_params::declared_defaults::<LeeParams>(true);
    let mut ctx = NodeContext::with_params(rt, NODE_NAME, defaults, params::PARAMS)?;
    let params: LeeParams = ctx.params()?;
    params.validate().map_err(|e| prefixed(&ctx, e))?;
    let live: Live<LeeParams> = ctx.live()?;
    // The service keys as they are now (`cpu_fallback` is read at start).
    let live_limits = ctx.live::<ServiceParams>()?;
    let cpu_fallback = live_limits.get().cpu_fallback;
    let backend = Backend::select(params.backend)?.for_node(params.gpu_priority)?;
    let fq = ctx.fully_qualified_name();
    warmup::spawn(
        &backend,
        &fq,
        [
            crate::lee::gpu::modules(),
            crate::lee::costmap::gpu::modules(),
            crate::lee::clearance::gpu::modules(),
        ]
        .concat(),
    );
    let map_sub: Subscription<OccupancyGrid> = ctx.subscription("map", qos::map())?;
    let elev_sub: Subscription<GridMap> = ctx.subscription("elevation_map", qos::map())?;
    let costmap_sub: Subscription<Costmap> = ctx.subscription("costmap", qos::map())?;
    let endpoints = Endpoints::declare(
        &mut ctx,
        Setup {
            node: NODE_NAME,
            distro: crate::ros::distro::current(),
            primary: if params.start_active {
                Primary::Active
            } else {
                Primary::Unconfigured
            },
            bond: BondTiming {
                heartbeat_period: params.bond_heartbeat_period,
                timeout: params.bond_timeout,
            },
            settings: Arc::new(move || settings(&live.get())),
            limits: live_limits,
        },
    )?;
    let ctx = Arc::new(ctx);
    let (server, serving) = endpoints.start(rt, ctx.clone());
    if !params.heightmap.is_empty() {
        // A bad heightmap stops the node at start: it was asked for by name.
        let m = heightmap_state(&backend, &params, cpu_fallback).map_err(|e| prefixed(&ctx, e))?;
        server.replace(m);
    }
    let params = Arc::new(params);
    let shutdown = rt.shutdown().clone();

    // Each map input: decoded, built on a blocking thread, then swapped in whole.
    macro_rules! map_input {
        ($sub:expr, $topic:literal, $build:ident) => {{
            let (server, params, backend) = (server.clone(), params.clone(), backend.clone());
            let sub = $sub;
            async move {
                let s = messages(&sub, NODE_NAME, $topic);
                futures::pin_mut!(s);
                while let Some(map) = s.next().await {
                    let (p, b) = (params.clone(), backend.clone());
                    let fallback = cpu_fallback;
                    match smol::unblock(move || $build(&b, &p, fallback, map)).await {
                        Ok(m) => server.replace(m),
                        Err(e) => tracing::error!("{NODE_NAME}: {} rejected: {e}", $topic),
                    }
                }
            }
        }};
    }
    let maps = map_input!(map_sub, "map", occupancy_state);
    let elevations = map_input!(elev_sub, "elevation_map", elevation_state);
    let costmaps = map_input!(costmap_sub, "costmap", costmap_state);
    rt.spawn(async move {
        let _ctx = ctx;
        let maps = futures::future::join3(maps, costmaps, elevations);
        let all = futures::future::join(maps, serving);
        futures::future::select(Box::pin(all), Box::pin(shutdown.wait())).await;
    });
    tracing::info!("{fq}: started");
    Ok(fq)
}

fn prefixed(ctx: &NodeContext, e: Error) -> Error {
    e.under(format!("{}.", ctx.fully_qualified_name()))
}
