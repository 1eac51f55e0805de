//! Node `lee_planner`: Lee wave paths on the latest map, as a nav2 global planner.
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

mod actions;
mod maps;
pub mod params;
mod plan;
mod planner;

pub use params::{LeeParams, LEE_GPU_PRIORITY, MAX_VIAPOINTS, NODE_NAME};

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use crate::ros::action::ActionServer;
use futures::StreamExt;
use ros2_client::{Publisher, Subscription};

use crate::cancel::{self, CancelFlag};
use crate::compute::{warmup, Backend};
use crate::error::{Error, Result};
use crate::lee::costmap::config::occupancy_value;
use crate::lee::UNREACHED;
use crate::nodes::grid_convert::CellFrame;
use crate::nodes::latched;
use crate::nodes::lifecycle::{self, BondTiming, Lifecycle, Primary};
use crate::nodes::markers;
use crate::nodes::serve::serve;
use crate::nodes::subscribe::messages;
use crate::ros::distro::RosDistro;
use crate::ros::live_params::{Dynamic, Live, Range};
use crate::ros::msg::geometry_msgs::{Pose, PoseStamped};
use crate::ros::msg::grid_map_msgs::GridMap;
use crate::ros::msg::nav2_msgs::{
    humble, jazzy, ComputePathThroughPosesGoal, ComputePathToPoseGoal, Costmap, EmptyFeedback,
};
use crate::ros::msg::nav_msgs::{
    GetPlan, GetPlanRequest, GetPlanResponse, MapMetaData, OccupancyGrid, Path,
};
use crate::ros::msg::std_msgs::Header;
use crate::ros::msg::tf2_msgs::TFMessage;
use crate::ros::msg::visualization_msgs::MarkerArray;
use crate::ros::node_params::ServiceParams;
use crate::ros::tf::TfBuffer;
use crate::ros::{qos, NodeContext, RosRuntime};
use crate::sync::lock;

use maps::{costmap_state, elevation_state, heightmap_state, occupancy_state, MapState};
use plan::{Failure, Frames, Query};

type Shared = Arc<Mutex<Option<Arc<MapState>>>>;
type Task = Pin<Box<dyn Future<Output = ()> + Send>>;

struct Outputs {
    path: Publisher<Path>,
    field: Publisher<OccupancyGrid>,
    markers: Publisher<MarkerArray>,
    /// The node that owns the publishers: it knows how many readers `field` has.
    ctx: Arc<NodeContext>,
    /// `publish_distance_field` (dynamic): the field with every plan even when nobody
    /// subscribes.
    params: Live<LeeParams>,
    /// Plans on their way to ~/path, ~/markers and ~/distance_field, in the order they were
    /// made: a response does not wait for those messages (a long path is hundreds of KB of DDS
    /// fragments, the field a byte per cell).
    published: smol::channel::Sender<Made>,
    /// ~/costmap: the cell costs a costmap-mode map plans on (latched).
    costmap: Publisher<OccupancyGrid>,
}

impl Outputs {
    /// Whether a plan should compute and publish the whole distance field. Without a reader
    /// for it, a plan on the GPU descends on the device and downloads only the path (what
    /// BENCHMARKS.md's "field + path" times), not the width x height labels.
    fn wants_field(&self) -> bool {
        self.params.get().publish_distance_field
            || self.field.get_subscription_count(self.ctx.node()) > 0
    }
}

/// A plan as its topics carry it: the header and poses of its path, the field when wanted,
/// the map cells it is on. The poses, not a stamped copy of the answer's path: a pose is
/// copied in one piece, a PoseStamped's frame id is an allocation each.
struct Made {
    header: Header,
    poses: Vec<Pose>,
    labels: Option<Vec<u32>>,
    frame: CellFrame,
}

