//! LZF decompression (liblzf's format, as PCL writes `DATA binary_compressed` clouds): a
//! control byte below 32 starts a run of that many plus one literal bytes; above, its top
//! three bits (7: plus the next byte) give a back-reference length minus two and its low five
//! bits with the next byte the distance minus one. No crate in the registry decodes it in
//! pure Rust without unsafe C bindings, and the format is this small.

use crate::error::{Error, Result};

/// Decompresses `input`, which must expand to exactly `expected` bytes; `what` names it in
/// errors (a truncated stream, a reference before the start, a size mismatch).
pub fn decompress(what: &str, input: &[u8], expected: usize) -> Result<Vec<u8>> {
    let bad = |reason: String| Error::invalid(what, format!("LZF: {reason}"));
    // The size comes from a header; what the input can expand to bounds the allocation (a
    // back-reference of at most 264 bytes takes 3 input bytes, so at most 88 per input byte).
    let mut out: Vec<u8> = Vec::with_capacity(expected.min(input.len().saturating_mul(88)));
    let mut ip = 0usize;
    while ip < input.len() {
        let ctrl = input[ip] as usize;
        ip += 1;
        if ctrl < 32 {
            let run = ctrl + 1;
            let lit = input.get(ip..ip + run).ok_or_else(|| {
                bad(format!(
                    "literal run of {run} past the input end at byte {ip}"
                ))
            })?;
            if out.len() + run > expected {
                return Err(bad(format!("expands beyond {expected} bytes")));
            }
            out.extend_from_slice(lit);
            ip += run;
            continue;
        }
        let mut len = ctrl >> 5;
        if len == 7 {
            len += *input
                .get(ip)
                .ok_or_else(|| bad(format!("length byte missing at byte {ip}")))?
                as usize;
            ip += 1;
        }
        let low = *input
            .get(ip)
            .ok_or_else(|| bad(format!("distance byte missing at byte {ip}")))?
            as usize;
        ip += 1;
        let back = ((ctrl & 0x1f) << 8) + low + 1;
        let len = len + 2;
        let from = out
            .len()
            .checked_sub(back)
            .ok_or_else(|| bad(format!("reference {back} bytes back from {}", out.len())))?;
        if out.len() + len > expected {
            return Err(bad(format!("expands beyond {expected} bytes")));
        }
        // Byte by byte: a reference may overlap the bytes it is producing.
        for k in 0..len {
            let b = out[from + k];
            out.push(b);
        }
    }
    if out.len() != expected {
        return Err(bad(format!(
            "expands to {} bytes, not the {expected} the header says",
            out.len()
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_and_overlapping_references_expand_as_liblzf_does() {
        // "abcabcabcabc": 3 literals, then a reference 3 back of length 9 (ctrl 7<<5, +2).
        let input = [2, b'a', b'b', b'c', (7 << 5), 0, 2];
        assert_eq!(decompress("t", &input, 12).unwrap(), b"abcabcabcabc");
        // Long length: ctrl len 7 plus the next byte.
        let input = [0, b'x', (7 << 5), 10, 0];
        assert_eq!(decompress("t", &input, 20).unwrap(), vec![b'x'; 20]);
    }

    #[test]
    fn corrupt_streams_are_errors_not_panics() {
        for (input, n) in [
            (&[5u8, b'a'][..], 6),        // literal run past the end
            (&[0, b'a', 0x20][..], 4),    // distance byte missing
            (&[0, b'a', 0x20, 5][..], 4), // reference before the start
            (&[0, b'a'][..], 2),          // shorter than the header says
            (&[1, b'a', b'b'][..], 1),    // longer than the header says
            (&[0xe0][..], 9),             // length byte missing
        ] {
            assert!(decompress("t", input, n).is_err(), "{input:?}");
        }
    }
}
