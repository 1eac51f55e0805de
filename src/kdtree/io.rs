//! Point files for `gpu_planning knn`: `.npy` (N, D) arrays, PCD (ascii, binary or PCL's LZF
//! binary_compressed; fields x y z among any others, any COUNT; organized or not, NaN points
//! kept here and left out by the caller)
//! and PLY (ascii or binary_little_endian; vertex properties x y z), LAS (`las.rs`), and
//! `.npz` results.

use crate::error::{Error, Result};
use crate::npy::read_f64_nd;

/// Coordinates (row-major) and dimensions.
pub fn read_points(path: &std::path::Path) -> Result<(usize, Vec<f32>)> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| Error::invalid(name.clone(), e))?;
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    match ext.as_str() {
        "npy" => {
            let (shape, v) = read_f64_nd(&name, &bytes)?;
            let [_, d] = shape[..] else {
                return Err(Error::invalid(
                    name,
                    format!("shape {shape:?} is not (N, D)"),
                ));
            };
            Ok((d, v.into_iter().map(|x| x as f32).collect()))
        }
        "pcd" => read_pcd(&name, &bytes).map(|v| (3, v)),
        "ply" => read_ply(&name, &bytes).map(|v| (3, v)),
        "las" | "laz" => super::las::read_las(&name, &bytes).map(|v| (3, v)),
        _ => Err(Error::invalid(name, "not .npy, .pcd, .ply, .las or .laz")),
    }
}

/// Splits off header lines up to and including the one starting with `last`.
fn header<'a>(name: &str, bytes: &'a [u8], last: &str) -> Result<(Vec<String>, &'a [u8])> {
    let mut lines = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let end = bytes[at..]
            .iter()
            .position(|&b| b == b'\n')
            .map(|p| at + p + 1)
            .unwrap_or(bytes.len());
        let line = String::from_utf8_lossy(&bytes[at..end]).trim().to_string();
        at = end;
        let done = line.starts_with(last);
        lines.push(line);
        if done {
            return Ok((lines, &bytes[at..]));
        }
    }
    Err(Error::invalid(name, format!("header has no '{last}' line")))
}

fn scalar(kind: &str, size: usize, data: &[u8]) -> Option<f64> {
    Some(match (kind, size) {
        ("F", 4) | ("float", _) | ("float32", _) => {
            f32::from_le_bytes(data.get(..4)?.try_into().ok()?) as f64
        }
        ("F", 8) | ("double", _) | ("float64", _) => {
            f64::from_le_bytes(data.get(..8)?.try_into().ok()?)
        }
        ("U", 1) | ("uchar", _) | ("uint8", _) => *data.first()? as f64,
        ("I", 1) | ("char", _) | ("int8", _) => *data.first()? as i8 as f64,
        ("U", 2) | ("ushort", _) | ("uint16", _) => {
            u16::from_le_bytes(data.get(..2)?.try_into().ok()?) as f64
        }
        ("I", 2) | ("short", _) | ("int16", _) => {
            i16::from_le_bytes(data.get(..2)?.try_into().ok()?) as f64
        }
        ("U", 4) | ("uint", _) | ("uint32", _) => {
            u32::from_le_bytes(data.get(..4)?.try_into().ok()?) as f64
        }
        ("I", 4) | ("int", _) | ("int32", _) => {
            i32::from_le_bytes(data.get(..4)?.try_into().ok()?) as f64
        }
        _ => return None,
    })
}

fn ply_size(t: &str) -> Option<usize> {
    Some(match t {
        "char" | "uchar" | "int8" | "uint8" => 1,
        "short" | "ushort" | "int16" | "uint16" => 2,
        "int" | "uint" | "float" | "int32" | "uint32" | "float32" => 4,
        "double" | "float64" => 8,
        _ => return None,
    })
}

fn xyz_columns(name: &str, fields: &[String]) -> Result<[usize; 3]> {
    let col = |f: &str| {
        fields
            .iter()
            .position(|x| x == f)
            .ok_or_else(|| Error::invalid(name, format!("no '{f}' field")))
    };
    Ok([col("x")?, col("y")?, col("z")?])
}

