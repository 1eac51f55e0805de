//! Node `polyline`: angle-limited polylines in the latest image.
//!
//! In: `~/image` (sensor_msgs/Image: mono8, mono16, 32FC1, rgb8, bgr8; sensor QoS). The
//! gradient is computed once per image (and uploaded once on CUDA). Service `~/extract`
//! (ExtractPolyline; zero / negative fields take the parameters' defaults). Out: every result
//! on `~/polyline` (nav_msgs/Path in the image's frame, pixel coordinates, z = 0; or metres in
//! `output_frame` with the `pixel_size` and `origin_*` parameters).

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use ros2_client::Publisher;

use crate::compute::Backend;
use crate::config::PolylineParams;
use crate::error::{Error, Result};
use crate::nodes::image_convert::gray_from_image;
use crate::polyline::gpu::DeviceGradient;
use crate::polyline::{solve, Gradient, Polyline, Problem};
use crate::ros::msg::builtin_interfaces::Time;
use crate::ros::msg::geometry_msgs::{Point, Pose, PoseStamped, Quaternion};
use crate::ros::msg::gpu_planning::{
    ExtractPolyline, ExtractPolylineRequest, ExtractPolylineResponse,
};
use crate::ros::msg::nav_msgs::Path;
use crate::ros::msg::sensor_msgs::Image;
use crate::ros::msg::std_msgs::Header;
use crate::ros::{qos, NodeContext, RosRuntime};

pub const NODE_NAME: &str = "polyline";

/// One image's gradient, replaced whole.
struct ImageState {
    grad: Gradient,
    device: Option<DeviceGradient>,
    frame_id: String,
}

type Shared = Arc<Mutex<Option<Arc<ImageState>>>>;

pub fn start(rt: &RosRuntime) -> Result<String> {
    let mut ctx = NodeContext::new(rt, NODE_NAME)?;
    let params: PolylineParams = ctx.params()?;
    let fq = ctx.fully_qualified_name();
    params.validate().map_err(|e| match e {
        Error::InvalidInput { field, reason } => Error::invalid(format!("{fq}.{field}"), reason),
        other => other,
    })?;
    let backend = Backend::select(params.backend)?;
    let state: Shared = Arc::new(Mutex::new(None));
    let image_sub = ctx.subscription::<Image>("~/image", qos::sensor())?;
    let server = ctx.server::<ExtractPolyline>("~/extract")?;
    let out: Publisher<Path> = ctx.publisher("~/polyline", qos::result())?;
    let params = Arc::new(params);
    let shutdown = rt.shutdown().clone();

    let images = {
        let (state, params) = (state.clone(), params.clone());
        async move {
            let s = image_sub.async_stream();
            futures::pin_mut!(s);
            while let Some(item) = s.next().await {
                let Ok((img, _)) = item else {
                    tracing::error!("{NODE_NAME}: ~/image not decoded: {:?}", item.err());
                    continue;
                };
                let (p, b) = (params.clone(), backend.clone());
                match smol::unblock(move || image_state(&b, &p, img)).await {
                    Ok(s) => *lock(&state) = Some(Arc::new(s)),
                    Err(e) => tracing::error!("{NODE_NAME}: image rejected: {e}"),
                }
            }
        }
    };
    let requests = async move {
        let s = server.receive_request_stream();
        futures::pin_mut!(s);
        while let Some(item) = s.next().await {
            let Ok((id, req)) = item else {
                tracing::error!(
                    "{NODE_NAME}: ~/extract request not decoded: {:?}",
                    item.err()
                );
                continue;
            };
            let image = lock(&state).clone();
            let p = params.clone();
            let result = match image {
                None => Err(Error::invalid("image", "no image received yet")),
                Some(img) => smol::unblock(move || extract(&img, &p, &req).map(|r| (img, r))).await,
            };
            let response = match result {
                Ok((img, r)) => {
                    publish(&out, &params, &img.frame_id, &r);
                    ExtractPolylineResponse {
                        success: true,
                        error: String::new(),
                        feasible: r.feasible,
                        points: r
                            .points
                            .iter()
                            .map(|&(x, y)| Point { x, y, z: 0.0 })
                            .collect(),
                        score: if r.feasible { r.score } else { 0.0 },
                    }
                }
                Err(e) => {
                    tracing::warn!("{NODE_NAME}: ~/extract: {e}");
                    ExtractPolylineResponse {
                        success: false,
                        error: e.to_string(),
                        ..ExtractPolylineResponse::default()
                    }
                }
            };
            if let Err(e) = server.async_send_response(id, response).await {
                tracing::error!("{NODE_NAME}: ~/extract response lost: {e:?}");
            }
        }
    };
    rt.spawn(async move {
        let _ctx = ctx;
        let all = futures::future::join(images, requests);
        futures::future::select(Box::pin(all), Box::pin(shutdown.wait())).await;
    });
    tracing::info!("{fq}: started");
    Ok(fq)
}

fn image_state(backend: &Backend, p: &PolylineParams, img: Image) -> Result<ImageState> {
    let gray = gray_from_image(&img, p.max_image_pixels)?;
    let grad = Gradient::sobel(&gray);
    let device = match backend {
        Backend::Cpu => None,
        Backend::Cuda(rt) => Some(DeviceGradient::upload(rt, &grad)?),
    };
    Ok(ImageState {
        grad,
        device,
        frame_id: img.header.frame_id,
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
    if problem.guides > p.max_guides {
        return Err(Error::invalid(
            "guides",
            format!(
                "{} is above the max_guides parameter ({})",
                problem.guides, p.max_guides
            ),
        ));
    }
    if problem.points > p.max_points_per_guide {
        return Err(Error::invalid(
            "points_per_guide",
            format!(
                "{} is above the max_points_per_guide parameter ({})",
                problem.points, p.max_points_per_guide
            ),
        ));
    }
    problem.validate()?;
    Ok(problem)
}

fn extract(img: &ImageState, p: &PolylineParams, req: &ExtractPolylineRequest) -> Result<Polyline> {
    let problem = problem(p, req)?;
    match &img.device {
        Some(d) => d.solve(&problem),
        None => solve(&img.grad, &problem),
    }
}

/// The result as a Path: pixel coordinates, or metres with `pixel_size` (the service answers
/// in pixels, like its request).
fn publish(out: &Publisher<Path>, p: &PolylineParams, image_frame: &str, r: &Polyline) {
    let header = Header {
        stamp: Time::now(),
        frame_id: if p.output_frame.is_empty() {
            image_frame.to_string()
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
    if let Err(e) = out.publish(path) {
        tracing::warn!("{NODE_NAME}: publishing ~/polyline failed: {e:?}");
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
