//! The matrices on the device and the memory models of kernels/apsp.cu.

use std::sync::Arc;

use cudarc::driver::{
    sys, CudaFunction, CudaSlice, CudaStream, DevicePtrMut, LaunchConfig, PushKernelArg,
};

use super::config::{Config, MemoryModel, AUTO_LARGE_FROM};
use super::graph::{bad_vertex, bad_weight, check_reach};
use super::weight::Weight;
use crate::compute::cuda::{gpu_err, launch_err, CudaRuntime};
use crate::compute::kernels::APSP;
use crate::compute::warmup::Module;
use crate::error::{Error, Result};

/// Device memory kept free beside the matrices (driver, kernels, other nodes' buffers).
const HEADROOM_BYTES: usize = 256 << 20;

/// The distance and successor matrices on the device, padded to the model's tile, and the
/// runtime that owns them.
pub struct DeviceMatrices<T: Weight> {
    rt: Arc<CudaRuntime>,
    d: CudaSlice<T>,
    h: CudaSlice<u32>,
    np: usize,
    /// The edge list the matrices were built from, kept for the checks after the solve.
    edges: Option<Edges<T>>,
}

/// An edge list on the device: `m` edges (the buffers hold at least one entry).
struct Edges<T> {
    m: usize,
    /// The graph's vertices (ids below it are good).
    n: u32,
    from: CudaSlice<u32>,
    to: CudaSlice<u32>,
    w: CudaSlice<T>,
    /// The checks' findings, read by the host once, after the solve ([`DeviceMatrices::verdict`]):
    /// the first edge with a bad tail, head and weight (`u64::MAX`: none), the integer range's
    /// two sums, and whether an edge closes a zero-weight cycle.
    report: CudaSlice<u64>,
}

/// The words of [`Edges::report`].
mod report {
    pub const BAD_FROM: usize = 0;
    pub const BAD_TO: usize = 1;
    pub const BAD_WEIGHT: usize = 2;
    pub const REACH_HI: usize = 3;
    pub const REACH_LO: usize = 4;
    pub const ZERO_CYCLE: usize = 5;
    pub const WORDS: usize = 6;
}

/// Vertex counts up to this send their edges' ids packed, a tail and a head to a word (the
/// 3.4M-edge graph of n = 2000 sends 27 MB instead of 41): an id above it is sent as it, which
/// no vertex has, so the device's check still finds the first bad edge (the host reports its
/// id as given). Their answers' successors come back as 16-bit words too, 0xFFFF for none
/// ([`DeviceMatrices::download_finished`]).
const PACKED_IDS_UP_TO: usize = 0xFFFF;

