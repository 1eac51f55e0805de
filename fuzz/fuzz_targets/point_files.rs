//! PCD (ascii, binary and LZF binary_compressed) and PLY (ascii and binary little-endian) clouds: an error or x y z
//! triples.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(xyz) = gpu_planning::kdtree::io::read_pcd("fuzz.pcd", data) {
        assert_eq!(xyz.len() % 3, 0);
    }
    if let Ok(xyz) = gpu_planning::kdtree::io::read_ply("fuzz.ply", data) {
        assert_eq!(xyz.len() % 3, 0);
    }
});
