//! ROS 2 global identifier ([`Gid`]).
//!
//! Backend-neutral 16- or 24-byte entity id (distro-gated). DDS maps to/from
//! RustDDS [`GUID`](rustdds::GUID); Zenoh uses the first 16 bytes of the
//! liveliness-key XXH3 hash (ADR-0008).

use std::fmt;

use serde::{Deserialize, Serialize};

// The Gid definition changed between Humble and Iron, so `iron` (which is
// enabled by every newer distribution feature) is the threshold: iron-or-newer
// uses the 16-byte format, galactic/humble use the older 24-byte format.
#[cfg(feature = "iron")]
pub const GID_LENGTH: usize = 16;
#[cfg(not(feature = "iron"))]
pub const GID_LENGTH: usize = 24;

/// ROS 2 equivalent for DDS GUID / rmw GID.
///
/// See <https://github.com/ros2/rmw_dds_common/blob/master/rmw_dds_common/msg/Gid.msg>
///
/// Size is selected by the distribution feature chain (see Cargo.toml):
/// `galactic`/`humble` → 24 bytes; `iron` or newer → 16 bytes.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "dds", derive(rustdds::dds::key::CdrEncodingSize))]
pub struct Gid([u8; GID_LENGTH]);

// Patched (gpu_planning, see PATCHED.md): the bytes a Gid takes on the wire are chosen at run
// time, so one build speaks Humble's 24-byte and Iron's (and later) 16-byte layout of
// rmw_dds_common/msg/Gid. In memory a Gid keeps GID_LENGTH bytes; on the wire it is padded
// with zeros or cut to the chosen length, as the rmw implementations of each distro do.
static WIRE_DISTRO: std::sync::atomic::AtomicU8 =
  std::sync::atomic::AtomicU8::new(crate::distributions::COMPILED_ROS_DISTRO as u8);

/// Sets the distribution whose Gid layout this process writes and reads (process-wide; set it
/// before creating the first [`crate::Context`]).
pub fn set_wire_distro(distro: crate::distributions::RosDistro) {
  WIRE_DISTRO.store(distro as u8, std::sync::atomic::Ordering::Relaxed);
}

/// The distribution whose Gid layout is on the wire (see [`set_wire_distro`]).
pub fn wire_distro() -> crate::distributions::RosDistro {
  crate::distributions::RosDistro::from_index(WIRE_DISTRO.load(std::sync::atomic::Ordering::Relaxed))
}

/// The bytes a Gid takes on the wire: 24 through Humble, 16 from Iron on.
pub fn wire_length() -> usize {
  if wire_distro() >= crate::distributions::RosDistro::Iron { 16 } else { 24 }
}

impl Serialize for Gid {
  fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeTuple;
    let n = wire_length();
    let mut t = serializer.serialize_tuple(n)?;
    for i in 0..n {
      t.serialize_element(self.0.get(i).unwrap_or(&0))?;
    }
    t.end()
  }
}

impl<'de> Deserialize<'de> for Gid {
  fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
    struct Bytes(usize);
    impl<'de> serde::de::Visitor<'de> for Bytes {
      type Value = Gid;
      fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a Gid of {} bytes", self.0)
      }
      fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Gid, A::Error> {
        let mut gid = [0u8; GID_LENGTH];
        for i in 0..self.0 {
          let b: u8 = seq
            .next_element()?
            .ok_or_else(|| serde::de::Error::invalid_length(i, &self))?;
          if let Some(slot) = gid.get_mut(i) {
            *slot = b;
          }
        }
        Ok(Gid(gid))
      }
    }
    let n = wire_length();
    deserializer.deserialize_tuple(n, Bytes(n))
  }
}

impl Gid {
  /// All-zero GID.
  pub const ZERO: Self = Self([0u8; GID_LENGTH]);

  /// Raw bytes (length is [`GID_LENGTH`]).
  pub fn as_bytes(&self) -> &[u8; GID_LENGTH] {
    &self.0
  }

  /// First 16 bytes for Zenoh / modern rmw GIDs.
  ///
  /// On 24-byte (pre-Iron) builds, only the leading 16 bytes are returned; the
  /// trailing 8 padding bytes used on the wire for older ROS distros are
  /// dropped at this boundary.
  pub fn to_bytes16(self) -> [u8; 16] {
    let mut out = [0u8; 16];
    let n = GID_LENGTH.min(16);
    out[..n].copy_from_slice(&self.0[..n]);
    out
  }
}

impl Default for Gid {
  fn default() -> Self {
    Self::ZERO
  }
}

impl fmt::Debug for Gid {
  fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    for b in self.0.iter() {
      write!(f, "{b:02x}")?;
    }
    Ok(())
  }
}

impl From<[u8; 16]> for Gid {
  fn from(bytes: [u8; 16]) -> Self {
    let mut arr = [0u8; GID_LENGTH];
    let n = GID_LENGTH.min(16);
    arr[..n].copy_from_slice(&bytes[..n]);
    Gid(arr)
  }
}

#[cfg(feature = "dds")]
mod dds_conv {
  use rustdds::{GUID, dds::key::Key};

  use super::{GID_LENGTH, Gid};

  impl From<GUID> for Gid {
    fn from(guid: GUID) -> Self {
      Gid(std::array::from_fn(|i| {
        *guid.to_bytes().as_ref().get(i).unwrap_or(&0)
      }))
    }
  }

  impl From<Gid> for GUID {
    fn from(gid: Gid) -> GUID {
      GUID::from_bytes(std::array::from_fn(|i| {
        if i < GID_LENGTH { gid.0[i] } else { 0 }
      }))
    }
  }

  impl Key for Gid {}
}
