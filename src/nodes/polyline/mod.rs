//! Node `polyline`: angle-limited polylines in the latest image.
//!
//! In: `~/image` (sensor_msgs/Image: mono8, mono16, 32FC1, rgb8, bgr8; sensor QoS). The
//! gradient is computed once per image (and uploaded once on CUDA). Service `~/extract`
//! (ExtractPolyline; zero / negative fields take the parameters' defaults). Out: every result
//! on `~/polyline` (nav_msgs/Path in the image's frame, pixel coordinates, z = 0; or metres in
//! `output_frame` with the `pixel_size` and `origin_*` parameters).

pub mod params;

pub use params::PolylineParams;

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use ros2_client::Publisher;

use crate::cancel::{self, CancelFlag};
use crate::compute::{warmup, Backend};
use crate::error::{Error, Result};
use crate::nodes::image_convert::gray_from_image;
use crate::nodes::markers;
use crate::nodes::serve::serve;
use crate::nodes::subscribe::messages;
use crate::polyline::{Extractor, Gradient, Polyline, Problem};
use crate::ros::msg::builtin_interfaces::Time;
use crate::ros::msg::geometry_msgs::{Point, Pose, PoseStamped, Quaternion};
use crate::ros::msg::gpu_planning_msgs::{
    ExtractPolyline, ExtractPolylineRequest, ExtractPolylineResponse,
};
use crate::ros::msg::nav_msgs::Path;
use crate::ros::msg::sensor_msgs::Image;
use crate::ros::msg::std_msgs::Header;
use crate::ros::msg::visualization_msgs::MarkerArray;
use crate::ros::work::NodeWork;
use crate::ros::{qos, NodeContext, RosRuntime};
use crate::sync::lock;

pub const NODE_NAME: &str = "polyline";

/// One image's gradient, replaced whole.
struct ImageState {
    extractor: Extractor,
    frame_id: String,
    /// The image's stamp: results computed from it carry it.
    stamp: Time,
}

type Shared = Arc<Mutex<Option<Arc<ImageState>>>>;

pub fn start(rt: &RosRuntime) -> Result<String> {
    let defaults =
        crate::ros::node_params::declared_defaults::<crate::nodes::polyline::PolylineParams>(true);
    let mut ctx = NodeContext::with_params(rt, NODE_NAME, defaults, params::PARAMS)?;
    let params: PolylineParams = ctx.params()?;
    let fq = ctx.fully_qualified_name();
    params.validate().map_err(|e| e.under(format!("{fq}.")))?;
    let backend = Backend::select(params.backend)?.for_node(params.gpu_priority)?;
    warmup::spawn(&backend, &fq, crate::polyline::gpu::modules());
    // The service keys as they are now (`cpu_fallback` is read at start).
    let live_limits = ctx.live::<crate::ros::node_params::ServiceParams>()?;
    let cpu_fallback = live_limits.get().cpu_fallback;
    let work = ctx.work();
    let state: Shared = Arc::new(Mutex::new(None));
    let image_sub = ctx.subscription::<Image>("~/image", qos::sensor())?;
    let server = ctx.server::<ExtractPolyline>("~/extract")?;
    let out = Outputs {
        path: ctx.publisher("~/polyline", qos::result())?,
        markers: ctx.publisher("~/markers", qos::result())?,
    };
    let params = Arc::new(params);
    let shutdown = rt.shutdown().clone();

    let images = {
        let (state, params, work) = (state.clone(), params.clone(), work.clone());
        async move {
            let s = messages(&image_sub, NODE_NAME, "~/image");
            futures::pin_mut!(s);
            while let Some(img) = s.next().await {
                let (p, b) = (params.clone(), backend.clone());
                let (fallback, work) = (cpu_fallback, work.clone());
                match smol::unblock(move || image_state(&work, &b, &p, fallback, img)).await {
                    Ok(s) => *lock(&state) = Some(Arc::new(s)),
                    Err(e) => tracing::error!("{NODE_NAME}: image rejected: {e}"),
                }
            }
        }
    };
    let out = Arc::new(out);
    let requests = {
        serve(
            rt,
            server,
            format!("{NODE_NAME}: ~/extract"),
            &live_limits,
            move |req: ExtractPolylineRequest, cancel: CancelFlag| {
                let image = lock(&state).clone();
                let (p, out, params) = (params.clone(), out.clone(), params.clone());
                let work = work.clone();
                async move {
                    let img =
                        image.ok_or_else(|| Error::invalid("image", "no image received yet"))?;
                    let (img, r) = cancel::unblock(&cancel, move || {
                        extract(&work, &img, &p, &req).map(|r| (img, r))
                    })
                    .await?;
                    publish(&out, &params, &img, &r);
                    Ok(ExtractPolylineResponse {
                        success: true,
                        error: String::new(),
                        feasible: r.feasible,
                        points: r
                            .points
                            .iter()
                            .map(|&(x, y)| Point { x, y, z: 0.0 })
                            .collect(),
                        score: if r.feasible { r.score } else { 0.0 },
                    })
                }
            },
        )
    };
    rt.spawn(async move {
        let _ctx = ctx;
        let all = futures::future::join(images, requests);
        futures::future::select(Box::pin(all), Box::pin(shutdown.wait())).await;
    });
    tracing::info!("{fq}: started");
    Ok(fq)
}

