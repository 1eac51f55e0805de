//! map_server maps: the input is the YAML, a zero byte, then the image (PGM, PNG, ...).
//! Loading gives an error or a map whose data covers width x height.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (yaml, image) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let yaml_path = dir.path().join("map.yaml");
    if std::fs::write(&yaml_path, yaml).is_err()
        || std::fs::write(dir.path().join("map.pgm"), image).is_err()
    {
        return;
    }
    if let Ok(m) = gpu_planning::lee::io::map_yaml::load(&yaml_path) {
        assert_eq!(m.data.len() as u64, m.width as u64 * m.height as u64);
    }
});
