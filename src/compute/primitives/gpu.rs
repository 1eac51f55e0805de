//! CUDA primitives over device buffers, for the algorithms to chain without host round trips,
//! plus host-slice wrappers used by the backend dispatch and the tests.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use crate::compute::cuda::{gpu_err, launch_err, CudaRuntime};
use crate::compute::kernels::PRIMITIVES;
use crate::compute::warmup::Module;
use crate::error::{Error, Result};

/// Must match SCAN_TILE in kernels/primitives.cu.
const SCAN_TILE: usize = 256 * 8;
const SORT_THREADS: usize = 256;
const RADIX: usize = 256;
const DIGITS: usize = 8;
const THREADS: u32 = 256;

/// Compile-time shape of the sort kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SortConfig {
    /// Keys per thread; a tile is 256 x items keys. 1..=18 (shared memory bound).
    pub items_per_thread: u32,
    /// Blocks per SM the register budget is sized for.
    pub min_blocks_per_sm: u32,
}

/// The NVRTC definitions of a sort shape (kernels/primitives.cu).
fn sort_defines(sort: SortConfig) -> [(&'static str, String); 2] {
    [
        ("SORT_ITEMS", sort.items_per_thread.to_string()),
        ("SORT_MIN_BLOCKS", sort.min_blocks_per_sm.to_string()),
    ]
}

/// The module [`Primitives::new`] uses, for a node's start-up warm-up.
pub fn modules() -> Vec<Module> {
    vec![Module::new(
        PRIMITIVES,
        &sort_defines(SortConfig::default()),
    )]
}

impl Default for SortConfig {
    /// Tuned on the H100 (docs/bench-history).
    fn default() -> Self {
        SortConfig {
            items_per_thread: 16,
            min_blocks_per_sm: 2,
        }
    }
}

/// The device primitives on one runtime view: each call runs on its stream.
pub struct Primitives {
    rt: Arc<CudaRuntime>,
    sort_tile: usize,
    scan_reduce_tiles: CudaFunction,
    scan_tiles_inplace: CudaFunction,
    iota_u32: CudaFunction,
    fill_u32: CudaFunction,
    hold_ns: CudaFunction,
    flags_to_u32: CudaFunction,
    compact_scatter: CudaFunction,
    radix_global_hist: CudaFunction,
    radix_digit_bases: CudaFunction,
    radix_upsweep: CudaFunction,
    radix_downsweep: CudaFunction,
    radix_onesweep: CudaFunction,
}

/// How a radix sort pass is organised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortMethod {
    /// One-sweep for n < 2^30 (the look-back packs counts in 30 bits), three-kernel above.
    Auto,
    /// One kernel per digit pass with decoupled look-back: pairs read and written once.
    Onesweep,
    /// Upsweep (tile counts), scan, downsweep: reads the keys twice per pass.
    ThreeKernel,
    /// One-sweep over every digit, nothing read back (see [`Primitives::sort_pairs_queued`]).
    Queued,
}

/// Largest n the one-sweep path accepts.
pub const ONESWEEP_MAX_N: usize = (1 << 30) - 1;

/// A one-sweep sort's working memory (see `Primitives::onesweep_scratch`).
struct OnesweepScratch {
    /// Where each digit value starts, per digit position (DIGITS x RADIX).
    bases: CudaSlice<u32>,
    /// The alternate buffers each pass writes into.
    keys: CudaSlice<u64>,
    values: CudaSlice<u32>,
    /// Look-back slots, tiles x RADIX per pass, zeroed.
    status: CudaSlice<u32>,
    /// Each pass's tile counter, zeroed.
    counters: CudaSlice<u32>,
}

fn onesweep_fits(n: usize) -> Result<()> {
    if n > ONESWEEP_MAX_N {
        return Err(Error::invalid(
            "n",
            format!("{n} pairs exceed the one-sweep limit of {ONESWEEP_MAX_N}"),
        ));
    }
    Ok(())
}

