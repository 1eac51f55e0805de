//! Service servers that answer every RMW's clients, told apart per request.
//!
//! ROS 2's RMWs carry a request's identity differently on the DDS wire. rmw_fastrtps (and
//! ros2-client's `Enhanced` mapping) sends the bare request and names the client in the
//! RELATED_SAMPLE_IDENTITY inline QoS of the DATA submessage; the reply carries the request's
//! identity back in the same inline QoS. rmw_cyclonedds puts a 16-byte header (the client's
//! 64-bit id and the request's int64 sequence number) in front of the request and expects it in
//! front of the reply. ros2-client's `Server` is built for one mapping, so a node on its default
//! decoded Cyclone requests as if their header were the first fields of the request. This server
//! reads the raw sample with its writer's GUID and inline QoS and decides per request (`Auto`,
//! `carries_cyclone_header`): the header when the writer is Eclipse Cyclone DDS's and sent no
//! related sample identity (rmw_cyclonedds), or when the header names the writer (ros2-client's
//! `Cyclone` clients); otherwise the bare request (rmw_fastrtps, ros2-client's `Enhanced`
//! clients, which send no inline QoS: their sample's own identity is the request id). Content
//! alone cannot decide: a bare request can also decode exactly after skipping 16 bytes.
//!
//! In every case the request must decode exactly: the bytes after it may only be the zero
//! padding to a 4-byte boundary. Anything else is refused with a log line and never served.
//! `service_mapping` still forces one layout.
//!
//! A reply is written once the reply writer has matched a reader of the client's participant,
//! or after ros2-client's [`REPLY_WAIT`](ros2_client::service::REPLY_WAIT) ([`ReplyGate`]): replies are volatile, and a client
//! whose reader this side has not matched yet (discovery is not symmetric in time) would never
//! see its answer.

use std::marker::PhantomData;

use futures::{Stream, StreamExt};
use ros2_client::dds::rustdds::{
    self, bytes::Bytes, no_key, rpc::SampleIdentity, serialization, GuidPrefix,
    RepresentationIdentifier, SequenceNumber, WriteOptionsBuilder, GUID,
};
use ros2_client::service::ReplyGate;
use ros2_client::{Message, MessageInfo, RmwRequestId, Subscription};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// How a server reads request identities: `Auto` tells them apart per request; the others are
/// ros2-client's mappings, forced for every request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestLayout {
    Auto,
    Enhanced,
    Cyclone,
    Basic,
}

impl RequestLayout {
    /// The `service_mapping` value naming this layout.
    fn name(self) -> &'static str {
        match self {
            RequestLayout::Auto => "auto",
            RequestLayout::Enhanced => "enhanced",
            RequestLayout::Cyclone => "cyclone",
            RequestLayout::Basic => "basic",
        }
    }
}

/// Which request a reply answers, in the form its client expects it back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestId {
    /// The identity for the reply's RELATED_SAMPLE_IDENTITY (and the Basic reply header).
    identity: SampleIdentity,
    /// How the request came: the reply is laid out the same way.
    layout: RequestLayout,
    /// rmw_cyclonedds's header, echoed in front of the reply unchanged.
    cyclone_header: [u8; CYCLONE_HEADER],
    /// The client's participant, whose reply reader the reply must reach.
    client: [u8; 12],
}

impl RequestId {
    /// The layout the request was read with (`enhanced`, `cyclone` or `basic`).
    pub fn layout(&self) -> &'static str {
        self.layout.name()
    }
}

/// rmw_cyclonedds's `cdds_request_header_t`: `uint64_t guid; int64_t seq;`.
const CYCLONE_HEADER: usize = 16;

/// A DDS sample's serialized payload after its encapsulation header, taken whole, with the
/// representation it came in (its numbers' byte order: a CDR_BE request is as valid as a
/// CDR_LE one).
///
/// Only meaningful under the CDR deserializer, which hands out the payload one element at a
/// time and fails (without consuming) once it is exhausted; ros2-client's subscriptions
/// expose the sample's inline QoS only through a typed `take`, so this is how the raw bytes
/// come with it. Byte by byte (endianness-free) costs about 2.8 ns a byte (16 MiB in 47 ms
/// on the build machine): 0.3 ms for a 10,000-query knn request.
#[derive(Debug, Clone)]
pub struct Payload {
    pub bytes: Vec<u8>,
    pub encoding: RepresentationIdentifier,
}

