//! Gazebo heightmaps: the input is read as an SDF world (text) and as a PNG; each gives an
//! error or a heightmap whose heights cover its pixels.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = gpu_planning::lee::io::heightmap::parse_sdf(text, dir.path());
    }
    let png = dir.path().join("hm.png");
    if std::fs::write(&png, data).is_err() {
        return;
    }
    if let Ok(h) =
        gpu_planning::lee::io::heightmap::load_png(&png, [10.0, 10.0, 1.0], [0.0, 0.0, 0.0])
    {
        assert_eq!(h.world_rows().len() as u64, h.width as u64 * h.height as u64);
    }
});