/// `poses` as a nav_msgs/Path, every pose with the path's header (as nav2's planners stamp
/// them).
fn stamped(header: &Header, poses: &[Pose]) -> Path {
    Path {
        header: header.clone(),
        poses: poses
            .iter()
            .map(|pose| PoseStamped {
                header: header.clone(),
                pose: pose.clone(),
            })
            .collect(),
    }
}

/// Publishes each plan on ~/path, ~/markers and (with its field) ~/distance_field, in order,
/// off the request's way, on each topic once it has a reader (`latched`): while one has
/// readers every plan goes out on it, as nav2's planner server publishes each (the channel is
/// bounded, so a publisher that falls behind slows the planning down instead of growing a
/// backlog); while it has none only the latest plan is held for it.
async fn publish_made(out: Arc<Outputs>, made: smol::channel::Receiver<Made>) {
    let plans = made.map(|m| {
        let field = m.labels.is_some();
        (m, [true, true, field])
    });
    let topics: [&dyn latched::Topic; 3] = [&out.path, &out.markers, &out.field];
    latched::publish_when_read(out.ctx.node(), topics, plans, |m, now| {
        let out = out.clone();
        smol::unblock(move || publish(&out, &m, now))
    })
    .await;
}

/// `topics`: whether to publish on ~/path, ~/markers, ~/distance_field.
fn publish(out: &Outputs, m: &Made, topics: [bool; 3]) {
    let header = &m.header;
    if topics[0] {
        if let Err(e) = out.path.publish(stamped(header, &m.poses)) {
            tracing::warn!("{NODE_NAME}: publishing ~/path failed: {e:?}");
        }
    }
    if topics[1] {
        let points: Vec<_> = m.poses.iter().map(|p| p.position.clone()).collect();
        let width = 0.5 * m.frame.resolution;
        let marks = markers::path(header, "lee_path", &points, markers::GREEN, width);
        if let Err(e) = out.markers.publish(marks) {
            tracing::warn!("{NODE_NAME}: publishing ~/markers failed: {e:?}");
        }
    }
    if let (true, Some(labels)) = (topics[2], &m.labels) {
        let field = field_grid(&m.frame, header.clone(), labels);
        if let Err(e) = out.field.publish(field) {
            tracing::warn!("{NODE_NAME}: publishing ~/distance_field failed: {e:?}");
        }
    }
}

/// What every query needs: the current map, the transforms, the outputs.
struct Lee {
    /// Queries are answered only while active.
    life: Arc<Lifecycle>,
    state: Shared,
    tf: Arc<Mutex<TfBuffer>>,
    /// The TF parameters (`transform_tolerance` is dynamic) are read per query.
    params: Live<LeeParams>,
    out: Arc<Outputs>,
}

impl Lee {
    /// Plans `q` on the current map and queues the path (and the field when wanted) for its
    /// topics.
    async fn run(&self, q: Query, cancel: &CancelFlag) -> std::result::Result<Path, Failure> {
        if !self.life.is_active() {
            return Err(self.life.inactive_error(NODE_NAME).into());
        }
        let map = lock(&self.state)
            .clone()
            .ok_or_else(|| Error::invalid("map", "no map received yet"))?;
        let now = self.out.ctx.clock().now();
        let frames = Frames::of(&self.params.get());
        let placed = plan::place(&q, &map, &lock(&self.tf), &now, &frames)?;
        let with_field = self.out.wants_field();
        let smooth = {
            let p = self.params.get();
            p.path.smooth(p.cost_model)
        };
        let m = map.clone();
        let planned = cancel::unblock(cancel, move || {
            Ok::<_, Error>(plan::solve(&m, &placed, with_field, smooth))
        })
        .await??;
        self.out.ctx.work().record(planned.backend);
        // Nobody waits for a cancelled plan: it is not published either.
        cancel.check()?;
        // As nav2's planner server: the plan is stamped with the node clock (sim time under
        // use_sim_time), the moment it was made.
        let header = Header {
            stamp: self.out.ctx.clock().now(),
            frame_id: map.frame_id.clone(),
        };
        let path = stamped(&header, &planned.poses);
        let made = Made {
            header,
            poses: planned.poses,
            labels: planned.labels,
            frame: map.frame.clone(),
        };
        if self.out.published.send(made).await.is_err() {
            tracing::warn!("{NODE_NAME}: the publishing task has stopped; ~/path not published");
        }
        Ok(path)
    }

