//! What selects a cell-graph run: the edge algorithm and its parameters.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// How the edges (cells whose vectors differ in one bit) are found; every algorithm gives the
/// same edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    /// h pivots prune the O(n^2) pairs (seed algorithms 1-2).
    Heuristic,
    /// 2^r-ary search tree over sorted cells (seed algorithms 3-4).
    Tree,
    /// XOR hashes: one probe per neighbour candidate, O(n l) expected.
    Hash,
}

impl Algorithm {
    /// The name parameters and flags give it.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Heuristic => "heuristic",
            Algorithm::Tree => "tree",
            Algorithm::Hash => "hash",
        }
    }

    /// The algorithm of a name; the error names the parameter and the value.
    pub fn parse(s: &str) -> Result<Algorithm> {
        match s {
            "heuristic" => Ok(Algorithm::Heuristic),
            "tree" => Ok(Algorithm::Tree),
            "hash" => Ok(Algorithm::Hash),
            _ => Err(Error::invalid(
                "algorithm",
                format!("'{s}' is not heuristic, tree or hash"),
            )),
        }
    }
}

/// What selects a build: the algorithm and its shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// See [`Algorithm`].
    pub algorithm: Algorithm,
    /// Tree arity 2^r, r in 1..=8.
    pub r: u32,
    /// Heuristic pivots, 1..=64.
    pub h: u32,
}

/// The most samples the node and the CLI take unless told (32 bytes each, and more per
/// sample while building).
pub const DEFAULT_MAX_SAMPLES: u32 = 16 << 20;

impl Default for Config {
    fn default() -> Self {
        Config {
            algorithm: Algorithm::Hash,
            r: 4,
            h: 8,
        }
    }
}

impl Config {
    /// Checks r and h against their ranges; the error names the field and the value.
    pub fn validate(&self) -> Result<()> {
        if !(1..=8).contains(&self.r) {
            return Err(Error::invalid("r", format!("{} is not in 1..=8", self.r)));
        }
        if !(1..=64).contains(&self.h) {
            return Err(Error::invalid("h", format!("{} is not in 1..=64", self.h)));
        }
        Ok(())
    }
}