/// x, y, z of every point of a PCD file (ascii, binary or binary_compressed), row-major;
/// `name` names the file in errors.
pub fn read_pcd(name: &str, bytes: &[u8]) -> Result<Vec<f32>> {
    let (head, body) = header(name, bytes, "DATA")?;
    let get = |key: &str| -> Vec<String> {
        head.iter()
            .find(|l| l.split_whitespace().next() == Some(key))
            .map(|l| l.split_whitespace().skip(1).map(String::from).collect())
            .unwrap_or_default()
    };
    let fields = get("FIELDS");
    let sizes: Vec<usize> = get("SIZE").iter().filter_map(|s| s.parse().ok()).collect();
    let types = get("TYPE");
    let counts: Vec<usize> = get("COUNT").iter().filter_map(|s| s.parse().ok()).collect();
    let counts = if counts.is_empty() {
        vec![1; fields.len()]
    } else {
        counts
    };
    if sizes.len() != fields.len() || types.len() != fields.len() || counts.len() != fields.len() {
        return Err(Error::invalid(
            name,
            "FIELDS, SIZE, TYPE and COUNT disagree",
        ));
    }
    let n: usize = get("POINTS")
        .first()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| Error::invalid(name, "no POINTS line"))?;
    // An organized cloud (HEIGHT > 1) holds WIDTH x HEIGHT points row by row, NaN where a
    // return is missing; the reader keeps every one, so indices stay those of the file.
    let dim = |key: &str| get(key).first().and_then(|s| s.parse::<usize>().ok());
    if let (Some(w), Some(h)) = (dim("WIDTH"), dim("HEIGHT")) {
        if w.checked_mul(h) != Some(n) {
            return Err(Error::invalid(
                name,
                format!("WIDTH {w} x HEIGHT {h} is not POINTS {n}"),
            ));
        }
    }
    let cols = xyz_columns(name, &fields)?;
    // Each coordinate is one value of a type the reader decodes; a COUNT or SIZE of 0 would
    // make every point read the same bytes (and a stride of 0 a loop over POINTS of nothing).
    for &c in &cols {
        if counts[c] == 0 {
            return Err(Error::invalid(
                name,
                format!("field {}: COUNT 0 (a coordinate needs a value)", fields[c]),
            ));
        }
        if scalar(&types[c], sizes[c], &[0u8; 8]).is_none() {
            return Err(Error::invalid(
                name,
                format!(
                    "field {}: TYPE {} SIZE {} is not a number type the reader decodes",
                    fields[c], types[c], sizes[c]
                ),
            ));
        }
    }
    let data = get("DATA");
    // The header's count is not trusted for memory: every point takes at least a byte.
    let mut out = Vec::with_capacity(n.min(bytes.len()) * 3);
    match data.first().map(String::as_str) {
        Some("ascii") => {
            // Values per point, each field `count` wide.
            let offsets: Vec<usize> = counts
                .iter()
                .scan(0, |a, &c| {
                    let o = *a;
                    *a += c;
                    Some(o)
                })
                .collect();
            for (i, line) in String::from_utf8_lossy(body)
                .lines()
                .filter(|l| !l.trim().is_empty())
                .take(n)
                .enumerate()
            {
                let v: Vec<&str> = line.split_whitespace().collect();
                for &c in &cols {
                    let x: f32 =
                        v.get(offsets[c])
                            .and_then(|s| s.parse().ok())
                            .ok_or_else(|| {
                                Error::invalid(name, format!("point {i}: bad field {}", fields[c]))
                            })?;
                    out.push(x);
                }
            }
        }
        Some("binary") => {
            let stride: usize = sizes.iter().zip(&counts).map(|(s, c)| s * c).sum();
            let offsets: Vec<usize> = sizes
                .iter()
                .zip(&counts)
                .scan(0, |a, (s, c)| {
                    let o = *a;
                    *a += s * c;
                    Some(o)
                })
                .collect();
            let need = n.checked_mul(stride);
            if need.is_none_or(|b| b > body.len()) {
                return Err(Error::invalid(
                    name,
                    format!(
                        "POINTS {n} of {stride} bytes need {} bytes; the data has {}",
                        need.map_or("more than 2^64".to_string(), |b| b.to_string()),
                        body.len()
                    ),
                ));
            }
            for i in 0..n {
                for &c in &cols {
                    let at = i * stride + offsets[c];
                    let v = body
                        .get(at..)
                        .and_then(|d| scalar(&types[c], sizes[c], d))
                        .ok_or_else(|| {
                            Error::invalid(
                                name,
                                format!(
                                    "point {i}: data ends early or type {} {} unsupported",
                                    types[c], sizes[c]
                                ),
                            )
                        })?;
                    out.push(v as f32);
                }
            }
        }
        Some("binary_compressed") => {
            // PCL's layout: compressed and raw sizes (u32 LE), then LZF of the fields one
            // after another, each holding every point's value (column-major).
            let word = |at: usize| {
                body.get(at..at + 4)
                    .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
                    .ok_or_else(|| Error::invalid(name, "binary_compressed: no size header"))
            };
            let (packed, raw) = (word(0)?, word(4)?);
            let widths: Vec<usize> = sizes.iter().zip(&counts).map(|(s, c)| s * c).collect();
            let stride: usize = widths.iter().sum();
            if n.checked_mul(stride) != Some(raw) {
                return Err(Error::invalid(
                    name,
                    format!("binary_compressed: {raw} raw bytes for POINTS {n} of {stride} bytes"),
                ));
            }
            let stream = body.get(8..8 + packed).ok_or_else(|| {
                Error::invalid(
                    name,
                    format!("binary_compressed: {packed} bytes announced, fewer present"),
                )
            })?;
            let data = crate::lzf::decompress(name, stream, raw)?;
            let starts: Vec<usize> = widths
                .iter()
                .scan(0, |a, w| {
                    let o = *a;
                    *a += w * n;
                    Some(o)
                })
                .collect();
            for i in 0..n {
                for &c in &cols {
                    let at = starts[c] + i * widths[c];
                    let v = scalar(&types[c], sizes[c], &data[at..]).ok_or_else(|| {
                        Error::invalid(name, format!("type {} {} unsupported", types[c], sizes[c]))
                    })?;
                    out.push(v as f32);
                }
            }
        }
        other => {
            return Err(Error::invalid(
                name,
                format!("DATA {other:?} unsupported (ascii, binary or binary_compressed)"),
            ))
        }
    }
    if out.len() != n * 3 {
        return Err(Error::invalid(
            name,
            format!("{} points for POINTS {n}", out.len() / 3),
        ));
    }
    Ok(out)
}

