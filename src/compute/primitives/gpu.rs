//! CUDA primitives over device buffers, for the algorithms to chain without host round trips,
//! plus host-slice wrappers used by the backend dispatch and the tests.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use crate::compute::cuda::{gpu_err, launch_err, CudaRuntime};
use crate::compute::kernels::PRIMITIVES;
use crate::error::Result;

/// Must match SCAN_TILE in kernels/primitives.cu.
const SCAN_TILE: usize = 256 * 8;
/// Must match SORT_TILE in kernels/primitives.cu.
const SORT_TILE: usize = 256 * 16;
const RADIX: usize = 256;
const DIGITS: usize = 8;
const THREADS: u32 = 256;

pub struct Primitives {
    rt: Arc<CudaRuntime>,
    scan_reduce_tiles: CudaFunction,
    scan_tiles_inplace: CudaFunction,
    flags_to_u32: CudaFunction,
    compact_scatter: CudaFunction,
    radix_global_hist: CudaFunction,
    radix_upsweep: CudaFunction,
    radix_downsweep: CudaFunction,
}

fn blocks(n: usize, per_block: usize) -> u32 {
    n.div_ceil(per_block).max(1) as u32
}

fn cfg(grid: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

impl Primitives {
    pub fn new(rt: &Arc<CudaRuntime>) -> Result<Self> {
        let f = |name: &str| rt.function(&PRIMITIVES, name);
        Ok(Self {
            rt: rt.clone(),
            scan_reduce_tiles: f("scan_reduce_tiles")?,
            scan_tiles_inplace: f("scan_tiles_inplace")?,
            flags_to_u32: f("flags_to_u32")?,
            compact_scatter: f("compact_scatter")?,
            radix_global_hist: f("radix_global_hist")?,
            radix_upsweep: f("radix_upsweep")?,
            radix_downsweep: f("radix_downsweep")?,
        })
    }

    pub fn runtime(&self) -> &Arc<CudaRuntime> {
        &self.rt
    }

    /// Grid for grid-stride kernels: enough blocks to fill the device, no more than needed.
    fn stride_grid(&self, n: usize) -> u32 {
        let fill = (self.rt.info().multiprocessors.max(1) as u32) * 16;
        blocks(n, THREADS as usize).min(fill)
    }

    /// Exclusive scan of the first `n` elements of `data`, in place (wrapping u32 adds).
    pub fn exclusive_scan_in_place(&self, data: &mut CudaSlice<u32>, n: usize) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let stream = self.rt.stream();
        let tiles = n.div_ceil(SCAN_TILE);
        let n32 = n as u32;
        if tiles == 1 {
            let null = 0u64;
            let mut b = stream.launch_builder(&self.scan_tiles_inplace);
            b.arg(data).arg(&n32).arg(&null);
            // SAFETY: argument types match the kernel signature; n bounds every access.
            unsafe { b.launch(cfg(1)) }.map_err(launch_err("scan_tiles_inplace"))?;
            return Ok(());
        }
        // SAFETY: scan_reduce_tiles writes every one of the `tiles` sums.
        let mut sums = unsafe { self.rt.alloc::<u32>(tiles) }?;
        let mut b = stream.launch_builder(&self.scan_reduce_tiles);
        b.arg(&*data).arg(&n32).arg(&mut sums);
        unsafe { b.launch(cfg(tiles as u32)) }.map_err(launch_err("scan_reduce_tiles"))?;
        self.exclusive_scan_in_place(&mut sums, tiles)?;
        let mut b = stream.launch_builder(&self.scan_tiles_inplace);
        b.arg(data).arg(&n32).arg(&sums);
        unsafe { b.launch(cfg(tiles as u32)) }.map_err(launch_err("scan_tiles_inplace"))?;
        Ok(())
    }

    /// Keeps `values[i]` where `flags[i] != 0`; returns the kept values and their count.
    pub fn compact(
        &self,
        values: &CudaSlice<u32>,
        flags: &CudaSlice<u8>,
        n: usize,
    ) -> Result<(CudaSlice<u32>, usize)> {
        if n == 0 {
            return Ok((unsafe { self.rt.alloc::<u32>(0) }?, 0));
        }
        let stream = self.rt.stream();
        let n32 = n as u32;
        // SAFETY: flags_to_u32 writes all n positions before the scan reads them.
        let mut pos = unsafe { self.rt.alloc::<u32>(n) }?;
        let mut b = stream.launch_builder(&self.flags_to_u32);
        b.arg(flags).arg(&mut pos).arg(&n32);
        unsafe { b.launch(cfg(self.stride_grid(n))) }.map_err(launch_err("flags_to_u32"))?;
        self.exclusive_scan_in_place(&mut pos, n)?;
        let last_pos = self.rt.download_range(&pos, n - 1..n)?[0];
        let last_flag = self.rt.download_range(flags, n - 1..n)?[0];
        let count = last_pos as usize + usize::from(last_flag != 0);
        // SAFETY: compact_scatter writes exactly `count` outputs, at distinct positions.
        let mut out = unsafe { self.rt.alloc::<u32>(count) }?;
        let mut b = stream.launch_builder(&self.compact_scatter);
        b.arg(values).arg(flags).arg(&pos).arg(&mut out).arg(&n32);
        unsafe { b.launch(cfg(self.stride_grid(n))) }.map_err(launch_err("compact_scatter"))?;
        Ok((out, count))
    }

    /// Stable sort of the first `n` pairs by key, in place. Digit passes in which every key has
    /// the same digit are skipped, so narrow keys (e.g. 30-bit Morton codes) cost fewer passes.
    /// Returns the number of digit passes made.
    pub fn sort_pairs(
        &self,
        keys: &mut CudaSlice<u64>,
        values: &mut CudaSlice<u32>,
        n: usize,
    ) -> Result<usize> {
        if n <= 1 {
            return Ok(0);
        }
        let stream = self.rt.stream();
        let n32 = n as u32;
        let mut hist = self.rt.alloc_zeros::<u32>(DIGITS * RADIX)?;
        let mut b = stream.launch_builder(&self.radix_global_hist);
        b.arg(&*keys).arg(&n32).arg(&mut hist);
        unsafe { b.launch(cfg(self.stride_grid(n))) }.map_err(launch_err("radix_global_hist"))?;
        let hist = self.rt.download(&hist, DIGITS * RADIX)?;
        let passes: Vec<u32> = (0..DIGITS)
            .filter(|&d| {
                !hist[d * RADIX..(d + 1) * RADIX]
                    .iter()
                    .any(|&c| c as usize == n)
            })
            .map(|d| (8 * d) as u32)
            .collect();
        if passes.is_empty() {
            return Ok(0);
        }
        let tiles = n.div_ceil(SORT_TILE);
        let tiles32 = tiles as u32;
        // SAFETY: every buffer below is fully written by the kernel that first uses it.
        let mut tile_hist = unsafe { self.rt.alloc::<u32>(RADIX * tiles) }?;
        let mut keys_alt = unsafe { self.rt.alloc::<u64>(n) }?;
        let mut values_alt = unsafe { self.rt.alloc::<u32>(n) }?;
        for &shift in &passes {
            let mut b = stream.launch_builder(&self.radix_upsweep);
            b.arg(&*keys)
                .arg(&n32)
                .arg(&shift)
                .arg(&mut tile_hist)
                .arg(&tiles32);
            unsafe { b.launch(cfg(tiles32)) }.map_err(launch_err("radix_upsweep"))?;
            self.exclusive_scan_in_place(&mut tile_hist, RADIX * tiles)?;
            let mut b = stream.launch_builder(&self.radix_downsweep);
            b.arg(&*keys)
                .arg(&*values)
                .arg(&mut keys_alt)
                .arg(&mut values_alt)
                .arg(&n32)
                .arg(&shift)
                .arg(&tile_hist)
                .arg(&tiles32);
            unsafe { b.launch(cfg(tiles32)) }.map_err(launch_err("radix_downsweep"))?;
            std::mem::swap(keys, &mut keys_alt);
            std::mem::swap(values, &mut values_alt);
        }
        Ok(passes.len())
    }

    pub fn exclusive_scan_host(&self, input: &[u32]) -> Result<(Vec<u32>, u32)> {
        if input.is_empty() {
            return Ok((Vec::new(), 0));
        }
        let mut dev = self.rt.upload(input)?;
        self.exclusive_scan_in_place(&mut dev, input.len())?;
        let out = self.rt.download(&dev, input.len())?;
        let total = out[input.len() - 1].wrapping_add(input[input.len() - 1]);
        Ok((out, total))
    }

    pub fn compact_host(&self, values: &[u32], flags: &[u8]) -> Result<Vec<u32>> {
        let n = values.len();
        let v = self.rt.upload(values)?;
        let f = self.rt.upload(flags)?;
        let (out, count) = self.compact(&v, &f, n)?;
        self.rt.download(&out, count)
    }

    pub fn sort_pairs_host(&self, keys: &[u64], values: &[u32]) -> Result<(Vec<u64>, Vec<u32>)> {
        let n = keys.len();
        let mut k = self.rt.upload(keys)?;
        let mut v = self.rt.upload(values)?;
        self.sort_pairs(&mut k, &mut v, n)?;
        Ok((self.rt.download(&k, n)?, self.rt.download(&v, n)?))
    }

    /// Waits for queued work; surfaces asynchronous kernel faults.
    pub fn synchronize(&self) -> Result<()> {
        self.rt.stream().synchronize().map_err(gpu_err)
    }
}