fn cfg(grid: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

impl Primitives {
    /// The primitives with the default sort.
    pub fn new(rt: &Arc<CudaRuntime>) -> Result<Self> {
        Self::with_config(rt, SortConfig::default())
    }

    /// The primitives with a sort of this shape (benchmarks).
    pub fn with_config(rt: &Arc<CudaRuntime>, sort: SortConfig) -> Result<Self> {
        if !(1..=18).contains(&sort.items_per_thread) || !(1..=8).contains(&sort.min_blocks_per_sm)
        {
            return Err(Error::invalid(
                "sort config",
                format!("{sort:?} is out of range"),
            ));
        }
        let defines = sort_defines(sort);
        let f = |name: &str| rt.function_with(&PRIMITIVES, &defines, name);
        Ok(Self {
            rt: rt.clone(),
            sort_tile: SORT_THREADS * sort.items_per_thread as usize,
            scan_reduce_tiles: f("scan_reduce_tiles")?,
            scan_tiles_inplace: f("scan_tiles_inplace")?,
            iota_u32: f("iota_u32")?,
            fill_u32: f("fill_u32")?,
            hold_ns: f("hold_ns")?,
            flags_to_u32: f("flags_to_u32")?,
            compact_scatter: f("compact_scatter")?,
            radix_global_hist: f("radix_global_hist")?,
            radix_digit_bases: f("radix_digit_bases")?,
            radix_upsweep: f("radix_upsweep")?,
            radix_downsweep: f("radix_downsweep")?,
            radix_onesweep: f("radix_onesweep")?,
        })
    }

    /// The runtime view they run on.
    pub fn runtime(&self) -> &Arc<CudaRuntime> {
        &self.rt
    }

    /// A new device buffer holding 0, 1, ..., n - 1 (n < 2^32).
    pub fn iota(&self, n: usize) -> Result<CudaSlice<u32>> {
        let n32 = u32_len("iota", n)?;
        // SAFETY: iota_u32 writes all n elements before the buffer is returned.
        let mut out = unsafe { self.rt.alloc::<u32>(n) }?;
        let mut b = self.rt.stream().launch_builder(&self.iota_u32);
        b.arg(&mut out).arg(&n32);
        // SAFETY: (u32*, u32) as the kernel declares; it writes out[0..n), out holds n.
        unsafe { b.launch(self.rt.grid_stride(n, THREADS)) }.map_err(launch_err("iota_u32"))?;
        Ok(out)
    }

    /// A new device buffer of n copies of `v` (n < 2^32).
    pub fn filled(&self, n: usize, v: u32) -> Result<CudaSlice<u32>> {
        let n32 = u32_len("fill", n)?;
        // SAFETY: fill_u32 writes all n elements before the buffer is returned.
        let mut out = unsafe { self.rt.alloc::<u32>(n) }?;
        let mut b = self.rt.stream().launch_builder(&self.fill_u32);
        b.arg(&mut out).arg(&n32).arg(&v);
        // SAFETY: (u32*, u32, u32) as the kernel declares; it writes out[0..n), out holds n.
        unsafe { b.launch(self.rt.grid_stride(n, THREADS)) }.map_err(launch_err("fill_u32"))?;
        Ok(out)
    }

    /// Holds the stream for `seconds` of device time (one thread spinning on the global
    /// timer): what is queued behind it then runs back to back, however long the host takes
    /// to queue it. For benchmarks that time a chain of launches as device work alone.
    pub fn hold(&self, seconds: f64) -> Result<()> {
        let ns = (seconds.max(0.0) * 1e9) as u64;
        let mut b = self.rt.stream().launch_builder(&self.hold_ns);
        b.arg(&ns);
        // SAFETY: (u64) as the kernel declares; it touches no memory.
        unsafe { b.launch(cfg(1)) }.map_err(launch_err("hold_ns"))?;
        Ok(())
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
        // SAFETY: scan_reduce_tiles: (in, n, tile_sums) as declared; writes one sum per tile, `tiles` allocated
        unsafe { b.launch(cfg(tiles as u32)) }.map_err(launch_err("scan_reduce_tiles"))?;
        self.exclusive_scan_in_place(&mut sums, tiles)?;
        let mut b = stream.launch_builder(&self.scan_tiles_inplace);
        b.arg(data).arg(&n32).arg(&sums);
        // SAFETY: scan_tiles_inplace: (data, n, offsets) as declared; rewrites data[0..n) in place
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
            // SAFETY: an empty buffer: nothing to read.
            return Ok((unsafe { self.rt.alloc::<u32>(0) }?, 0));
        }
        let stream = self.rt.stream();
        let n32 = n as u32;
        // SAFETY: flags_to_u32 writes all n positions before the scan reads them.
        let mut pos = unsafe { self.rt.alloc::<u32>(n) }?;
        let mut b = stream.launch_builder(&self.flags_to_u32);
        b.arg(flags).arg(&mut pos).arg(&n32);
        // SAFETY: flags_to_u32: (flags, out, n) as declared; writes out[0..n), allocated n
        unsafe { b.launch(self.rt.grid_stride(n, THREADS)) }.map_err(launch_err("flags_to_u32"))?;
        self.exclusive_scan_in_place(&mut pos, n)?;
        let last_pos = self.rt.download_range(&pos, n - 1..n)?[0];
        let last_flag = self.rt.download_range(flags, n - 1..n)?[0];
        let count = last_pos as usize + usize::from(last_flag != 0);
        // SAFETY: compact_scatter writes exactly `count` outputs, at distinct positions.
        let mut out = unsafe { self.rt.alloc::<u32>(count) }?;
        let mut b = stream.launch_builder(&self.compact_scatter);
        b.arg(values).arg(flags).arg(&pos).arg(&mut out).arg(&n32);
        // SAFETY: compact_scatter: as declared; writes out[pos[i]] for kept i, below the kept count it was allocated for
        unsafe { b.launch(self.rt.grid_stride(n, THREADS)) }
            .map_err(launch_err("compact_scatter"))?;
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
        self.sort_pairs_with(keys, values, n, SortMethod::Auto)
    }

    /// [`Primitives::sort_pairs`] by a chosen method.
    pub fn sort_pairs_with(
        &self,
        keys: &mut CudaSlice<u64>,
        values: &mut CudaSlice<u32>,
        n: usize,
        method: SortMethod,
    ) -> Result<usize> {
        if n <= 1 {
            return Ok(0);
        }
        let onesweep = match method {
            SortMethod::Queued => {
                self.sort_pairs_queued(keys, values, n)?;
                return Ok(DIGITS);
            }
            SortMethod::Auto => n <= ONESWEEP_MAX_N,
            SortMethod::Onesweep => {
                onesweep_fits(n)?;
                true
            }
            SortMethod::ThreeKernel => false,
        };
        let stream = self.rt.stream();
        let n32 = n as u32;
        let hist = self.global_hist(keys, n)?;
        // The passes' buffers are zeroed and their digit bases scanned while the counts come
        // back: the host's wait for them would otherwise leave the device idle.
        let (hist_host, scratch) = self.rt.download_while(&hist, DIGITS * RADIX, || {
            onesweep
                .then(|| self.onesweep_scratch(n, &hist))
                .transpose()
        })?;
        let passes: Vec<usize> = (0..DIGITS)
            .filter(|&d| {
                !hist_host[d * RADIX..(d + 1) * RADIX]
                    .iter()
                    .any(|&c| c as usize == n)
            })
            .collect();
        if passes.is_empty() {
            return Ok(0);
        }
        let tiles = n.div_ceil(self.sort_tile);
        if let Some(scratch) = scratch {
            self.onesweep_passes(keys, values, n, &passes, scratch)?;
        } else {
            let (mut keys_alt, mut values_alt) = self.alternates(n)?;
            let tiles32 = tiles as u32;
            // SAFETY: uninitialised; radix_upsweep writes all of it before anything reads it.
            let mut tile_hist = unsafe { self.rt.alloc::<u32>(RADIX * tiles) }?;
            for &digit in &passes {
                let shift = (8 * digit) as u32;
                let mut b = stream.launch_builder(&self.radix_upsweep);
                b.arg(&*keys)
                    .arg(&n32)
                    .arg(&shift)
                    .arg(&mut tile_hist)
                    .arg(&tiles32);
                // SAFETY: radix_upsweep: as declared; writes RADIX counts per tile into tile_hist (RADIX * tiles)
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
                // SAFETY: radix_downsweep: as declared; reads n pairs, writes n pairs to the alternate buffers, both n long
                unsafe { b.launch(cfg(tiles32)) }.map_err(launch_err("radix_downsweep"))?;
                std::mem::swap(keys, &mut keys_alt);
                std::mem::swap(values, &mut values_alt);
            }
        }
        Ok(passes.len())
    }

    /// Stable sort of the first `n` pairs by key, in place, that reads nothing back: every
    /// digit pass runs (none is skipped, which would need the counts on the host), so the host
    /// never waits for the device and can queue more work, or fill the next copy, while it
    /// sorts. One-sweep only: n <= [`ONESWEEP_MAX_N`].
    pub fn sort_pairs_queued(
        &self,
        keys: &mut CudaSlice<u64>,
        values: &mut CudaSlice<u32>,
        n: usize,
    ) -> Result<()> {
        self.sort_pairs_queued_by_top(keys, values, n, DIGITS)
    }

    /// [`Primitives::sort_pairs_queued`] by the keys' top `digits` bytes alone (1 to 8): a
    /// stable sort on them, pairs whose top bytes are equal keep their order. For keys whose
    /// lower bytes do not matter (query orders), at a pass per byte.
    pub fn sort_pairs_queued_by_top(
        &self,
        keys: &mut CudaSlice<u64>,
        values: &mut CudaSlice<u32>,
        n: usize,
        digits: usize,
    ) -> Result<()> {
        if n <= 1 {
            return Ok(());
        }
        onesweep_fits(n)?;
        let hist = self.global_hist(keys, n)?;
        let scratch = self.onesweep_scratch(n, &hist)?;
        let passes: Vec<usize> = (DIGITS - digits.clamp(1, DIGITS)..DIGITS).collect();
        self.onesweep_passes(keys, values, n, &passes, scratch)
    }

    /// Counts of every digit value at each of the 8 digit positions of the first `n` keys.
    fn global_hist(&self, keys: &CudaSlice<u64>, n: usize) -> Result<CudaSlice<u32>> {
        let n32 = n as u32;
        let mut hist = self.rt.alloc_zeros::<u32>(DIGITS * RADIX)?;
        let mut b = self.rt.stream().launch_builder(&self.radix_global_hist);
        b.arg(keys).arg(&n32).arg(&mut hist);
        // SAFETY: radix_global_hist: (keys, n, hist) as declared; atomically adds into the 8 x RADIX counts allocated
        unsafe { b.launch(self.rt.grid_fill(n, THREADS)) }
            .map_err(launch_err("radix_global_hist"))?;
        Ok(hist)
    }

    /// Where each digit value starts in the output, per digit position, from `global_hist`.
    fn digit_bases(&self, hist: &CudaSlice<u32>) -> Result<CudaSlice<u32>> {
        // SAFETY: radix_digit_bases writes all DIGITS * RADIX entries.
        let mut bases = unsafe { self.rt.alloc::<u32>(DIGITS * RADIX) }?;
        let mut b = self.rt.stream().launch_builder(&self.radix_digit_bases);
        b.arg(hist).arg(&mut bases);
        let cfg = LaunchConfig {
            grid_dim: (DIGITS as u32, 1, 1),
            block_dim: (RADIX as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: radix_digit_bases: as declared; block d scans hist[d * RADIX..][..RADIX] into bases, both DIGITS * RADIX long
        unsafe { b.launch(cfg) }.map_err(launch_err("radix_digit_bases"))?;
        Ok(bases)
    }

    /// The buffers a sort's passes write into and then swap with the keys and values.
    fn alternates(&self, n: usize) -> Result<(CudaSlice<u64>, CudaSlice<u32>)> {
        // SAFETY: every pass writes all n pairs of its output before anything reads them.
        let keys = unsafe { self.rt.alloc::<u64>(n) }?;
        // SAFETY: as above.
        let values = unsafe { self.rt.alloc::<u32>(n) }?;
        Ok((keys, values))
    }

    /// What the one-sweep passes of a sort of `n` pairs work in, for every digit position: the
    /// digit bases from `hist`, the alternate buffers, zeroed look-back slots and tile counters.
    fn onesweep_scratch(&self, n: usize, hist: &CudaSlice<u32>) -> Result<OnesweepScratch> {
        let tiles = n.div_ceil(self.sort_tile);
        let bases = self.digit_bases(hist)?;
        let (keys, values) = self.alternates(n)?;
        Ok(OnesweepScratch {
            bases,
            keys,
            values,
            status: self.rt.alloc_zeros::<u32>(DIGITS * tiles * RADIX)?,
            counters: self.rt.alloc_zeros::<u32>(DIGITS)?,
        })
    }

    /// One-sweep passes over the given digit positions, least significant first.
    fn onesweep_passes(
        &self,
        keys: &mut CudaSlice<u64>,
        values: &mut CudaSlice<u32>,
        n: usize,
        passes: &[usize],
        scratch: OnesweepScratch,
    ) -> Result<()> {
        let stream = self.rt.stream();
        let n32 = n as u32;
        let tiles = n.div_ceil(self.sort_tile);
        let OnesweepScratch {
            bases,
            keys: mut keys_alt,
            values: mut values_alt,
            mut status,
            mut counters,
        } = scratch;
        for (i, &digit) in passes.iter().enumerate() {
            let shift = (8 * digit) as u32;
            let base = bases.slice(digit * RADIX..(digit + 1) * RADIX);
            let mut st = status.slice_mut(i * tiles * RADIX..(i + 1) * tiles * RADIX);
            let mut counter = counters.slice_mut(i..i + 1);
            let mut b = stream.launch_builder(&self.radix_onesweep);
            b.arg(&*keys)
                .arg(&*values)
                .arg(&mut keys_alt)
                .arg(&mut values_alt)
                .arg(&n32)
                .arg(&shift)
                .arg(&base)
                .arg(&mut st)
                .arg(&mut counter);
            // SAFETY: radix_onesweep: as declared; reads n pairs, writes n pairs to the alternate buffers (both n long) and its look-back slots (tiles x RADIX)
            unsafe { b.launch(cfg(tiles as u32)) }.map_err(launch_err("radix_onesweep"))?;
            std::mem::swap(keys, &mut keys_alt);
            std::mem::swap(values, &mut values_alt);
        }
        Ok(())
    }

    /// [`super::cpu::exclusive_scan`] on the device, from and to host memory.
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

    /// [`super::cpu::compact`] on the device, from and to host memory.
    pub fn compact_host(&self, values: &[u32], flags: &[u8]) -> Result<Vec<u32>> {
        let n = values.len();
        let v = self.rt.upload(values)?;
        let f = self.rt.upload(flags)?;
        let (out, count) = self.compact(&v, &f, n)?;
        self.rt.download(&out, count)
    }

    /// Sorts (key, value) pairs by key, stably, from and to host memory.
    pub fn sort_pairs_host(&self, keys: &[u64], values: &[u32]) -> Result<(Vec<u64>, Vec<u32>)> {
        self.sort_pairs_host_with(keys, values, SortMethod::Auto)
    }

    /// [`Primitives::sort_pairs_host`] by a chosen method.
    pub fn sort_pairs_host_with(
        &self,
        keys: &[u64],
        values: &[u32],
        method: SortMethod,
    ) -> Result<(Vec<u64>, Vec<u32>)> {
        let n = keys.len();
        let mut k = self.rt.upload(keys)?;
        let mut v = self.rt.upload(values)?;
        self.sort_pairs_with(&mut k, &mut v, n, method)?;
        Ok((self.rt.download(&k, n)?, self.rt.download(&v, n)?))
    }

    /// Waits for queued work; surfaces asynchronous kernel faults.
    pub fn synchronize(&self) -> Result<()> {
        self.rt.stream().synchronize().map_err(gpu_err)
    }
}

/// `n` as the kernels' u32 length, or an error naming the operation.
fn u32_len(what: &str, n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::invalid(what, format!("{n} elements exceed u32 indices")))
}
