//! The planner server: nav2's side of a global planner, apart from the planner itself.
//!
//! It holds the current map's `GridPlanner` and answers queries on it as nav2's
//! planner_server does: the `~/get_plan` service (nav_msgs/srv/GetPlan), the
//! `compute_path_to_pose` and `compute_path_through_poses` actions (nav2_msgs, Humble's or
//! Jazzy's results), RViz's `start_pose` and `goal_pose` topics; ends brought into the map's
//! frame through `/tf` and `/tf_static` (a query without a start plans from the robot's pose),
//! moved within the tolerance where blocked, failures typed (`failure::Refusal`) and
//! answered with nav2's error codes; the lifecycle and bond that nav2's lifecycle_manager
//! drives. Out: `~/path`, `~/markers`, `~/distance_field` and, in costmap mode, `~/costmap`.
//! A node brings its maps (each built into a `MapState`) and its `Settings`; the Lee
//! planner (`nodes/lee_planner`) is such a node.

mod actions;
pub(crate) mod failure;
mod outputs;
mod plan;
mod planner;

pub use outputs::field_grid;
pub(crate) use plan::{Frames, Settings, SettingsFn};
pub(crate) use planner::{Ends, GridPlanner, MapState};

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use ros2_client::{Publisher, Subscription};

use crate::cancel::{self, CancelFlag};
use crate::error::{Error, Result};
use crate::nodes::lifecycle::{self, BondTiming, Lifecycle, Primary};
use crate::nodes::serve::serve;
use crate::nodes::subscribe::messages;
use crate::ros::action::ActionServer;
use crate::ros::distro::RosDistro;
use crate::ros::live_params::Live;
use crate::ros::msg::geometry_msgs::PoseStamped;
use crate::ros::msg::nav2_msgs::{
    humble, jazzy, ComputePathThroughPosesGoal, ComputePathToPoseGoal, EmptyFeedback, PlanResult,
};
use crate::ros::msg::nav_msgs::{GetPlan, GetPlanRequest, GetPlanResponse, OccupancyGrid, Path};
use crate::ros::msg::std_msgs::Header;
use crate::ros::msg::tf2_msgs::TFMessage;
use crate::ros::msg::visualization_msgs::MarkerArray;
use crate::ros::node_params::ServiceParams;
use crate::ros::service::ServiceServer;
use crate::ros::tf::TfBuffer;
use crate::ros::{qos, NodeContext, RosRuntime};
use crate::sync::lock;

use failure::Failure;
use outputs::{publish_made, stamped, Made, Outputs};
use plan::Query;

/// How a node sets its planner server up.
pub(crate) struct Setup {
    /// The node's name, for log lines.
    pub node: &'static str,
    pub distro: RosDistro,
    pub primary: Primary,
    pub bond: BondTiming,
    pub settings: SettingsFn,
    /// The node's service limits (deadline, pending bound) as they are now.
    pub limits: Live<ServiceParams>,
}

type Task = Pin<Box<dyn Future<Output = ()> + Send>>;
type Shared = Arc<Mutex<Option<Arc<MapState>>>>;

/// What every query needs: the current map, the transforms, the outputs.
pub(crate) struct Server {
    node: &'static str,
    /// Queries are answered only while active.
    life: Arc<Lifecycle>,
    state: Shared,
    /// A token each time a map becomes current: what a goal_pose that came first waits for.
    map_taken: (smol::channel::Sender<()>, smol::channel::Receiver<()>),
    tf: Arc<Mutex<TfBuffer>>,
    settings: SettingsFn,
    out: Arc<Outputs>,
}

impl Server {
    /// Makes `m` the current map (its costs out on ~/costmap first, in costmap mode).
    pub fn replace(&self, m: MapState) {
        self.out.publish_costmap(&m);
        tracing::info!(
            "{}: map {} x {} ({}) on {}",
            self.node,
            m.frame.width,
            m.frame.height,
            m.frame_id,
            m.planner.backend_name()
        );
        *lock(&self.state) = Some(Arc::new(m));
        // Full: a token is already waiting, which says the same.
        let _ = self.map_taken.0.try_send(());
    }

    fn has_map(&self) -> bool {
        lock(&self.state).is_some()
    }

