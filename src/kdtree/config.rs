//! What selects a k-d query: its metric.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    Euclidean,
    /// Quaternions (x, y, z, w): min(|p - q|, |p + q|), so q and -q are one rotation.
    So3,
}
