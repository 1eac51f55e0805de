//! Serialized messages as rosbag2 stores them: the 4-byte encapsulation header (CDR little
//! endian, `00 01 00 00`) and then the XCDR1 payload, exactly the bytes of a DDS sample.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{Error, Result};

type Le = byteorder::LittleEndian;

const CDR_LE: [u8; 4] = [0, 1, 0, 0];

pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    let payload = ros2_client::dds::rustdds::cdr_encoding::to_vec::<T, Le>(value)
        .map_err(|e| Error::invalid("message", format!("not encodable as CDR: {e}")))?;
    let mut out = Vec::with_capacity(4 + payload.len());
    out.extend_from_slice(&CDR_LE);
    out.extend_from_slice(&payload);
    Ok(out)
}

/// Decodes a serialized message; `what` names it in errors (topic and index).
pub fn decode<T: DeserializeOwned>(what: &str, bytes: &[u8]) -> Result<T> {
    match bytes.get(..4) {
        Some(h) if h[..2] == CDR_LE[..2] => {}
        Some(h) => {
            return Err(Error::invalid(
                what,
                format!(
                    "encapsulation {:02x} {:02x} is not CDR little endian (00 01)",
                    h[0], h[1]
                ),
            ))
        }
        None => {
            return Err(Error::invalid(
                what,
                format!("{} bytes: too short for a CDR message", bytes.len()),
            ))
        }
    }
    ros2_client::dds::rustdds::cdr_encoding::from_bytes::<T, Le>(&bytes[4..])
        .map(|(v, _)| v)
        .map_err(|e| Error::invalid(what, format!("not decoded: {e}")))
}
