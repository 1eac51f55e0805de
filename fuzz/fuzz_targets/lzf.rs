//! LZF streams (PCD binary_compressed): an error, or exactly the announced number of bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&n, stream)) = data.split_first() else {
        return;
    };
    let expected = n as usize * 16;
    if let Ok(out) = gpu_planning::lzf::decompress("fuzz", stream, expected) {
        assert_eq!(out.len(), expected);
    }
});
