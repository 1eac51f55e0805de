//! Reader of 2-D little-endian float32 / float64 `.npy` arrays in C order (NumPy format 1.0-3.0).

use crate::error::{Error, Result};

/// (rows, cols, values as f32 row-major).
pub fn read_f32_2d(path: &str, bytes: &[u8]) -> Result<(u32, u32, Vec<f32>)> {
    let bad = |why: String| Error::invalid(path, why);
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(bad("not a .npy file (magic missing)".into()));
    }
    let major = bytes[6];
    let (header_len, start): (usize, usize) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(bad(format!("unsupported .npy version {v}"))),
    };
    let end = start
        .checked_add(header_len)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| bad("header runs past the end".into()))?;
    let header =
        std::str::from_utf8(&bytes[start..end]).map_err(|_| bad("header is not text".into()))?;
    let field = |key: &str| -> Result<&str> {
        let at = header
            .find(&format!("'{key}'"))
            .ok_or_else(|| bad(format!("header lacks '{key}'")))?;
        let rest = header[at + key.len() + 2..]
            .trim_start()
            .trim_start_matches(':')
            .trim_start();
        Ok(rest)
    };
    let descr = field("descr")?;
    let width = if descr.starts_with("'<f4'") || descr.starts_with("'float32'") {
        4
    } else if descr.starts_with("'<f8'") || descr.starts_with("'float64'") {
        8
    } else {
        return Err(bad(format!(
            "dtype {} is not little-endian float32/float64",
            descr.split(',').next().unwrap_or("")
        )));
    };
    if !field("fortran_order")?.starts_with("False") {
        return Err(bad(
            "Fortran-order arrays are not supported; save with C order".into(),
        ));
    }
    let shape = field("shape")?;
    let inner = shape
        .strip_prefix('(')
        .and_then(|s| s.split(')').next())
        .ok_or_else(|| bad("malformed shape".into()))?;
    let dims: Vec<u64> = inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<u64>()
                .map_err(|_| bad(format!("malformed shape ({inner})")))
        })
        .collect::<Result<_>>()?;
    let [rows, cols] = dims[..] else {
        return Err(bad(format!("shape ({inner}) is not 2-D")));
    };
    if rows == 0 || cols == 0 || rows > u32::MAX as u64 || cols > u32::MAX as u64 {
        return Err(bad(format!("shape ({rows}, {cols}) is empty or too large")));
    }
    let n = rows
        .checked_mul(cols)
        .filter(|&n| n < u32::MAX as u64)
        .ok_or_else(|| bad("too many cells".into()))? as usize;
    let data = &bytes[end..];
    if data.len() != n * width {
        return Err(bad(format!(
            "data is {} bytes, expected {} for shape ({rows}, {cols})",
            data.len(),
            n * width
        )));
    }
    let values = if width == 4 {
        data.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    } else {
        data.chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as f32)
            .collect()
    };
    Ok((rows as u32, cols as u32, values))
}

/// Writes a 2-D float32 array (used by tests and tools to make inputs).
pub fn write_f32_2d(rows: u32, cols: u32, values: &[f32]) -> Vec<u8> {
    let mut header =
        format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
    // Pad so that the data starts at a multiple of 64 bytes, newline-terminated.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    for v in values {
        out.extend(v.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_garbage() {
        let b = write_f32_2d(2, 3, &[1.0, 2.0, f32::NAN, 4.0, 5.0, 6.0]);
        let (r, c, v) = read_f32_2d("x.npy", &b).unwrap();
        assert_eq!((r, c), (2, 3));
        assert!(v[2].is_nan() && v[5] == 6.0);
        assert!(read_f32_2d("x.npy", b"junk").is_err());
        let mut cut = b.clone();
        cut.pop();
        assert!(read_f32_2d("x.npy", &cut)
            .unwrap_err()
            .to_string()
            .contains("bytes"));
    }
}
