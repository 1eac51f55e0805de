//! Node `nearest_neighbors`: k-d trees over the latest cloud and the latest orientations.
//!
//! In: `~/cloud` (PointCloud2, float32 x y z; NaN points dropped and counted) builds the
//! Euclidean 3-D tree; `~/orientations` (PoseArray) builds a 4-D tree over the orientation
//! quaternions with the SO(3) metric. Each replaces its tree whole. `~/queries` (PointCloud2)
//! -> `~/neighbors` (Neighbors, `k` from the parameters, header of the queries) against the
//! cloud tree. Services `~/knn` (KNearest) and `~/radius` (RadiusSearch) answer from the cloud
//! tree for 3-D queries and from the orientation tree for 4-D ones, on the device when the
//! backend is CUDA. Indices are those of the input as published (first copy for duplicates):
//! a cloud's NaN points are left out of its tree but keep their place in the numbering, as
//! PCL's `KdTreeFLANN` does for organized clouds. A query cloud's NaN points are left out of
//! the answer rows and counted in `dropped_queries`.

pub mod params;

pub use params::NearestNeighborsParams;

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use ros2_client::Publisher;

use crate::cancel::{self, CancelFlag};
use crate::compute::{warmup, Backend};
use crate::error::{Error, Result};
use crate::kdtree::{check_unit_quaternions, ResultSize};
use crate::kdtree::{FlatNeighbors, Index, IndexConfig, Metric, Points, Traversal};
use crate::nodes::cloud_convert::xyz_from_cloud;
use crate::nodes::serve::serve;
use crate::nodes::subscribe::messages;
use crate::ros::msg::geometry_msgs::PoseArray;
use crate::ros::msg::gpu_planning_msgs::{
    KNearest, KNearestRequest, KNearestResponse, Neighbors, RadiusSearch, RadiusSearchRequest,
    RadiusSearchResponse,
};
use crate::ros::msg::sensor_msgs::PointCloud2;
use crate::ros::msg::std_msgs::Header;
use crate::ros::work::NodeWork;
use crate::ros::{qos, NodeContext, RosRuntime};
use crate::sync::lock;

pub const NODE_NAME: &str = "nearest_neighbors";

/// One input's index, with what the node answers in: the cloud's own numbering.
struct Tree {
    index: Index,
    /// The input index of each tree input point, where points were left out (NaN).
    origin: Option<Vec<u32>>,
    /// Counts each build and query by the backend that finished it.
    work: NodeWork,
}

impl Tree {
    fn build(
        work: &NodeWork,
        backend: &Backend,
        cpu_fallback: bool,
        p: &Points,
        metric: Metric,
        traversal: Traversal,
    ) -> Result<Tree> {
        let config = IndexConfig {
            metric,
            traversal,
            cpu_fallback,
            label: NODE_NAME.into(),
        };
        let index = Index::build(backend, p, config)?;
        work.record(index.backend_name());
        Ok(Tree {
            index,
            origin: None,
            work: work.clone(),
        })
    }

    fn radius(&self, queries: &[f32], r: f32, max_count: usize, cap: u64) -> Result<Answer> {
        let size = ResultSize::Radius { max_count };
        self.index.check_result_size(queries, size, cap)?;
        self.counted(self.index.radius(queries, r, max_count)?)
    }

    fn knn(&self, queries: &[f32], k: usize, cap: u64) -> Result<Answer> {
        let size = ResultSize::Nearest { k };
        self.index.check_result_size(queries, size, cap)?;
        self.counted(self.index.knn(queries, k)?)
    }

    /// Counts where an answer ran, and renames its tree input indices to the indices of the
    /// cloud as published.
    fn counted(&self, mut answer: Answer) -> Result<Answer> {
        self.work.record(answer.backend);
        crate::kdtree::points::to_cloud_indices(self.origin.as_deref(), &mut answer.indices);
        Ok(answer)
    }
}

/// Neighbours in the message's flat layout, row i at `offsets[i]..offsets[i + 1]`.
type Answer = FlatNeighbors;

fn message(a: Answer, header: Header, k: u32, radius: f32) -> Neighbors {
    Neighbors {
        header,
        k,
        radius,
        indices: a.indices,
        distances: a.distances,
        offsets: a.offsets,
        ..Default::default()
    }
}

#[derive(Default)]
struct Trees {
    cloud: Option<Arc<Tree>>,
    orientations: Option<Arc<Tree>>,
}

type Shared = Arc<Mutex<Trees>>;