    /// The start a query without one of its own uses: the robot's pose once TF has spoken,
    /// else `fallback` (the start as given, in the map's frame: the meaning before TF).
    fn robot_or(&self, fallback: Option<PoseStamped>) -> Option<PoseStamped> {
        if lock(&self.tf).is_empty() {
            fallback
        } else {
            None
        }
    }
}

/// Keeps `tf` up to date from one of `/tf`, `/tf_static`.
fn transforms(
    sub: Subscription<TFMessage>,
    tf: Arc<Mutex<TfBuffer>>,
    topic: &'static str,
) -> impl Future<Output = ()> + Send {
    let is_static = topic == "/tf_static";
    async move {
        let s = messages(&sub, NODE_NAME, topic);
        futures::pin_mut!(s);
        while let Some(m) = s.next().await {
            let mut buffer = lock(&tf);
            for t in &m.transforms {
                if let Err(e) = buffer.insert(t, is_static) {
                    tracing::warn!("{NODE_NAME}: {topic}: {e}");
                }
            }
        }
    }
}

type ToPose<R> = ActionServer<ComputePathToPoseGoal, R, EmptyFeedback>;
type ThroughPoses<R> = ActionServer<ComputePathThroughPosesGoal, R, EmptyFeedback>;

/// nav2's two planner actions, with the results of one distro.
enum ActionServers {
    Humble(
        ToPose<humble::ComputePathToPoseResult>,
        ThroughPoses<humble::ComputePathThroughPosesResult>,
    ),
    Jazzy(
        ToPose<jazzy::ComputePathToPoseResult>,
        ThroughPoses<jazzy::ComputePathThroughPosesResult>,
    ),
}

const TO_POSE: &str = "compute_path_to_pose";
const THROUGH_POSES: &str = "compute_path_through_poses";

impl ActionServers {
    fn new(ctx: &mut NodeContext, distro: RosDistro) -> Result<ActionServers> {
        let (pkg, a, b) = ("nav2_msgs", "ComputePathToPose", "ComputePathThroughPoses");
        Ok(match distro {
            RosDistro::Humble => ActionServers::Humble(
                ActionServer::new(ctx, TO_POSE, pkg, a)?,
                ActionServer::new(ctx, THROUGH_POSES, pkg, b)?,
            ),
            RosDistro::Jazzy => ActionServers::Jazzy(
                ActionServer::new(ctx, TO_POSE, pkg, a)?,
                ActionServer::new(ctx, THROUGH_POSES, pkg, b)?,
            ),
        })
    }

    /// Both servers' loops, planning with `lee`.
    fn serve(self, lee: &Arc<Lee>, limits: &Live<ServiceParams>) -> Task {
        let ends = lee.params.clone();
        let runner = |lee: Arc<Lee>| {
            move |q: Query, cancel: CancelFlag| {
                let lee = lee.clone();
                async move { lee.run(q, &cancel).await }
            }
        };
        fn both(
            a: impl Future<Output = ()> + Send + 'static,
            b: impl Future<Output = ()> + Send + 'static,
        ) -> Task {
            Box::pin(async move {
                futures::future::join(a, b).await;
            })
        }
        match self {
            ActionServers::Humble(x, y) => both(
                actions::serve(
                    x,
                    lee.life.clone(),
                    TO_POSE,
                    ends.clone(),
                    limits.clone(),
                    runner(lee.clone()),
                ),
                actions::serve(
                    y,
                    lee.life.clone(),
                    THROUGH_POSES,
                    ends.clone(),
                    limits.clone(),
                    runner(lee.clone()),
                ),
            ),
            ActionServers::Jazzy(x, y) => both(
                actions::serve(
                    x,
                    lee.life.clone(),
                    TO_POSE,
                    ends.clone(),
                    limits.clone(),
                    runner(lee.clone()),
                ),
                actions::serve(
                    y,
                    lee.life.clone(),
                    THROUGH_POSES,
                    ends.clone(),
                    limits.clone(),
                    runner(lee.clone()),
                ),
            ),
        }
    }
}

