//! `NodeContext`: what every node of the package shares: its ROS node (name, namespace),
//! parameters merged from the params files and `-p` overrides, name resolution with remaps,
//! and typed publishers, subscriptions, service servers and clients.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_yaml::{Mapping, Value};

use ros2_client::parameters::{NumericRange, ParameterDescriptor};
use ros2_client::{
    Client, Node, NodeName, NodeOptions, ParameterValue, Publisher, QosProfile, ServiceMapping,
    Subscription,
};

use crate::error::{Error, Result};
use crate::ros::args::Remap;
use crate::ros::clock::{self, Clock};
use crate::ros::live_params::{Live, LiveParams, NodeParams, Param};
use crate::ros::msg::rosgraph_msgs::Clock as ClockMsg;
use crate::ros::msg::{RosMessage, RosService};
use crate::ros::names;
use crate::ros::qos;
use crate::ros::runtime::RosRuntime;
use crate::ros::service::{RequestLayout, ServiceServer};

pub struct NodeContext {
    node: Node,
    namespace: String,
    name: String,
    remaps: Vec<Remap>,
    params: Mapping,
    /// How servers read requests: per request unless `service_mapping` forces one layout.
    request_layout: RequestLayout,
    /// How clients write requests (ros2-client's take one mapping).
    service_mapping: ServiceMapping,
    participant: ros2_client::dds::rustdds::DomainParticipant,
    /// Writes the replies of this node's services.
    reply_publisher: ros2_client::dds::rustdds::Publisher,
    clock: Clock,
    live: Arc<LiveParams>,
    work: crate::ros::work::NodeWork,
}

impl NodeContext {
    /// Creates node `default_name` (renamed by `__node:=`, placed by `__ns:=`) and starts its
    /// spinner on the runtime's executor.
    pub fn new(rt: &RosRuntime, default_name: &str) -> Result<NodeContext> {
        Self::with_params(rt, default_name, Mapping::new(), &[])
    }

    /// As [`Self::new`] for a node that declares `defaults` (what it runs with where no
    /// file or `-p` says otherwise: [`crate::ros::node_params::declared_defaults`]), with the
    /// ranges `ranges` gives and changing at run time those it marks dynamic (see
    /// [`crate::ros::live_params`]; the service keys' ranges and dynamic ones are every node's).
    pub fn with_params(
        rt: &RosRuntime,
        default_name: &str,
        defaults: Mapping,
        ranges: &[Param],
    ) -> Result<NodeContext> {
        let args = rt.args();
        let name = args.node_name(default_name);
        let namespace = args.namespace(default_name);
        let mut params = defaults;
        merge(
            &mut params,
            rt.params().for_node(&namespace, &name, &args.params),
        );
        let request_layout = parse_service_mapping(&name, params.get("service_mapping"))?;
        let service_mapping = match request_layout {
            RequestLayout::Cyclone => ServiceMapping::Cyclone,
            RequestLayout::Basic => ServiceMapping::Basic,
            RequestLayout::Auto | RequestLayout::Enhanced => ServiceMapping::Enhanced,
        };
        let mut options = NodeOptions::new().enable_rosout(true);
        // Expose the effective parameters to `ros2 param list/get/describe`. Those `ranges`
        // (and the service keys every node has) mark dynamic change at run time; the others are
        // read once, at start, and `ros2 param set` refuses them with that reason (to the
        // value already in effect it succeeds, changing nothing).
        let declared: std::collections::BTreeMap<String, ParameterValue> =
            flatten(&params).into_iter().collect();
        let node_label = fully_qualified(&namespace, &name);
        let table: Vec<Param> = crate::ros::node_params::SERVICE_PARAMS
            .iter()
            .chain(ranges)
            .copied()
            .collect();
        let live = Arc::new(LiveParams::new(
            node_label.clone(),
            table.clone(),
            params.clone(),
        ));
        for (key, value) in &declared {
            let entry = table.iter().find(|p| p.key == key);
            let dynamic = entry.is_some_and(|p| p.dynamic);
            let constraints = if dynamic {
                "changes at run time: the next request uses it".to_string()
            } else {
                format!("read at start: restart {node_label} with --ros-args -p {key}:=VALUE")
            };
            options = options
                .declare_parameter(key, value.clone())
                .describe_parameter(ParameterDescriptor {
                    name: key.clone(),
                    param_type: value.to_parameter_type(),
                    description: super::param_docs::description(&name, key)
                        .unwrap_or_default()
                        .to_string(),
                    additional_constraints: constraints,
                    read_only: !dynamic,
                    dynamic_typing: false,
                    range: entry.map_or(NumericRange::NotSpecified, |p| p.range.descriptor()),
                });
        }
        let checks = live.clone();
        options = options
            .parameter_validator(Box::new(move |key, value| match declared.get(key) {
                Some(v) if v == value => Ok(()),
                _ => checks.check(key, value),
            }))
            .parameter_set_action({
                let live = live.clone();
                Box::new(move |key, value| live.apply(key, value))
            });
        let node_name = NodeName::new(&namespace, &name)
            .map_err(|e| Error::invalid("node name", format!("'{namespace}/{name}': {e:?}")))?;
        let mut node = rt
            .context()
            .new_node(node_name, options)
            .map_err(|e| Error::Ros(format!("cannot create node {name}: {e:?}")))?;
        let spinner = node
            .spinner()
            .map_err(|e| Error::Ros(format!("cannot create the spinner of {name}: {e:?}")))?;
        let spin_name = name.clone();
        rt.spawn(async move {
            if let Err(e) = spinner.spin().await {
                tracing::error!("node {spin_name}: spinner stopped: {e:?}");
            }
        });
        let participant = rt.context().domain_participant();
        let reply_publisher = participant
            .create_publisher(&(&qos::service()).into())
            .map_err(|e| Error::Ros(format!("reply publisher of {name}: {e:?}")))?;
        let use_sim_time = params.get("use_sim_time").and_then(Value::as_bool) == Some(true);
        let work = crate::ros::work::NodeWork::new(rt.work().clone(), &name);
        let mut ctx = NodeContext {
            node,
            namespace,
            name,
            remaps: args.remaps.clone(),
            params,
            request_layout,
            service_mapping,
            reply_publisher,
            participant,
            clock: Clock::system(),
            live,
            work,
        };
        if use_sim_time {
            let sub = ctx.subscription::<ClockMsg>("/clock", clock::qos())?;
            ctx.clock = Clock::simulated(rt, sub, ctx.fully_qualified_name());
        }
        rt.register_node(ctx.fully_qualified_name());
        Ok(ctx)
    }

