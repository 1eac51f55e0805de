//! Every node's parameter ranges, as `ros2 param describe` gives them and the node pages show
//! them: one line per bounded parameter, `section<TAB>key<TAB>range`, the section as in
//! config/default.yaml (`/**`: the keys every node has). `scripts/node-pages` reads it.
//!
//!     cargo run --release --example param_ranges

use gpu_planning::nodes::PARAM_RANGES;
use gpu_planning::ros::live_params::Range;

fn main() {
    for (section, params) in PARAM_RANGES {
        for p in params.iter().filter(|p| p.range != Range::Any) {
            println!("{section}\t{}\t{}", p.key, p.range.shown());
        }
    }
}