/// The edges' tails and heads on the device: packed two to a word on the way (one host pass
/// that is also the staging copy) and unpacked there, where `n` allows
/// ([`PACKED_IDS_UP_TO`]); else as they are.
fn upload_ids(
    rt: &Arc<CudaRuntime>,
    defines: &[(&'static str, String)],
    n: usize,
    from: &[u32],
    to: &[u32],
) -> Result<(CudaSlice<u32>, CudaSlice<u32>)> {
    let m = from.len();
    if n > PACKED_IDS_UP_TO || m == 0 {
        return Ok((rt.upload(from)?, rt.upload(to)?));
    }
    let most = PACKED_IDS_UP_TO as u32;
    let ids = rt.upload_made(m, |at, out| {
        let end = at + out.len();
        for ((o, &a), &b) in out.iter_mut().zip(&from[at..end]).zip(&to[at..end]) {
            *o = a.min(most) | b.min(most) << 16;
        }
    })?;
    // SAFETY: apsp_unpack_ids below writes all m entries of both.
    let (mut f, mut t) = unsafe { (rt.alloc::<u32>(m)?, rt.alloc::<u32>(m)?) };
    let unpack = rt.function_with(&APSP, defines, "apsp_unpack_ids")?;
    let m64 = m as u64;
    let mut b = rt.stream().launch_builder(&unpack);
    b.arg(&ids).arg(&m64).arg(&mut f).arg(&mut t);
    // SAFETY: arguments (ids, m, from, to) as apsp_unpack_ids declares; each holds m entries
    unsafe { b.launch(rt.grid_stride(m, 256)) }.map_err(launch_err("apsp_unpack_ids"))?;
    Ok((f, t))
}

/// The NVRTC definitions of a solve: the weight kind, the blocked shape and the threads of
/// phases 1 and 2 ([`p12_threads`]).
fn kernel_defines<T: Weight>(config: &Config, np: usize) -> [(&'static str, String); 4] {
    let (tile, tt) = config.blocked_shape(np);
    [
        ("APSP_FLOAT", (T::KERNEL_FLOAT as u32).to_string()),
        ("TILE", tile.to_string()),
        ("TT", tt.to_string()),
        ("P12_THREADS", p12_threads(config).to_string()),
    ]
}

/// One launch of a k-block of the blocked models (kernels/apsp.cu): phase 1, phase 2, and
/// phase 3 in two parts, the tiles off both lines and the next k-block's line.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    Diagonal,
    Line,
    Rest,
    NextLine,
}

/// Threads of a phase 1 or 2 block (kernels/apsp.cu P12_THREADS): the seed's one per cell of
/// its 32 x 32 tiles for `blocked`; 256 for `tiled`, whose phases 1 and 2 run beside phase 3
/// (the lookahead of `DeviceMatrices::blocked`) and so ask for no more room than a phase 3
/// block frees.
fn p12_threads(config: &Config) -> u32 {
    match config.memory_model {
        MemoryModel::Tiled => 256,
        _ => 1024,
    }
}

/// The modules solves with `config` use (integer and float weights, small and large graphs),
/// for a node's start-up warm-up.
pub fn modules(config: &Config) -> Vec<Module> {
    let mut all: Vec<Module> = Vec::new();
    for n in [1, AUTO_LARGE_FROM] {
        for m in [
            Module::new(APSP, &kernel_defines::<i32>(config, n)),
            Module::new(APSP, &kernel_defines::<f32>(config, n)),
        ] {
            if !all.iter().any(|a| a.defines == m.defines) {
                all.push(m);
            }
        }
    }
    all
}

/// Device bytes an np x np solve needs (distances + successors).
pub fn bytes_needed(np: usize) -> usize {
    np * np * (4 + 4)
}

/// Device buffers free themselves on the dropping thread, where cudarc does not make the
/// context current; without this the free fails and poisons the next CUDA call.
impl<T: Weight> Drop for DeviceMatrices<T> {
    fn drop(&mut self) {
        let _ = self.rt.context().bind_to_thread();
    }
}

/// `need` bytes for `what` fit the device beside the headroom; else a clear error with the
/// bytes.
fn ensure_room(rt: &CudaRuntime, need: usize, what: &str) -> Result<()> {
    let (free, total) = rt.memory()?;
    if need + HEADROOM_BYTES > free {
        return Err(Error::OutOfMemory {
            requested_bytes: need,
            detail: format!("{what}; {free} of {total} bytes free on {}", rt.info().name),
        });
    }
    Ok(())
}

impl<T: Weight> DeviceMatrices<T> {
    /// Uploads start matrices; too large for the device is a clear error with the bytes.
    pub fn upload(rt: &Arc<CudaRuntime>, d: &[T], h: &[u32], np: usize) -> Result<Self> {
        ensure_room(
            rt,
            bytes_needed(np),
            &format!("{np} x {np} distances + successors"),
        )?;
        Ok(DeviceMatrices {
            rt: rt.clone(),
            d: rt.upload(d)?,
            h: rt.upload(h)?,
            np,
            edges: None,
        })
    }

    /// The start matrices of a graph of `n` vertices, padded to `np`, with edges
    /// `from[e] -> to[e]` of weight `w[e]`, built on the device: only the edges cross the bus,
    /// not the np x np matrices, and no host thread fills or scatters them. Equal to
    /// uploading [`super::graph::dense`]'s matrices. The edges are checked there too, as
    /// [`super::Graph::validate`] checks them on the host and with its errors (an id not
    /// below `n`, a weight that is not finite, integer weights whose paths could leave the
    /// exact range), but the host reads that verdict only after the solve
    /// ([`DeviceMatrices::verdict`]): everything here is queued, so the solve follows the
    /// edges' last bytes on the device without a round trip to the host between them. An edge
    /// the checks refuse writes nothing outside the matrices. The edges are kept for the
    /// checks after the solve. `config` names the kernels' module (the one its solve loads).
    pub fn from_edges(
        rt: &Arc<CudaRuntime>,
        config: &Config,
        n: usize,
        np: usize,
        from: &[u32],
        to: &[u32],
        w: &[T],
    ) -> Result<Self> {
        let m = from.len();
        if to.len() != m || w.len() != m || n > np {
            return Err(Error::invalid(
                "edges",
                format!(
                    "{m} tails, {} heads and {} weights for {n} vertices padded to {np}",
                    to.len(),
                    w.len()
                ),
            ));
        }
        let edge_bytes = m * (12 + std::mem::size_of::<T>()) + n * 8;
        // download_finished's buffers: the distances where padded; the successors as 16-bit
        // words up to PACKED_IDS_UP_TO, else 32-bit ones where padded.
        let successor_bytes = match (n <= PACKED_IDS_UP_TO, np == n) {
            (true, _) => 2,
            (false, true) => 0,
            (false, false) => 4,
        };
        let distance_bytes = if np == n { 0 } else { std::mem::size_of::<T>() };
        let answer_bytes = n * n * (distance_bytes + successor_bytes);
        ensure_room(
            rt,
            bytes_needed(np) + edge_bytes + answer_bytes,
            &format!("{np} x {np} distances + successors and {m} edges"),
        )?;
        let npi = i32::try_from(np)
            .map_err(|_| Error::invalid("vertices", format!("{np} is too many")))?;
        let nu =
            u32::try_from(n).map_err(|_| Error::invalid("vertices", format!("{n} is too many")))?;
        let stream = rt.stream().clone();
        // Nothing found yet: no bad edge (all ones), the sums and the cycle flag zero.
        let mut report = rt.alloc_zeros::<u64>(report::WORDS)?;
        {
            let (at, _written) = report.device_ptr_mut(&stream);
            // SAFETY: `report` holds WORDS >= 3 words; the stream orders every use of it.
            unsafe { cudarc::driver::result::memset_d8_async(at, 0xff, 3 * 8, stream.cu_stream()) }
                .map_err(crate::compute::cuda::gpu_err)?;
        }
        let defines = kernel_defines::<T>(config, np);
        let (from_ids, to_ids) = upload_ids(rt, &defines, n, from, to)?;
        let mut edges = Edges {
            m,
            n: nu,
            from: from_ids,
            to: to_ids,
            w: rt.upload(w)?,
            report,
        };
        let m64 = m as u64;
        if m > 0 {
            let check = rt.function_with(&APSP, &defines, "apsp_check_edges")?;
            let mut hi = rt.alloc_zeros::<i32>(n.max(1))?;
            let mut lo = rt.alloc_zeros::<i32>(n.max(1))?;
            let mut b = stream.launch_builder(&check);
            b.arg(&edges.from)
                .arg(&edges.to)
                .arg(&edges.w)
                .arg(&m64)
                .arg(&nu)
                .arg(&mut edges.report)
                .arg(&mut hi)
                .arg(&mut lo);
            // SAFETY: arguments (from, to, w, m, n, bad, hi, lo) as apsp_check_edges declares; it reads m entries of each edge array, writes report[0..3) and hi/lo only at ids below n (both hold max(n, 1))
            unsafe { b.launch(rt.grid_stride(m, 256)) }.map_err(launch_err("apsp_check_edges"))?;
            if !T::KERNEL_FLOAT {
                let sums = rt.function_with(&APSP, &defines, "apsp_reach_sums")?;
                let mut at = edges.report.slice_mut(report::REACH_HI..report::WORDS);
                let mut b = stream.launch_builder(&sums);
                b.arg(&hi).arg(&lo).arg(&nu).arg(&mut at);
                // SAFETY: arguments (hi, lo, n, sum) as apsp_reach_sums declares; it reads n entries of hi and lo and adds into sum[0..2), report words REACH_HI and REACH_LO
                unsafe { b.launch(rt.grid_stride(n, 256)) }
                    .map_err(launch_err("apsp_reach_sums"))?;
            }
        }
        // SAFETY: apsp_init below writes every one of the np * np cells before anything reads.
        let mut d = unsafe { rt.alloc::<T>(np * np) }?;
        // SAFETY: as `d`.
        let mut h = unsafe { rt.alloc::<u32>(np * np) }?;
        if np > 0 {
            let init = rt.function_with(&APSP, &defines, "apsp_init")?;
            let mut b = stream.launch_builder(&init);
            b.arg(&mut d).arg(&mut h).arg(&npi);
            // SAFETY: arguments (d, h, np) as apsp_init declares; it writes cells below np * np of d and h, both allocated np * np
            unsafe { b.launch(rt.grid_stride(np * np, 256)) }.map_err(launch_err("apsp_init"))?;
        }
        if m > 0 {
            let scatter = rt.function_with(&APSP, &defines, "apsp_edges")?;
            let mut b = stream.launch_builder(&scatter);
            b.arg(&edges.from)
                .arg(&edges.to)
                .arg(&edges.w)
                .arg(&m64)
                .arg(&mut d)
                .arg(&mut h)
                .arg(&npi);
            // SAFETY: arguments (from, to, w, m, d, h, np) as apsp_edges declares; from, to and w hold m entries each, and it skips any edge with an id not below np, so each cell written lies inside the np x np matrices
            unsafe { b.launch(rt.grid_stride(m, 256)) }.map_err(launch_err("apsp_edges"))?;
        }
        Ok(DeviceMatrices {
            rt: rt.clone(),
            d,
            h,
            np,
            edges: Some(edges),
        })
    }

    /// After the solve: the edge checks [`DeviceMatrices::from_edges`] queued and whether an
    /// edge u -> v (u != v) closes a cycle of weight <= 0 with the path back
    /// (src/apsp/paths.rs `has_zero_weight_cycle`, whose answer this is), read in one copy. A
    /// refused edge list is the host's error ([`super::Graph::validate`]'s), its values read
    /// from `from`, `to` and `w` (the lists given to `from_edges`); else whether there is such
    /// a cycle (false for matrices not built from edges). `config`: the solve's (its kernels'
    /// module).
    pub fn verdict(&mut self, config: &Config, from: &[u32], to: &[u32], w: &[T]) -> Result<bool> {
        let Some(edges) = &mut self.edges else {
            return Ok(false);
        };
        let m = edges.m;
        if m == 0 {
            return Ok(false);
        }
        if from.len() != m || to.len() != m || w.len() != m {
            return Err(Error::invalid(
                "edges",
                format!(
                    "{} tails, {} heads and {} weights for the {m} edges the matrices were built from",
                    from.len(),
                    to.len(),
                    w.len()
                ),
            ));
        }
        let npi = i32::try_from(self.np)
            .map_err(|_| Error::invalid("vertices", format!("{} is too many", self.np)))?;
        let defines = kernel_defines::<T>(config, self.np);
        let f = self.rt.function_with(&APSP, &defines, "apsp_zero_cycle")?;
        let m64 = m as u64;
        let stream = self.rt.stream().clone();
        {
            let mut found = edges.report.slice_mut(report::ZERO_CYCLE..report::WORDS);
            let mut b = stream.launch_builder(&f);
            b.arg(&edges.from)
                .arg(&edges.to)
                .arg(&edges.w)
                .arg(&m64)
                .arg(&self.d)
                .arg(&npi)
                .arg(&mut found);
            // SAFETY: arguments (from, to, w, m, d, np, found) as apsp_zero_cycle declares; it reads m entries of each edge array and d only at ids below np, writes found[0] (report word ZERO_CYCLE)
            unsafe { b.launch(self.rt.grid_stride(m, 256)) }
                .map_err(launch_err("apsp_zero_cycle"))?;
        }
        let found = self.rt.download(&edges.report, report::WORDS)?;
        let first = |k: usize| usize::try_from(found[k]).ok().filter(|&e| e < m);
        if let Some(e) = first(report::BAD_FROM) {
            return Err(bad_vertex("edge_from", e, from[e], edges.n));
        }
        if let Some(e) = first(report::BAD_TO) {
            return Err(bad_vertex("edge_to", e, to[e], edges.n));
        }
        if let Some(e) = first(report::BAD_WEIGHT) {
            return Err(bad_weight(e, format!("{:?}", w[e])));
        }
        if !T::KERNEL_FLOAT {
            check_reach(
                found[report::REACH_HI] as i64,
                found[report::REACH_LO] as i64,
            )?;
        }
        Ok(found[report::ZERO_CYCLE] != 0)
    }

    /// The answer as [`super::finish`] makes it on the host, into `d` and `h` (n x n each):
    /// the matrices' n x n corner, every unreached cell `T::INF` with no successor, made on
    /// the device (in place where there is no padding), so the host only copies. Up to
    /// 0xffff vertices the successors cross the bus as 16-bit words, widened as they leave
    /// the pinned chunks (a quarter of the answer's bytes saved).
    pub fn download_finished(
        &mut self,
        config: &Config,
        n: usize,
        d: &mut [T],
        h: &mut [u32],
    ) -> Result<()> {
        if n > self.np || d.len() != n * n || h.len() != n * n {
            return Err(Error::invalid(
                "vertices",
                format!(
                    "{n} of {} padded, into {} and {} cells",
                    self.np,
                    d.len(),
                    h.len()
                ),
            ));
        }
        if n == 0 {
            return Ok(());
        }
        let (npi, ni) = (self.np as i32, n as i32);
        let defines = kernel_defines::<T>(config, self.np);
        let stream = self.rt.stream().clone();
        let short = n <= PACKED_IDS_UP_TO;
        let padded = n != self.np;
        // In place where there is no padding (32-bit successors), else into n x n buffers,
        // each of whose n * n cells apsp_finish(16) writes before they are read.
        let mut od = padded
            // SAFETY: as said above.
            .then(|| unsafe { self.rt.alloc::<T>(n * n) })
            .transpose()?;
        let mut oh16 = short
            // SAFETY: as said above.
            .then(|| unsafe { self.rt.alloc::<u16>(n * n) })
            .transpose()?;
        let mut oh32 = (!short && padded)
            // SAFETY: as said above.
            .then(|| unsafe { self.rt.alloc::<u32>(n * n) })
            .transpose()?;
        let name = if short {
            "apsp_finish16"
        } else {
            "apsp_finish"
        };
        let f = self.rt.function_with(&APSP, &defines, name)?;
        {
            let (dp, _wd) = self.d.device_ptr_mut(&stream);
            let (hp, _wh) = self.h.device_ptr_mut(&stream);
            let od_at = od.as_mut().map(|o| o.device_ptr_mut(&stream));
            let oh16_at = oh16.as_mut().map(|o| o.device_ptr_mut(&stream));
            let oh32_at = oh32.as_mut().map(|o| o.device_ptr_mut(&stream));
            let op = od_at.as_ref().map_or(dp, |(p, _)| *p);
            let ohp = oh16_at
                .as_ref()
                .or(oh32_at.as_ref())
                .map_or(hp, |(p, _)| *p);
            let mut b = stream.launch_builder(&f);
            b.arg(&dp).arg(&hp).arg(&npi).arg(&op).arg(&ohp).arg(&ni);
            // SAFETY: arguments (d, h, np, od, oh, n) as apsp_finish(16) declares; reads the n x n corner of the np x np matrices and writes n * n cells of od and oh, each a buffer of n * n or, unpadded, d and h themselves (each cell read and then written by one thread only)
            unsafe { b.launch(self.rt.grid_stride(n * n, 256)) }.map_err(launch_err(name))?;
        }
        let od = od.as_ref().unwrap_or(&self.d);
        match &oh16 {
            Some(oh) => self.rt.download_with_widened(od, d, oh, h),
            None => {
                self.rt.download_into(od, 0, d)?;
                self.rt
                    .download_into(oh32.as_ref().unwrap_or(&self.h), 0, h)
            }
        }
    }

    /// The matrices into `d` and `h` (the solve's own start matrices: no fresh vectors).
    pub fn download(&self, d: &mut [T], h: &mut [u32]) -> Result<()> {
        self.rt.download_into(&self.d, 0, d)?;
        self.rt.download_into(&self.h, 0, h)
    }

    /// Runs every k (queued on the stream; [`DeviceMatrices::synchronize`] waits).
    pub fn solve(&mut self, config: &Config) -> Result<()> {
        config.validate()?;
        let np = self.np;
        if np == 0 {
            return Ok(());
        }
        let npi = i32::try_from(np)
            .map_err(|_| Error::invalid("vertices", format!("{np} is too many")))?;
        let defines = kernel_defines::<T>(config, np);
        let kernels = self.rt.clone();
        let f = move |name: &str| kernels.function_with(&APSP, &defines, name);
        // Under a cancel scope (a node's solve deadline), wait for the device every few
        // launches and stop if cancelled: queued launches cannot be recalled.
        let cancel = crate::cancel::current();
        let rt = self.rt.clone();
        let check = move |i: i32, every: i32| -> Result<()> {
            match &cancel {
                Some(c) if i % every == every - 1 => {
                    rt.synchronize()?;
                    c.check()
                }
                _ => Ok(()),
            }
        };
        let stream = self.rt.stream().clone();
        let (bx, by) = (config.block_x, config.block_y);
        match config.memory_model {
            MemoryModel::Linear | MemoryModel::Coalesced | MemoryModel::Shared => {
                let name = match config.memory_model {
                    MemoryModel::Linear => "apsp_linear",
                    MemoryModel::Coalesced => "apsp_coalesced",
                    _ => "apsp_shared",
                };
                let func = f(name)?;
                let cfg = if config.memory_model == MemoryModel::Linear {
                    let threads = bx * by;
                    LaunchConfig {
                        grid_dim: ((np * np).div_ceil(threads as usize) as u32, 1, 1),
                        block_dim: (threads, 1, 1),
                        shared_mem_bytes: 0,
                    }
                } else {
                    LaunchConfig {
                        grid_dim: (
                            np.div_ceil(bx as usize) as u32,
                            np.div_ceil(by as usize) as u32,
                            1,
                        ),
                        block_dim: (bx, by, 1),
                        shared_mem_bytes: 0,
                    }
                };
                for k in 0..npi {
                    let mut b = stream.launch_builder(&func);
                    b.arg(&mut self.d).arg(&mut self.h).arg(&npi).arg(&k);
                    // SAFETY: arguments (d, h, np, k) as the kernels declare; the per-k kernel reads and writes only cells of the np x np matrices d and h (np = npi, both allocated np * np), one thread per cell inside the grid
                    unsafe { b.launch(cfg) }.map_err(launch_err(name))?;
                    check(k, 64)?;
                }
            }
            MemoryModel::Blocked | MemoryModel::Tiled => self.blocked(config, &f, &check)?,
        }
        Ok(())
    }

    /// The blocked models' k-blocks: phase 1 (the diagonal tile), phase 2 (the k-block's line:
    /// its row and column tiles), phase 3 (the rest). With `lookahead` (the tiled model),
    /// phase 3 of k-block kb first relaxes the next k-block's line, on a second stream of
    /// higher priority, which then runs the next k-block's phases 1 and 2 while the main stream
    /// relaxes the rest: the phases 1 and 2, a few blocks that leave most of the device idle,
    /// hide under the rest's thousands (n = 8192: 128 k-blocks of about 90 us of phases 1 and
    /// 2 each). Events order the two streams: the rest of kb waits for phase 2 of kb; the side
    /// stream goes on to kb + 1's share of the line after next only once the rest of kb, which
    /// relaxes those tiles too, is done.
    fn blocked(
        &mut self,
        config: &Config,
        f: &dyn Fn(&str) -> Result<CudaFunction>,
        check: &dyn Fn(i32, i32) -> Result<()>,
    ) -> Result<()> {
        let np = self.np;
        let (tile, tt) = config.blocked_shape(np);
        if !np.is_multiple_of(tile as usize) {
            return Err(Error::invalid(
                "vertices",
                format!("matrix side {np} is not padded to the tile {tile}"),
            ));
        }
        let (p12_threads, lookahead) = (
            p12_threads(config),
            config.memory_model == MemoryModel::Tiled,
        );
        let (p1, p2, p3) = (f("apsp_phase1")?, f("apsp_phase2")?, f("apsp_phase3")?);
        // Phase 3's three tiles (kernels/apsp.cu P3_SMEM_BYTES: the transposed one's rows
        // padded by four) are dynamic shared memory, 49 KiB at tile 64, above the static 48;
        // the largest carveout lets four blocks share a multiprocessor (its __launch_bounds__
        // asks for four).
        let p3_smem = (tile * (tile + 4) + 2 * tile * tile) * 4;
        for (attribute, value) in [
            (
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                p3_smem as i32,
            ),
            (
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                100,
            ),
        ] {
            p3.set_attribute(attribute, value).map_err(gpu_err)?;
        }
        let npi = np as i32; // checked by the caller
        let nb = (np / tile as usize) as i32;
        let p12_y = if tile * tile > p12_threads {
            p12_threads / tile
        } else {
            tile
        };
        let s = tile / tt;
        let cfg = |grid: (u32, u32), block: (u32, u32), smem: u32| LaunchConfig {
            grid_dim: (grid.0, grid.1, 1),
            block_dim: (block.0, block.1, 1),
            shared_mem_bytes: smem,
        };
        let main = self.rt.stream().clone();
        // Integer weights: whether every value the solve meets packs (kernels/apsp.cu
        // apsp_pack_bound), on the device, read there by phase 3; queued before the side stream
        // joins the main one, so that both find it done.
        let mut bound = self.rt.alloc_zeros::<u64>(1)?;
        if !T::KERNEL_FLOAT {
            let f = f("apsp_pack_bound")?;
            let mut b = main.launch_builder(&f);
            b.arg(&self.d).arg(&npi).arg(&mut bound);
            let c = cfg((np as u32, 1), (256, 1), 0);
            // SAFETY: arguments (d, np, bound) as apsp_pack_bound declares: block i reads row i of the np x np matrix d (np blocks), one thread per block adds to bound[0]
            unsafe { b.launch(c) }.map_err(launch_err("apsp_pack_bound"))?;
        }
        let side = if lookahead && nb > 1 {
            let (_, greatest) = self.rt.priorities()?;
            let priority = (self.rt.priority() - 1).max(greatest);
            let side = self
                .rt
                .context()
                .new_stream_with_priority(priority)
                .map_err(gpu_err)?;
            side.join(&main).map_err(gpu_err)?;
            Some(side)
        } else {
            None
        };
        // Raw pointers on both streams: the events below order them, where the slices' own
        // tracking would make each launch wait for the other stream's last one. The guards
        // record the solve's end on the main stream, which joins the side stream last.
        let (bp, _wb) = bound.device_ptr_mut(&main);
        let (dp, _wd) = self.d.device_ptr_mut(&main);
        let (hp, _wh) = self.h.device_ptr_mut(&main);
        let launch = |stream: &Arc<CudaStream>, step: Step, kb: i32, next: i32| -> Result<()> {
            let (func, name, c) = match step {
                Step::Diagonal => (&p1, "apsp_phase1", cfg((1, 1), (tile, p12_y), 0)),
                Step::Line => (&p2, "apsp_phase2", cfg((nb as u32, 2), (tile, p12_y), 0)),
                Step::Rest => (
                    &p3,
                    "apsp_phase3",
                    cfg((nb as u32, nb as u32), (s, s), p3_smem),
                ),
                Step::NextLine => (&p3, "apsp_phase3", cfg((nb as u32, 2), (s, s), p3_smem)),
            };
            let mut b = stream.launch_builder(func);
            b.arg(&dp).arg(&hp).arg(&npi).arg(&kb);
            let part = i32::from(step == Step::NextLine);
            if matches!(step, Step::Rest | Step::NextLine) {
                b.arg(&next).arg(&part).arg(&bp);
            }
            // SAFETY: arguments (d, h, np, kb[, next, part, bound]) as the kernels declare; each phase reads and writes only TILE x TILE tiles inside the np x np matrices d and h (np a multiple of the tile, both allocated np * np, alive until the main stream, which joins the side stream, is done with them); the events below keep a tile's writers and readers in order across the two streams
            unsafe { b.launch(c) }.map_err(launch_err(name)).map(drop)
        };
        let run = || -> Result<()> {
            let Some(side) = &side else {
                for kb in 0..nb {
                    for step in [Step::Diagonal, Step::Line, Step::Rest] {
                        launch(&main, step, kb, -1)?;
                    }
                    check(kb, 4)?;
                }
                return Ok(());
            };
            let ctx = self.rt.context();
            let (line_done, rest_done) = (
                ctx.new_event(None).map_err(gpu_err)?,
                ctx.new_event(None).map_err(gpu_err)?,
            );
            launch(side, Step::Diagonal, 0, -1)?;
            launch(side, Step::Line, 0, -1)?;
            for kb in 0..nb {
                let next = if kb + 1 < nb { kb + 1 } else { -1 };
                line_done.record(side).map_err(gpu_err)?;
                main.wait(&line_done).map_err(gpu_err)?;
                launch(&main, Step::Rest, kb, next)?;
                if next >= 0 {
                    rest_done.record(&main).map_err(gpu_err)?;
                    launch(side, Step::NextLine, kb, next)?;
                    launch(side, Step::Diagonal, next, -1)?;
                    launch(side, Step::Line, next, -1)?;
                    side.wait(&rest_done).map_err(gpu_err)?;
                }
                check(kb, 4)?;
            }
            Ok(())
        };
        let ran = run();
        // Whatever ended the loop (a cancel, a failed launch), nothing on the side stream may
        // outlive the main stream's view of the matrices.
        let joined = match &side {
            Some(side) => main.join(side).map_err(gpu_err),
            None => Ok(()),
        };
        ran.and(joined)
    }

    /// Waits for every launch on the matrices' stream.
    pub fn synchronize(&self) -> Result<()> {
        self.rt.synchronize()
    }
}