pub fn start(rt: &RosRuntime) -> Result<String> {
    let defaults = crate::ros::node_params::declared_defaults::<
        crate::nodes::nearest_neighbors::NearestNeighborsParams,
    >(true);
    let mut ctx = NodeContext::with_params(rt, NODE_NAME, defaults, params::PARAMS)?;
    let params: NearestNeighborsParams = ctx.params()?;
    let fq = ctx.fully_qualified_name();
    params.validate().map_err(|e| e.under(format!("{fq}.")))?;
    let backend = Backend::select(params.backend)?.for_node(params.gpu_priority)?;
    warmup::spawn(
        &backend,
        &fq,
        crate::kdtree::gpu::modules(params.k as usize, params.knn_traversal),
    );
    // The service keys as they are now (`cpu_fallback` is read at start).
    let live_limits = ctx.live::<crate::ros::node_params::ServiceParams>()?;
    let cpu_fallback = live_limits.get().cpu_fallback;
    let work = ctx.work();
    let params = Arc::new(params);
    let trees: Shared = Arc::new(Mutex::new(Trees::default()));
    let cloud_sub = ctx.subscription::<PointCloud2>("~/cloud", qos::map())?;
    let orient_sub = ctx.subscription::<PoseArray>("~/orientations", qos::map())?;
    let query_sub = ctx.subscription::<PointCloud2>("~/queries", qos::sensor())?;
    let out: Publisher<Neighbors> = ctx.publisher("~/neighbors", qos::result())?;
    let knn_srv = ctx.server::<KNearest>("~/knn")?;
    let radius_srv = ctx.server::<RadiusSearch>("~/radius")?;
    let shutdown = rt.shutdown().clone();

    let clouds = {
        let (trees, params, backend) = (trees.clone(), params.clone(), backend.clone());
        let work = work.clone();
        async move {
            let s = messages(&cloud_sub, NODE_NAME, "~/cloud");
            futures::pin_mut!(s);
            while let Some(msg) = s.next().await {
                let (p, b) = (params.clone(), backend.clone());
                let (fallback, work) = (cpu_fallback, work.clone());
                let built = smol::unblock(move || -> Result<(Tree, usize)> {
                    let cloud = xyz_from_cloud(&msg, p.max_points as usize)?;
                    let points = Points::new(3, cloud.coords)?;
                    let mut tree = Tree::build(
                        &work,
                        &b,
                        fallback,
                        &points,
                        Metric::Euclidean,
                        p.knn_traversal,
                    )?;
                    tree.origin = cloud.origin;
                    Ok((tree, cloud.dropped))
                })
                .await;
                match built {
                    Ok((t, dropped)) => {
                        tracing::info!(
                            "{NODE_NAME}: cloud tree of {} points ({} distinct, {dropped} NaN dropped)",
                            t.index.tree().input_len,
                            t.index.tree().len()
                        );
                        lock(&trees).cloud = Some(Arc::new(t));
                    }
                    Err(e) => tracing::error!("{NODE_NAME}: ~/cloud rejected: {e}"),
                }
            }
        }
    };
    let orientations = {
        let (trees, params, backend) = (trees.clone(), params.clone(), backend.clone());
        let work = work.clone();
        async move {
            let s = messages(&orient_sub, NODE_NAME, "~/orientations");
            futures::pin_mut!(s);
            while let Some(msg) = s.next().await {
                let (p, b) = (params.clone(), backend.clone());
                let (fallback, work) = (cpu_fallback, work.clone());
                let built = smol::unblock(move || -> Result<Tree> {
                    if msg.poses.len() > p.max_points as usize {
                        return Err(Error::invalid(
                            "poses",
                            format!("{} is above max_points {}", msg.poses.len(), p.max_points),
                        ));
                    }
                    let q: Vec<f32> = msg
                        .poses
                        .iter()
                        .flat_map(|p| {
                            let o = &p.orientation;
                            [o.x as f32, o.y as f32, o.z as f32, o.w as f32]
                        })
                        .collect();
                    check_unit_quaternions("poses", &q)?;
                    let q = Points::new(4, q)?;
                    Tree::build(&work, &b, fallback, &q, Metric::So3, p.knn_traversal)
                })
                .await;
                match built {
                    Ok(t) => lock(&trees).orientations = Some(Arc::new(t)),
                    Err(e) => tracing::error!("{NODE_NAME}: ~/orientations rejected: {e}"),
                }
            }
        }
    };
    let queries = {
        let (trees, params) = (trees.clone(), params.clone());
        async move {
            let s = messages(&query_sub, NODE_NAME, "~/queries");
            futures::pin_mut!(s);
            while let Some(msg) = s.next().await {
                let tree = lock(&trees).cloud.clone();
                let Some(tree) = tree else {
                    tracing::warn!("{NODE_NAME}: ~/queries before any ~/cloud: dropped");
                    continue;
                };
                let header = msg.header.clone();
                let p = params.clone();
                let r = smol::unblock(move || -> Result<(Answer, usize)> {
                    let q = xyz_from_cloud(&msg, p.max_queries as usize)?;
                    Ok((tree.knn(&q.coords, p.k as usize, p.max_results)?, q.dropped))
                })
                .await;
                match r {
                    Ok((answer, dropped)) => {
                        let mut m = message(answer, header, params.k, 0.0);
                        m.dropped_queries = u32::try_from(dropped).unwrap_or(u32::MAX);
                        if let Err(e) = out.publish(m) {
                            tracing::warn!("{NODE_NAME}: publishing ~/neighbors failed: {e:?}");
                        }
                    }
                    Err(e) => tracing::error!("{NODE_NAME}: ~/queries rejected: {e}"),
                }
            }
        }
    };
    let knn_requests = {
        let (trees, params) = (trees.clone(), params.clone());
        serve(
            rt,
            knn_srv,
            format!("{NODE_NAME}: ~/knn"),
            &live_limits,
            move |req: KNearestRequest, cancel: CancelFlag| {
                let tree = pick(&trees, req.dimensions);
                let p = params.clone();
                async move {
                    let answer = cancel::unblock(&cancel, move || -> Result<Answer> {
                        let tree = tree?;
                        check_batch(&p, req.dimensions, &req.points)?;
                        if req.k == 0 {
                            return Err(Error::invalid("k", "0: ask for at least one neighbour"));
                        }
                        tree.knn(&req.points, req.k as usize, p.max_results)
                    })
                    .await?;
                    Ok(KNearestResponse {
                        success: true,
                        error: String::new(),
                        neighbors: message(answer, Header::default(), 0, 0.0),
                    })
                }
            },
        )
    };
    let radius_requests = {
        let (trees, params) = (trees.clone(), params.clone());
        serve(
            rt,
            radius_srv,
            format!("{NODE_NAME}: ~/radius"),
            &live_limits,
            move |req: RadiusSearchRequest, cancel: CancelFlag| {
                let tree = pick(&trees, req.dimensions);
                let p = params.clone();
                let rad = req.radius;
                async move {
                    let answer = cancel::unblock(&cancel, move || -> Result<Answer> {
                        let tree = tree?;
                        check_batch(&p, req.dimensions, &req.points)?;
                        tree.radius(
                            &req.points,
                            req.radius,
                            req.max_count as usize,
                            p.max_results,
                        )
                    })
                    .await?;
                    Ok(RadiusSearchResponse {
                        success: true,
                        error: String::new(),
                        neighbors: message(answer, Header::default(), 0, rad),
                    })
                }
            },
        )
    };
    rt.spawn(async move {
        let _ctx = ctx;
        let all = futures::future::join3(
            futures::future::join(clouds, orientations),
            queries,
            futures::future::join(knn_requests, radius_requests),
        );
        futures::future::select(Box::pin(all), Box::pin(shutdown.wait())).await;
    });
    tracing::info!("{fq}: started");
    Ok(fq)
}