fn image_state(
    work: &NodeWork,
    backend: &Backend,
    p: &PolylineParams,
    cpu_fallback: bool,
    img: Image,
) -> Result<ImageState> {
    let gray = gray_from_image(&img, p.max_image_pixels)?;
    let grad = Gradient::sobel(&gray);
    let extractor = Extractor::new(backend, grad, cpu_fallback, NODE_NAME)?;
    work.record(extractor.backend_name());
    Ok(ImageState {
        extractor,
        frame_id: img.header.frame_id,
        stamp: img.header.stamp,
    })
}

/// The request with defaults filled in and caps applied.
pub fn problem(p: &PolylineParams, req: &ExtractPolylineRequest) -> Result<Problem> {
    let pick = |v: u32, d: u32| if v == 0 { d } else { v };
    let problem = Problem {
        a: (req.a.x, req.a.y),
        b: (req.b.x, req.b.y),
        guides: pick(req.guides, p.guides),
        points: pick(req.points_per_guide, p.points_per_guide),
        half_width: if req.half_width <= 0.0 {
            p.half_width
        } else {
            req.half_width
        },
        max_angle: if req.max_angle < 0.0 {
            p.max_angle
        } else {
            req.max_angle
        },
    };
    problem.check_limits(p.max_guides, p.max_points_per_guide)?;
    problem.validate()?;
    Ok(problem)
}

fn extract(
    work: &NodeWork,
    img: &ImageState,
    p: &PolylineParams,
    req: &ExtractPolylineRequest,
) -> Result<Polyline> {
    let problem = problem(p, req)?;
    let (r, ran) = img.extractor.extract(&problem)?;
    work.record(ran);
    Ok(r)
}

struct Outputs {
    path: Publisher<Path>,
    markers: Publisher<MarkerArray>,
}

/// The result as a Path and as markers: pixel coordinates, or metres with `pixel_size` (the
/// service answers in pixels, like its request).
fn publish(out: &Outputs, p: &PolylineParams, img: &ImageState, r: &Polyline) {
    let header = Header {
        stamp: img.stamp.clone(),
        frame_id: if p.output_frame.is_empty() {
            img.frame_id.clone()
        } else {
            p.output_frame.clone()
        },
    };
    let place = |(x, y): (f64, f64)| {
        if p.pixel_size > 0.0 {
            (p.origin_x + x * p.pixel_size, p.origin_y + y * p.pixel_size)
        } else {
            (x, y)
        }
    };
    let path = Path {
        header: header.clone(),
        poses: r
            .points
            .iter()
            .map(|&pt| place(pt))
            .map(|(x, y)| PoseStamped {
                header: header.clone(),
                pose: Pose {
                    position: Point { x, y, z: 0.0 },
                    orientation: Quaternion::identity(),
                },
            })
            .collect(),
    };
    let points: Vec<_> = path.poses.iter().map(|p| p.pose.position.clone()).collect();
    let width = 2.0
        * if p.pixel_size > 0.0 {
            p.pixel_size
        } else {
            1.0
        };
    let marks = markers::path(&header, "polyline", &points, markers::MAGENTA, width);
    if let Err(e) = out.path.publish(path) {
        tracing::warn!("{NODE_NAME}: publishing ~/polyline failed: {e:?}");
    }
    if let Err(e) = out.markers.publish(marks) {
        tracing::warn!("{NODE_NAME}: publishing ~/markers failed: {e:?}");
    }
}
