//! The polyline node over DDS: a peer publishes an rgb8 image with a padded row step, calls
//! ~/extract and compares with the CPU DP on the same gray image; bad requests get an error
//! naming the field; an image in an unsupported encoding is refused and the previous image
//! keeps serving. Backend auto: the GPU on the device machine.

use std::time::Duration;

use futures::StreamExt;
use gpu_planning::polyline::cpu::solve;
use gpu_planning::polyline::{Gradient, Gray, Problem};
use gpu_planning::ros::msg::geometry_msgs::Point;
use gpu_planning::ros::msg::gpu_planning_msgs::{
    ExtractPolyline, ExtractPolylineRequest, ExtractPolylineResponse,
};
use gpu_planning::ros::msg::nav_msgs::Path;
use gpu_planning::ros::msg::sensor_msgs::Image;
use gpu_planning::ros::{qos, NodeContext, ParamsFile, RosArgs, RosRuntime};

use crate::common;

async fn call(
    client: &ros2_client::Client<ExtractPolylineRequest, ExtractPolylineResponse>,
    req: ExtractPolylineRequest,
) -> ExtractPolylineResponse {
    for _ in 0..15 {
        let attempt = futures::future::select(
            Box::pin(client.async_call_service(req.clone())),
            Box::pin(smol::Timer::after(Duration::from_secs(2))),
        )
        .await;
        if let futures::future::Either::Left((Ok(r), _)) = attempt {
            return r;
        }
    }
    panic!("no response to extract within 30 s");
}

fn pt(x: f64, y: f64) -> Point {
    Point { x, y, z: 0.0 }
}

#[test]
fn extract_over_dds_matches_the_cpu_dp() {
    let domain = common::unique_domain();
    // ~/polyline in metres in another frame; the service keeps answering in pixels.
    let params = ParamsFile::parse(
        "polyline:\n  ros__parameters:\n    pixel_size: 0.5\n    origin_x: 10.0\n    origin_y: -2.0\n    output_frame: base\n",
    )
    .unwrap();
    let server = RosRuntime::new(RosArgs::default(), params, Some(domain)).unwrap();
    gpu_planning::nodes::start_all(&server).unwrap();
    let client_rt =
        RosRuntime::new(RosArgs::default(), ParamsFile::default(), Some(domain)).unwrap();
    let mut peer = NodeContext::new(&client_rt, "peer").unwrap();
    let image_pub = peer
        .publisher::<Image>("/polyline/image", qos::map())
        .unwrap();
    let path_sub = peer
        .subscription::<Path>("/polyline/polyline", qos::result())
        .unwrap();
    let client = peer.client::<ExtractPolyline>("/polyline/extract").unwrap();
    let _a = common::run_in_background(&server);
    let _b = common::run_in_background(&client_rt);

    // 40 x 30 rgb8, rows padded to 124 bytes; a bright diagonal band on noise.
    let (w, h, step) = (40u32, 30u32, 124usize);
    let seed = gpu_planning::compute::testing::seed(0x5eed);
    let mut rng = gpu_planning::rng::XorShift::new(seed);
    let mut data = vec![0u8; step * h as usize];
    let mut rgb = Vec::new();
    for y in 0..h as usize {
        for x in 0..w as usize {
            let band = (x as i64 - y as i64 - 5).abs() < 3;
            let base = if band { 200 } else { 20 };
            let px = [
                (base + rng.next_u64() % 30) as u8,
                (base + rng.next_u64() % 30) as u8,
                (base + rng.next_u64() % 30) as u8,
            ];
            data[y * step + 3 * x..y * step + 3 * x + 3].copy_from_slice(&px);
            rgb.push(px);
        }
    }
    let mut img = Image {
        height: h,
        width: w,
        encoding: "rgb8".into(),
        is_bigendian: 0,
        step: step as u32,
        data,
        ..Default::default()
    };
    img.header.frame_id = "camera".into();
    // The result is computed from this image and carries its stamp.
    img.header.stamp = gpu_planning::ros::msg::builtin_interfaces::Time {
        sec: 1234,
        nanosec: 5678,
    };
    let gray = Gray::new(
        w,
        h,
        rgb.iter()
            .map(|p| gpu_planning::polyline::image::luma(p[0] as f64, p[1] as f64, p[2] as f64))
            .collect(),
    )
    .unwrap();
    let problem = Problem {
        a: (6.0, 1.0),
        b: (33.0, 28.0),
        guides: 5,
        points: 17,
        half_width: 6.0,
        max_angle: 0.6,
    };
    let want = solve(&Gradient::sobel(&gray), &problem).unwrap();
    assert!(want.feasible);
    let req = ExtractPolylineRequest {
        a: pt(6.0, 1.0),
        b: pt(33.0, 28.0),
        guides: 5,
        points_per_guide: 17,
        half_width: 6.0,
        max_angle: 0.6,
    };

    smol::block_on(async {
        common::settle_discovery("service", client.wait_for_service(peer.node())).await;
        // Until the image has arrived the node answers "no image received yet".
        let mut r = ExtractPolylineResponse::default();
        for _ in 0..100 {
            image_pub.async_publish(img.clone()).await.unwrap();
            r = call(&client, req.clone()).await;
            if r.success {
                break;
            }
            assert!(r.error.contains("no image"), "{}", r.error);
            smol::Timer::after(Duration::from_millis(100)).await;
        }
        assert!(r.success, "{}", r.error);
        assert!(r.feasible);
        assert_eq!(r.score, want.score);
        let got: Vec<(f64, f64)> = r.points.iter().map(|p| (p.x, p.y)).collect();
        assert_eq!(got, want.points);
        let s = path_sub.async_stream();
        futures::pin_mut!(s);
        let path = s.next().await.unwrap().unwrap().0;
        assert_eq!(path.header.frame_id, "base");
        assert_eq!(
            (path.header.stamp.sec, path.header.stamp.nanosec),
            (1234, 5678)
        );
        let metric: Vec<(f64, f64)> = path
            .poses
            .iter()
            .map(|p| (p.pose.position.x, p.pose.position.y))
            .collect();
        let expected: Vec<(f64, f64)> = want
            .points
            .iter()
            .map(|&(x, y)| (10.0 + x * 0.5, -2.0 + y * 0.5))
            .collect();
        assert_eq!(metric, expected);

        // Bad requests name their field; the node keeps serving.
        let mut bad = req.clone();
        bad.b = bad.a.clone();
        let e = call(&client, bad).await;
        assert!(!e.success && e.error.contains("input: b:"), "{}", e.error);
        let mut bad = req.clone();
        bad.guides = 100_000;
        let e = call(&client, bad).await;
        assert!(!e.success && e.error.contains("guides"), "{}", e.error);
        // An unsupported encoding is refused; the previous image still answers.
        let mut yuv = img.clone();
        yuv.encoding = "yuv422".into();
        image_pub.async_publish(yuv).await.unwrap();
        smol::Timer::after(Duration::from_millis(300)).await;
        let again = call(&client, req.clone()).await;
        assert!(again.success, "{}", again.error);
        assert_eq!(again.score, want.score);
    });
    common::assert_device_did_the_work(&server, &["polyline"]);
    server.shutdown().trigger();
    client_rt.shutdown().trigger();
}
