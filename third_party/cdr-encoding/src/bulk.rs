//! Sequences of plain numbers in one piece (a patch of gpu_planning's, see PATCHED.md).
//!
//! Serde hands a `Vec<u32>` over one element at a time, so a 16 MB map or a 1.4 MB answer
//! costs a padding check and a write (or a read) per element: 1-2 ns each, milliseconds per
//! message. A type that knows it is a sequence of plain numbers can instead wrap its raw,
//! native-order bytes in a newtype named by [`sequence_name`]: the serializer writes the CDR
//! sequence (the element count, the padding before the first element, the elements) with one
//! copy, and the deserializer hands the elements' bytes to the visitor in native order. The
//! bytes on the wire are the same as element by element, so peers see no difference.

use std::convert::TryFrom;

use byteorder::ByteOrder;

use crate::{Error, Result};

const NAMES: [&str; 4] = [
  "$cdr_encoding::sequence_of_1_octet",
  "$cdr_encoding::sequence_of_2_octets",
  "$cdr_encoding::sequence_of_4_octets",
  "$cdr_encoding::sequence_of_8_octets",
];

/// The newtype name under which a sequence of `element_size`-octet numbers (1, 2, 4 or 8)
/// travels in one piece: serialize the newtype with the elements' native-order bytes inside
/// (`serialize_bytes`), deserialize it with a visitor that takes bytes (`visit_borrowed_bytes`
/// or `visit_byte_buf`, native order, a whole number of elements).
pub fn sequence_name(element_size: usize) -> Option<&'static str> {
  match element_size {
    1 => Some(NAMES[0]),
    2 => Some(NAMES[1]),
    4 => Some(NAMES[2]),
    8 => Some(NAMES[3]),
    _ => None,
  }
}

/// The element size a newtype name stands for (None: an ordinary newtype).
pub(crate) fn element_size(name: &str) -> Option<usize> {
  NAMES.iter().position(|n| *n == name).map(|i| 1 << i)
}

/// Whether `BO` is this machine's byte order.
pub(crate) fn is_native<BO: ByteOrder>() -> bool {
  let mut b = [0u8; 2];
  BO::write_u16(&mut b, 1);
  u16::from_ne_bytes(b) == 1
}

/// The elements with their bytes reversed (from one byte order to the other).
pub(crate) fn swapped(bytes: &[u8], element_size: usize) -> Vec<u8> {
  let mut out = bytes.to_vec();
  for e in out.chunks_exact_mut(element_size) {
    e.reverse();
  }
  out
}

/// The element count of `len` octets of `element_size`-octet elements.
pub(crate) fn count(len: usize, element_size: usize) -> Result<u32> {
  if len % element_size != 0 {
    return Err(Error::Message(format!(
      "a sequence of {element_size}-octet elements given {len} octets"
    )));
  }
  u32::try_from(len / element_size)
    .map_err(|_| Error::Message(format!("a sequence of {} elements", len / element_size)))
}

#[cfg(test)]
mod tests {
  use std::marker::PhantomData;

  use byteorder::{BigEndian, ByteOrder, LittleEndian};
  use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

  use super::*;
  use crate::{from_bytes, to_vec};

  /// A sequence of u16 / u32 / f64 that travels in one piece, as a user of this module writes it.
  #[derive(Debug, PartialEq)]
  struct Bulk<T>(Vec<T>);

  trait Plain: Copy {
    const SIZE: usize;
    fn to_ne(self, out: &mut Vec<u8>);
    fn from_ne(b: &[u8]) -> Self;
  }
  impl Plain for u16 {
    const SIZE: usize = 2;
    fn to_ne(self, out: &mut Vec<u8>) {
      out.extend_from_slice(&self.to_ne_bytes())
    }
    fn from_ne(b: &[u8]) -> Self {
      u16::from_ne_bytes([b[0], b[1]])
    }
  }
  impl Plain for u32 {
    const SIZE: usize = 4;
    fn to_ne(self, out: &mut Vec<u8>) {
      out.extend_from_slice(&self.to_ne_bytes())
    }
    fn from_ne(b: &[u8]) -> Self {
      u32::from_ne_bytes([b[0], b[1], b[2], b[3]])
    }
  }
  impl Plain for f64 {
    const SIZE: usize = 8;
    fn to_ne(self, out: &mut Vec<u8>) {
      out.extend_from_slice(&self.to_ne_bytes())
    }
    fn from_ne(b: &[u8]) -> Self {
      let mut a = [0u8; 8];
      a.copy_from_slice(b);
      f64::from_ne_bytes(a)
    }
  }