impl Payload {
    /// Bytes in CDR little-endian.
    pub fn little_endian(bytes: Vec<u8>) -> Payload {
        Payload {
            bytes,
            encoding: RepresentationIdentifier::CDR_LE,
        }
    }
}

impl<'de> Deserialize<'de> for Payload {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Rest;
        impl<'de> serde::de::Visitor<'de> for Rest {
            type Value = Payload;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("the bytes of a serialized payload")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<Payload, A::Error> {
                let mut bytes = Vec::new();
                // The end of the input is the end of the payload.
                while let Ok(Some(b)) = seq.next_element::<u8>() {
                    bytes.push(b);
                }
                // The byte order is the encapsulation's, which only the decode knows (the
                // vendored RustDDS says it for the decode in progress).
                let encoding = rustdds::serialization::decoding_representation()
                    .unwrap_or(RepresentationIdentifier::CDR_LE);
                Ok(Payload { bytes, encoding })
            }
        }
        d.deserialize_tuple(usize::MAX, Rest)
    }
}

/// Writes prepared payloads as they are (CDR little-endian).
struct PassThrough;

impl no_key::SerializerAdapter<Bytes> for PassThrough {
    type Error = std::convert::Infallible;
    fn output_encoding() -> RepresentationIdentifier {
        RepresentationIdentifier::CDR_LE
    }
    fn to_bytes(value: &Bytes) -> std::result::Result<Bytes, Self::Error> {
        Ok(value.clone())
    }
}

/// The request reader and reply writer of one service.
pub struct ServiceServer<Req, Resp> {
    name: String,
    layout: RequestLayout,
    requests: Subscription<Payload>,
    replies: no_key::DataWriter<Bytes, PassThrough>,
    /// The replies' waits for their clients' readers.
    gate: ReplyGate,
    _types: PhantomData<fn(Req) -> Resp>,
}

impl<Req: Message, Resp: Message> ServiceServer<Req, Resp> {
    pub(crate) fn new(
        name: String,
        layout: RequestLayout,
        requests: Subscription<Payload>,
        reply_publisher: &rustdds::Publisher,
        reply_topic: &rustdds::Topic,
        reply_qos: rustdds::QosPolicies,
    ) -> Result<Self> {
        let replies = reply_publisher
            .create_datawriter_no_key::<Bytes, PassThrough>(reply_topic, Some(reply_qos))
            .map_err(|e| Error::Ros(format!("service {name}: reply writer: {e:?}")))?;
        Ok(ServiceServer {
            name,
            layout,
            requests,
            replies,
            gate: ReplyGate::default(),
            _types: PhantomData,
        })
    }

    /// Every request as it arrives; one that cannot be read is an error naming why (it cannot
    /// be answered: without a decoded request there is no identity to answer).
    pub fn receive_request_stream(&self) -> impl Stream<Item = Result<(RequestId, Req)>> + '_ {
        self.requests.async_stream().map(move |item| {
            let (payload, info) =
                item.map_err(|e| Error::Ros(format!("{}: request not read: {e:?}", self.name)))?;
            read_request::<Req>(self.layout, &payload, &info)
                .map_err(|e| Error::Ros(format!("{}: request refused: {e}", self.name)))
        })
    }

    /// Answers `id` in the layout its request came in.
    pub async fn async_send_response(&self, id: RequestId, response: Resp) -> Result<()> {
        let payload = write_reply(&id, &response)?;
        let client = GuidPrefix::new(&id.client);
        let replies = &self.replies;
        self.gate
            .wait(client, || replies.has_matched_reader_of(client))
            .await;
        let options = WriteOptionsBuilder::new()
            .source_timestamp(rustdds::Timestamp::now())
            .related_sample_identity(id.identity)
            .build();
        self.replies
            .async_write_with_options(payload, options)
            .await
            .map(|_| ())
            .map_err(|e| Error::Ros(format!("{}: reply not written: {e:?}", self.name)))
    }
}