/// x, y, z of every vertex of a PLY file (ascii or binary_little_endian), row-major.
pub fn read_ply(name: &str, bytes: &[u8]) -> Result<Vec<f32>> {
    let (head, body) = header(name, bytes, "end_header")?;
    if head.first().map(String::as_str) != Some("ply") {
        return Err(Error::invalid(name, "not a PLY file"));
    }
    let format = head
        .iter()
        .find(|l| l.starts_with("format"))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or("")
        .to_string();
    let mut n = None;
    let mut props: Vec<(String, String)> = Vec::new();
    let mut in_vertex = false;
    for l in &head {
        let w: Vec<&str> = l.split_whitespace().collect();
        match w.as_slice() {
            ["element", "vertex", count] if n.is_none() => {
                n = count.parse::<usize>().ok();
                in_vertex = true;
            }
            ["element", ..] => {
                if n.is_none() {
                    return Err(Error::invalid(
                        name,
                        "elements before 'vertex' are unsupported",
                    ));
                }
                in_vertex = false;
            }
            ["property", "list", ..] if in_vertex => {
                return Err(Error::invalid(
                    name,
                    "list properties on vertices are unsupported",
                ))
            }
            ["property", t, p] if in_vertex => props.push((t.to_string(), p.to_string())),
            _ => {}
        }
    }
    let n = n.ok_or_else(|| Error::invalid(name, "no 'element vertex N'"))?;
    let fields: Vec<String> = props.iter().map(|p| p.1.clone()).collect();
    let cols = xyz_columns(name, &fields)?;
    // The header's count is not trusted for memory: every point takes at least a byte.
    let mut out = Vec::with_capacity(n.min(bytes.len()) * 3);
    match format.as_str() {
        "ascii" => {
            for (i, line) in String::from_utf8_lossy(body)
                .lines()
                .filter(|l| !l.trim().is_empty())
                .take(n)
                .enumerate()
            {
                let v: Vec<&str> = line.split_whitespace().collect();
                for &c in &cols {
                    out.push(
                        v.get(c)
                            .and_then(|s| s.parse::<f32>().ok())
                            .ok_or_else(|| {
                                Error::invalid(name, format!("vertex {i}: bad {}", fields[c]))
                            })?,
                    );
                }
            }
        }
        "binary_little_endian" => {
            let sizes: Vec<usize> = props
                .iter()
                .map(|(t, _)| {
                    ply_size(t).ok_or_else(|| {
                        Error::invalid(name, format!("property type {t} unsupported"))
                    })
                })
                .collect::<Result<_>>()?;
            let stride: usize = sizes.iter().sum();
            let offsets: Vec<usize> = sizes
                .iter()
                .scan(0, |a, s| {
                    let o = *a;
                    *a += s;
                    Some(o)
                })
                .collect();
            for i in 0..n {
                for &c in &cols {
                    let v = body
                        .get(i * stride + offsets[c]..)
                        .and_then(|d| scalar(&props[c].0, sizes[c], d))
                        .ok_or_else(|| {
                            Error::invalid(name, format!("vertex {i}: data ends early"))
                        })?;
                    out.push(v as f32);
                }
            }
        }
        f => {
            return Err(Error::invalid(
                name,
                format!("format '{f}' unsupported (ascii or binary_little_endian)"),
            ))
        }
    }
    if out.len() != n * 3 {
        return Err(Error::invalid(
            name,
            format!("{} vertices for element vertex {n}", out.len() / 3),
        ));
    }
    Ok(out)
}

