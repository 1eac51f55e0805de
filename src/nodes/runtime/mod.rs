//! Node `gpu_planning`: the process's own node. Publishes `~/status` (backend, device, memory,
//! every node this process runs, and a summary of the last `map`), serves `~/get_status`. It proves the
//! ROS runtime end to end before any algorithm node exists, and stays useful as a health topic.

pub mod params;

pub use params::RuntimeParams;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use ros2_client::{Publisher, Subscription};

use crate::ros::ServiceServer;

use crate::compute::Backend;
use crate::error::{Error, Result};
use crate::nodes::map_summary;
use crate::nodes::subscribe::messages;
use crate::ros::msg::gpu_planning_msgs::{GetStatus, GetStatusResponse, RuntimeStatus};
use crate::ros::msg::nav_msgs::OccupancyGrid;
use crate::ros::msg::std_msgs::Header;
use crate::ros::Clock;
use crate::ros::{qos, NodeContext, RosRuntime};

pub const NODE_NAME: &str = "gpu_planning";

struct State {
    status: RuntimeStatus,
    /// Every node of this process's runtime (filled as they start).
    nodes: Arc<Mutex<Vec<String>>>,
    clock: Clock,
    backend: Backend,
    started: Instant,
    params: RuntimeParams,
}

impl State {
    fn snapshot(&mut self, refresh_memory: bool) -> RuntimeStatus {
        if refresh_memory {
            if let Backend::Cuda(rt) = &self.backend {
                if let Ok((free, _)) = rt.memory() {
                    self.status.device_memory_free = free as u64;
                }
            }
        }
        self.status.nodes = crate::sync::lock(&self.nodes).clone();
        self.status.header.stamp = self.clock.now();
        self.status.uptime_s = self.started.elapsed().as_secs_f64();
        self.status.clone()
    }

    fn take_map(&mut self, map: &OccupancyGrid) -> Result<()> {
        let s = map_summary::summarise(map, self.params.occupied_threshold)?;
        let st = &mut self.status;
        st.maps_received += 1;
        st.map_header = map.header.clone();
        st.map_width = map.info.width;
        st.map_height = map.info.height;
        st.map_resolution = map.info.resolution;
        st.map_free = s.free;
        st.map_occupied = s.occupied;
        st.map_unknown = s.unknown;
        st.map_checksum = s.checksum;
        Ok(())
    }
}

/// Creates the node and spawns its tasks; returns its fully qualified name.
pub fn start(rt: &RosRuntime) -> Result<String> {
    let defaults =
        crate::ros::node_params::declared_defaults::<crate::nodes::runtime::RuntimeParams>(false);
    let mut ctx = NodeContext::with_params(rt, NODE_NAME, defaults, params::PARAMS)?;
    let params: RuntimeParams = ctx.params()?;
    params.validate().map_err(|e| prefix(&ctx, e))?;
    let backend = Backend::select(params.backend)?;
    let fq = ctx.fully_qualified_name();

    let mut status = RuntimeStatus {
        header: Header {
            stamp: ctx.clock().now(),
            frame_id: String::new(),
        },
        backend: backend.name().into(),
        nodes: vec![fq.clone()],
        ..Default::default()
    };
    match &backend {
        Backend::Cuda(cuda) => {
            let info = cuda.info();
            status.device = info.name.clone();
            status.compute_capability = format!(
                "{}.{}",
                info.compute_capability.0, info.compute_capability.1
            );
            status.device_memory_total = info.total_memory as u64;
            status.device_memory_free = cuda.memory().map(|m| m.0 as u64).unwrap_or(0);
        }
        Backend::Cpu => status.device = "cpu".into(),
    }
    let period = Duration::from_secs_f64(params.status_period_s);
    let state = Arc::new(Mutex::new(State {
        status,
        nodes: rt.nodes(),
        clock: ctx.clock(),
        backend,
        started: Instant::now(),
        params,
    }));

    let map_sub: Subscription<OccupancyGrid> = ctx.subscription("map", qos::map())?;
    let status_pub: Arc<Publisher<RuntimeStatus>> =
        Arc::new(ctx.publisher("~/status", qos::result())?);
    let server: ServiceServer<_, GetStatusResponse> = ctx.server::<GetStatus>("~/get_status")?;
    let shutdown = rt.shutdown().clone();

    let publish = {
        let state = state.clone();
        let status_pub = status_pub.clone();
        move || {
            let msg = lock(&state).snapshot(false);
            if let Err(e) = status_pub.publish(msg) {
                tracing::warn!("{NODE_NAME}: publishing ~/status failed: {e:?}");
            }
        }
    };

    let maps = {
        let state = state.clone();
        let publish = publish.clone();
        async move {
            let s = messages(&map_sub, NODE_NAME, "map");
            futures::pin_mut!(s);
            while let Some(map) = s.next().await {
                let taken = lock(&state).take_map(&map);
                match taken {
                    Ok(()) => publish(),
                    Err(e) => tracing::error!("{NODE_NAME}: map rejected: {e}"),
                }
            }
        }
    };

    let requests = {
        let state = state.clone();
        async move {
            let stream = server.receive_request_stream();
            futures::pin_mut!(stream);
            while let Some(item) = stream.next().await {
                match item {
                    Ok((id, req)) => {
                        let status = lock(&state).snapshot(req.refresh_memory);
                        if let Err(e) = server
                            .async_send_response(id, GetStatusResponse { status })
                            .await
                        {
                            tracing::error!("{NODE_NAME}: ~/get_status response lost: {e}");
                        }
                    }
                    Err(e) => {
                        tracing::error!("{e}")
                    }
                }
            }
        }
    };

    let ticks = async move {
        let mut timer = smol::Timer::interval(period);
        loop {
            publish();
            timer.next().await;
        }
    };

    rt.spawn(async move {
        // The node context lives as long as its tasks.
        let _ctx = ctx;
        let all = futures::future::join3(maps, requests, ticks);
        futures::future::select(Box::pin(all), Box::pin(shutdown.wait())).await;
    });
    tracing::info!("{fq}: started");
    Ok(fq)
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    // A panic while holding the lock cannot leave the status half-written in a harmful way.
    state.lock().unwrap_or_else(|p| p.into_inner())
}

fn prefix(ctx: &NodeContext, e: Error) -> Error {
    match e {
        Error::InvalidInput { field, reason } => {
            Error::invalid(format!("{}.{field}", ctx.fully_qualified_name()), reason)
        }
        other => other,
    }
}