/// Reads one request in `layout` (`Auto`: from what arrived, as the module says).
pub fn read_request<Req: Message>(
    layout: RequestLayout,
    payload: &Payload,
    info: &MessageInfo,
) -> std::result::Result<(RequestId, Req), String> {
    let encoding = payload.encoding;
    let payload = &payload.bytes[..];
    let own = SampleIdentity {
        writer_guid: info.publisher_gid().into(),
        sequence_number: SequenceNumber::from(info.sequence_number()),
    };
    let related = info.related_request_id().map(|r| related_identity(r, info));
    // Every RMW's client writes requests and reads replies in one participant.
    let mut client = [0; 12];
    client.copy_from_slice(&own.writer_guid.to_bytes()[..12]);
    let enhanced = || -> std::result::Result<(RequestId, Req), String> {
        let req = exact::<Req>(payload, encoding)?;
        Ok((
            RequestId {
                identity: related.unwrap_or(own),
                layout: RequestLayout::Enhanced,
                cyclone_header: [0; CYCLONE_HEADER],
                client,
            },
            req,
        ))
    };
    let cyclone = || -> std::result::Result<(RequestId, Req), String> {
        let Some((header, body)) = payload.split_first_chunk::<CYCLONE_HEADER>() else {
            return Err(format!(
                "{} bytes, shorter than the 16-byte request header of rmw_cyclonedds",
                payload.len()
            ));
        };
        // The header is 8-aligned, so the request after it keeps its CDR alignment.
        let req = exact::<Req>(body, encoding)?;
        Ok((
            RequestId {
                identity: own,
                layout: RequestLayout::Cyclone,
                cyclone_header: *header,
                client,
            },
            req,
        ))
    };
    let basic = || -> std::result::Result<(RequestId, Req), String> {
        let (header, req) = exact::<(BasicRequestHeader, Req)>(payload, encoding)?;
        Ok((
            RequestId {
                identity: header.request_id,
                layout: RequestLayout::Basic,
                cyclone_header: [0; CYCLONE_HEADER],
                client,
            },
            req,
        ))
    };
    match layout {
        RequestLayout::Enhanced => enhanced(),
        RequestLayout::Cyclone => cyclone(),
        RequestLayout::Basic => basic(),
        RequestLayout::Auto if carries_cyclone_header(payload, info) => cyclone(),
        // Under DDS Security no vendor can be read from the writer's GUID: with no related
        // identity (which rmw_cyclonedds never sends, and rmw_fastrtps and ros2-client always
        // do), rmw_cyclonedds's header is tried first, then the bare request.
        RequestLayout::Auto if is_secured_guid(info) && info.related_request_id().is_none() => {
            cyclone().or_else(|_| enhanced())
        }
        RequestLayout::Auto => enhanced(),
    }
}

/// Whether the writer's GUID prefix is a secured participant's: DDS Security's adjusted prefix
/// has its first bit set (the rest from the hash of its certificate's subject, 9.3.3), where a
/// vendor's prefix begins with its vendor id, 0x01 and the vendor's number.
fn is_secured_guid(info: &MessageInfo) -> bool {
    GUID::from(info.publisher_gid()).to_bytes()[0] & 0x80 != 0
}

/// Whether a request came with rmw_cyclonedds's header: it does when its writer is Eclipse
/// Cyclone DDS's (a GUID prefix starts with the vendor id, as RTPS recommends and Cyclone, Fast
/// DDS and RustDDS do) and sent no related sample identity (rmw_cyclonedds never does), or
/// when the header names the writer itself, as ros2-client's `Cyclone` clients write it (the
/// lower 8 bytes of their request writer's GUID).
fn carries_cyclone_header(payload: &[u8], info: &MessageInfo) -> bool {
    const ECLIPSE_CYCLONE: [u8; 2] = [0x01, 0x10];
    let writer = GUID::from(info.publisher_gid()).to_bytes();
    let cyclone_writer = writer[..2] == ECLIPSE_CYCLONE && info.related_request_id().is_none();
    cyclone_writer || payload.get(..8) == Some(&writer[8..16])
}

