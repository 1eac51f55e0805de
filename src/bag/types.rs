//! The message and service types a bag can carry here, each able to decode its CDR to JSON (for
//! comparison and `bag info`), to publish recorded bytes, to subscribe and hand back bytes, and
//! (services) to replay a recorded request as a call.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;

use futures::{Stream, StreamExt};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::cdr;
use super::qos::TopicQos;
use crate::error::{Error, Result};
use crate::ros::msg::builtin_interfaces::Time;
use crate::ros::msg::geometry_msgs::{PoseArray, PoseStamped};
use crate::ros::msg::gpu_planning_msgs as gp;
use crate::ros::msg::grid_map_msgs::GridMap;
use crate::ros::msg::nav_msgs::{GetPlan, OccupancyGrid, Path};
use crate::ros::msg::sensor_msgs::{Image, PointCloud2};
use crate::ros::msg::service_msgs::{ServiceEvent, ServiceEventInfo};
use crate::ros::msg::visualization_msgs::MarkerArray;
use crate::ros::msg::{RosMessage, RosService};
use crate::ros::NodeContext;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
pub type ByteStream = Pin<Box<dyn Stream<Item = Vec<u8>> + Send>>;

pub trait RawPublisher: Send + Sync {
    fn publish<'a>(&'a self, cdr: &'a [u8]) -> BoxFuture<'a, Result<()>>;
    fn wait_matched<'a>(&'a self, node: &'a ros2_client::Node) -> BoxFuture<'a, ()>;
}

pub trait RawClient: Send + Sync {
    /// Calls with a serialized request; the serialized response.
    fn call<'a>(&'a self, request: &'a [u8]) -> BoxFuture<'a, Result<Vec<u8>>>;
    fn wait_matched<'a>(&'a self, node: &'a ros2_client::Node) -> BoxFuture<'a, ()>;
}

pub trait MessageType: Send + Sync {
    /// As rosbag2 names it: `nav_msgs/msg/Path`.
    fn name(&self) -> String;
    fn to_json(&self, what: &str, cdr: &[u8]) -> Result<Value>;
    fn publisher(
        &self,
        ctx: &mut NodeContext,
        topic: &str,
        qos: TopicQos,
    ) -> Result<Box<dyn RawPublisher>>;
    fn subscribe(&self, ctx: &mut NodeContext, topic: &str, qos: TopicQos) -> Result<ByteStream>;
}

/// A recorded service event, its halves still serialized.
pub struct Event {
    pub info: ServiceEventInfo,
    pub request: Option<Vec<u8>>,
    pub response: Option<Vec<u8>>,
}

pub trait ServiceType: Send + Sync {
    /// `pkg/srv/Name`.
    fn name(&self) -> String;
    /// `pkg/srv/Name_Event`, the type of `<service>/_service_event`.
    fn event_name(&self) -> String {
        format!("{}_Event", self.name())
    }
    fn decode_event(&self, what: &str, cdr: &[u8]) -> Result<Event>;
    fn encode_event(&self, event: &Event) -> Result<Vec<u8>>;
    fn response_to_json(&self, what: &str, cdr: &[u8]) -> Result<Value>;
    fn event_to_json(&self, what: &str, cdr: &[u8]) -> Result<Value>;
    fn client(&self, ctx: &mut NodeContext, service: &str) -> Result<Box<dyn RawClient>>;
}

struct Msg<T>(PhantomData<fn() -> T>);

trait Wire:
    RosMessage
    + std::fmt::Debug
    + ros2_client::Message
    + Serialize
    + DeserializeOwned
    + Clone
    + Send
    + Sync
    + 'static
{
}
impl<
        T: RosMessage
            + std::fmt::Debug
            + ros2_client::Message
            + Serialize
            + DeserializeOwned
            + Clone
            + Send
            + Sync
            + 'static,
    > Wire for T
{
}

struct TypedPublisher<T: Wire>(ros2_client::Publisher<T>);

impl<T: Wire> RawPublisher for TypedPublisher<T> {
    fn publish<'a>(&'a self, bytes: &'a [u8]) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let v: T = cdr::decode(T::NAME, bytes)?;
            self.0
                .async_publish(v)
                .await
                .map_err(|e| Error::Ros(format!("publishing {}: {e:?}", T::NAME)))
        })
    }
    fn wait_matched<'a>(&'a self, node: &'a ros2_client::Node) -> BoxFuture<'a, ()> {
        Box::pin(self.0.wait_for_subscription(node))
    }
}

impl<T: Wire> MessageType for Msg<T> {
    fn name(&self) -> String {
        format!("{}/msg/{}", T::PACKAGE, T::NAME)
    }
    fn to_json(&self, what: &str, bytes: &[u8]) -> Result<Value> {
        let v: T = cdr::decode(what, bytes)?;
        serde_json::to_value(&v).map_err(|e| Error::invalid(what, e))
    }
    fn publisher(
        &self,
        ctx: &mut NodeContext,
        topic: &str,
        qos: TopicQos,
    ) -> Result<Box<dyn RawPublisher>> {
        Ok(Box::new(TypedPublisher(
            ctx.publisher::<T>(topic, qos.profile())?,
        )))
    }
    fn subscribe(&self, ctx: &mut NodeContext, topic: &str, qos: TopicQos) -> Result<ByteStream> {
        let sub = ctx.subscription::<T>(topic, qos.profile())?;
        Ok(Box::pin(
            futures::stream::unfold(sub, |sub| async move {
                loop {
                    // A sample that does not decode is not one of T; keep listening.
                    if let Ok((m, _)) = sub.async_take().await {
                        if let Ok(b) = cdr::encode(&m) {
                            return Some((b, sub));
                        }
                    }
                }
            })
            .fuse(),
        ))
    }
}