    /// The node's clock: system time, or `/clock` with `use_sim_time` (as rclcpp's
    /// `Node::now()`); outputs not derived from a stamped input are stamped with it.
    pub fn clock(&self) -> Clock {
        self.clock.clone()
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where the node counts each computation it finishes, by backend.
    pub fn work(&self) -> crate::ros::work::NodeWork {
        self.work.clone()
    }

    pub fn fully_qualified_name(&self) -> String {
        fully_qualified(&self.namespace, &self.name)
    }

    pub fn node(&self) -> &Node {
        &self.node
    }

    pub fn service_mapping(&self) -> ServiceMapping {
        self.service_mapping
    }

    /// The node's typed parameters. Unknown keys and bad values are errors naming the node and
    /// the key, so a typo in a launch file never goes unnoticed.
    pub fn params<T: DeserializeOwned>(&self) -> Result<T> {
        crate::ros::node_params::node_params(&self.params).map_err(|e| self.name_params(e))
    }

    /// The node's parameter struct `T` as it is now: updated by every accepted `ros2 param
    /// set` of a dynamic key.
    pub fn live<T: NodeParams>(&self) -> Result<Live<T>> {
        self.live.view::<T>().map_err(|e| self.name_params(e))
    }

    fn name_params(&self, e: Error) -> Error {
        match e {
            Error::InvalidInput { field, reason } if field.is_empty() => Error::invalid(
                format!("parameters of {}", self.fully_qualified_name()),
                reason,
            ),
            Error::InvalidInput { field, reason } => {
                Error::invalid(format!("{}.{field}", self.fully_qualified_name()), reason)
            }
            other => other,
        }
    }

    /// Fully qualified name after `~` expansion and remapping.
    pub fn resolve(&self, name: &str) -> Result<String> {
        names::resolve(name, &self.namespace, &self.name, &self.remaps)
    }

    fn topic<M: RosMessage>(
        &self,
        name: &str,
        qos: &QosProfile,
    ) -> Result<ros2_client::dds::rustdds::Topic> {
        self.topic_of_type(name, M::type_name(), qos)
    }

    fn topic_of_type(
        &self,
        name: &str,
        type_name: ros2_client::MessageTypeName,
        qos: &QosProfile,
    ) -> Result<ros2_client::dds::rustdds::Topic> {
        let fq = self.resolve(name)?;
        self.node
            .create_topic(&names::to_ros2_name(&fq)?, type_name, qos)
            .map_err(|e| Error::Ros(format!("topic {fq}: {e:?}")))
    }

    /// A publisher of a type known only by name at run time (`M` serializes to its CDR).
    pub fn publisher_of_type<M: Serialize>(
        &mut self,
        name: &str,
        type_name: ros2_client::MessageTypeName,
        qos: QosProfile,
    ) -> Result<Publisher<M>> {
        let topic = self.topic_of_type(name, type_name, &qos)?;
        self.node
            .create_publisher(&topic, Some(qos))
            .map_err(|e| Error::Ros(format!("publisher {name}: {e:?}")))
    }

    pub fn publisher<M: RosMessage + Serialize>(
        &mut self,
        name: &str,
        qos: QosProfile,
    ) -> Result<Publisher<M>> {
        let topic = self.topic::<M>(name, &qos)?;
        self.node
            .create_publisher(&topic, Some(qos))
            .map_err(|e| Error::Ros(format!("publisher {name}: {e:?}")))
    }

    pub fn subscription<M: RosMessage + DeserializeOwned + 'static>(
        &mut self,
        name: &str,
        qos: QosProfile,
    ) -> Result<Subscription<M>> {
        let topic = self.topic::<M>(name, &qos)?;
        self.node
            .create_subscription(&topic, Some(qos))
            .map_err(|e| Error::Ros(format!("subscription {name}: {e:?}")))
    }