/// The identity a Fast DDS client looks for in the reply: the reply reader it named, with the
/// request's own sequence number where it left that unknown (as rmw_fastrtps does).
fn related_identity(related: RmwRequestId, info: &MessageInfo) -> SampleIdentity {
    let mut identity = SampleIdentity::from(related);
    if identity.sequence_number == SequenceNumber::UNKNOWN {
        identity.sequence_number = SequenceNumber::from(info.sequence_number());
    }
    identity
}

/// Decodes `T` from all of `bytes` in `encoding` (plain CDR of either byte order): what is left
/// may only be zero padding to 4 bytes.
fn exact<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
    encoding: RepresentationIdentifier,
) -> std::result::Result<T, String> {
    // RustDDS's CDR reader takes CDR_LE, CDR_BE and PL_CDR_LE; a parameter list is not a
    // request.
    if ![
        RepresentationIdentifier::CDR_LE,
        RepresentationIdentifier::CDR_BE,
    ]
    .contains(&encoding)
    {
        return Err("the payload is not plain CDR (CDR_LE or CDR_BE)".into());
    }
    let (value, used) = serialization::deserialize_from_cdr_with_rep_id::<T>(bytes, encoding)
        .map_err(|e| format!("{} bytes do not decode: {e}", bytes.len()))?;
    let rest = &bytes[used.min(bytes.len())..];
    if rest.len() >= 4 || rest.iter().any(|&b| b != 0) {
        return Err(format!(
            "{} of {} bytes left over after the request",
            rest.len(),
            bytes.len()
        ));
    }
    Ok(value)
}

/// The reply's payload: the request's header (Cyclone, Basic) then the response, one CDR
/// stream so the response keeps its alignment.
fn write_reply<Resp: Serialize>(id: &RequestId, response: &Resp) -> Result<Bytes> {
    let encode = |r: std::result::Result<Vec<u8>, _>| {
        r.map(Bytes::from)
            .map_err(|e| Error::Ros(format!("reply not encoded: {e:?}")))
    };
    type Le = byteorder::LittleEndian;
    match id.layout {
        RequestLayout::Enhanced | RequestLayout::Auto => {
            encode(rustdds::cdr_encoding::to_vec::<_, Le>(response))
        }
        RequestLayout::Cyclone => {
            let header = Header16(id.cyclone_header);
            encode(rustdds::cdr_encoding::to_vec::<_, Le>(&(header, response)))
        }
        RequestLayout::Basic => {
            let header = BasicReplyHeader {
                related_request_id: id.identity,
                remote_exception_code: 0,
            };
            encode(rustdds::cdr_encoding::to_vec::<_, Le>(&(header, response)))
        }
    }
}

/// The Cyclone header as 16 plain bytes (serde's arrays stop at 32 but are tuples: no length).
#[derive(Serialize)]
struct Header16([u8; CYCLONE_HEADER]);

/// DDS-RPC's basic mapping (section 7.5.1.1.1), as ros2-client writes it.
#[derive(Serialize, Deserialize)]
struct BasicRequestHeader {
    request_id: SampleIdentity,
    instance_name: String,
}

#[derive(Serialize, Deserialize)]
struct BasicReplyHeader {
    related_request_id: SampleIdentity,
    remote_exception_code: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ros::msg::geometry_msgs::{Point, Pose, PoseStamped};
    use crate::ros::msg::gpu_planning_msgs::{GetStatusRequest, KNearestRequest};
    use crate::ros::msg::nav_msgs::{GetPlanRequest, GetPlanResponse};
    use crate::ros::msg::std_msgs::Header;
    use ros2_client::Gid;

    type Le = byteorder::LittleEndian;

    const FAST_DDS: [u8; 2] = [0x01, 0x0f];
    const CYCLONE: [u8; 2] = [0x01, 0x10];
    const RUSTDDS: [u8; 2] = [0x01, 0x12];

    fn request() -> GetPlanRequest {
        let at = |x: f64, y: f64| PoseStamped {
            header: Header {
                frame_id: "map".into(),
                ..Default::default()
            },
            pose: Pose {
                position: Point { x, y, z: 0.0 },
                ..Default::default()
            },
        };
        GetPlanRequest {
            start: at(1.5, 2.5),
            goal: at(7.25, 3.0),
            tolerance: 0.5,
        }
    }