struct Srv<S>(PhantomData<fn() -> S>);

struct TypedClient<S: RosService>(ros2_client::Client<S::Request, S::Response>);

impl<S> RawClient for TypedClient<S>
where
    S: RosService,
    S::Request: Wire,
    S::Response: Wire,
{
    fn call<'a>(&'a self, request: &'a [u8]) -> BoxFuture<'a, Result<Vec<u8>>> {
        Box::pin(async move {
            let req: S::Request = cdr::decode("request", request)?;
            let resp = self
                .0
                .async_call_service(req)
                .await
                .map_err(|e| Error::Ros(format!("calling {}: {e:?}", S::NAME)))?;
            cdr::encode(&resp)
        })
    }
    fn wait_matched<'a>(&'a self, node: &'a ros2_client::Node) -> BoxFuture<'a, ()> {
        Box::pin(self.0.wait_for_service(node))
    }
}

impl<S> ServiceType for Srv<S>
where
    S: RosService + Send + Sync + 'static,
    S::Request: Wire,
    S::Response: Wire,
{
    fn name(&self) -> String {
        format!("{}/srv/{}", S::PACKAGE, S::NAME)
    }
    fn decode_event(&self, what: &str, bytes: &[u8]) -> Result<Event> {
        let e: ServiceEvent<S::Request, S::Response> = cdr::decode(what, bytes)?;
        Ok(Event {
            info: e.info,
            request: e.request.first().map(cdr::encode).transpose()?,
            response: e.response.first().map(cdr::encode).transpose()?,
        })
    }
    fn encode_event(&self, event: &Event) -> Result<Vec<u8>> {
        let request = match &event.request {
            Some(b) => vec![cdr::decode::<S::Request>("request", b)?],
            None => vec![],
        };
        let response = match &event.response {
            Some(b) => vec![cdr::decode::<S::Response>("response", b)?],
            None => vec![],
        };
        cdr::encode(&ServiceEvent {
            info: event.info.clone(),
            request,
            response,
        })
    }
    fn response_to_json(&self, what: &str, bytes: &[u8]) -> Result<Value> {
        let v: S::Response = cdr::decode(what, bytes)?;
        serde_json::to_value(&v).map_err(|e| Error::invalid(what, e))
    }
    fn event_to_json(&self, what: &str, bytes: &[u8]) -> Result<Value> {
        let v: ServiceEvent<S::Request, S::Response> = cdr::decode(what, bytes)?;
        serde_json::to_value(&v).map_err(|e| Error::invalid(what, e))
    }
    fn client(&self, ctx: &mut NodeContext, service: &str) -> Result<Box<dyn RawClient>> {
        Ok(Box::new(TypedClient::<S>(ctx.client::<S>(service)?)))
    }
}

static MESSAGES: &[&dyn MessageType] = &[
    &Msg::<OccupancyGrid>(PhantomData),
    &Msg::<GridMap>(PhantomData),
    &Msg::<PoseStamped>(PhantomData),
    &Msg::<PoseArray>(PhantomData),
    &Msg::<Path>(PhantomData),
    &Msg::<PointCloud2>(PhantomData),
    &Msg::<Image>(PhantomData),
    &Msg::<gp::WeightedGraph>(PhantomData),
    &Msg::<gp::ApspStatus>(PhantomData),
    &Msg::<gp::QuadricArrangement>(PhantomData),
    &Msg::<gp::CellGraph>(PhantomData),
    &Msg::<gp::Neighbors>(PhantomData),
    &Msg::<gp::RuntimeStatus>(PhantomData),
    &Msg::<MarkerArray>(PhantomData),
];

static SERVICES: &[&dyn ServiceType] = &[
    &Srv::<GetPlan>(PhantomData),
    &Srv::<gp::ShortestPath>(PhantomData),
    &Srv::<gp::ExtractPolyline>(PhantomData),
    &Srv::<gp::BuildCellGraph>(PhantomData),
    &Srv::<gp::FindRotationPath>(PhantomData),
    &Srv::<gp::KNearest>(PhantomData),
    &Srv::<gp::RadiusSearch>(PhantomData),
    &Srv::<gp::GetStatus>(PhantomData),
];

pub fn message(type_name: &str) -> Option<&'static dyn MessageType> {
    MESSAGES.iter().copied().find(|m| m.name() == type_name)
}

/// The service whose event type is `type_name` (`pkg/srv/Name_Event`).
pub fn service_of_event(type_name: &str) -> Option<&'static dyn ServiceType> {
    SERVICES
        .iter()
        .copied()
        .find(|s| s.event_name() == type_name)
}

pub fn service(type_name: &str) -> Option<&'static dyn ServiceType> {
    SERVICES.iter().copied().find(|s| s.name() == type_name)
}

/// Whether this package mirrors `type_name` (a message or a service event).
pub fn known(type_name: &str) -> bool {
    message(type_name).is_some() || service_of_event(type_name).is_some()
}

/// Any type's CDR as JSON; an unknown type is an error naming it.
pub fn to_json(type_name: &str, what: &str, bytes: &[u8]) -> Result<Value> {
    if let Some(m) = message(type_name) {
        return m.to_json(what, bytes);
    }
    if let Some(s) = service_of_event(type_name) {
        return s.event_to_json(what, bytes);
    }
    Err(Error::invalid(
        what,
        format!("type '{type_name}' is not one this package reads"),
    ))
}

/// A stamp for recorded events.
pub fn stamp_of(ns: u64) -> Time {
    Time {
        sec: i32::try_from(ns / 1_000_000_000).unwrap_or(i32::MAX),
        nanosec: (ns % 1_000_000_000) as u32,
    }
}
