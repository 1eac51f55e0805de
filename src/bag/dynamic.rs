//! Any message of a bag, decoded from the bag's own schema (MCAP `ros2msg` encoding: the
//! top-level definition, then each nested type after a line of `=` and `MSG: pkg/Type`), as
//! rosbags does: so `bag info --echo` prints types this package has no mirror of. CDR as ROS 2
//! writes it (XCDR1, the encapsulation header giving the byte order; each primitive aligned to
//! its size from the payload start, capped at 8).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// A field's shape: one value, a fixed array, or a sequence (bounded or not).
#[derive(Debug, Clone, PartialEq)]
enum Shape {
    One,
    Array(usize),
    Sequence,
}

#[derive(Debug, Clone, PartialEq)]
struct Field {
    name: String,
    /// A primitive (`int32`, `string`, ...) or a nested type's full name (`pkg/Type`).
    ty: String,
    shape: Shape,
}

/// Every type a schema defines, by full name (`pkg/Type`), and the top-level one.
#[derive(Debug, Clone)]
pub struct Schema {
    top: String,
    types: BTreeMap<String, Vec<Field>>,
}

const PRIMITIVES: &[&str] = &[
    "bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32",
    "uint32", "int64", "uint64", "string", "wstring",
];

/// `pkg/msg/Type` and `pkg/Type` name the same message.
fn short(full: &str) -> String {
    let parts: Vec<&str> = full.split('/').collect();
    match parts[..] {
        [pkg, _, name] => format!("{pkg}/{name}"),
        _ => full.to_string(),
    }
}

fn package_of(full: &str) -> &str {
    full.split('/').next().unwrap_or("")
}

/// One definition's fields; bare type names resolve in `package` (Header in std_msgs).
fn fields(package: &str, text: &str) -> Result<Vec<Field>> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut parts = line.split_whitespace();
        let (Some(ty), Some(name)) = (parts.next(), parts.next()) else {
            return Err(Error::invalid(
                format!("schema line {}", i + 1),
                format!("'{raw}' is not 'type name'"),
            ));
        };
        if name.contains('=') || parts.next().is_some_and(|p| p.starts_with('=')) {
            continue; // a constant
        }
        let (base, shape) = match ty.find('[') {
            None => (ty, Shape::One),
            Some(b) => {
                let inner = ty[b + 1..].trim_end_matches(']');
                let shape = if inner.is_empty() || inner.starts_with("<=") {
                    Shape::Sequence
                } else {
                    Shape::Array(inner.parse().map_err(|_| {
                        Error::invalid(
                            format!("schema line {}", i + 1),
                            format!("bad array '{ty}'"),
                        )
                    })?)
                };
                (&ty[..b], shape)
            }
        };
        // Bounded strings (`string<=10`) are strings.
        let base = base.split("<=").next().unwrap_or(base);
        let resolved = if PRIMITIVES.contains(&base) {
            base.to_string()
        } else if base == "Header" {
            "std_msgs/Header".to_string()
        } else if base.contains('/') {
            short(base)
        } else {
            format!("{package}/{base}")
        };
        out.push(Field {
            name: name.to_string(),
            ty: resolved,
            shape,
        });
    }
    Ok(out)
}

impl Schema {
    /// Parses the `ros2msg` schema of type `name` (`pkg/msg/Type`; a service event's in
    /// either form, rosbag2's `SRV:` one or the plain one).
    pub fn parse(name: &str, text: &str) -> Result<Schema> {
        let top = short(name);
        let plain = crate::ros::idl::service_event_as_msg(name, text)?;
        let text = plain.as_deref().unwrap_or(text);
        let mut types = BTreeMap::new();
        for (section, body) in crate::ros::idl::ros2msg_sections(name, text)? {
            let ty = section.map_or_else(|| top.clone(), short);
            types.insert(ty.clone(), fields(package_of(&ty), body)?);
        }
        Ok(Schema { top, types })
    }