    fn cdr<T: Serialize>(v: &T) -> Vec<u8> {
        rustdds::cdr_encoding::to_vec::<_, Le>(v).unwrap()
    }

    /// An entity of a participant of `vendor` (the first bytes of its GUID prefix).
    fn gid(vendor: [u8; 2], entity_kind: u8) -> Gid {
        let mut b = [7u8; 16];
        b[..2].copy_from_slice(&vendor);
        b[15] = entity_kind;
        Gid::from(b)
    }

    /// A sample of sequence number 42 from `writer`, with or without a related identity.
    fn info(writer: Gid, related: Option<RmwRequestId>) -> MessageInfo {
        MessageInfo::new(None, None, 42, writer, related)
    }

    fn le(bytes: &[u8]) -> Payload {
        Payload::little_endian(bytes.to_vec())
    }

    fn with_header(guid_half: [u8; 8], seq: i64, body: &[u8]) -> Vec<u8> {
        [&guid_half[..], &seq.to_le_bytes(), body].concat()
    }

    #[test]
    fn fast_dds_requests_are_read_bare_and_answered_to_the_reply_reader() {
        // As rmw_fastrtps: its reply reader named, the sequence number left unknown.
        let related = RmwRequestId {
            writer_gid: gid(FAST_DDS, 0x04),
            sequence_number: i64::from(SequenceNumber::UNKNOWN),
        };
        let meta = info(gid(FAST_DDS, 0x03), Some(related));
        let (id, req) =
            read_request::<GetPlanRequest>(RequestLayout::Auto, &le(&cdr(&request())), &meta)
                .unwrap();
        assert_eq!(req, request());
        assert_eq!(id.layout(), "enhanced");
        assert_eq!(id.identity.writer_guid, GUID::from(gid(FAST_DDS, 0x04)));
        assert_eq!(id.identity.sequence_number, SequenceNumber::from(42i64));
        let reply = GetPlanResponse::default();
        assert_eq!(write_reply(&id, &reply).unwrap().to_vec(), cdr(&reply));
    }

    #[test]
    fn cyclone_requests_are_read_after_their_header_and_answered_with_it() {
        let payload = with_header([0x5a; 8], 9, &cdr(&request()));
        let meta = info(gid(CYCLONE, 0x03), None);
        let (id, req) =
            read_request::<GetPlanRequest>(RequestLayout::Auto, &le(&payload), &meta).unwrap();
        assert_eq!((req, id.layout()), (request(), "cyclone"));
        let reply = GetPlanResponse::default();
        let expected = [&payload[..CYCLONE_HEADER], &cdr(&reply)[..]].concat();
        assert_eq!(write_reply(&id, &reply).unwrap().to_vec(), expected);
        // The same bytes forced bare: the header is not taken for the start pose.
        let e = read_request::<GetPlanRequest>(RequestLayout::Enhanced, &le(&payload), &meta);
        assert!(e.is_err(), "{:?}", e.map(|x| x.1));
    }

    #[test]
    fn ros2_client_requests_of_both_mappings_are_told_apart() {
        // A bare request that also decodes exactly after 16 skipped bytes: content alone
        // cannot tell the layouts apart.
        let knn = KNearestRequest {
            dimensions: 3,
            points: vec![1.0, 2.0, 0.0, 0.0],
            k: 5,
        };
        let bare = cdr(&knn);
        let skipped =
            exact::<KNearestRequest>(&bare[CYCLONE_HEADER..], RepresentationIdentifier::CDR_LE)
                .unwrap();
        assert_ne!(skipped, knn);
        // ros2-client's Enhanced clients: no inline QoS, no header.
        let writer = gid(RUSTDDS, 0x03);
        let (id, req) =
            read_request::<KNearestRequest>(RequestLayout::Auto, &le(&bare), &info(writer, None))
                .unwrap();
        assert_eq!((&req, id.layout()), (&knn, "enhanced"));
        assert_eq!(id.identity.writer_guid, GUID::from(writer));
        // Its Cyclone clients: a related identity, and a header naming the writer.
        let mut half = [0u8; 8];
        half.copy_from_slice(&GUID::from(writer).to_bytes()[8..]);
        let payload = with_header(half, 9, &bare);
        let related = Some(RmwRequestId {
            writer_gid: writer,
            sequence_number: 9,
        });
        let (id, req) = read_request::<KNearestRequest>(
            RequestLayout::Auto,
            &le(&payload),
            &info(writer, related),
        )
        .unwrap();
        assert_eq!((&req, id.layout()), (&knn, "cyclone"));
    }

