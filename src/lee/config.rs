//! What selects a Lee run: the memory model and the CUDA launch shape.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// How the CUDA wave runs (every model gives the CPU BFS's labels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryModel {
    /// The seed's global-memory model: in-place sweeps over all cells.
    Global,
    /// The seed's shared-memory model: tiles + halo iterated to local convergence, all tiles
    /// per launch, launches until nothing changes.
    Shared,
    /// Global sweeps with the static masks read through a texture object.
    Texture,
    /// The default: 64 x 32-cell tiles as bit planes, one warp each running an exact
    /// multi-source BFS with shifts and shuffles; the wave crosses each tile in one step
    /// through a table of the distances between its border cells where the tables fit,
    /// else rounds run only the tiles whose border improved and a narrow (corridor) wave
    /// goes on on a work queue (kernels/lee/bitwave.cu, lee::gpu::Schedule). Fastest measured
    /// (docs/bench-history).
    #[default]
    Bitwave,
}

impl MemoryModel {
    /// The name parameters and flags give it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Global => "global",
            Self::Shared => "shared",
            Self::Texture => "texture",
            Self::Bitwave => "bitwave",
        }
    }
}

impl std::str::FromStr for MemoryModel {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "global" => Ok(Self::Global),
            "shared" => Ok(Self::Shared),
            "texture" => Ok(Self::Texture),
            "bitwave" => Ok(Self::Bitwave),
            other => Err(Error::invalid(
                "memory_model",
                format!("'{other}' is not one of bitwave, global, shared, texture"),
            )),
        }
    }
}

/// CUDA launch shape. Tiles of the sweep and shared models are block_x x block_y cells; bitwave
/// tiles are always 64 x 32 cells, one per warp, and block_x * block_y sets the threads per
/// block (rounded up to whole warps, at most 4, halved while a block would not fit an SM).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// The device variant ([`MemoryModel`]).
    pub memory_model: MemoryModel,
    /// Tile or block width.
    pub block_x: u32,
    /// Tile or block height.
    pub block_y: u32,
    /// Device memory (MiB) bitwave's portal tables may take for one map. None: the
    /// `GPU_PLANNING_LEE_PORTAL_MIB` variable, else 1024 (at most a sixteenth of the device);
    /// 0: no tables, the rounds and the work queue only (slower; docs/bench-history).
    pub portal_table_mib: Option<u64>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            memory_model: MemoryModel::Bitwave,
            block_x: 32,
            block_y: 32,
            portal_table_mib: None,
        }
    }
}

impl Config {
    /// Checks the launch shape; the error names the field and the value.
    pub fn validate(&self) -> Result<()> {
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
}
