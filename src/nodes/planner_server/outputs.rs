//! What the planner server publishes: each plan on ~/path, ~/markers and (when wanted)
//! ~/distance_field, off the request's way and in order; a costmap-mode map's costs on
//! ~/costmap.

use std::sync::Arc;

use futures::StreamExt;
use ros2_client::Publisher;

use crate::lee::costmap::config::occupancy_value;
use crate::lee::UNREACHED;
use crate::nodes::grid_convert::CellFrame;
use crate::nodes::latched;
use crate::nodes::markers;
use crate::ros::msg::geometry_msgs::{Pose, PoseStamped};
use crate::ros::msg::nav_msgs::{MapMetaData, OccupancyGrid, Path};
use crate::ros::msg::std_msgs::Header;
use crate::ros::msg::visualization_msgs::MarkerArray;
use crate::ros::NodeContext;

use super::plan::SettingsFn;
use super::planner::MapState;

pub(super) struct Outputs {
    /// The node's name, for log lines.
    pub node: &'static str,
    pub path: Publisher<Path>,
    pub field: Publisher<OccupancyGrid>,
    pub markers: Publisher<MarkerArray>,
    /// The node that owns the publishers: it knows how many readers `field` has.
    pub ctx: Arc<NodeContext>,
    /// `publish_distance_field` (dynamic): the field with every plan even when nobody
    /// subscribes.
    pub settings: SettingsFn,
    /// Plans on their way to ~/path, ~/markers and ~/distance_field, in the order they were
    /// made: a response does not wait for those messages (a long path is hundreds of KB of DDS
    /// fragments, the field a byte per cell).
    pub published: smol::channel::Sender<Made>,
    /// ~/costmap: the cell costs a costmap-mode map plans on (latched).
    pub costmap: Publisher<OccupancyGrid>,
}

impl Outputs {
    /// Whether a plan should compute and publish the whole distance field. Without a reader
    /// for it, a plan on the GPU descends on the device and downloads only the path (what
    /// docs/bench-history's "field + path" times), not the width x height labels.
    pub fn wants_field(&self) -> bool {
        (self.settings)().publish_distance_field
            || self.field.get_subscription_count(self.ctx.node()) > 0
    }

    /// In costmap mode, `m`'s cell costs on ~/costmap, as nav2's costmap publisher
    /// translates them.
    pub fn publish_costmap(&self, m: &MapState) {
        let Some(values) = m.planner.cost_values() else {
            return;
        };
        let header = Header {
            stamp: self.ctx.clock().now(),
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
        if let Err(e) = self.costmap.publish(grid) {
            tracing::warn!("{}: publishing ~/costmap failed: {e:?}", self.node);
        }
    }
}

/// A plan as its topics carry it: the header and poses of its path, the field when wanted,
/// the map cells it is on. The poses, not a stamped copy of the answer's path: a pose is
/// copied in one piece, a PoseStamped's frame id is an allocation each.
pub(super) struct Made {
    pub header: Header,
    pub poses: Vec<Pose>,
    pub labels: Option<Vec<u32>>,
    pub frame: CellFrame,
}

/// `poses` as a nav_msgs/Path, every pose with the path's header (as nav2's planners stamp
/// them).
pub(super) fn stamped(header: &Header, poses: &[Pose]) -> Path {
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
pub(super) async fn publish_made(out: Arc<Outputs>, made: smol::channel::Receiver<Made>) {
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
    let (node, header) = (out.node, &m.header);
    if topics[0] {
        if let Err(e) = out.path.publish(stamped(header, &m.poses)) {
            tracing::warn!("{node}: publishing ~/path failed: {e:?}");
        }
    }
    if topics[1] {
        let points: Vec<_> = m.poses.iter().map(|p| p.position.clone()).collect();
        let width = 0.5 * m.frame.resolution;
        let marks = markers::path(header, "lee_path", &points, markers::GREEN, width);
        if let Err(e) = out.markers.publish(marks) {
            tracing::warn!("{node}: publishing ~/markers failed: {e:?}");
        }
    }
    if let (true, Some(labels)) = (topics[2], &m.labels) {
        let field = field_grid(&m.frame, header.clone(), labels);
        if let Err(e) = out.field.publish(field) {
            tracing::warn!("{node}: publishing ~/distance_field failed: {e:?}");
        }
    }
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
