//! Vectors of plain numbers on the wire in one piece.
//!
//! `#[serde(with = "bulk")]` on a message's `Vec<u32>` (`i8`, `u8`, `u16`, `i32`, `f32`, `u64`,
//! `f64`, ...) field sends its elements as one copy of their bytes through the CDR encoder's
//! bulk sequences (third_party/cdr-encoding/PATCHED.md) instead of one serde call per element:
//! a 16 MB map or a 1.4 MB cell graph is a memcpy, not milliseconds of per-element padding
//! checks. The octets on the wire are exactly the element-by-element ones. Human-readable
//! formats (the JSON of `bag echo`) still see an ordinary list.

use std::marker::PhantomData;

use bytemuck::Pod;
use rayon::prelude::*;
use ros2_client::dds::rustdds::cdr_encoding::bulk::sequence_name;
use serde::de::{self, Deserialize, Deserializer, SeqAccess, Visitor};
use serde::ser::{Serialize, Serializer};

/// The newtype name of `T`'s bulk sequence (every [`Pod`] number is 1, 2, 4 or 8 octets).
fn name<T: Pod>() -> &'static str {
    match sequence_name(size_of::<T>()) {
        Some(n) => n,
        None => panic!("no CDR bulk sequence of {}-octet elements", size_of::<T>()),
    }
}

struct Octets<'a>(&'a [u8]);

impl Serialize for Octets<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

pub fn serialize<T, S>(v: &[T], s: S) -> Result<S::Ok, S::Error>
where
    T: Pod + Serialize,
    S: Serializer,
{
    if s.is_human_readable() {
        return s.collect_seq(v);
    }
    s.serialize_newtype_struct(name::<T>(), &Octets(bytemuck::cast_slice(v)))
}

pub fn deserialize<'de, T, D>(d: D) -> Result<Vec<T>, D::Error>
where
    T: Pod + Deserialize<'de>,
    D: Deserializer<'de>,
{
    d.deserialize_newtype_struct(name::<T>(), Elements(PhantomData))
}

/// Sequences of at least this many octets are copied over the pool, in pieces of
/// `PARALLEL_CHUNK`: a WeightedGraph of 3.4M edges (41 MB) took 17 ms to decode on one thread
/// of the H200's host, nearly all of it the first touch of the vectors' fresh pages.
const PARALLEL_FROM: usize = 1 << 20;
const PARALLEL_CHUNK: usize = 1 << 18;

struct Elements<T>(PhantomData<T>);

impl<'de, T: Pod + Deserialize<'de>> Visitor<'de> for Elements<T> {
    type Value = Vec<T>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "a sequence of {}-octet numbers", size_of::<T>())
    }

    /// The CDR bulk sequence: the elements' octets in native order.
    fn visit_bytes<E: de::Error>(self, octets: &[u8]) -> Result<Vec<T>, E> {
        if !octets.len().is_multiple_of(size_of::<T>()) {
            return Err(E::invalid_length(octets.len(), &self));
        }
        // The octets may sit at any alignment in the message: copy them, not cast them.
        let mut out = vec![T::zeroed(); octets.len() / size_of::<T>()];
        let bytes = bytemuck::cast_slice_mut::<T, u8>(&mut out);
        if octets.len() >= PARALLEL_FROM {
            // Fresh pages: each is first touched by the thread that copies into it.
            bytes
                .par_chunks_mut(PARALLEL_CHUNK)
                .zip(octets.par_chunks(PARALLEL_CHUNK))
                .for_each(|(to, from)| to.copy_from_slice(from));
        } else {
            bytes.copy_from_slice(octets);
        }
        Ok(out)
    }

    /// Formats without bulk sequences wrap the list in the newtype or hand it over as is.
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Vec<T>, D::Error> {
        Vec::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 20));
        while let Some(v) = seq.next_element()? {
            out.push(v);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use byteorder::{BigEndian, LittleEndian};
    use ros2_client::dds::rustdds::cdr_encoding::{from_bytes, to_vec};
    use serde::{Deserialize, Serialize};

    #[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
    struct Bulky {
        a: u8,
        #[serde(with = "super")]
        f: Vec<f64>,
        b: u8,
        #[serde(with = "super")]
        u: Vec<u32>,
        c: u8,
        #[serde(with = "super")]
        i: Vec<i8>,
        #[serde(with = "super")]
        s: Vec<u16>,
    }

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Plain {
        a: u8,
        f: Vec<f64>,
        b: u8,
        u: Vec<u32>,
        c: u8,
        i: Vec<i8>,
        s: Vec<u16>,
    }

    fn sample(n: usize) -> Bulky {
        Bulky {
            a: 1,
            f: (0..n).map(|k| k as f64 * -1.25).collect(),
            b: 2,
            u: (0..n as u32).map(|k| k.wrapping_mul(0x9e37_79b9)).collect(),
            c: 3,
            i: (0..n).map(|k| k as i8).collect(),
            s: (0..n as u16).collect(),
        }
    }

    fn plain(b: &Bulky) -> Plain {
        let b = b.clone();
        Plain {
            a: b.a,
            f: b.f,
            b: b.b,
            u: b.u,
            c: b.c,
            i: b.i,
            s: b.s,
        }
    }

    #[test]
    fn the_wire_is_the_element_by_element_cdr_in_both_byte_orders() {
        // 300,000 elements: the f64 and u32 sequences are copied over the pool.
        for n in [0, 1, 3, 1000, 300_000] {
            let m = sample(n);
            let le = to_vec::<_, LittleEndian>(&plain(&m)).unwrap();
            let be = to_vec::<_, BigEndian>(&plain(&m)).unwrap();
            assert_eq!(to_vec::<_, LittleEndian>(&m).unwrap(), le, "n = {n}");
            assert_eq!(to_vec::<_, BigEndian>(&m).unwrap(), be, "n = {n}");
            assert_eq!(
                from_bytes::<Bulky, LittleEndian>(&le).unwrap(),
                (m.clone(), le.len())
            );
            assert_eq!(from_bytes::<Bulky, BigEndian>(&be).unwrap(), (m, be.len()));
        }
    }

    #[test]
    fn truncated_input_is_an_error() {
        let wire = to_vec::<_, LittleEndian>(&sample(10)).unwrap();
        for cut in [wire.len() - 1, wire.len() / 2, 5] {
            assert!(
                from_bytes::<Bulky, LittleEndian>(&wire[..cut]).is_err(),
                "cut {cut}"
            );
        }
    }

    #[test]
    fn json_sees_lists() {
        let m = sample(3);
        let json = serde_json::to_value(&m).unwrap();
        assert_eq!(json["u"], serde_json::json!(m.u));
        assert_eq!(serde_json::from_value::<Bulky>(json).unwrap(), m);
    }
}