/// The tree a request of `dimensions` asks: 3 the cloud, 4 the orientations.
fn pick(trees: &Shared, dimensions: u32) -> Result<Arc<Tree>> {
    let t = lock(trees);
    let (tree, what) = match dimensions {
        3 => (t.cloud.clone(), "~/cloud"),
        4 => (t.orientations.clone(), "~/orientations"),
        d => {
            return Err(Error::invalid(
                "dimensions",
                format!("{d}: 3 queries the cloud, 4 the orientations"),
            ))
        }
    };
    tree.ok_or_else(|| Error::invalid("dimensions", format!("no {what} received yet")))
}

fn check_batch(p: &NearestNeighborsParams, dims: u32, points: &[f32]) -> Result<()> {
    if !points.len().is_multiple_of(dims as usize) {
        return Err(Error::invalid(
            "points",
            format!(
                "{} values is not a multiple of dimensions {dims}",
                points.len()
            ),
        ));
    }
    if dims == 4 {
        check_unit_quaternions("points", points)?;
    }
    if points.len() / dims as usize > p.max_queries as usize {
        return Err(Error::invalid(
            "points",
            format!(
                "{} queries is above max_queries {}",
                points.len() / dims as usize,
                p.max_queries
            ),
        ));
    }
    Ok(())
}
