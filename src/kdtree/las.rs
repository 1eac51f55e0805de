//! ASPRS LAS point files (versions 1.0 to 1.4, every point data record format), the format of
//! airborne and mobile LiDAR: each record starts with X, Y and Z as i32, and a coordinate is
//! `X * scale + offset` with the header's scales and offsets, computed in f64 as laspy does
//! and then rounded to f32 like every other cloud here. f32 keeps about 7 digits: coordinates
//! in a projected system (UTM: 637,012.25 m) keep centimetres at best, which is why many LAS
//! users shift their clouds to a local origin first. LAZ (LASzip-compressed LAS, the format
//! most airborne LiDAR is published in) is decompressed with the `laz` crate, as las-rs does.

use byteorder::{ByteOrder, LittleEndian as Le};
use laz::{LasZipDecompressor, LazVlr};

use crate::error::{Error, Result};

/// Bytes of the header fields read here, at the offsets of the LAS 1.4 specification.
const SIGNATURE: &[u8; 4] = b"LASF";
const LEGACY_HEADER: usize = 227;
const HEADER_1_4: usize = 375;

/// A variable-length record's header: reserved (2), user id (16), record id (2), length after
/// the header (2), description (32).
const VLR_HEADER: usize = 54;

/// Points a LAZ file is decompressed in at a time (so a header that claims more points than
/// the data holds costs no more memory than the points actually there).
const LAZ_BATCH: usize = 4096;

/// The smallest record of each point data record format 0..=10 (X, Y, Z and the rest).
const RECORD_BYTES: [usize; 11] = [20, 28, 26, 34, 57, 63, 30, 36, 38, 59, 67];

/// The x y z of every point record of a LAS file, row-major. `name` names the file in errors.
pub fn read_las(name: &str, bytes: &[u8]) -> Result<Vec<f32>> {
    let bad = |why: String| Error::invalid(name.to_string(), why);
    if bytes.len() < LEGACY_HEADER || &bytes[..4] != SIGNATURE {
        return Err(bad(format!(
            "not a LAS file (no 'LASF' signature and {LEGACY_HEADER}-byte header)"
        )));
    }
    let (major, minor) = (bytes[24], bytes[25]);
    if major != 1 || minor > 4 {
        return Err(bad(format!(
            "LAS version {major}.{minor}: 1.0 to 1.4 are read"
        )));
    }
    let header_size = Le::read_u16(&bytes[94..]) as usize;
    let data_at = Le::read_u32(&bytes[96..]) as usize;
    let format_byte = bytes[104];
    // Bit 7 (and bit 6 in older writers) of the format marks LAZ-compressed records.
    let compressed = format_byte & 0xC0 != 0;
    let format = (format_byte & 0x3F) as usize;
    let Some(&least) = RECORD_BYTES.get(format) else {
        return Err(bad(format!(
            "point data record format {format}: 0 to 10 are defined"
        )));
    };
    let record = Le::read_u16(&bytes[105..]) as usize;
    if record < least {
        return Err(bad(format!(
            "point data record length {record} is below format {format}'s {least} bytes"
        )));
    }
    let legacy_count = Le::read_u32(&bytes[107..]) as u64;
    let count = if minor >= 4 && header_size >= HEADER_1_4 && bytes.len() >= HEADER_1_4 {
        let full = Le::read_u64(&bytes[247..]);
        if legacy_count != 0 && legacy_count != full {
            return Err(bad(format!(
                "legacy point count {legacy_count} differs from the point count {full}"
            )));
        }
        full
    } else {
        legacy_count
    };
    let scale = [131, 139, 147].map(|at| Le::read_f64(&bytes[at..]));
    let offset = [155, 163, 171].map(|at| Le::read_f64(&bytes[at..]));
    for (axis, (&s, &o)) in ["x", "y", "z"].iter().zip(scale.iter().zip(&offset)) {
        if !(s.is_finite() && s != 0.0 && o.is_finite()) {
            return Err(bad(format!(
                "{axis} scale {s} / offset {o} is not a usable pair"
            )));
        }
    }
    if header_size < LEGACY_HEADER || data_at < header_size {
        return Err(bad(format!(
            "header size {header_size} / offset to point data {data_at} are inconsistent"
        )));
    }
    let to_xyz = |r: &[u8], out: &mut Vec<f32>| {
        for axis in 0..3 {
            let raw = Le::read_i32(&r[4 * axis..]);
            out.push((raw as f64 * scale[axis] + offset[axis]) as f32);
        }
    };
    if compressed {
        return read_laz(name, bytes, header_size, data_at, count, record, to_xyz);
    }
    let need = (count as u128) * record as u128 + data_at as u128;
    if need > bytes.len() as u128 {
        return Err(bad(format!(
            "{count} records of {record} bytes from byte {data_at} need {need} bytes; the file \
             has {}",
            bytes.len()
        )));
    }
    let records = &bytes[data_at..data_at + count as usize * record];
    let mut out = Vec::with_capacity(count as usize * 3);
    for r in records.chunks_exact(record) {
        to_xyz(r, &mut out);
    }
    Ok(out)
}