  struct Raw(Vec<u8>);
  impl Serialize for Raw {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
      s.serialize_bytes(&self.0)
    }
  }
  impl<T: Plain> Serialize for Bulk<T> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
      let mut raw = Vec::new();
      self.0.iter().for_each(|v| v.to_ne(&mut raw));
      s.serialize_newtype_struct(sequence_name(T::SIZE).unwrap(), &Raw(raw))
    }
  }
  struct Visit<T>(PhantomData<T>);
  impl<'de, T: Plain> de::Visitor<'de> for Visit<T> {
    type Value = Bulk<T>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
      f.write_str("bytes")
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> std::result::Result<Bulk<T>, E> {
      assert_eq!(v.len() % T::SIZE, 0);
      Ok(Bulk(v.chunks_exact(T::SIZE).map(T::from_ne).collect()))
    }
  }
  impl<'de, T: Plain> Deserialize<'de> for Bulk<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
      d.deserialize_newtype_struct(sequence_name(T::SIZE).unwrap(), Visit(PhantomData))
    }
  }

  /// A one-octet field ahead of each sequence, so the count and the elements need padding.
  #[derive(Serialize, Deserialize, Debug, PartialEq)]
  struct Bulky {
    a: u8,
    x: Bulk<f64>,
    b: u8,
    y: Bulk<u32>,
    c: u8,
    z: Bulk<u16>,
  }
  #[derive(Serialize, Deserialize, Debug, PartialEq)]
  struct Plainly {
    a: u8,
    x: Vec<f64>,
    b: u8,
    y: Vec<u32>,
    c: u8,
    z: Vec<u16>,
  }

  fn both<BO: ByteOrder>(x: Vec<f64>, y: Vec<u32>, z: Vec<u16>) {
    let plain = Plainly { a: 1, x: x.clone(), b: 2, y: y.clone(), c: 3, z: z.clone() };
    let bulky = Bulky { a: 1, x: Bulk(x), b: 2, y: Bulk(y), c: 3, z: Bulk(z) };
    let wire = to_vec::<_, BO>(&plain).unwrap();
    // The same octets as element by element, both ways.
    assert_eq!(to_vec::<_, BO>(&bulky).unwrap(), wire);
    let (back, used) = from_bytes::<Bulky, BO>(&wire).unwrap();
    assert_eq!(back, bulky);
    assert_eq!(used, wire.len());
  }

  #[test]
  fn bulk_sequences_are_the_element_by_element_octets() {
    let x = vec![1.5, -2.25, f64::MAX];
    let y = vec![7, 0xdead_beef, 3, 9];
    let z = vec![0x1234, 5, 6];
    both::<LittleEndian>(x.clone(), y.clone(), z.clone());
    both::<BigEndian>(x.clone(), y.clone(), z.clone());
    // Empty sequences have no element padding.
    both::<LittleEndian>(vec![], vec![], vec![]);
    both::<BigEndian>(vec![], y, vec![]);
  }

  #[test]
  fn a_short_bulk_sequence_is_an_error() {
    let wire = to_vec::<_, LittleEndian>(&vec![1u32, 2, 3]).unwrap();
    assert!(from_bytes::<Bulk<u32>, LittleEndian>(&wire[..wire.len() - 1]).is_err());
    // A count whose octets overflow.
    let huge = [0xffu8, 0xff, 0xff, 0xff];
    assert!(from_bytes::<Bulk<f64>, LittleEndian>(&huge).is_err());
  }

  #[test]
  fn names_and_sizes() {
    for size in [1, 2, 4, 8] {
      assert_eq!(element_size(sequence_name(size).unwrap()), Some(size));
    }
    assert_eq!(sequence_name(3), None);
    assert_eq!(element_size("Wrapper"), None);
    assert!(count(7, 4).is_err());
  }
}
