//! A reply waits for its client's reply reader. A client calls once it has matched the
//! server's request reader; the server may match the client's reply reader later (discovery
//! is not symmetric in time, and a loaded machine stretches it), and a reply written before
//! that is lost: replies are volatile. `ros2 param list` then waits for ever (rclpy's
//! `spin_until_future_complete` without a timeout), which one CI run of the real-ROS-2 checks
//! saw. Here a raw DDS client sends its request, and only half a second later creates the reader
//! its reply goes to: both kinds of server the nodes run (ros2-client's parameter services and
//! gpu_planning's own) must still answer it.

use std::time::{Duration, Instant};

use gpu_planning::ros::msg::gpu_planning_msgs::{GetStatusRequest, GetStatusResponse};
use gpu_planning::ros::{qos, ParamsFile, RosArgs, RosRuntime};
use ros2_client::dds::rustdds::{
    CDRDeserializerAdapter, CDRSerializerAdapter, DomainParticipant, QosPolicies, RTPSEntity,
    TopicKind,
};
use serde::{de::DeserializeOwned, Deserialize, Serialize};

use crate::common;

/// How long after its request the client creates its reply reader: longer than the 100 ms
/// the servers once waited, shorter than their bound (ros2-client's `REPLY_WAIT`).
const READER_LATE_BY: Duration = Duration::from_millis(500);

#[derive(Serialize)]
struct ListParametersRequest {
    prefixes: Vec<String>,
    depth: u64,
}

#[derive(Deserialize)]
struct ListParametersResponse {
    names: Vec<String>,
    _prefixes: Vec<String>,
}

/// Sends `request` on `rq/{service}Request` once the server's request reader is matched,
/// creates the reply reader `READER_LATE_BY` later, and returns the reply, or None when none
/// comes within 10 s.
fn call_with_a_late_reader<Req: Serialize + 'static, Resp: DeserializeOwned + 'static>(
    dp: &DomainParticipant,
    server: &RosRuntime,
    service: &str,
    type_name: &str,
    request: Req,
) -> Option<Resp> {
    let qos: QosPolicies = (&qos::service()).into();
    let rq = dp
        .create_topic(
            format!("rq{service}Request"),
            format!("{type_name}_Request_"),
            &qos,
            TopicKind::NoKey,
        )
        .unwrap();
    let rr = dp
        .create_topic(
            format!("rr{service}Reply"),
            format!("{type_name}_Response_"),
            &qos,
            TopicKind::NoKey,
        )
        .unwrap();
    let writer = dp
        .create_publisher(&qos)
        .unwrap()
        .create_datawriter_no_key::<Req, CDRSerializerAdapter<Req>>(&rq, None)
        .unwrap();
    let server_prefix = server.context().domain_participant().guid().prefix;
    let until = Instant::now() + Duration::from_secs(20);
    while !writer.has_matched_reader_of(server_prefix) {
        assert!(
            Instant::now() < until,
            "{service}: the server's request reader was not matched within 20 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        writer.write(request, None).is_ok(),
        "{service}: request not written"
    );
    std::thread::sleep(READER_LATE_BY);
    let mut reader = dp
        .create_subscriber(&qos)
        .unwrap()
        .create_datareader_no_key::<Resp, CDRDeserializerAdapter<Resp>>(&rr, None)
        .unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        if let Ok(Some(sample)) = reader.take_next_sample() {
            return Some(sample.into_value());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

#[test]
fn a_reply_reaches_a_client_whose_reader_the_server_matched_after_its_request() {
    let domain = common::unique_domain();
    let (args, _) = RosArgs::parse(&["--ros-args", "-p", "backend:=cpu"]).unwrap();
    let server = RosRuntime::new(args, ParamsFile::default(), Some(domain)).unwrap();
    gpu_planning::nodes::start(&server, &["gpu_planning"]).unwrap();
    let _bg = common::run_in_background(&server);
    let client = DomainParticipant::new(domain).unwrap();

    let params: Option<ListParametersResponse> = call_with_a_late_reader(
        &client,
        &server,
        "/gpu_planning/list_parameters",
        "rcl_interfaces::srv::dds_::ListParameters",
        ListParametersRequest {
            prefixes: vec![],
            depth: 0,
        },
    );
    let names = params
        .expect("no reply from ros2-client's parameter service (list_parameters)")
        .names;
    assert!(names.iter().any(|n| n == "backend"), "{names:?}");

    let status: Option<GetStatusResponse> = call_with_a_late_reader(
        &client,
        &server,
        "/gpu_planning/get_status",
        "gpu_planning_msgs::srv::dds_::GetStatus",
        GetStatusRequest {
            refresh_memory: false,
        },
    );
    let status = status
        .expect("no reply from gpu_planning's own service (get_status)")
        .status;
    assert_eq!(status.backend, "cpu");
    server.shutdown().trigger();
}
