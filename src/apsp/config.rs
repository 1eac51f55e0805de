//! What selects an APSP run: the memory model and its launch shapes.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// How the CUDA Floyd-Warshall walks its matrices (the CPU's blocked order is the reference
/// for all of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryModel {
    /// The seed's starting point: one launch per k, a 1-D grid walking down columns.
    Linear,
    /// One launch per k, 2-D blocks along rows (coalesced).
    Coalesced,
    /// As coalesced, with row k and column k staged in shared memory.
    Shared,
    /// Venkataraman's three phases with the seed's 32 x 32 tiles, one thread per cell.
    Blocked,
    /// The three phases with `tile`-wide k-blocks, `thread_tile`^2 cells per thread held in
    /// registers, and Hopper DPX add-min for integers. The default: the fastest measured.
    #[default]
    Tiled,
}

impl MemoryModel {
    /// Every model, in the order of the seed's progression.
    pub const ALL: [MemoryModel; 5] = [
        MemoryModel::Linear,
        MemoryModel::Coalesced,
        MemoryModel::Shared,
        MemoryModel::Blocked,
        MemoryModel::Tiled,
    ];

    /// The name parameters and flags give it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Linear => "linear",
            Self::Coalesced => "coalesced",
            Self::Shared => "shared",
            Self::Blocked => "blocked",
            Self::Tiled => "tiled",
        }
    }

    /// Whether this model relaxes in the blocked order (else the textbook order).
    pub fn is_blocked(self) -> bool {
        matches!(self, Self::Blocked | Self::Tiled)
    }
}

impl std::str::FromStr for MemoryModel {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                Error::invalid(
                    "memory_model",
                    format!("'{s}' is not one of linear, coalesced, shared, blocked, tiled"),
                )
            })
    }
}

/// Shapes of the GPU models (validated ranges; CPU runs use `tile` for their blocked order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// The device variant ([`MemoryModel`]).
    pub memory_model: MemoryModel,
    /// k-block of the `tiled` model: 16, 32 or 64; 0 picks by size with `thread_tile` 0 (see
    /// [`AUTO_LARGE_FROM`]).
    pub tile: u32,
    /// Cells per thread along each axis in the `tiled` model's phase 3: 1, 2, 4 or 8 (0 with
    /// `tile` 0).
    pub thread_tile: u32,
    /// Block shape of the per-k models (linear uses block_x * block_y threads in 1-D).
    pub block_x: u32,
    /// See `block_x`.
    pub block_y: u32,
}

/// The seed's tile for the `blocked` model.
pub const BLOCKED_TILE: u32 = 32;
/// `tile: 0` runs matrices of this side and more (padded to 64) with tile 64 and 4 x 4 cells
/// per thread, smaller ones with tile 32 and 2 x 2: measured on the H100 (docs/bench-history), 32 /
/// 2 x 2 is faster at n = 500 and 2000 (0.33 and 3.37 ms against 0.62 and 4.25), 64 / 4 x 4 at
/// n = 8192 (134.9 ms against 158.8).
pub const AUTO_LARGE_FROM: usize = 4096;

/// The largest graph the node and the CLI take unless told (n x n matrices: 8 n^2 bytes on
/// host and device; the CPU solve n^3 steps).
pub const DEFAULT_MAX_VERTICES: u32 = 12_000;

impl Default for Config {
    fn default() -> Self {
        Config {
            memory_model: MemoryModel::Tiled,
            tile: 0,
            thread_tile: 0,
            block_x: 32,
            block_y: 8,
        }
    }
}

impl Config {
    /// Checks the shapes against their ranges; the error names the field and the value.
    pub fn validate(&self) -> Result<()> {
        if self.tile == 0 && self.thread_tile == 0 {
            return self.validate_blocks();
        }
        if ![16, 32, 64].contains(&self.tile) {
            return Err(Error::invalid(
                "tile",
                format!("{} is not 16, 32 or 64", self.tile),
            ));
        }
        if ![1, 2, 4, 8].contains(&self.thread_tile) || self.thread_tile > self.tile / 4 {
            return Err(Error::invalid(
                "thread_tile",
                format!(
                    "{} is not 1, 2, 4 or 8 (and at most tile / 4 = {}; 0 only with tile 0)",
                    self.thread_tile,
                    self.tile / 4
                ),
            ));
        }
        let per_block = (self.tile / self.thread_tile).pow(2);
        if per_block > 1024 {
            return Err(Error::invalid(
                "thread_tile",
                format!(
                    "{} gives {per_block} threads per block for tile {} (at most 1024)",
                    self.thread_tile, self.tile
                ),
            ));
        }
        self.validate_blocks()
    }

    fn validate_blocks(&self) -> Result<()> {
        let threads = self.block_x as u64 * self.block_y as u64;
        if self.block_x == 0 || self.block_y == 0 || threads > 1024 {
            return Err(Error::invalid(
                "block_x x block_y",
                format!(
                    "{} x {} is not 1..=1024 threads",
                    self.block_x, self.block_y
                ),
            ));
        }
        Ok(())
    }

    /// (k-block, cells per thread) the blocked order runs with under this config on `n`
    /// vertices (padded or not: both give the same shape).
    pub fn blocked_shape(&self, n: usize) -> (u32, u32) {
        match self.memory_model {
            MemoryModel::Blocked => (BLOCKED_TILE, 1),
            _ if self.tile == 0 => {
                if n.div_ceil(64) * 64 >= AUTO_LARGE_FROM {
                    (64, 4)
                } else {
                    (32, 2)
                }
            }
            _ => (self.tile, self.thread_tile),
        }
    }
}
