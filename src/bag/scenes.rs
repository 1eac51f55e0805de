//! The synthetic scenes the bundled bags are generated from (and the demo draws on): a map of
//! rooms, a grey image with a bright band, poses and clouds as messages.

use crate::polyline::Gray;
use crate::ros::msg::geometry_msgs::{Point, Pose, PoseStamped, Quaternion};
use crate::ros::msg::nav_msgs::OccupancyGrid;
use crate::ros::msg::sensor_msgs::{PointCloud2, PointField};
use crate::ros::msg::std_msgs::Header;

/// A 200 x 150 map of 0.1 m cells: rooms and walls with doors, some unknown cells.
pub fn demo_map() -> OccupancyGrid {
    let (w, h) = (200u32, 150u32);
    let mut data = vec![0i8; (w * h) as usize];
    for y in 0..h {
        for x in 0..w {
            let wall = (x == 60 && !(20..35).contains(&y))
                || (x == 130 && !(110..125).contains(&y))
                || (y == 75 && x < 60 && !(25..40).contains(&x))
                || ((x as i32 - 95).pow(2) + (y as i32 - 40).pow(2) < 15 * 15);
            if wall {
                data[(y * w + x) as usize] = 100;
            } else if (160..175).contains(&x) && (20..40).contains(&y) {
                data[(y * w + x) as usize] = -1;
            }
        }
    }
    let mut m = OccupancyGrid {
        data,
        ..Default::default()
    };
    m.header.frame_id = "map".into();
    m.info.width = w;
    m.info.height = h;
    m.info.resolution = 0.1;
    m.info.origin.orientation = Quaternion::identity();
    m
}

/// A 320 x 240 grey image: a bright band crossing noise.
pub fn demo_image() -> Gray {
    let (w, h) = (320u32, 240u32);
    let mut rng = crate::rng::XorShift::new(7);
    let data = (0..h)
        .flat_map(|y| (0..w).map(move |x| (x, y)))
        .map(|(x, y)| {
            let band = ((y as f64 - (40.0 + 0.5 * x as f64 + 12.0 * (x as f64 / 40.0).sin())).abs()
                < 4.0) as u8 as f64;
            60.0 + 120.0 * band + (rng.next_u64() % 40) as f64
        })
        .collect();
    Gray {
        width: w,
        height: h,
        data,
    }
}

pub fn pose(x: f64, y: f64) -> PoseStamped {
    PoseStamped {
        header: Header {
            frame_id: "map".into(),
            ..Default::default()
        },
        pose: Pose {
            position: Point { x, y, z: 0.0 },
            orientation: Quaternion::identity(),
        },
    }
}

pub fn cloud(points: &[[f32; 3]]) -> PointCloud2 {
    let field = |name: &str, offset| PointField {
        name: name.into(),
        offset,
        datatype: PointField::FLOAT32,
        count: 1,
    };
    PointCloud2 {
        height: 1,
        width: points.len() as u32,
        fields: vec![field("x", 0), field("y", 4), field("z", 8)],
        point_step: 12,
        row_step: 12 * points.len() as u32,
        data: points
            .iter()
            .flat_map(|p| p.iter().flat_map(|v| v.to_le_bytes()))
            .collect(),
        ..Default::default()
    }
}
