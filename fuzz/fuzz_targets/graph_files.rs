//! Graph files: CSV `from,to,weight` and DIMACS `.gr`; a parsed graph must pass validation.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for parsed in [
        gpu_planning::apsp::io::parse_csv("fuzz.csv", text, None),
        gpu_planning::apsp::io::parse_dimacs("fuzz.gr", text, None),
    ] {
        if let Ok(g) = parsed {
            g.validate().expect("a parsed graph is valid");
        }
    }
});