    #[test]
    fn requests_that_do_not_decode_exactly_are_refused() {
        let bare = cdr(&request());
        let fast = info(
            gid(FAST_DDS, 0x03),
            Some(RmwRequestId {
                writer_gid: gid(FAST_DDS, 0x04),
                sequence_number: 1,
            }),
        );
        let cyclone = info(gid(CYCLONE, 0x03), None);
        let mut longer = bare.clone();
        longer.extend([0u8; 8]);
        let cut = &bare[..bare.len() - 2];
        for (body, what) in [(&longer[..], "8 zero bytes more"), (cut, "2 bytes less")] {
            let r = read_request::<GetPlanRequest>(RequestLayout::Auto, &le(body), &fast);
            assert!(r.is_err(), "{what} was read bare");
            let payload = with_header([1; 8], 1, body);
            let r = read_request::<GetPlanRequest>(RequestLayout::Auto, &le(&payload), &cyclone);
            assert!(r.is_err(), "{what} was read after a header");
        }
        // A secured participant's writer (no vendor in its GUID) with no related identity:
        // rmw_cyclonedds's header when the request decodes after it, else the bare request;
        // neither, refused.
        let secured = info(gid([0x8c, 0xf3], 0x03), None);
        let payload = with_header([5; 8], 9, &bare);
        let (id, req) =
            read_request::<GetPlanRequest>(RequestLayout::Auto, &le(&payload), &secured).unwrap();
        assert_eq!((id.layout, req), (RequestLayout::Cyclone, request()));
        let (id, req) =
            read_request::<GetPlanRequest>(RequestLayout::Auto, &le(&bare), &secured).unwrap();
        assert_eq!((id.layout, req), (RequestLayout::Enhanced, request()));
        assert!(
            read_request::<GetPlanRequest>(RequestLayout::Auto, &le(&longer), &secured).is_err()
        );
        // A bare request from a Cyclone writer: the header would be its first 16 bytes.
        let r = read_request::<GetPlanRequest>(RequestLayout::Auto, &le(&bare), &cyclone);
        assert!(r.is_err(), "{:?}", r.map(|x| x.1));
        let short =
            read_request::<GetPlanRequest>(RequestLayout::Cyclone, &le(&bare[..10]), &cyclone);
        assert!(short.unwrap_err().contains("shorter than the 16-byte"));
        // Zero padding to the next 4-byte boundary is CDR's, not extra data: a one-byte
        // request with 3 zero bytes is read, with 4 or a non-zero byte it is not.
        let flag = cdr(&GetStatusRequest {
            refresh_memory: true,
        });
        assert_eq!(flag.len(), 1);
        for (pad, ok) in [
            (&[0u8, 0, 0][..], true),
            (&[0, 0, 0, 0], false),
            (&[0, 1, 0], false),
        ] {
            let payload = [&flag[..], pad].concat();
            let r = read_request::<GetStatusRequest>(RequestLayout::Auto, &le(&payload), &fast);
            assert_eq!(r.is_ok(), ok, "padding {pad:?}");
        }
    }

    #[test]
    fn basic_requests_keep_the_alignment_of_what_follows_their_header() {
        let identity = SampleIdentity {
            writer_guid: GUID::from(gid(RUSTDDS, 0x03)),
            sequence_number: SequenceNumber::from(17i64),
        };
        let header = BasicRequestHeader {
            request_id: identity,
            instance_name: String::new(),
        };
        let payload = cdr(&(header, request()));
        let meta = info(gid(RUSTDDS, 0x03), None);
        let (id, req) =
            read_request::<GetPlanRequest>(RequestLayout::Basic, &le(&payload), &meta).unwrap();
        assert_eq!(req, request());
        assert_eq!(id.identity, identity);
        let reply = GetPlanResponse::default();
        let bytes = write_reply(&id, &reply).unwrap();
        let (back, used) =
            rustdds::cdr_encoding::from_bytes::<(BasicReplyHeader, GetPlanResponse), Le>(&bytes)
                .unwrap();
        assert_eq!((back.0.related_request_id, back.1), (identity, reply));
        assert_eq!(used, bytes.len());
    }