    /// One CDR message (with its 4-byte encapsulation header) as JSON.
    pub fn to_json(&self, what: &str, bytes: &[u8]) -> Result<Value> {
        let bad = |r: String| Error::invalid(what, r);
        let head = bytes
            .get(..4)
            .ok_or_else(|| bad("shorter than the CDR header".into()))?;
        let little = match head[1] {
            0 | 2 => false,
            1 | 3 => true,
            k => return Err(bad(format!("CDR encapsulation kind {k} is not XCDR1"))),
        };
        let data = &bytes[4..];
        let mut c = Cursor {
            data,
            at: 0,
            little,
            values_left: values_budget(data.len()),
        };
        let v = self.message(&self.top, &mut c, 0).map_err(bad)?;
        // rosbags and rclcpp pad a message to 4 bytes; anything beyond is not this type.
        if c.data.len() - c.at >= 4 {
            return Err(bad(format!(
                "{} bytes left over after the message",
                c.data.len() - c.at
            )));
        }
        Ok(v)
    }

    fn message(
        &self,
        ty: &str,
        c: &mut Cursor,
        depth: usize,
    ) -> std::result::Result<Value, String> {
        if depth > 64 {
            return Err(format!("{ty}: nested deeper than 64"));
        }
        let fields = self
            .types
            .get(ty)
            .ok_or_else(|| format!("type {ty} is not defined in the schema"))?;
        let mut m = Map::new();
        if fields.is_empty() {
            // rosidl's placeholder member of an empty message, named as rosidl names it.
            let v = c.primitive("uint8")?;
            m.insert("structure_needs_at_least_one_member".into(), v);
            return Ok(Value::Object(m));
        }
        for f in fields {
            c.spend(1)?;
            let v = match f.shape {
                Shape::One => self.value(&f.ty, c, depth)?,
                Shape::Array(n) => Value::Array(
                    // A schema can give an element no bytes at all (`uint8[0]` inside):
                    // the elements are counted against the budget before any is built.
                    (0..c.spend(n)?)
                        .map(|_| self.value(&f.ty, c, depth))
                        .collect::<std::result::Result<_, _>>()?,
                ),
                Shape::Sequence => {
                    let n = c.u32()? as usize;
                    // Every element takes at least one byte: a count past the data is corrupt.
                    if n > c.data.len() - c.at {
                        return Err(format!("{}: {n} elements past the data end", f.name));
                    }
                    Value::Array(
                        (0..c.spend(n)?)
                            .map(|_| self.value(&f.ty, c, depth))
                            .collect::<std::result::Result<_, _>>()?,
                    )
                }
            };
            m.insert(f.name.clone(), v);
        }
        Ok(Value::Object(m))
    }

    fn value(&self, ty: &str, c: &mut Cursor, depth: usize) -> std::result::Result<Value, String> {
        if PRIMITIVES.contains(&ty) {
            c.primitive(ty)
        } else {
            self.message(ty, c, depth + 1)
        }
    }
}

struct Cursor<'a> {
    data: &'a [u8],
    at: usize,
    little: bool,
    /// JSON values this message may still produce ([`values_budget`]).
    values_left: usize,
}

/// The JSON values a message of `len` bytes may produce: a primitive takes a byte at least and
/// every message object holds one, so 4 per byte (and a floor for small messages of empty
/// parts) is beyond any real message, and stops a schema whose elements take no bytes (2^31 of them in a
/// message of a few bytes) from building gigabytes of JSON.
fn values_budget(len: usize) -> usize {
    len.saturating_mul(4).max(1 << 16)
}

