//! Launch shapes: grid-stride launches that fill the device without blocks that live for
//! half a kernel, one thread per item, and launch errors that name their kernel.

use cudarc::driver::{DriverError, LaunchConfig};

use super::runtime::CudaRuntime;
use crate::error::{Error, Result};

/// Blocks per multiprocessor that fill the device, for a grid-stride launch: enough to hide
/// latency, few enough that each thread loops over several items.
const STRIDE_BLOCKS_PER_SM: u32 = 16;

/// Items a thread of a grid-stride launch takes at most (more only where the grid would pass
/// the device's limit): past that the grid grows beyond what fills the device. A multiprocessor
/// runs a block to its end once it has started it, so a block's life is how long another
/// stream's higher-priority work may wait for room there; with grids capped at filling the
/// device, a kernel over a billion items (a cell graph's probes: cells x constraints) had
/// blocks that lived for half the kernel, and the planner's launches waited milliseconds.
const STRIDE_ITEMS_PER_THREAD: usize = 16;

impl CudaRuntime {
    /// The launch of a grid-stride kernel (`GRID_STRIDE` in kernels/common.cuh) over `n`
    /// items: `threads` per block, blocks enough to cover `n` but no more than fill the device,
    /// unless a thread would then take more than `STRIDE_ITEMS_PER_THREAD` items.
    pub fn grid_stride(&self, n: usize, threads: u32) -> LaunchConfig {
        self.stride_launch(n, threads, STRIDE_ITEMS_PER_THREAD)
    }

    /// [`Self::grid_stride`] for a kernel whose blocks each reduce into shared memory before
    /// one global update per block (a histogram): never more blocks than fill the device, so
    /// that the global updates are as few as the device allows. For short kernels only.
    pub fn grid_fill(&self, n: usize, threads: u32) -> LaunchConfig {
        self.stride_launch(n, threads, usize::MAX)
    }

    fn stride_launch(&self, n: usize, threads: u32, items_per_thread: usize) -> LaunchConfig {
        let threads = threads.max(1);
        let sms = self.info.multiprocessors.max(1) as usize;
        LaunchConfig {
            grid_dim: (stride_blocks(n, threads, sms, items_per_thread), 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 0,
        }
    }
}

/// Blocks of a grid-stride launch over `n` items on `sms` multiprocessors: one item per thread
/// up to filling the device, then as many as keep a thread at `items_per_thread` items at most.
fn stride_blocks(n: usize, threads: u32, sms: usize, items_per_thread: usize) -> u32 {
    let fill = sms * STRIDE_BLOCKS_PER_SM as usize;
    let bounded = n.div_ceil((threads as usize).saturating_mul(items_per_thread));
    n.div_ceil(threads as usize)
        .min(fill.max(bounded))
        .clamp(1, i32::MAX as usize) as u32
}

/// The launch of a kernel with one thread per item: `threads` per block and ceil(n / threads)
/// blocks; `field` names the size in the error when the grid would exceed the device's limit.
pub fn one_per_item(n: usize, threads: u32, field: &str) -> Result<LaunchConfig> {
    let blocks = n.div_ceil(threads as usize).max(1);
    let blocks = u32::try_from(blocks)
        .ok()
        .filter(|&b| b <= i32::MAX as u32)
        .ok_or_else(|| {
            Error::invalid(
                field,
                format!("{n} items need more blocks than a grid holds"),
            )
        })?;
    Ok(LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    })
}

/// Launch errors name the kernel, since a bare driver code is useless in a log.
pub fn launch_err(kernel: &str) -> impl FnOnce(DriverError) -> Error + '_ {
    move |e| Error::Launch {
        kernel: kernel.to_string(),
        reason: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_stride_blocks_fill_the_device_then_bound_a_threads_items() {
        let fill = 132 * STRIDE_BLOCKS_PER_SM;
        assert_eq!(stride_blocks(0, 256, 132, 16), 1);
        assert_eq!(stride_blocks(1, 256, 132, 16), 1);
        assert_eq!(stride_blocks(257, 256, 132, 16), 2);
        // Up to one item per thread on a full device, as many blocks as items need.
        assert_eq!(stride_blocks(fill as usize * 256, 256, 132, 16), fill);
        // Then the device's fill, until a thread would take more than 16 items.
        assert_eq!(stride_blocks(fill as usize * 256 * 16, 256, 132, 16), fill);
        let billion = 1usize << 30;
        let blocks = stride_blocks(billion, 256, 132, 16) as usize;
        assert_eq!(blocks, billion / (256 * 16));
        assert!(blocks * 256 * 16 >= billion);
        // grid_fill: never past the fill.
        assert_eq!(stride_blocks(billion, 256, 132, usize::MAX), fill);
        // The grid's limit holds, and the loop takes what is past it.
        assert_eq!(stride_blocks(usize::MAX, 1, 132, 1), i32::MAX as u32);
    }
}