    #[test]
    fn big_endian_requests_are_read_in_their_byte_order() {
        // As the request reader decodes a sample: its encapsulation says CDR_BE.
        let be = rustdds::cdr_encoding::to_vec::<_, byteorder::BigEndian>(&request()).unwrap();
        assert_ne!(be, cdr(&request()));
        let (payload, _) = serialization::deserialize_from_cdr_with_rep_id::<Payload>(
            &be,
            RepresentationIdentifier::CDR_BE,
        )
        .unwrap();
        assert_eq!(payload.encoding, RepresentationIdentifier::CDR_BE);
        let meta = info(gid(FAST_DDS, 0x03), None);
        let (_, req) =
            read_request::<GetPlanRequest>(RequestLayout::Enhanced, &payload, &meta).unwrap();
        assert_eq!(req, request());
        // The same bytes taken as little-endian are another request, or none.
        let wrong = read_request::<GetPlanRequest>(RequestLayout::Enhanced, &le(&be), &meta);
        assert_ne!(wrong.ok().map(|r| r.1), Some(request()));
        // A fixed-size request, where a wrong byte order still decodes "exactly".
        let knn = KNearestRequest {
            dimensions: 2,
            points: vec![1.5, -2.0],
            k: 3,
        };
        let be = rustdds::cdr_encoding::to_vec::<_, byteorder::BigEndian>(&knn).unwrap();
        let (payload, _) = serialization::deserialize_from_cdr_with_rep_id::<Payload>(
            &be,
            RepresentationIdentifier::CDR_BE,
        )
        .unwrap();
        let (_, req) =
            read_request::<KNearestRequest>(RequestLayout::Enhanced, &payload, &meta).unwrap();
        assert_eq!(req, knn);
        // A parameter list is not a request.
        let pl = Payload {
            bytes: cdr(&request()),
            encoding: RepresentationIdentifier::PL_CDR_LE,
        };
        let e = read_request::<GetPlanRequest>(RequestLayout::Enhanced, &pl, &meta).unwrap_err();
        assert!(e.contains("not plain CDR"), "{e}");
    }

    fn participant(b: u8) -> GuidPrefix {
        GuidPrefix::new(&[b; 12])
    }

    #[test]
    fn a_reply_waits_until_its_clients_reader_is_matched() {
        let gate = ReplyGate::default();
        let looks = std::sync::atomic::AtomicUsize::new(0);
        let reached = smol::block_on(gate.wait(participant(1), || {
            looks.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= 3
        }));
        assert!(reached);
        assert_eq!(looks.into_inner(), 4);
    }

    #[test]
    fn a_client_whose_reader_never_came_is_not_waited_for_again_until_it_comes() {
        use ros2_client::service::REPLY_WAIT;
        use std::time::Instant;
        let gate = ReplyGate::default();
        let start = Instant::now();
        assert!(!smol::block_on(gate.wait(participant(2), || false)));
        assert!(start.elapsed() >= REPLY_WAIT);
        assert_eq!(gate.given_up_on(), 1);
        let again = Instant::now();
        assert!(!smol::block_on(gate.wait(participant(2), || false)));
        assert!(again.elapsed() < REPLY_WAIT);
        // Matched at last, it is forgotten: a later reply of it waits again.
        assert!(smol::block_on(gate.wait(participant(2), || true)));
        assert_eq!(gate.given_up_on(), 0);
    }

    #[test]
    fn a_payload_is_taken_whole_by_the_cdr_deserializer() {
        for n in [0usize, 1, 3, 4, 5, 17, 1000] {
            let bytes: Vec<u8> = (0..n).map(|i| (i * 37 % 251) as u8).collect();
            let (p, used) = rustdds::cdr_encoding::from_bytes::<Payload, Le>(&bytes).unwrap();
            assert_eq!((p.bytes, used), (bytes.clone(), n));
        }
    }
}