    /// A server of `name` that answers Fast DDS's and Cyclone DDS's clients alike
    /// ([`crate::ros::service`]), with rmw's default service QoS.
    pub fn server<S: RosService>(
        &mut self,
        name: &str,
    ) -> Result<ServiceServer<S::Request, S::Response>> {
        let dds_type = |half: &str| format!("{}::srv::dds_::{}_{half}_", S::PACKAGE, S::NAME);
        let fq = self.resolve(name)?;
        self.server_of_types(&fq, &dds_type("Request"), &dds_type("Response"))
    }

    /// The node's name as ros2-client forms DDS names with it.
    fn node_name(&self) -> Result<NodeName> {
        NodeName::new(&self.namespace, &self.name)
            .map_err(|e| Error::invalid("node name", format!("{e:?}")))
    }

    /// A server on the fully qualified `fq` whose request and reply have the DDS type names
    /// given (an action's services are `pkg::action::dds_::Name_SendGoal_Request_`, ...).
    pub(crate) fn server_of_types<Req: ros2_client::Message, Resp: ros2_client::Message>(
        &mut self,
        fq: &str,
        dds_request: &str,
        dds_reply: &str,
    ) -> Result<ServiceServer<Req, Resp>> {
        use ros2_client::dds::rustdds::{QosPolicies, TopicKind};
        let ros_name = names::to_ros2_name(fq)?;
        let node_name = self.node_name()?;
        let inbox: QosPolicies = (&qos::service_inbox()).into();
        let outbox: QosPolicies = (&qos::service()).into();
        let topic = |kind: &str, suffix: &str, dds_type: &str, qos: &QosPolicies| {
            self.participant
                .create_topic(
                    ros_name.to_dds_name(kind, &node_name, suffix),
                    dds_type.to_string(),
                    qos,
                    TopicKind::NoKey,
                )
                .map_err(|e| Error::Ros(format!("service {fq}: {e:?}")))
        };
        let request_topic = topic("rq", "Request", dds_request, &inbox)?;
        let reply_topic = topic("rr", "Reply", dds_reply, &outbox)?;
        // Through the node, so the graph lists the service under it (rmw finds a node's
        // servers by their request readers).
        let requests = self
            .node
            .create_subscription(&request_topic, Some(qos::service_inbox()))
            .map_err(|e| Error::Ros(format!("service {fq}: request reader: {e:?}")))?;
        ServiceServer::new(
            fq.to_string(),
            self.request_layout,
            requests,
            &self.reply_publisher,
            &reply_topic,
            outbox,
        )
    }

    /// A publisher on the fully qualified `fq` of the DDS type named (an action's feedback
    /// and status topics).
    pub(crate) fn publisher_of_dds_type<M: Serialize>(
        &mut self,
        fq: &str,
        dds_type: &str,
        qos: QosProfile,
    ) -> Result<Publisher<M>> {
        use ros2_client::dds::rustdds::TopicKind;
        let ros_name = names::to_ros2_name(fq)?;
        let node_name = self.node_name()?;
        let topic = self
            .participant
            .create_topic(
                ros_name.to_dds_name("rt", &node_name, ""),
                dds_type.to_string(),
                &(&qos).into(),
                TopicKind::NoKey,
            )
            .map_err(|e| Error::Ros(format!("topic {fq}: {e:?}")))?;
        self.node
            .create_publisher(&topic, Some(qos))
            .map_err(|e| Error::Ros(format!("publisher {fq}: {e:?}")))
    }