/// The parameters `ros2 param set` changes while the node runs (as NavFn's dynamic
/// parameters: `tolerance`, `use_final_approach_orientation`); the map-building ones apply to
/// the maps of a node started with them.
pub const DYNAMIC: &[Dynamic] = &[
    Dynamic {
        key: "tolerance",
        range: Range::Float(0.0, f64::MAX),
    },
    Dynamic {
        key: "use_final_approach_orientation",
        range: Range::Any,
    },
    Dynamic {
        key: "transform_tolerance",
        range: Range::Float(0.0, f64::MAX),
    },
    Dynamic {
        key: "publish_distance_field",
        range: Range::Any,
    },
    Dynamic {
        key: "path",
        range: Range::Any,
    },
    Dynamic {
        key: "max_viapoints",
        range: Range::Integer(1, crate::nodes::lee_planner::MAX_VIAPOINTS as i64),
    },
];

pub fn start(rt: &RosRuntime) -> Result<String> {
    let defaults = crate::ros::node_params::declared_defaults::<LeeParams>(true);
    let mut ctx = NodeContext::with_params(rt, NODE_NAME, defaults, DYNAMIC)?;
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
    let state: Shared = Arc::new(Mutex::new(None));
    let map_sub: Subscription<OccupancyGrid> = ctx.subscription("map", qos::map())?;
    let elev_sub: Subscription<GridMap> = ctx.subscription("elevation_map", qos::map())?;
    let costmap_sub: Subscription<Costmap> = ctx.subscription("costmap", qos::map())?;
    let start_sub: Subscription<PoseStamped> = ctx.subscription("start_pose", qos::sensor())?;
    let goal_sub: Subscription<PoseStamped> = ctx.subscription("goal_pose", qos::sensor())?;
    let tf_sub: Subscription<TFMessage> = ctx.subscription("/tf", qos::tf())?;
    let tf_static_sub: Subscription<TFMessage> =
        ctx.subscription("/tf_static", qos::tf_static())?;
    let server = ctx.server::<GetPlan>("~/get_plan")?;
    let (path, field, markers, costmap) = (
        ctx.publisher("~/path", qos::result())?,
        ctx.publisher("~/distance_field", qos::result())?,
        ctx.publisher("~/markers", qos::result())?,
        ctx.publisher("~/costmap", qos::map())?,
    );
    let tf = Arc::new(Mutex::new(TfBuffer::default()));
    let action_servers = ActionServers::new(&mut ctx, crate::ros::distro::current())?;
    let (life, lifecycle) = lifecycle::manage(
        &mut ctx,
        if params.start_active {
            Primary::Active
        } else {
            Primary::Unconfigured
        },
        BondTiming {
            heartbeat_period: params.bond_heartbeat_period,
            timeout: params.bond_timeout,
        },
    )?;
    let ctx = Arc::new(ctx);
    let (made_tx, made_rx) = smol::channel::bounded(8);
    let out = Arc::new(Outputs {
        path,
        field,
        markers,
        ctx: ctx.clone(),
        params: live.clone(),
        published: made_tx,
        costmap,
    });
    let publishing = publish_made(out.clone(), made_rx);
    if !params.heightmap.is_empty() {
        // A bad heightmap stops the node at start: it was asked for by name.
        let m = heightmap_state(&backend, &params, cpu_fallback).map_err(|e| prefixed(&ctx, e))?;
        replace(&state, &out, m);
    }
    let lee = Arc::new(Lee {
        life,
        state: state.clone(),
        tf: tf.clone(),
        params: live.clone(),
        out: out.clone(),
    });
    let actions = action_servers.serve(&lee, &live_limits);
    let params = Arc::new(params);
    let shutdown = rt.shutdown().clone();

    // Each map input: decoded, built on a blocking thread, then swapped in whole.
    macro_rules! map_input {
        ($sub:expr, $topic:literal, $build:ident) => {{
            let (state, params, backend, out) =
                (state.clone(), params.clone(), backend.clone(), out.clone());
            let sub = $sub;
            async move {
                let s = messages(&sub, NODE_NAME, $topic);
                futures::pin_mut!(s);
                while let Some(map) = s.next().await {
                    let (p, b) = (params.clone(), backend.clone());
                    let fallback = cpu_fallback;
                    match smol::unblock(move || $build(&b, &p, fallback, map)).await {
                        Ok(m) => replace(&state, &out, m),
                        Err(e) => tracing::error!("{NODE_NAME}: {} rejected: {e}", $topic),
                    }
                }
            }
        }};
    }
    let maps = map_input!(map_sub, "map", occupancy_state);
    let elevations = map_input!(elev_sub, "elevation_map", elevation_state);
    let costmaps = map_input!(costmap_sub, "costmap", costmap_state);
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
        let lee = lee.clone();
        async move {
            let s = messages(&goal_sub, NODE_NAME, "goal_pose");
            futures::pin_mut!(s);
            while let Some(goal) = s.next().await {
                let start = lock(&last_start).clone();
                if start.is_none() && lock(&lee.tf).is_empty() {
                    tracing::error!(
                        "{NODE_NAME}: goal_pose received but no start_pose yet, and no transform to plan from the robot's pose"
                    );
                    continue;
                }
                // RViz goals are exact: no tolerance on this topic.
                let q = Query {
                    start,
                    goals: vec![goal],
                    tolerance: 0.0,
                    final_approach: lee.params.get().use_final_approach_orientation,
                    empty_when_unreachable: true,
                };
                if let Err(e) = lee.run(q, &CancelFlag::new()).await {
                    tracing::error!("{NODE_NAME}: goal_pose: {e}");
                }
            }
        }
    };
    let requests = {
        let lee = lee.clone();
        serve(
            rt,
            server,
            format!("{NODE_NAME}: ~/get_plan"),
            &live_limits,
            move |req: GetPlanRequest, cancel: CancelFlag| {
                let lee = lee.clone();
                async move {
                    let start = if req.start.header.frame_id.is_empty() {
                        lee.robot_or(Some(req.start))
                    } else {
                        Some(req.start)
                    };
                    let q = Query {
                        start,
                        goals: vec![req.goal],
                        tolerance: req.tolerance as f64,
                        final_approach: lee.params.get().use_final_approach_orientation,
                        empty_when_unreachable: true,
                    };
                    let plan = lee.run(q, &cancel).await.map_err(|f| f.error)?;
                    Ok(GetPlanResponse { plan })
                }
            },
        )
    };
    let tfs = futures::future::join(
        transforms(tf_sub, tf.clone(), "/tf"),
        transforms(tf_static_sub, tf, "/tf_static"),
    );
    rt.spawn(async move {
        let _ctx = ctx;
        let maps = futures::future::join3(maps, costmaps, elevations);
        let inputs = futures::future::join3(starts, goals, tfs);
        let served = futures::future::join3(requests, actions, publishing);
        let all = futures::future::join4(maps, inputs, served, lifecycle);
        futures::future::select(Box::pin(all), Box::pin(shutdown.wait())).await;
    });
    tracing::info!("{fq}: started");
    Ok(fq)
}

/// Makes `m` the current map; in costmap mode its cell costs go out on ~/costmap first, as
/// nav2's costmap publisher translates them.
fn replace(state: &Shared, out: &Outputs, m: MapState) {
    if let Some(values) = m.planner.cost_values() {
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
    e.under(format!("{}.", ctx.fully_qualified_name()))
}
