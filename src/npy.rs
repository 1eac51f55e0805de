//! Reader of little-endian float32 / float64 `.npy` arrays in C order (NumPy format 1.0-3.0),
//! shared by the CLIs (elevation maps, quadric arrangements, samples).

use crate::error::{Error, Result};

/// (rows, cols, values as f32 row-major).
pub fn read_f32_2d(path: &str, bytes: &[u8]) -> Result<(u32, u32, Vec<f32>)> {
    let (dims, values) = read_f64_nd(path, bytes)?;
    let [rows, cols] = dims[..] else {
        return Err(Error::invalid(path, format!("shape {dims:?} is not 2-D")));
    };
    if rows * cols >= u32::MAX as usize {
        return Err(Error::invalid(
            path,
            format!("shape ({rows}, {cols}) is too large"),
        ));
    }
    Ok((
        rows as u32,
        cols as u32,
        values.into_iter().map(|v| v as f32).collect(),
    ))
}

/// (shape, values as f64 in C order); float32 arrays are widened exactly.
pub fn read_f64_nd(path: &str, bytes: &[u8]) -> Result<(Vec<usize>, Vec<f64>)> {
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
    if dims.is_empty() || dims.contains(&0) {
        return Err(bad(format!("shape ({inner}) is empty")));
    }
    let n = dims
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .filter(|&n| n < (1u64 << 40))
        .ok_or_else(|| bad(format!("shape ({inner}) is too large")))? as usize;
    let data = &bytes[end..];
    if data.len() != n * width {
        return Err(bad(format!(
            "data is {} bytes, expected {} for shape ({inner})",
            data.len(),
            n * width
        )));
    }
    let values = if width == 4 {
        data.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64)
            .collect()
    } else {
        data.chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect()
    };
    Ok((dims.iter().map(|&d| d as usize).collect(), values))
}

/// An element type NumPy reads: its `descr` and little-endian bytes.
pub trait Element: Copy {
    const DESCR: &'static str;
    fn extend_le(self, out: &mut Vec<u8>);
}

macro_rules! element {
    ($t:ty, $d:literal) => {
        impl Element for $t {
            const DESCR: &'static str = $d;
            fn extend_le(self, out: &mut Vec<u8>) {
                out.extend(self.to_le_bytes());
            }
        }
    };
}
element!(f64, "<f8");
element!(f32, "<f4");
element!(u64, "<u8");
element!(u32, "<u4");
element!(i32, "<i4");
element!(u8, "|u1");

/// Writes an array of any shape in C order (format 1.0; tests, tools and the benchmarks, which
/// hand their inputs to the peer scripts this way).
pub fn write<T: Element>(shape: &[usize], values: &[T]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
        T::DESCR
    );
    // Pad so that the data starts at a multiple of 64 bytes, newline-terminated.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + std::mem::size_of_val(values));
    out.extend(b"\x93NUMPY\x01\x00");
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    for &v in values {
        v.extend_le(&mut out);
    }
    out
}

/// Writes a float64 array of any shape (tests and tools make inputs with it).
pub fn write_f64_nd(shape: &[usize], values: &[f64]) -> Vec<u8> {
    write(shape, values)
}

/// Writes a 2-D float32 array (used by tests and tools to make inputs).
pub fn write_f32_2d(rows: u32, cols: u32, values: &[f32]) -> Vec<u8> {
    write(&[rows as usize, cols as usize], values)
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
        let b = write_f64_nd(&[2, 1, 2], &[1.5, -2.0, 3.25, 1e300]);
        let (shape, v) = read_f64_nd("y.npy", &b).unwrap();
        assert_eq!((shape, v), (vec![2, 1, 2], vec![1.5, -2.0, 3.25, 1e300]));
        assert!(read_f32_2d("y.npy", &b)
            .unwrap_err()
            .to_string()
            .contains("2-D"));
        let (shape, _) = read_f64_nd("z.npy", &write_f64_nd(&[3], &[1.0, 2.0, 3.0])).unwrap();
        assert_eq!(shape, vec![3]);
    }
}
