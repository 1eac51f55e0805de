//! Topics of any type, played as the bytes the bag holds, as `ros2 bag play` does: a writer
//! of the player's node on the topic under the recorded type's name
//! (`pkg::msg::dds_::Name_` on the wire), with the QoS the recording offered, that sends each
//! recorded payload unchanged. Nothing is decoded, so a robot's bag (tf, scans, odometry, its
//! own message types) reaches its subscribers whether or not this package mirrors the type.

use serde::ser::{Serialize, SerializeTuple, Serializer};

use super::qos::TopicQos;
use super::types::{BoxFuture, RawPublisher};
use crate::error::{Error, Result};
use crate::ros::NodeContext;

/// One recorded payload, the XCDR1 bytes after the 4-byte encapsulation header.
///
/// It serializes as a fixed-size tuple of bytes: CDR writes a tuple with no length and a byte
/// with no alignment, so the encoder emits exactly these bytes after its own header.
#[derive(Debug, Clone)]
pub struct Verbatim(pub Vec<u8>);

impl Serialize for Verbatim {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut t = s.serialize_tuple(self.0.len())?;
        for b in &self.0 {
            t.serialize_element(b)?;
        }
        t.end()
    }
}

/// `pkg/msg/Name` as ros2-client names a topic type.
pub fn message_type_name(type_name: &str) -> Result<ros2_client::MessageTypeName> {
    match type_name.split('/').collect::<Vec<_>>().as_slice() {
        [pkg, "msg", name] if !pkg.is_empty() && !name.is_empty() => {
            Ok(ros2_client::MessageTypeName::new(pkg, name))
        }
        _ => Err(Error::invalid(
            "type",
            format!("'{type_name}' is not pkg/msg/Name"),
        )),
    }
}

/// The payload of a recorded message: little-endian CDR only (what every RMW writes).
pub fn payload<'a>(what: &str, cdr: &'a [u8]) -> Result<&'a [u8]> {
    match cdr.get(..4) {
        Some([0, 1, _, _]) => Ok(&cdr[4..]),
        Some(h) => Err(Error::invalid(
            what,
            format!(
                "encapsulation {:02x} {:02x} is not CDR little endian (00 01)",
                h[0], h[1]
            ),
        )),
        None => Err(Error::invalid(
            what,
            format!("{} bytes: too short for a CDR message", cdr.len()),
        )),
    }
}

struct RawWriter {
    topic: String,
    publisher: ros2_client::Publisher<Verbatim>,
}

impl RawPublisher for RawWriter {
    fn publish<'a>(&'a self, cdr: &'a [u8]) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let body = Verbatim(payload(&self.topic, cdr)?.to_vec());
            self.publisher
                .async_publish(body)
                .await
                .map_err(|e| Error::Ros(format!("publishing {}: {e:?}", self.topic)))
        })
    }

    fn wait_matched<'a>(&'a self, node: &'a ros2_client::Node) -> BoxFuture<'a, ()> {
        Box::pin(self.publisher.wait_for_subscription(node))
    }
}

/// A writer of `topic` of any message type `type_name` (`pkg/msg/Name`).
pub fn publisher(
    ctx: &mut NodeContext,
    topic: &str,
    type_name: &str,
    qos: TopicQos,
) -> Result<Box<dyn RawPublisher>> {
    let ty = message_type_name(type_name)?;
    let publisher = ctx.publisher_of_type::<Verbatim>(topic, ty, qos.profile())?;
    Ok(Box::new(RawWriter {
        topic: topic.to_string(),
        publisher,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_follow_rosidl() {
        assert_eq!(
            message_type_name("tf2_msgs/msg/TFMessage")
                .unwrap()
                .dds_msg_type(),
            "tf2_msgs::msg::dds_::TFMessage_"
        );
        for bad in ["String", "std_msgs/String", "/msg/X", "a/srv/c", "a/msg/"] {
            assert!(message_type_name(bad).is_err(), "{bad}");
        }
    }

    /// The encoder adds nothing to a verbatim payload: no length, no padding, at any
    /// alignment-sensitive length.
    #[test]
    fn verbatim_payloads_encode_to_their_own_bytes() {
        for n in [0usize, 1, 3, 4, 7, 8, 13, 1000] {
            let bytes: Vec<u8> = (0..n).map(|i| (i * 37 % 251) as u8).collect();
            let cdr = super::super::cdr::encode(&Verbatim(bytes.clone())).unwrap();
            assert_eq!(payload("t", &cdr).unwrap(), bytes.as_slice());
        }
        assert!(payload("t", &[0, 0, 0, 0, 1]).is_err());
        assert!(payload("t", &[0, 1]).is_err());
    }
}