/// One `.npy` member of an `.npz`: little-endian array bytes with NumPy's header.
fn npy_bytes(descr: &str, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let mut h = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((h.len() as u16).to_le_bytes());
    out.extend(h.as_bytes());
    out.extend(data);
    out
}

fn crc32(data: &[u8]) -> u32 {
    let mut c = 0xffff_ffffu32;
    for &b in data {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xedb8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// An uncompressed `.npz` (a zip of `.npy` members, as `numpy.savez` writes).
pub fn npz(members: &[(&str, &str, Vec<usize>, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, descr, shape, data) in members {
        let file = format!("{name}.npy");
        let body = npy_bytes(descr, shape, data);
        let crc = crc32(&body);
        let offset = out.len() as u32;
        let local = |sig: u32| {
            let mut h = sig.to_le_bytes().to_vec();
            h.extend(20u16.to_le_bytes()); // version needed
            h.extend(0u16.to_le_bytes()); // flags
            h.extend(0u16.to_le_bytes()); // stored
            h.extend(0u32.to_le_bytes()); // time, date
            h.extend(crc.to_le_bytes());
            h.extend((body.len() as u32).to_le_bytes());
            h.extend((body.len() as u32).to_le_bytes());
            h.extend((file.len() as u16).to_le_bytes());
            h
        };
        out.extend(local(0x0403_4b50));
        out.extend(0u16.to_le_bytes()); // extra
        out.extend(file.as_bytes());
        out.extend(&body);
        let mut c = 0x0201_4b50u32.to_le_bytes().to_vec();
        c.extend(20u16.to_le_bytes()); // version made by
        c.extend(&local(0)[4..]);
        c.extend([0u8; 12]); // extra, comment, disk, internal and external attributes
        c.extend(offset.to_le_bytes());
        c.extend(file.as_bytes());
        central.extend(c);
    }
    let start = out.len() as u32;
    out.extend(&central);
    out.extend(0x0605_4b50u32.to_le_bytes());
    out.extend([0u8; 4]);
    out.extend((members.len() as u16).to_le_bytes());
    out.extend((members.len() as u16).to_le_bytes());
    out.extend((central.len() as u32).to_le_bytes());
    out.extend(start.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out
}