    /// An action client of `name` (tests and tools), with rcl_action's QoS.
    pub fn action_client<G, R, F>(
        &mut self,
        name: &str,
        package: &str,
        action: &str,
    ) -> Result<ros2_client::action::ActionClient<G, R, F>>
    where
        G: ros2_client::Message + Clone + 'static,
        R: ros2_client::Message + Clone + 'static,
        F: ros2_client::Message + 'static,
    {
        let fq = self.resolve(name)?;
        // The services' replies are read with a deep history, as [`Self::client`]'s.
        let policies = ros2_client::action::ActionClientQosPolicies {
            goal_service: qos::service_inbox(),
            result_service: qos::service_inbox(),
            cancel_service: qos::service_inbox(),
            feedback_subscription: qos::service(),
            status_subscription: qos::map(),
        };
        self.node
            .create_action_client::<G, R, F>(
                self.service_mapping,
                &names::to_ros2_name(&fq)?,
                &ros2_client::ActionTypeName::new(package, action),
                policies,
            )
            .map_err(|e| Error::Ros(format!("action client {fq}: {e:?}")))
    }

    pub fn client<S: RosService>(&mut self, name: &str) -> Result<Client<S::Request, S::Response>> {
        let fq = self.resolve(name)?;
        self.node
            .create_client::<S::Request, S::Response>(
                self.service_mapping,
                &names::to_ros2_name(&fq)?,
                &S::type_name(),
                qos::service(),
                qos::service_inbox(),
            )
            .map_err(|e| Error::Ros(format!("client {fq}: {e:?}")))
    }
}

/// `service_mapping`: how requests carry their ids on the DDS wire. `auto` (the default)
/// answers each request as it came; `enhanced` forces eProsima Fast DDS's layout, `cyclone`
/// rmw_cyclonedds_cpp's, `basic` DDS-RPC's. Clients (and action clients), which ros2-client
/// builds for one mapping, use `enhanced` under `auto`.
pub fn parse_service_mapping(node: &str, v: Option<&Value>) -> Result<RequestLayout> {
    match v.map(|v| v.as_str()) {
        None | Some(Some("auto")) => Ok(RequestLayout::Auto),
        Some(Some("enhanced")) => Ok(RequestLayout::Enhanced),
        Some(Some("cyclone")) => Ok(RequestLayout::Cyclone),
        Some(Some("basic")) => Ok(RequestLayout::Basic),
        Some(other) => Err(Error::invalid(
            format!("{node}.service_mapping"),
            format!("{other:?} is not one of auto, enhanced, cyclone, basic"),
        )),
    }
}

/// `over` laid over `base`: nested maps merged key by key, anything else replaced.
fn merge(base: &mut Mapping, over: Mapping) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(Value::Mapping(b)), Value::Mapping(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// Scalars and scalar lists as ROS parameters, nested maps as dotted names.
/// `/ns/name` (or `/name` in the root namespace).
fn fully_qualified(namespace: &str, name: &str) -> String {
    format!("{}/{name}", namespace.trim_end_matches('/'))
}

pub(crate) fn flatten(m: &Mapping) -> Vec<(String, ParameterValue)> {
    fn walk(prefix: &str, m: &Mapping, out: &mut Vec<(String, ParameterValue)>) {
        for (k, v) in m {
            let Some(k) = k.as_str() else { continue };
            let key = if prefix.is_empty() {
                k.to_string()
            } else {
                format!("{prefix}.{k}")
            };
            let value = match v {
                Value::Bool(b) => ParameterValue::Boolean(*b),
                Value::Number(n) if n.is_i64() => ParameterValue::Integer(n.as_i64().unwrap_or(0)),
                Value::Number(n) => ParameterValue::Double(n.as_f64().unwrap_or(f64::NAN)),
                Value::String(s) => ParameterValue::String(s.clone()),
                Value::Mapping(inner) => {
                    walk(&key, inner, out);
                    continue;
                }
                _ => continue,
            };
            out.push((key, value));
        }
    }
    let mut out = Vec::new();
    walk("", m, &mut out);
    out
}