/// The records of a LAZ file, decompressed with the laszip VLR's description of them, each
/// handed to `to_xyz`.
fn read_laz(
    name: &str,
    bytes: &[u8],
    header_size: usize,
    data_at: usize,
    count: u64,
    record: usize,
    to_xyz: impl Fn(&[u8], &mut Vec<f32>),
) -> Result<Vec<f32>> {
    let bad = |why: String| Error::invalid(name.to_string(), why);
    let vlrs = Le::read_u32(&bytes[100..]) as usize;
    let mut at = header_size;
    let mut laszip = None;
    for _ in 0..vlrs {
        let Some(head) = bytes.get(at..at + VLR_HEADER) else {
            break;
        };
        let len = Le::read_u16(&head[20..]) as usize;
        let Some(body) = bytes.get(at + VLR_HEADER..at + VLR_HEADER + len) else {
            break;
        };
        let user = head[2..18].split(|&b| b == 0).next().unwrap_or_default();
        if user == LazVlr::USER_ID.as_bytes() && Le::read_u16(&head[18..]) == LazVlr::RECORD_ID {
            laszip = Some(body);
            break;
        }
        at += VLR_HEADER + len;
    }
    let Some(vlr) = laszip else {
        return Err(bad(
            "LAZ-compressed records without the laszip VLR that describes them".into(),
        ));
    };
    let vlr = LazVlr::from_buffer(vlr).map_err(|e| bad(format!("laszip VLR: {e}")))?;
    if vlr.items_size() != record as u64 {
        return Err(bad(format!(
            "the laszip VLR describes {}-byte records, the header {record}",
            vlr.items_size()
        )));
    }
    let mut source = std::io::Cursor::new(bytes);
    source.set_position(data_at as u64);
    let mut laz =
        LasZipDecompressor::new(source, vlr).map_err(|e| bad(format!("LAZ data: {e}")))?;
    let mut out = Vec::with_capacity((count as usize).min(bytes.len()) * 3);
    let mut buf = vec![0u8; LAZ_BATCH * record];
    let mut left = count;
    while left > 0 {
        let n = left.min(LAZ_BATCH as u64) as usize;
        let batch = &mut buf[..n * record];
        laz.decompress_many(batch).map_err(|e| {
            bad(format!(
                "LAZ data: {e} after {} of {count} points",
                count - left
            ))
        })?;
        for r in batch.chunks_exact(record) {
            to_xyz(r, &mut out);
        }
        left -= n as u64;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A LAS 1.2 file of format 0 records, laid out by the specification's table.
    fn las(points: &[[i32; 3]], scale: f64, offset: [f64; 3]) -> Vec<u8> {
        let mut b = vec![0u8; LEGACY_HEADER];
        b[..4].copy_from_slice(SIGNATURE);
        b[24] = 1;
        b[25] = 2;
        b[94..96].copy_from_slice(&(LEGACY_HEADER as u16).to_le_bytes());
        b[96..100].copy_from_slice(&(LEGACY_HEADER as u32).to_le_bytes());
        b[104] = 0;
        b[105..107].copy_from_slice(&20u16.to_le_bytes());
        b[107..111].copy_from_slice(&(points.len() as u32).to_le_bytes());
        for axis in 0..3 {
            b[131 + 8 * axis..139 + 8 * axis].copy_from_slice(&scale.to_le_bytes());
            b[155 + 8 * axis..163 + 8 * axis].copy_from_slice(&offset[axis].to_le_bytes());
        }
        for p in points {
            let mut rec = [0u8; 20];
            for axis in 0..3 {
                rec[4 * axis..4 * axis + 4].copy_from_slice(&p[axis].to_le_bytes());
            }
            b.extend_from_slice(&rec);
        }
        b
    }

    #[test]
    fn records_scale_and_offset_to_coordinates() {
        let b = las(
            &[[1, -2, 3], [i32::MAX, i32::MIN, 0]],
            0.01,
            [100.0, 0.5, -7.0],
        );
        let v = read_las("t.las", &b).unwrap();
        let want = [
            (1.0f64 * 0.01 + 100.0) as f32,
            (-2.0f64 * 0.01 + 0.5) as f32,
            (3.0f64 * 0.01 - 7.0) as f32,
            (i32::MAX as f64 * 0.01 + 100.0) as f32,
            (i32::MIN as f64 * 0.01 + 0.5) as f32,
            -7.0,
        ];
        assert_eq!(v, want);
        assert!(read_las("t.las", &las(&[], 1.0, [0.0; 3]))
            .unwrap()
            .is_empty());
    }

    #[test]
    fn bad_files_are_refused_with_the_reason() {
        let good = las(&[[1, 2, 3]], 1.0, [0.0; 3]);
        let refuse = |b: &[u8], words: &str| {
            let e = read_las("t.las", b).unwrap_err().to_string();
            assert!(e.contains("t.las") && e.contains(words), "{e}");
        };
        refuse(&good[..100], "not a LAS file");
        let mut b = good.clone();
        b[0] = b'X';
        refuse(&b, "not a LAS file");
        let mut b = good.clone();
        b[25] = 5;
        refuse(&b, "version 1.5");
        let mut b = good.clone();
        b[104] = 0x80;
        refuse(&b, "without the laszip VLR");
        let mut b = good.clone();
        b[104] = 11;
        refuse(&b, "format 11");
        let mut b = good.clone();
        b[105..107].copy_from_slice(&12u16.to_le_bytes());
        refuse(&b, "below format 0's 20 bytes");
        let mut b = good.clone();
        b[139..147].copy_from_slice(&0.0f64.to_le_bytes());
        refuse(&b, "y scale 0");
        let mut b = good.clone();
        b[107..111].copy_from_slice(&u32::MAX.to_le_bytes());
        refuse(&b, "need");
        refuse(&good[..good.len() - 1], "need");
    }
}
