//! `.npy` files (elevation maps, points, constraints, samples): an error or arrays whose
//! length matches their shape.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok((rows, cols, v)) = gpu_planning::npy::read_f32_2d("fuzz.npy", data) {
        assert_eq!(v.len() as u64, rows as u64 * cols as u64);
    }
    if let Ok((shape, v)) = gpu_planning::npy::read_f64_nd("fuzz.npy", data) {
        assert_eq!(v.len(), shape.iter().product::<usize>());
    }
});