    /// Plans `q` on the current map and queues the path (and the field when wanted) for its
    /// topics.
    async fn run(&self, q: Query, cancel: &CancelFlag) -> std::result::Result<Path, Failure> {
        if !self.life.is_active() {
            return Err(self.life.inactive_error(self.node).into());
        }
        let map = lock(&self.state)
            .clone()
            .ok_or_else(|| Error::invalid("map", "no map received yet"))?;
        let now = self.out.ctx.clock().now();
        let settings = (self.settings)();
        let placed = plan::place(&q, &map, &lock(&self.tf), &now, &settings.frames)?;
        let with_field = self.out.wants_field();
        let (m, node, smooth) = (map.clone(), self.node, settings.smooth);
        let planned = cancel::unblock(cancel, move || {
            Ok::<_, Error>(plan::solve(node, &m, &placed, with_field, smooth))
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
            tracing::warn!(
                "{}: the publishing task has stopped; ~/path not published",
                self.node
            );
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

/// The next goal_pose to plan. A goal that comes before the first map (a bag's or a
/// launch's map and goal published together, the map still being built) waits for that map
/// instead of being refused, as nav2's planner server waits for its costmap; a newer goal
/// replaces it while it waits, as it would replace its plan.
async fn next_goal(
    server: &Server,
    goals: &mut (impl futures::Stream<Item = PoseStamped> + Unpin),
) -> Option<PoseStamped> {
    let mut goal = goals.next().await?;
    let mut said = false;
    while !server.has_map() {
        if !said {
            let at = &goal.pose.position;
            tracing::info!(
                "{}: goal_pose ({}, {}) waits for the first map",
                server.node,
                at.x,
                at.y
            );
            said = true;
        }
        let newer = goals.next();
        let taken = server.map_taken.1.recv();
        futures::pin_mut!(taken);
        match futures::future::select(newer, taken).await {
            futures::future::Either::Left((Some(g), _)) => goal = g,
            futures::future::Either::Left((None, _)) => return None,
            // The map (or, with the sender gone, nothing more to wait for: run() says why).
            futures::future::Either::Right(_) => break,
        }
    }
    Some(goal)
}

/// Keeps `tf` up to date from one of `/tf`, `/tf_static`.
fn transforms(
    node: &'static str,
    sub: Subscription<TFMessage>,
    tf: Arc<Mutex<TfBuffer>>,
    topic: &'static str,
) -> impl Future<Output = ()> + Send {
    let is_static = topic == "/tf_static";
    async move {
        let s = messages(&sub, node, topic);
        futures::pin_mut!(s);
        while let Some(m) = s.next().await {
            let mut buffer = lock(&tf);
            for t in &m.transforms {
                if let Err(e) = buffer.insert(t, is_static) {
                    tracing::warn!("{node}: {topic}: {e}");
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

    /// Both servers' loops, planning with `server`.
    fn serve(self, server: &Arc<Server>, limits: &Live<ServiceParams>) -> Task {
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
                serve_one(x, server, TO_POSE, limits),
                serve_one(y, server, THROUGH_POSES, limits),
            ),
            ActionServers::Jazzy(x, y) => both(
                serve_one(x, server, TO_POSE, limits),
                serve_one(y, server, THROUGH_POSES, limits),
            ),
        }
    }
}

/// One action server's loop (`what`: its name), planning with `server`.
fn serve_one<G: actions::PlanGoal, R: PlanResult>(
    action: ActionServer<G, R, EmptyFeedback>,
    server: &Arc<Server>,
    what: &'static str,
    limits: &Live<ServiceParams>,
) -> impl Future<Output = ()> + Send + 'static {
    let planner = server.clone();
    let plan = move |q: Query, cancel: CancelFlag| {
        let s = planner.clone();
        async move { s.run(q, &cancel).await }
    };
    let (node, life, settings) = (server.node, server.life.clone(), server.settings.clone());
    actions::serve(action, node, life, what, settings, limits.clone(), plan)
}

/// A planner server's endpoints, declared on its node before the node is shared.
pub(crate) struct Endpoints {
    setup: Setup,
    start_sub: Subscription<PoseStamped>,
    goal_sub: Subscription<PoseStamped>,
    tf_sub: Subscription<TFMessage>,
    tf_static_sub: Subscription<TFMessage>,
    get_plan: ServiceServer<GetPlanRequest, GetPlanResponse>,
    path: Publisher<Path>,
    field: Publisher<OccupancyGrid>,
    markers: Publisher<MarkerArray>,
    costmap: Publisher<OccupancyGrid>,
    actions: ActionServers,
    life: Arc<Lifecycle>,
    lifecycle: Task,
}

impl Endpoints {
    /// Declares the server's topics, service, actions and lifecycle on `ctx`.
    pub fn declare(ctx: &mut NodeContext, setup: Setup) -> Result<Endpoints> {
        let start_sub = ctx.subscription("start_pose", qos::sensor())?;
        let goal_sub = ctx.subscription("goal_pose", qos::sensor())?;
        let tf_sub = ctx.subscription("/tf", qos::tf())?;
        let tf_static_sub = ctx.subscription("/tf_static", qos::tf_static())?;
        let get_plan = ctx.server::<GetPlan>("~/get_plan")?;
        let path = ctx.publisher("~/path", qos::result())?;
        let field = ctx.publisher("~/distance_field", qos::result())?;
        let markers = ctx.publisher("~/markers", qos::result())?;
        let costmap = ctx.publisher("~/costmap", qos::map())?;
        let actions = ActionServers::new(ctx, setup.distro)?;
        let (life, lifecycle) = lifecycle::manage(ctx, setup.primary, setup.bond)?;
        Ok(Endpoints {
            setup,
            start_sub,
            goal_sub,
            tf_sub,
            tf_static_sub,
            get_plan,
            path,
            field,
            markers,
            costmap,
            actions,
            life,
            lifecycle: Box::pin(lifecycle),
        })
    }

    /// The server over `ctx` (the node these endpoints were declared on), and the task that
    /// serves every endpoint until the node stops.
    pub fn start(self, rt: &RosRuntime, ctx: Arc<NodeContext>) -> (Arc<Server>, Task) {
        let Endpoints {
            setup,
            start_sub,
            goal_sub,
            tf_sub,
            tf_static_sub,
            get_plan,
            path,
            field,
            markers,
            costmap,
            actions,
            life,
            lifecycle,
        } = self;
        let node = setup.node;
        let (made_tx, made_rx) = smol::channel::bounded(8);
        let out = Arc::new(Outputs {
            node,
            path,
            field,
            markers,
            ctx,
            settings: setup.settings.clone(),
            published: made_tx,
            costmap,
        });
        let publishing = publish_made(out.clone(), made_rx);
        let tf = Arc::new(Mutex::new(TfBuffer::default()));
        let server = Arc::new(Server {
            node,
            life,
            state: Arc::new(Mutex::new(None)),
            map_taken: smol::channel::bounded(1),
            tf: tf.clone(),
            settings: setup.settings.clone(),
            out,
        });
        let actions = actions.serve(&server, &setup.limits);
        let last_start: Arc<Mutex<Option<PoseStamped>>> = Arc::new(Mutex::new(None));
        let starts = {
            let last_start = last_start.clone();
            async move {
                let s = messages(&start_sub, node, "start_pose");
                futures::pin_mut!(s);
                while let Some(p) = s.next().await {
                    *lock(&last_start) = Some(p);
                }
            }
        };
        let goals = {
            let server = server.clone();
            async move {
                let s = messages(&goal_sub, node, "goal_pose");
                futures::pin_mut!(s);
                while let Some(goal) = next_goal(&server, &mut s).await {
                    let start = lock(&last_start).clone();
                    if start.is_none() && lock(&server.tf).is_empty() {
                        tracing::error!(
                            "{node}: goal_pose received but no start_pose yet, and no transform to plan from the robot's pose"
                        );
                        continue;
                    }
                    // RViz goals are exact: no tolerance on this topic.
                    let q = Query {
                        start,
                        goals: vec![goal],
                        tolerance: 0.0,
                        final_approach: (server.settings)().final_approach,
                        empty_when_unreachable: true,
                    };
                    if let Err(e) = server.run(q, &CancelFlag::new()).await {
                        tracing::error!("{node}: goal_pose: {e}");
                    }
                }
            }
        };
        let requests = {
            let server = server.clone();
            serve(
                rt,
                get_plan,
                format!("{node}: ~/get_plan"),
                &setup.limits,
                move |req: GetPlanRequest, cancel: CancelFlag| {
                    let server = server.clone();
                    async move {
                        let start = if req.start.header.frame_id.is_empty() {
                            server.robot_or(Some(req.start))
                        } else {
                            Some(req.start)
                        };
                        let q = Query {
                            start,
                            goals: vec![req.goal],
                            tolerance: req.tolerance as f64,
                            final_approach: (server.settings)().final_approach,
                            empty_when_unreachable: true,
                        };
                        let plan = server.run(q, &cancel).await.map_err(|f| f.error)?;
                        Ok(GetPlanResponse { plan })
                    }
                },
            )
        };
        let tfs = futures::future::join(
            transforms(node, tf_sub, tf.clone(), "/tf"),
            transforms(node, tf_static_sub, tf, "/tf_static"),
        );
        let task = Box::pin(async move {
            let inputs = futures::future::join3(starts, goals, tfs);
            let served = futures::future::join3(requests, actions, publishing);
            futures::future::join3(inputs, served, lifecycle).await;
        });
        (server, task)
    }
}