impl Cursor<'_> {
    /// Takes `n` values of the budget; returns `n`.
    fn spend(&mut self, n: usize) -> std::result::Result<usize, String> {
        self.values_left = self.values_left.checked_sub(n).ok_or_else(|| {
            format!(
                "more values than {} bytes can carry ({} at most): elements of no size?",
                self.data.len(),
                values_budget(self.data.len())
            )
        })?;
        Ok(n)
    }

    fn take(&mut self, n: usize) -> std::result::Result<&[u8], String> {
        // Primitives align to their size from the payload start (at most 8).
        let align = n.min(8);
        if align > 1 {
            self.at = self.at.div_ceil(align) * align;
        }
        let b = self.data.get(self.at..self.at + n).ok_or_else(|| {
            format!(
                "data ends at byte {} ({} needed)",
                self.data.len(),
                self.at + n
            )
        })?;
        self.at += n;
        Ok(b)
    }

    fn bytes<const N: usize>(&mut self) -> std::result::Result<[u8; N], String> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        if !self.little {
            a.reverse();
        }
        Ok(a)
    }

    fn u32(&mut self) -> std::result::Result<u32, String> {
        Ok(u32::from_le_bytes(self.bytes()?))
    }

    fn primitive(&mut self, ty: &str) -> std::result::Result<Value, String> {
        Ok(match ty {
            "bool" => Value::Bool(self.take(1)?[0] != 0),
            "byte" | "char" | "uint8" => self.take(1)?[0].into(),
            "int8" => (self.take(1)?[0] as i8).into(),
            "int16" => i16::from_le_bytes(self.bytes()?).into(),
            "uint16" => u16::from_le_bytes(self.bytes()?).into(),
            "int32" => i32::from_le_bytes(self.bytes()?).into(),
            "uint32" => self.u32()?.into(),
            "int64" => i64::from_le_bytes(self.bytes()?).into(),
            "uint64" => u64::from_le_bytes(self.bytes()?).into(),
            "float32" => json_float(f32::from_le_bytes(self.bytes()?) as f64),
            "float64" => json_float(f64::from_le_bytes(self.bytes()?)),
            "string" => {
                let n = self.u32()? as usize;
                let at = self.at;
                let b = self
                    .data
                    .get(at..at + n)
                    .ok_or_else(|| format!("string of {n} bytes past the data end"))?;
                self.at += n;
                // The length counts the terminating NUL.
                let text = b.strip_suffix(&[0]).unwrap_or(b);
                Value::String(String::from_utf8_lossy(text).into_owned())
            }
            other => return Err(format!("type {other} is not decoded (wstring)")),
        })
    }
}

/// JSON has no NaN or infinity: those become strings, as serde_json would refuse them.
fn json_float(v: f64) -> Value {
    serde_json::Number::from_f64(v)
        .map(Value::Number)
        .unwrap_or_else(|| Value::String(v.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_arrays_sequences_and_alignment_decode() {
        let schema = "uint8 a\nfloat64 b\nPoint[2] p\nstring[] names\nint32 K=3\nuint16[<=4] s\n\
            ================================================================================\n\
            MSG: geometry_msgs/Point\nfloat64 x\nfloat64 y\nfloat64 z\n";
        // Point is bare in pkg "demo": resolve through the section's own name instead.
        let schema = schema.replace("Point[2] p", "geometry_msgs/Point[2] p");
        let s = Schema::parse("demo/msg/T", &schema).unwrap();
        let mut b = vec![0u8, 1, 0, 0]; // little-endian CDR
        b.push(7); // a
        b.extend([0; 7]); // pad to 8
        b.extend(2.5f64.to_le_bytes());
        for v in [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0] {
            b.extend(v.to_le_bytes());
        }
        b.extend(2u32.to_le_bytes());
        b.extend(3u32.to_le_bytes());
        b.extend(b"hi\0");
        b.push(0); // pad to 4
        b.extend(4u32.to_le_bytes());
        b.extend(b"abc\0");
        b.extend(1u32.to_le_bytes());
        b.extend(9u16.to_le_bytes());
        let v = s.to_json("t", &b).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"a": 7, "b": 2.5,
                "p": [{"x": 1.0, "y": 2.0, "z": 3.0}, {"x": 4.0, "y": 5.0, "z": 6.0}],
                "names": ["hi", "abc"], "s": [9]})
        );
        // Truncated anywhere: an error, never a panic.
        for cut in 4..b.len() - 2 {
            assert!(s.to_json("t", &b[..cut]).is_err(), "cut {cut}");
        }
    }

    /// A fixed array of 2^31 elements that take no bytes (a message holding only `uint8[0]`),
    /// in a message of 8 bytes: refused by the value budget at once, where it used to build
    /// gigabytes of JSON until the allocator failed. Fanned out through nesting likewise.
    #[test]
    fn elements_of_no_size_are_refused_before_they_are_built() {
        let sep =
            "================================================================================";
        for schema in [
            format!("evil/Z[2147483647] big\n{sep}\nMSG: evil/Z\nuint8[0] nothing\n"),
            format!(
                "evil/Y[65536] a\n{sep}\nMSG: evil/Y\nevil/Z[65536] b\n{sep}\nMSG: evil/Z\nuint8[0] c\n"
            ),
        ] {
            let s = Schema::parse("evil/msg/T", &schema).unwrap();
            let b = [0u8, 1, 0, 0, 0, 0, 0, 0];
            let e = s.to_json("/evil[0]", &b).unwrap_err().to_string();
            assert!(e.contains("/evil[0]") && e.contains("elements of no size"), "{e}");
        }
    }
}
