//! The k-d tree on the device: Brown's presorts as LSD radix sorts of coordinate pairs (the
//! foundation's stable sort), dedupe by run starts, then one sort per breadth-first level keyed
//! by (open range, rank in the level's dimension), which puts every range's median in place.
//! The layout equals the CPU builder's. Queries: answered grouped by their cells in Morton
//! order (a counting sort on the device, nothing read back in between), one thread per query,
//! an explicit stack, subtrees of up to 8 points scanned whole (5 for 2 <= k <= 64, see
//! `leaf_span`), the k best in registers up to
//! [`REGISTER_K`] and in a heap in scratch memory up to [`MAX_K`]; a far side ruled out by
//! its split plane or, with [`Traversal::Boxes`], by its bounding box. A call with more
//! answers than [`BATCH_ANSWER_BYTES`] is searched in batches of consecutive queries (each in
//! Morton order among its own), and each batch's answers come back on a second stream while
//! the device searches the next.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{
    CudaEvent, CudaFunction, CudaSlice, DevicePtr, LaunchConfig, PinnedHostSlice, PushKernelArg,
};

use super::config::{Metric, Traversal};
use super::points::Points;
use super::query::{check_query_dims, Neighbors};
use super::tree::KdTree;
use crate::compute::cuda::{bytes_of_mut, gpu_err, launch_err, CudaRuntime};
use crate::compute::kernels::KDTREE;
use crate::compute::primitives::gpu::Primitives;
use crate::compute::staging::{host_vec, parallel_copy, Part};
use crate::compute::warmup::Module;
use crate::error::{Error, Result};

/// Neighbours a device query keeps (larger k runs on the CPU, with a log line).
pub const MAX_K: usize = 1024;
/// Up to this k the query keeps its k best in registers (kd_knn, compiled per k); above it,
/// in a heap in global memory (kd_knn_heap). On the H100 (1M points, 1M queries) registers
/// took 7.0 ms at k = 33 against the heap's 14.0, 18.8-19.3 at k = 64 against 34.3-34.6 (4-D
/// 36.5 against 57.5), with no spills at 156 registers; at k = 128 they spill and took 131 ms
/// against the heap's 92 (docs/bench-history).
pub const REGISTER_K: usize = 64;
const THREADS: u32 = 256;

/// Bits of a query's cell, the key of the counting sort that orders the queries
/// (kernels/kdtree.cu `kd_cells`): the top bits of its Morton code, 2^16 cells.
const CELL_BITS: u32 = 16;

/// Milliseconds of each build phase (synchronised), for the benchmark.
#[derive(Debug, Clone, Default)]
pub struct BuildTimes {
    /// Sorting the points by each dimension's super key.
    pub sort_ms: f64,
    /// Removing copies.
    pub dedupe_ms: f64,
    /// The breadth-first partition into the tree layout.
    pub build_ms: f64,
}

/// k nearest of many queries as row-major arrays (k per query).
#[derive(Debug, Clone, PartialEq)]
pub struct KnnRows {
    /// Neighbours per query (min(k, distinct points)).
    pub k: usize,
    /// Queries.
    pub rows: usize,
    /// rows x k distances, nearest first per row.
    pub distances: Vec<f32>,
    /// rows x k input indices, as `distances`.
    pub indices: Vec<u32>,
}

/// Milliseconds of a [`DeviceTree::knn_timed`] call's phases, each synchronised.
#[derive(Debug, Clone, Copy, Default)]
pub struct KnnTimes {
    /// Device work (query order and search), by CUDA events.
    pub device_ms: f64,
    /// The queries' upload and the answers' download, host clock.
    pub upload_ms: f64,
    /// See `upload_ms`.
    pub download_ms: f64,
}

impl KnnRows {
    fn empty(rows: usize, k: usize) -> KnnRows {
        KnnRows {
            k,
            rows,
            distances: vec![],
            indices: vec![],
        }
    }

    /// One vector per query.
    pub fn nested(&self) -> Vec<Neighbors> {
        (0..self.rows)
            .map(|r| {
                (r * self.k..(r + 1) * self.k)
                    .map(|j| (self.distances[j], self.indices[j]))
                    .collect()
            })
            .collect()
    }
}

/// k nearest of many queries in page-locked host memory the caller keeps across calls, as
/// FAISS's search writes into arrays its caller keeps: [`DeviceTree::knn_into`] copies the
/// answers from the device straight into it, at the link's rate, where [`KnnRows`] in fresh
/// vectors cost the host a pass of its own over every byte (on the H100's host, 55 GB/s into
/// page-locked memory against 17 GB/s into a vector). It grows to the largest call it served.
#[derive(Default)]
pub struct PinnedKnn {
    k: usize,
    rows: usize,
    /// Distances and indices, each at least rows * k long.
    buffers: Option<(PinnedHostSlice<f32>, PinnedHostSlice<u32>)>,
}

impl PinnedKnn {
    /// No buffers yet: the first call sizes them.
    pub fn new() -> PinnedKnn {
        PinnedKnn::default()
    }

    /// Neighbours per row of the last call (k clamped to the tree's points).
    pub fn k(&self) -> usize {
        self.k
    }

    /// Queries of the last call.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The last call's distances, row-major (rows x k).
    pub fn distances(&self) -> Result<&[f32]> {
        match &self.buffers {
            Some((d, _)) => Ok(&d.as_slice().map_err(gpu_err)?[..self.rows * self.k]),
            None => Ok(&[]),
        }
    }

    /// The last call's point indices, row-major (rows x k).
    pub fn indices(&self) -> Result<&[u32]> {
        match &self.buffers {
            Some((_, i)) => Ok(&i.as_slice().map_err(gpu_err)?[..self.rows * self.k]),
            None => Ok(&[]),
        }
    }

    /// A copy of the last call's answers as [`KnnRows`], made as [`DeviceTree::knn_rows`]
    /// makes its own from the pinned chunks: fresh vectors mapped over the pool, then
    /// copied into over it. This is the host's own share of a call into fresh vectors, with
    /// no device work beside it (the benchmark times it).
    pub fn to_rows(&self) -> Result<KnnRows> {
        let (d, i) = (self.distances()?, self.indices()?);
        let (mut distances, mut indices) = (host_vec::<f32>(d.len()), host_vec::<u32>(i.len()));
        parallel_copy(bytemuck::cast_slice(d), bytes_of_mut(&mut distances));
        parallel_copy(bytemuck::cast_slice(i), bytes_of_mut(&mut indices));
        Ok(KnnRows {
            k: self.k,
            rows: self.rows,
            distances,
            indices,
        })
    }

    /// Room for `n` answers: the buffers kept when large enough, else replaced (the old ones
    /// freed first).
    fn reserve(&mut self, rt: &CudaRuntime, n: usize) -> Result<()> {
        if self.buffers.as_ref().is_some_and(|(d, _)| d.len() >= n) {
            return Ok(());
        }
        self.buffers = None;
        let ctx = rt.context();
        // SAFETY: entries are read only up to rows * k, after the copy that writes them.
        // Flags 0: cached, not write-combined, since the host reads them.
        let d = unsafe { ctx.alloc_pinned_with_flags::<f32>(n, 0) }.map_err(gpu_err)?;
        // SAFETY: as above.
        let i = unsafe { ctx.alloc_pinned_with_flags::<u32>(n, 0) }.map_err(gpu_err)?;
        self.buffers = Some((d, i));
        Ok(())
    }
}

/// A tree's arrays on the device.
pub struct DeviceTree {
    rt: Arc<CudaRuntime>,
    /// Coordinates per point.
    pub dims: usize,
    /// Distinct points.
    pub len: usize,
    coords: CudaSlice<f32>,
    order: CudaSlice<u32>,
    original: CudaSlice<u32>,
    /// Coordinates (rows of [`tree_row`] floats) and first-copy indices in tree layout (what
    /// queries read).
    tcoords: CudaSlice<f32>,
    torig: CudaSlice<u32>,
    /// kd_knn's traversal, a [`Traversal`] as a number (see [`DeviceTree::set_traversal`]).
    traversal: AtomicU8,
    kernels: QueryKernels,
}

/// A tree's query kernels, looked up once: a call looked up sixteen (the order's three, the
/// scan's primitives, kd_knn), each a lock and a driver call on the host between launches,
/// while the device waited for the next.
#[derive(Default)]
struct QueryKernels {
    order: OnceLock<OrderKernels>,
    /// The k-nearest kernel last used: its name and defines, and the function.
    knn: Mutex<Option<(&'static str, KnnDefines, CudaFunction)>>,
}

/// The query order's kernels ([`DeviceTree::query_order`]).
struct OrderKernels {
    bounds: CudaFunction,
    cells: CudaFunction,
    place: CudaFunction,
    prims: Primitives,
}

/// cudarc frees without making the context current on the dropping thread.
impl Drop for DeviceTree {
    fn drop(&mut self) {
        let _ = self.rt.context().bind_to_thread();
    }
}

/// Super-key LSD passes for dimension d: coordinate pairs (more, less significant), least
/// significant pair first.
fn passes(dims: usize, d: usize) -> Vec<(i32, i32)> {
    let seq: Vec<i32> = (0..dims).map(|j| ((d + j) % dims) as i32).collect();
    let mut out = Vec::new();
    let mut end = dims;
    while end > 0 {
        if end >= 2 {
            out.push((seq[end - 2], seq[end - 1]));
            end -= 2;
        } else {
            out.push((seq[0], -1));
            end = 0;
        }
    }
    out
}

struct Sorter<'a> {
    rt: &'a Arc<CudaRuntime>,
    prim: Primitives,
    pair_keys: CudaFunction,
}

impl Sorter<'_> {
    /// Point ids 0..n in dimension d's super-key order (stable: equal tuples keep id order).
    fn super_order(
        &self,
        coords: &CudaSlice<f32>,
        dims: usize,
        n: usize,
        d: usize,
    ) -> Result<CudaSlice<u32>> {
        let stream = self.rt.stream();
        let n32 = n as u32;
        let di = dims as i32;
        let mut perm = self.prim.iota(n)?;
        // SAFETY: kd_pair_keys writes all n keys before the sort reads them.
        let mut keys = unsafe { self.rt.alloc::<u64>(n) }?;
        for (ca, cb) in passes(dims, d) {
            let mut b = stream.launch_builder(&self.pair_keys);
            b.arg(coords)
                .arg(&di)
                .arg(&perm)
                .arg(&n32)
                .arg(&ca)
                .arg(&cb)
                .arg(&mut keys);
            // SAFETY: kd_pair_keys: as declared; writes keys[0..n), allocated n
            unsafe { b.launch(self.rt.grid_stride(n, THREADS)) }
                .map_err(launch_err("kd_pair_keys"))?;
            self.prim.sort_pairs(&mut keys, &mut perm, n)?;
        }
        Ok(perm)
    }
}

/// Builds on the device and downloads the tree (equal to [`super::cpu::build`]'s).
pub fn build(rt: &Arc<CudaRuntime>, p: &Points) -> Result<KdTree> {
    let (t, _) = build_timed(rt, p)?;
    Ok(t)
}

/// Builds on the device and downloads the tree; also returns the phase times.
pub fn build_timed(rt: &Arc<CudaRuntime>, p: &Points) -> Result<(KdTree, BuildTimes)> {
    let (dev, times) = DeviceTree::build(rt, p)?;
    let t = dev.download(p.len())?;
    Ok((t, times))
}

/// The most points of the home subtree a k-nearest search offers whole before it searches
/// from the root (kernels/kdtree.cu `search`): its k-th best is the search's first limit. On
/// the H200, 1M uniform 3-D points and queries (docs/bench-history): 8-NN 1.29-1.30 ms with 32
/// against 1.38-1.41 with 16 or 64 and 1.44-1.47 from the root; 32-NN 5.39-5.40 with 64
/// against 5.70 with 128, 6.6 with 256 and 5.54-5.59 from the root; 1-NN on 16.7M points
/// (3-D / 4-D) 0.75-0.77 / 1.62-1.65 with 32 against 0.76-0.78 / 1.68-1.71 with a leaf's 8.
fn home_span(k: usize) -> usize {
    (2 * k).max(32)
}

/// The most points of a subtree a k-nearest search scans whole, testing no split and pushing
/// nothing (kernels/kdtree.cu `KNN_LEAF`). With the home subtree's tight first limit a split
/// near the leaves prunes more than it did from the root: on the H200, 1M uniform 3-D points
/// and queries, beside cudaKDTree in the same run (docs/bench-history), 8-NN 1.20-1.22 ms
/// with 5 (4 and 6 the same within the runs' spread) against 1.30 with 8, 32-NN 5.01-5.02
/// against 5.38-5.40; 1-NN on 16.7M points did not move (3-D 0.71-0.73 ms, 4-D 1.58-1.62,
/// with either), so k = 1 and the heap's search (k above [`REGISTER_K`], not measured here)
/// keep the 8 the H100 chose.
fn leaf_span(k: usize) -> usize {
    if k == 1 {
        8
    } else {
        5
    }
}

/// The defines a kd_knn or kd_knn_heap module is compiled with.
type KnnDefines = [(&'static str, String); 5];

/// kd_knn is compiled per (k, dimensions), so the k best and the query live in registers,
/// and per traversal (kernels/kdtree.cu, `KNN_BOXES`), home subtree ([`home_span`]) and
/// leaf ([`leaf_span`]).
fn knn_defines(k: usize, dims: usize, traversal: Traversal) -> KnnDefines {
    let boxes = (traversal.for_k(k) == Traversal::Boxes) as u32;
    [
        ("KNN_K", k.to_string()),
        ("KNN_DIMS", dims.to_string()),
        ("KNN_BOXES", boxes.to_string()),
        ("KNN_HOME", home_span(k).to_string()),
        ("KNN_LEAF", leaf_span(k).to_string()),
    ]
}

/// kd_knn_heap's module: one per dimension count (its search takes the boxes whatever the
/// traversal), shared with the plane's k = 1.
fn heap_defines(dims: usize) -> KnnDefines {
    knn_defines(1, dims, Traversal::Plane)
}

/// Threads per kd_knn block. On the H100, 128 against 64: 16.7M 3-D 1-NN 2.40 against
/// 2.50 ms, 4-D 5.42 against 5.54, 1M 3-D 8-NN 3.30 against 3.41 (docs/bench-history).
const KNN_THREADS: u32 = 128;

/// Scratch memory of one kd_knn_heap launch at most: each thread holds a heap of k entries of
/// 8 bytes, so at k = 1024 this is 32,768 threads (the rest of the queries wait for them). On
/// the H100, 100,000 queries at k = 1024 on 1M points took 123 ms with 256 MiB, 209 with 64,
/// 130 with 1 and 4 GiB (whose heaps crowd the L2 cache), and k = 64 the same at each
/// (docs/bench-history).
const HEAP_SCRATCH_BYTES: usize = 256 << 20;

/// Blocks of a kd_knn_heap launch whose heaps fit [`HEAP_SCRATCH_BYTES`] (one block at least).
fn heap_blocks(k: usize) -> u32 {
    let per_block = KNN_THREADS as usize * k.max(1) * 8;
    (HEAP_SCRATCH_BYTES / per_block).clamp(1, i32::MAX as usize) as u32
}

/// The modules a nearest-neighbour node uses with `k` neighbours per query, for its start-up
/// warm-up: the builder and radius search, the sort, and kd_knn for 3-D clouds and 4-D
/// orientation sets at `k` and 1 with `traversal`, and kd_knn_heap above [`REGISTER_K`]
/// (other k compile on first use, then come from the disk cache).
pub fn modules(k: usize, traversal: Traversal) -> Vec<Module> {
    let mut all = vec![Module::new(KDTREE, &[])];
    all.extend(crate::compute::primitives::gpu::modules());
    for dims in [3, 4] {
        let mut sets = vec![
            knn_defines(1, dims, traversal),
            knn_defines(k.min(REGISTER_K), dims, traversal),
        ];
        if k > REGISTER_K {
            sets.push(heap_defines(dims));
        }
        for defines in sets {
            if !all.iter().any(|m| m.defines == defines) {
                all.push(Module::new(KDTREE, &defines));
            }
        }
    }
    all
}

impl DeviceTree {
    /// Builds the tree on the device and keeps it there, with each phase's time.
    pub fn build(rt: &Arc<CudaRuntime>, p: &Points) -> Result<(DeviceTree, BuildTimes)> {
        let dims = p.dims;
        let n = p.len();
        let mut times = BuildTimes::default();
        let f = |name: &str| rt.function(&KDTREE, name);
        let s = Sorter {
            rt,
            prim: Primitives::new(rt)?,
            pair_keys: f("kd_pair_keys")?,
        };
        let stream = rt.stream().clone();
        if n == 0 {
            return Ok((
                DeviceTree {
                    rt: rt.clone(),
                    dims,
                    len: 0,
                    coords: rt.alloc_zeros::<f32>(1)?,
                    order: rt.alloc_zeros::<u32>(1)?,
                    original: rt.alloc_zeros::<u32>(1)?,
                    tcoords: rt.alloc_zeros::<f32>(1)?,
                    torig: rt.alloc_zeros::<u32>(1)?,
                    traversal: AtomicU8::new(Traversal::Auto as u8),
                    kernels: QueryKernels::default(),
                },
                times,
            ));
        }
        let coords = rt.upload(&p.coords)?;
        rt.synchronize()?;
        let (di, n32) = (dims as i32, n as u32);
        let clock = std::time::Instant::now();
        let perm = s.super_order(&coords, dims, n, 0)?;
        rt.synchronize()?;
        times.sort_ms = clock.elapsed().as_secs_f64() * 1e3;

        let clock = std::time::Instant::now();
        // SAFETY: kd_flags writes all n flags; the scan copies them.
        let mut flags = unsafe { rt.alloc::<u32>(n) }?;
        let kd_flags = f("kd_flags")?;
        let mut b = stream.launch_builder(&kd_flags);
        b.arg(&coords).arg(&di).arg(&perm).arg(&n32).arg(&mut flags);
        // SAFETY: kd_flags: as declared; writes flags[0..n), allocated n
        unsafe { b.launch(rt.grid_stride(n, THREADS)) }.map_err(launch_err("kd_flags"))?;
        let mut pos = stream.clone_dtod(&flags).map_err(gpu_err)?;
        s.prim.exclusive_scan_in_place(&mut pos, n)?;
        let u = (rt.download_range(&pos, n - 1..n)?[0] + rt.download_range(&flags, n - 1..n)?[0])
            as usize;
        // SAFETY: kd_unique writes one entry of each per distinct point.
        let mut ucoords = unsafe { rt.alloc::<f32>(u * dims) }?;
        // SAFETY: uninitialised; kd_unique writes all of it before anything reads it.
        let mut original = unsafe { rt.alloc::<u32>(u) }?;
        let kd_unique = f("kd_unique")?;
        let mut b = stream.launch_builder(&kd_unique);
        b.arg(&coords)
            .arg(&di)
            .arg(&perm)
            .arg(&flags)
            .arg(&pos)
            .arg(&n32);
        b.arg(&mut ucoords).arg(&mut original);
        // SAFETY: kd_unique: as declared; writes u entries of coordinates and indices, u = the scanned flag count they were allocated for
        unsafe { b.launch(rt.grid_stride(n, THREADS)) }.map_err(launch_err("kd_unique"))?;
        drop((coords, perm, flags, pos));
        rt.synchronize()?;
        times.dedupe_ms = clock.elapsed().as_secs_f64() * 1e3;

        let clock = std::time::Instant::now();
        let u32n = u as u32;
        let ranks_fn = f("kd_ranks")?;
        // Ranks of the other dimensions (dimension 0's rank is the distinct id itself).
        let mut ranks = Vec::with_capacity(dims);
        for d in 1..dims {
            let order = s.super_order(&ucoords, dims, u, d)?;
            // SAFETY: kd_ranks writes every id's rank.
            let mut r = unsafe { rt.alloc::<u32>(u) }?;
            let mut b = stream.launch_builder(&ranks_fn);
            b.arg(&order).arg(&u32n).arg(&mut r);
            // SAFETY: kd_ranks: (perm, u, rank) as declared; writes rank[perm[j]] for j < u, a permutation of 0..u
            unsafe { b.launch(rt.grid_stride(u, THREADS)) }.map_err(launch_err("kd_ranks"))?;
            ranks.push(r);
        }
        let mut order = s.prim.iota(u)?;
        let ids = s.prim.iota(u)?;
        let level_keys = f("kd_level_keys")?;
        // SAFETY: kd_level_keys writes all u keys each level.
        let mut keys = unsafe { rt.alloc::<u64>(u) }?;
        // Level 0 is dimension 0's order already. The largest open range of level t has
        // u >> t points (a range of s splits into floor(s / 2) and below), so levels run while
        // that is 2 or more.
        let mut level = 1usize;
        while (u >> level) >= 2 {
            let d = level % dims;
            let rank = if d == 0 { &ids } else { &ranks[d - 1] };
            let li = level as i32;
            let mut b = stream.launch_builder(&level_keys);
            b.arg(&order).arg(&u32n).arg(&li).arg(rank).arg(&mut keys);
            // SAFETY: kd_level_keys: as declared; writes keys[0..u), allocated u
            unsafe { b.launch(rt.grid_stride(u, THREADS)) }.map_err(launch_err("kd_level_keys"))?;
            s.prim.sort_pairs(&mut keys, &mut order, u)?;
            level += 1;
        }
        let (tcoords, torig) = layout(rt, &ucoords, &order, &original, u, dims)?;
        rt.synchronize()?;
        times.build_ms = clock.elapsed().as_secs_f64() * 1e3;
        Ok((
            DeviceTree {
                rt: rt.clone(),
                dims,
                len: u,
                coords: ucoords,
                order,
                original,
                tcoords,
                torig,
                traversal: AtomicU8::new(Traversal::Auto as u8),
                kernels: QueryKernels::default(),
            },
            times,
        ))
    }

    /// How k-nearest queries with k <= [`REGISTER_K`] traverse the tree from now on (default
    /// [`Traversal::Auto`]); the answers are the same whichever it is.
    pub fn set_traversal(&self, traversal: Traversal) {
        self.traversal.store(traversal as u8, Ordering::Relaxed);
    }

    /// The traversal k-nearest queries take now.
    pub fn traversal(&self) -> Traversal {
        match self.traversal.load(Ordering::Relaxed) {
            x if x == Traversal::Plane as u8 => Traversal::Plane,
            x if x == Traversal::Boxes as u8 => Traversal::Boxes,
            _ => Traversal::Auto,
        }
    }

    /// Uploads a tree built elsewhere (the host's, or one read back).
    pub fn upload(rt: &Arc<CudaRuntime>, t: &KdTree) -> Result<DeviceTree> {
        let nz = |v: &[u32]| if v.is_empty() { vec![0] } else { v.to_vec() };
        let coords = if t.coords.is_empty() {
            vec![0.0]
        } else {
            t.coords.clone()
        };
        let (c, o, g) = (
            rt.upload(&coords)?,
            rt.upload(&nz(&t.order))?,
            rt.upload(&nz(&t.original))?,
        );
        let (tcoords, torig) = if t.is_empty() {
            (rt.alloc_zeros::<f32>(1)?, rt.alloc_zeros::<u32>(1)?)
        } else {
            layout(rt, &c, &o, &g, t.len(), t.dims)?
        };
        Ok(DeviceTree {
            rt: rt.clone(),
            dims: t.dims,
            len: t.len(),
            coords: c,
            order: o,
            original: g,
            tcoords,
            torig,
            traversal: AtomicU8::new(Traversal::Auto as u8),
            kernels: QueryKernels::default(),
        })
    }

    /// The tree on the host; `input_len` is the input's point count, copies included.
    pub fn download(&self, input_len: usize) -> Result<KdTree> {
        let u = self.len;
        let get_u32 = |s: &CudaSlice<u32>| {
            if u == 0 {
                Ok(vec![])
            } else {
                self.rt.download(s, u)
            }
        };
        Ok(KdTree {
            dims: self.dims,
            coords: if u == 0 {
                vec![]
            } else {
                self.rt.download(&self.coords, u * self.dims)?
            },
            original: get_u32(&self.original)?,
            order: get_u32(&self.order)?,
            input_len,
        })
    }

    /// The device-side checker: Ok(()) or the number of misplaced positions and one of them.
    pub fn check(&self) -> Result<std::result::Result<(), (u32, u32)>> {
        if self.len == 0 {
            return Ok(Ok(()));
        }
        let mut bad = self.rt.alloc_zeros::<u32>(2)?;
        let (n, di) = (self.len as u32, self.dims as i32);
        let f = self.rt.function(&KDTREE, "kd_check")?;
        let mut b = self.rt.stream().launch_builder(&f);
        b.arg(&self.coords)
            .arg(&self.order)
            .arg(&n)
            .arg(&di)
            .arg(&mut bad);
        // SAFETY: kd_check: as declared; writes only the two counters of `bad`
        unsafe { b.launch(self.rt.grid_stride(self.len, THREADS)) }
            .map_err(launch_err("kd_check"))?;
        let r = self.rt.download(&bad, 2)?;
        Ok(if r[0] == 0 { Ok(()) } else { Err((r[0], r[1])) })
    }

    /// k nearest of every query, k <= [`MAX_K`] (k above the distinct points: all of them).
    pub fn knn(&self, queries: &[f32], k: usize, metric: Metric) -> Result<Vec<Neighbors>> {
        Ok(self.knn_rows(queries, k, metric)?.nested())
    }

    /// [`Self::knn`] as flat rows: the queries' upload, their order and search, and the
    /// answers' download, one after another on the stream (the answers' host pages mapped
    /// while the device searches).
    pub fn knn_rows(&self, queries: &[f32], k: usize, metric: Metric) -> Result<KnnRows> {
        Ok(self.knn_call(queries, k, metric, Timing::None)?.0)
    }

    /// [`Self::knn_rows`] synchronised between its phases, with each phase's time: the device
    /// work (query order and search, by CUDA events) apart from the copies, for the benchmark.
    /// `queued_ahead`: the device work is queued behind a hold ([`Primitives::hold`]) and runs
    /// back to back, its time the device's alone; else each launch starts when the host
    /// issues it, as in a call.
    pub fn knn_timed(
        &self,
        queries: &[f32],
        k: usize,
        metric: Metric,
        queued_ahead: bool,
    ) -> Result<(KnnRows, KnnTimes)> {
        let timing = if queued_ahead {
            Timing::QueuedAhead
        } else {
            Timing::Phases
        };
        self.knn_call(queries, k, metric, timing)
    }

    /// Checks a kNN call; (queries, k clamped to the tree's points), or None when there is
    /// nothing to search.
    fn knn_shape(
        &self,
        queries: &[f32],
        k: usize,
        metric: Metric,
    ) -> Result<Option<(usize, usize)>> {
        check_query_dims(self.dims, queries, k, metric)?;
        if k > MAX_K {
            return Err(Error::invalid(
                "k",
                format!("{k} is above the device query's limit of {MAX_K}"),
            ));
        }
        let nq = queries.len() / self.dims;
        if nq > u32::MAX as usize {
            return Err(Error::invalid(
                "queries",
                format!("{nq} queries: at most {} per call", u32::MAX),
            ));
        }
        let k = k.min(self.len);
        Ok((nq > 0 && k > 0).then_some((nq, k)))
    }

    /// Upload, search, download; timed: synchronised between them. A call with answers
    /// beyond one [`BATCH_ANSWER_BYTES`] is searched in batches of queries, and each batch's
    /// answers come back on the copy stream while the device searches the next.
    fn knn_call(
        &self,
        queries: &[f32],
        k: usize,
        metric: Metric,
        timing: Timing,
    ) -> Result<(KnnRows, KnnTimes)> {
        let timed = timing != Timing::None;
        let Some((nq, k)) = self.knn_shape(queries, k, metric)? else {
            let rows = queries.len() / self.dims.max(1);
            return Ok((KnnRows::empty(rows, k.min(self.len)), KnnTimes::default()));
        };
        let rt = &self.rt;
        let mut times = KnnTimes::default();
        let clock = std::time::Instant::now();
        let q = rt.upload(queries)?;
        if timed {
            rt.synchronize()?;
            times.upload_ms = clock.elapsed().as_secs_f64() * 1e3;
        }
        if timing == Timing::QueuedAhead {
            self.order_kernels()?.prims.hold(HOLD_S)?;
        }
        let clocked = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let started = rt.stream().record_event(clocked).map_err(gpu_err)?;
        // Synchronised phases overlap nothing: the device's time is that of one launch.
        let batches = if timed {
            Batches::one(nq)
        } else {
            Batches::of(nq, k)
        };
        let (d, i, ready) = self.search(&q, nq, k, metric, batches)?;
        let ended = rt.stream().record_event(clocked).map_err(gpu_err)?;
        if timed {
            rt.synchronize()?;
            times.device_ms = started.elapsed_ms(&ended).map_err(gpu_err)? as f64;
        }
        let clock = std::time::Instant::now();
        let copies = rt.copy_stream()?;
        let (dp, _read_d) = d.device_ptr(rt.stream());
        let (ip, _read_i) = i.device_ptr(rt.stream());
        let parts = batches.parts(k, &ready, [dp, ip]);
        // While the device searches, the first answers are queued back and the answers' host
        // pages mapped.
        let make = || (host_vec::<f32>(nq * k), host_vec::<u32>(nq * k));
        // SAFETY: d and i hold nq * k entries each, written by the batch whose event each part
        // waits for and not again; they are freed only after this returns, every byte copied.
        let (distances, indices) = unsafe {
            copies.download_parts(&parts, make, |(dh, ih)| {
                batches.cut(k, [bytes_of_mut(dh), bytes_of_mut(ih)])
            })
        }?;
        times.download_ms = clock.elapsed().as_secs_f64() * 1e3;
        let rows = KnnRows {
            k,
            rows: nq,
            distances,
            indices,
        };
        Ok((rows, times))
    }

    /// [`Self::knn_rows`] into `out`, which keeps its page-locked buffers for the next call:
    /// the answers cross from the device straight into them, batch by batch as
    /// [`Self::knn_rows`]'s. Returns once they are there.
    pub fn knn_into(
        &self,
        queries: &[f32],
        k: usize,
        metric: Metric,
        out: &mut PinnedKnn,
    ) -> Result<()> {
        let Some((nq, k)) = self.knn_shape(queries, k, metric)? else {
            out.rows = queries.len() / self.dims.max(1);
            out.k = k.min(self.len);
            return Ok(());
        };
        let rt = &self.rt;
        let q = rt.upload(queries)?;
        let batches = Batches::of(nq, k);
        let (d, i, ready) = self.search(&q, nq, k, metric, batches)?;
        // Grown, when it must be, while the device searches.
        out.reserve(rt, nq * k)?;
        let Some((hd, hi)) = out.buffers.as_mut() else {
            return Err(Error::Gpu("kNN answers: no page-locked buffers".into()));
        };
        let copies = rt.copy_stream()?;
        let stream = copies.stream();
        let (hd, hi) = (
            hd.as_mut_slice().map_err(gpu_err)?,
            hi.as_mut_slice().map_err(gpu_err)?,
        );
        {
            let (dp, _read_d) = d.device_ptr(rt.stream());
            let (ip, _read_i) = i.device_ptr(rt.stream());
            let parts = batches.parts(k, &ready, [dp, ip]);
            // Only the call's entries: cudarc's copy into a pinned slice copies the slice's
            // whole length, which the buffers kept from a larger call exceed.
            let n = nq * k;
            let outs = batches.cut(k, [bytes_of_mut(&mut hd[..n]), bytes_of_mut(&mut hi[..n])]);
            let queued = parts.iter().zip(outs).try_for_each(|(part, dst)| {
                if let Some(ready) = part.ready {
                    stream.wait(ready).map_err(gpu_err)?;
                }
                // SAFETY: the part's bytes lie in d or i, written by the batch it waited for;
                // dst is pinned and as long; the copy stream is synchronised below, before
                // the host reads them and before d and i are freed.
                unsafe {
                    cudarc::driver::result::memcpy_dtoh_async(dst, part.src, stream.cu_stream())
                }
                .map_err(gpu_err)
            });
            // Waited for even when a copy could not be queued: those that were still read d
            // and i, which are freed on return.
            let copied = copies.synchronize();
            queued.and(copied)?;
        }
        (out.rows, out.k) = (nq, k);
        Ok(())
    }

    /// The query order's kernels, looked up on this tree's first query.
    fn order_kernels(&self) -> Result<&OrderKernels> {
        if let Some(k) = self.kernels.order.get() {
            return Ok(k);
        }
        let f = |name: &str| self.rt.function(&KDTREE, name);
        let made = OrderKernels {
            bounds: f("kd_bounds")?,
            cells: f("kd_cells")?,
            place: f("kd_cell_place")?,
            prims: Primitives::new(&self.rt)?,
        };
        Ok(self.kernels.order.get_or_init(|| made))
    }

    /// The k-nearest kernel `name` compiled with `defines`, kept for the next call that asks
    /// for the same (a node's calls mostly share their k).
    fn knn_function(&self, name: &'static str, defines: KnnDefines) -> Result<CudaFunction> {
        let mut last = self
            .kernels
            .knn
            .lock()
            .map_err(|_| Error::Gpu("kd_knn function cache lock poisoned".into()))?;
        if let Some((n, d, f)) = last.as_ref() {
            if *n == name && *d == defines {
                return Ok(f.clone());
            }
        }
        let f = self.rt.function_with(&KDTREE, &defines, name)?;
        *last = Some((name, defines, f.clone()));
        Ok(f)
    }

    /// Queues the search of `nq` device-resident queries: their order ([`Self::query_order`],
    /// which reads nothing back, so nothing here waits for the device; each of `batches`
    /// together), and kd_knn / kd_knn_heap in that order, one launch a batch. Returns the
    /// answers' (distances, indices) and, for each batch, an event recorded once its answers
    /// are written.
    fn search(
        &self,
        q: &CudaSlice<f32>,
        nq: usize,
        k: usize,
        metric: Metric,
        batches: Batches,
    ) -> Result<(CudaSlice<f32>, CudaSlice<u32>, Vec<CudaEvent>)> {
        let rt = &self.rt;
        let dims = self.dims;
        let perm = self.query_order(q, nq, batches)?;
        // SAFETY: kd_knn / kd_knn_heap write k entries of both for every query.
        let mut d = unsafe { rt.alloc::<f32>(nq * k) }?;
        // SAFETY: uninitialised; the kernel writes all of it before anything reads it.
        let mut i = unsafe { rt.alloc::<u32>(nq * k) }?;
        // Up to REGISTER_K the k best live in registers (one module per k); above, in a heap
        // in scratch memory (one module per dimension count, shared with k = 1).
        let (n, ki, so3) = (self.len as u32, k as i32, (metric == Metric::So3) as i32);
        let mut ready = Vec::with_capacity(batches.count());
        if k <= REGISTER_K {
            let f = self.knn_function("kd_knn", knn_defines(k, dims, self.traversal()))?;
            for rows in batches.ranges() {
                let (order, count) = (perm.slice(rows.clone()), rows.len() as u32);
                let mut b = rt.stream().launch_builder(&f);
                b.arg(&self.tcoords).arg(&self.torig).arg(&n);
                b.arg(q).arg(&order).arg(&count).arg(&ki).arg(&so3);
                b.arg(&mut d).arg(&mut i);
                let cfg = LaunchConfig {
                    grid_dim: (rows.len().div_ceil(KNN_THREADS as usize) as u32, 1, 1),
                    block_dim: (KNN_THREADS, 1, 1),
                    shared_mem_bytes: 0,
                };
                // SAFETY: kd_knn: as declared; writes k distances and indices for each of the batch's queries, nq * k allocated
                unsafe { b.launch(cfg) }.map_err(launch_err("kd_knn"))?;
                ready.push(rt.stream().record_event(None).map_err(gpu_err)?);
            }
        } else {
            let f = self.knn_function("kd_knn_heap", heap_defines(dims))?;
            let most = batches.ranges().map(|r| r.len()).max().unwrap_or(0);
            let blocks = rt.grid_stride(most, KNN_THREADS).grid_dim.0;
            let cfg = LaunchConfig {
                grid_dim: (blocks.min(heap_blocks(k)), 1, 1),
                block_dim: (KNN_THREADS, 1, 1),
                shared_mem_bytes: 0,
            };
            let threads = (cfg.grid_dim.0 * cfg.block_dim.0) as usize;
            // SAFETY: a thread writes each heap entry before it reads it.
            let mut scratch = unsafe { rt.alloc::<u64>(threads * k) }?;
            for rows in batches.ranges() {
                let (order, count) = (perm.slice(rows.clone()), rows.len() as u32);
                let mut b = rt.stream().launch_builder(&f);
                b.arg(&self.tcoords).arg(&self.torig).arg(&n);
                b.arg(q).arg(&order).arg(&count).arg(&ki).arg(&so3);
                b.arg(&mut scratch).arg(&mut d).arg(&mut i);
                // SAFETY: kd_knn_heap: as declared; k heap entries per launched thread in scratch, writes k distances and indices for each of the batch's queries, nq * k allocated
                unsafe { b.launch(cfg) }.map_err(launch_err("kd_knn_heap"))?;
                ready.push(rt.stream().record_event(None).map_err(gpu_err)?);
            }
        }
        Ok((d, i, ready))
    }

    /// The order the `nq` queries at `q` are searched in (`perm[t]` the query searched t-th),
    /// queued (nothing read back): the queries' bounds (kd_bounds), then a counting sort by
    /// their cells within them (kd_cells, the counts' scan, kd_cell_place), each of
    /// `batches` together.
    fn query_order(
        &self,
        q: &CudaSlice<f32>,
        nq: usize,
        batches: Batches,
    ) -> Result<CudaSlice<u32>> {
        let rt = &self.rt;
        let (dims, n32) = (self.dims, nq as u32);
        let di = dims as i32;
        // Per dimension the least (complemented) and the greatest, both from 0.
        let mut bounds = rt.alloc_zeros::<u32>(2 * dims)?;
        let kernels = self.order_kernels()?;
        let mut b = rt.stream().launch_builder(&kernels.bounds);
        b.arg(q).arg(&di).arg(&n32).arg(&mut bounds);
        // SAFETY: kd_bounds: as declared; reads nq rows, updates the 2 * dims bounds only
        unsafe { b.launch(rt.grid_stride(nq, THREADS)) }.map_err(launch_err("kd_bounds"))?;
        let cells = 1usize << CELL_BITS;
        let blocks = LaunchConfig {
            grid_dim: (nq.div_ceil(THREADS as usize) as u32, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut count = rt.alloc_zeros::<u32>(cells)?;
        // SAFETY: kd_cells writes every query's cell.
        let mut cell = unsafe { rt.alloc::<u32>(nq) }?;
        let mut b = rt.stream().launch_builder(&kernels.cells);
        let (batch_rows, batch_bits, bits) = (batches.per as u32, batches.bits(), CELL_BITS as i32);
        b.arg(q).arg(&di).arg(&n32).arg(&bounds);
        b.arg(&batch_rows).arg(&batch_bits).arg(&bits);
        b.arg(&mut cell).arg(&mut count);
        // SAFETY: kd_cells: as declared; one thread a query, writes cell[0..nq) and adds into the 2^cell_bits counts
        unsafe { b.launch(blocks) }.map_err(launch_err("kd_cells"))?;
        kernels.prims.exclusive_scan_in_place(&mut count, cells)?;
        // SAFETY: kd_cell_place writes every entry (the counts place each query once).
        let mut perm = unsafe { rt.alloc::<u32>(nq) }?;
        let mut b = rt.stream().launch_builder(&kernels.place);
        b.arg(&cell).arg(&n32).arg(&mut count).arg(&mut perm);
        // SAFETY: kd_cell_place: as declared; one thread a query, writes perm at its cell's start plus its place, within 0..nq
        unsafe { b.launch(blocks) }.map_err(launch_err("kd_cell_place"))?;
        Ok(perm)
    }
}

/// How [`DeviceTree::knn_call`] is timed.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Timing {
    /// Not: the call as callers make it.
    None,
    /// Synchronised between its phases, each timed.
    Phases,
    /// As `Phases`, the device work queued behind a hold of [`HOLD_S`].
    QueuedAhead,
}

/// How long the device is held while a timed call's device work is queued behind it: far
/// longer than the host takes to queue the order's and the search's launches (tens of µs).
const HOLD_S: f64 = 2e-3;

/// Answers (distances and indices, 8 bytes an entry) in one batch of a large kNN call at
/// most: a batch's answers come back while the device searches the next. A batch's queries
/// are a fraction of the call's, so a warp's lie further apart and its search diverges more
/// (on the H100, 1M 3-D queries at k = 8: 1.62 ms in one launch, 1.85 in two, 2.35 in four):
/// the batches are as large as still lets the copies overlap. On the H100 (docs/bench-history,
/// twenty-fifth part) 32 MiB brought k = 8 into kept answers from 3.5 to 3.0 ms and k = 32
/// from 11.4 to 8.6, where 16 MiB and 8 MiB gave back more to the search than the overlap won.
pub const BATCH_ANSWER_BYTES: usize = 32 << 20;

/// A call's batches at most: their number takes the top bits of the queries' sort keys.
const MAX_BATCHES: usize = 16;

/// A kNN call's queries cut into batches of consecutive rows, `per` rows each (the last
/// fewer), each searched by a launch of its own.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Batches {
    rows: usize,
    per: usize,
}

impl Batches {
    /// The batches of `rows` queries with `k` answers each.
    fn of(rows: usize, k: usize) -> Batches {
        let count = (rows * k * 8)
            .div_ceil(BATCH_ANSWER_BYTES)
            .clamp(1, MAX_BATCHES);
        Batches {
            rows,
            per: rows.div_ceil(count).max(1),
        }
    }

    /// All `rows` in one batch.
    fn one(rows: usize) -> Batches {
        Batches {
            rows,
            per: rows.max(1),
        }
    }

    fn count(&self) -> usize {
        self.rows.div_ceil(self.per)
    }

    /// Bits of the sort key the batch number takes (0 for one batch).
    fn bits(&self) -> i32 {
        (usize::BITS - (self.count().max(1) - 1).leading_zeros()) as i32
    }

    fn ranges(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        (0..self.count()).map(|b| b * self.per..((b + 1) * self.per).min(self.rows))
    }

    /// Each batch's bytes in an array of 4-byte entries, k a row (distances or indices).
    fn spans(&self, k: usize) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        self.ranges()
            .map(move |rows| rows.start * k * 4..rows.end * k * 4)
    }

    /// Each batch's bytes of the two device arrays at `arrays` ([`Self::spans`]), batch by
    /// batch, each behind its batch's event.
    fn parts<'e>(&self, k: usize, ready: &'e [CudaEvent], arrays: [u64; 2]) -> Vec<Part<'e>> {
        self.spans(k)
            .zip(ready)
            .flat_map(|(span, e)| {
                arrays.map(|at| Part {
                    src: at + span.start as u64,
                    bytes: span.len(),
                    ready: Some(e),
                })
            })
            .collect()
    }

    /// Two host arrays' bytes cut as [`Self::parts`] cuts the device's.
    fn cut<'a>(&self, k: usize, arrays: [&'a mut [u8]; 2]) -> Vec<&'a mut [u8]> {
        let [mut a, mut b] = arrays;
        let mut out = Vec::with_capacity(2 * self.count());
        for span in self.spans(k) {
            for rest in [&mut a, &mut b] {
                let at = span.len().min(rest.len());
                let (head, tail) = std::mem::take(rest).split_at_mut(at);
                out.push(head);
                *rest = tail;
            }
        }
        out
    }
}

impl DeviceTree {
    /// Every point within distance r of each query, nearest first (ties: smaller index), at
    /// most `max_count` (0: all). The device finds the points; the host orders each query's.
    pub fn radius(
        &self,
        queries: &[f32],
        r: f32,
        max_count: usize,
        metric: Metric,
    ) -> Result<Vec<Neighbors>> {
        self.radius_in_passes(queries, r, max_count, metric, RADIUS_PAIRS_PER_PASS)
    }

    /// [`DeviceTree::radius`] holding at most `pairs_per_pass` pairs at once (or one query's,
    /// when more): small budgets let the tests cross many passes.
    #[doc(hidden)]
    pub fn radius_in_passes(
        &self,
        queries: &[f32],
        r: f32,
        max_count: usize,
        metric: Metric,
        pairs_per_pass: usize,
    ) -> Result<Vec<Neighbors>> {
        use rayon::prelude::*;
        check_query_dims(self.dims, queries, 1, metric)?;
        if !(r.is_finite() && r >= 0.0) {
            return Err(Error::invalid("radius", format!("{r} is not a distance")));
        }
        let nq = queries.len() / self.dims;
        if nq == 0 || self.len == 0 {
            return Ok(vec![vec![]; nq]);
        }
        let rt = &self.rt;
        let q = rt.upload(queries)?;
        let f = rt.function(&KDTREE, "kd_radius")?;
        let (n, di, nq32, so3) = (
            self.len as u32,
            self.dims as i32,
            nq as u32,
            (metric == Metric::So3) as i32,
        );
        let cfg_for = |queries: usize| LaunchConfig {
            grid_dim: (queries.div_ceil(64) as u32, 1, 1),
            block_dim: (64, 1, 1),
            shared_mem_bytes: 0,
        };
        let cfg = cfg_for(nq);
        // Pass 1: counts. Null output pointers select counting in the kernel.
        let mut counts = rt.alloc_zeros::<u32>(nq)?;
        let none_u32: u64 = 0;
        let mut b = rt.stream().launch_builder(&f);
        b.arg(&self.tcoords)
            .arg(&self.torig)
            .arg(&n)
            .arg(&di)
            .arg(&q)
            .arg(&nq32);
        b.arg(&r)
            .arg(&so3)
            .arg(&mut counts)
            .arg(&none_u32)
            .arg(&none_u32)
            .arg(&none_u32);
        // SAFETY: kd_radius: as declared; with null outputs it only writes counts[0..nq).
        unsafe { b.launch(cfg) }.map_err(launch_err("kd_radius"))?;
        let c = rt.download(&counts, nq)?;
        // Pass 2 in runs of queries whose pairs fit pairs_per_pass (a run holds at
        // least one query, at most n pairs), each run's rows ordered and cut to max_count
        // before the next: a radius covering the cloud for thousands of queries would
        // otherwise hold every in-radius pair at once on the device and the host, however
        // few were asked for.
        let mut rows = Vec::with_capacity(nq);
        let mut a = 0;
        while a < nq {
            let mut b = a;
            let mut total = 0usize;
            while b < nq && (b == a || total + c[b] as usize <= pairs_per_pass) {
                total += c[b] as usize;
                b += 1;
            }
            let mut offsets = Vec::with_capacity(b - a + 1);
            let mut at = 0u32;
            for &x in &c[a..b] {
                offsets.push(at);
                at += x;
            }
            offsets.push(at);
            let off = rt.upload(&offsets)?;
            // SAFETY: uninitialised; kd_radius writes all of it before anything reads it.
            let mut d = unsafe { rt.alloc::<f32>(total.max(1)) }?;
            // SAFETY: as above.
            let mut i = unsafe { rt.alloc::<u32>(total.max(1)) }?;
            let (run_q, mut run_counts) = (
                q.slice(a * self.dims..b * self.dims),
                counts.slice_mut(a..b),
            );
            let run_nq = (b - a) as u32;
            let mut l = rt.stream().launch_builder(&f);
            l.arg(&self.tcoords)
                .arg(&self.torig)
                .arg(&n)
                .arg(&di)
                .arg(&run_q)
                .arg(&run_nq);
            l.arg(&r)
                .arg(&so3)
                .arg(&mut run_counts)
                .arg(&off)
                .arg(&mut d)
                .arg(&mut i);
            // SAFETY: kd_radius: as declared; the write pass writes each of the run's queries'
            // pairs from its offset in the run, which the count pass sized: `total` in all.
            unsafe { l.launch(cfg_for(b - a)) }.map_err(launch_err("kd_radius"))?;
            let (d, i) = if total == 0 {
                (vec![], vec![])
            } else {
                (rt.download(&d, total)?, rt.download(&i, total)?)
            };
            rows.par_extend((0..b - a).into_par_iter().map(|qi| {
                let (lo, hi) = (offsets[qi] as usize, offsets[qi + 1] as usize);
                let mut row: Vec<(f32, u32)> = (lo..hi).map(|j| (d[j], i[j])).collect();
                row.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                // With so3 a point near both q and -q was found twice: keep its first (nearer).
                let mut seen = std::collections::HashSet::new();
                row.retain(|e| seen.insert(e.1));
                if max_count > 0 {
                    row.truncate(max_count);
                }
                row
            }));
            a = b;
        }
        Ok(rows)
    }
}

/// Radius pairs (distance and index, 8 bytes each) the write pass holds at once: 256 MiB on
/// the device and again on the host.
const RADIUS_PAIRS_PER_PASS: usize = 1 << 25;

/// Floats per tree-layout row (kernels/kdtree.cu's `tree_row`): 3-D rows are padded to 16
/// bytes, the fourth float holding the point's first-copy index.
fn tree_row(dims: usize) -> usize {
    if dims == 3 {
        4
    } else {
        dims
    }
}

/// Tree-layout copies of the coordinates and first-copy indices.
fn layout(
    rt: &Arc<CudaRuntime>,
    coords: &CudaSlice<f32>,
    order: &CudaSlice<u32>,
    original: &CudaSlice<u32>,
    n: usize,
    dims: usize,
) -> Result<(CudaSlice<f32>, CudaSlice<u32>)> {
    // SAFETY: kd_layout writes all n rows of both (every float of a padded row).
    let mut tc = unsafe { rt.alloc::<f32>(n * tree_row(dims)) }?;
    // SAFETY: uninitialised; kd_layout writes all of it before anything reads it.
    let mut to = unsafe { rt.alloc::<u32>(n) }?;
    let f = rt.function(&KDTREE, "kd_layout")?;
    let (n32, di) = (n as u32, dims as i32);
    let mut b = rt.stream().launch_builder(&f);
    b.arg(coords)
        .arg(order)
        .arg(original)
        .arg(&n32)
        .arg(&di)
        .arg(&mut tc)
        .arg(&mut to);
    // SAFETY: kd_layout: as declared; writes n rows of coordinates and n indices, allocated so
    unsafe { b.launch(rt.grid_stride(n, THREADS)) }.map_err(launch_err("kd_layout"))?;
    Ok((tc, to))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node's start-up list holds every kd_knn module its queries take: both k at the
    /// traversal `auto` resolves to, and the heap's module above the registers' k whatever
    /// the traversal (the heap's is not the boxes' k = 1).
    #[test]
    fn start_up_modules_hold_what_the_queries_take() {
        let has = |all: &[Module], d: &KnnDefines| all.iter().filter(|m| m.defines == d).count();
        for traversal in [Traversal::Auto, Traversal::Plane, Traversal::Boxes] {
            for k in [1, 8, 32, 64, 65, 1024] {
                let all = modules(k, traversal);
                for dims in [3, 4] {
                    let reg = knn_defines(k.min(REGISTER_K), dims, traversal);
                    assert_eq!(has(&all, &reg), 1, "{traversal:?} k {k}");
                    assert_eq!(has(&all, &knn_defines(1, dims, traversal)), 1);
                    if k > REGISTER_K {
                        assert_eq!(has(&all, &heap_defines(dims)), 1, "{traversal:?} k {k}");
                    }
                }
            }
        }
        assert_eq!(knn_defines(8, 3, Traversal::Auto)[2].1, "0");
        assert_eq!(knn_defines(32, 3, Traversal::Auto)[2].1, "1");
    }

    /// Batches cover a call's rows once, in order, each at most BATCH_ANSWER_BYTES of answers
    /// unless MAX_BATCHES bounds them; their number fits the key bits they take; the host's
    /// arrays are cut at the batches' spans (which the device's parts take), batch by batch,
    /// distances then indices.
    #[test]
    fn batches_cover_every_row_once_and_cut_the_host_as_the_device() {
        assert_eq!(Batches::of(10_000, 8).count(), 1);
        assert_eq!(Batches::of(10_000, 8).bits(), 0);
        assert_eq!(
            Batches::of(1 << 20, 8).count(),
            (64 << 20) / BATCH_ANSWER_BYTES,
            "64 MiB of answers"
        );
        assert_eq!(Batches::one(1 << 20).count(), 1);
        assert_eq!(Batches::of(1 << 20, 1024).count(), MAX_BATCHES);
        for (rows, k) in [
            (1, 1),
            (7, 3),
            (2_097_153, 1),
            (1_000_003, 8),
            (40_009, 1024),
        ] {
            let b = Batches::of(rows, k);
            let ranges: Vec<_> = b.ranges().collect();
            assert_eq!(ranges.len(), b.count());
            assert!(b.count() <= MAX_BATCHES && b.count() <= 1 << b.bits());
            assert_eq!(b.count() == 1, b.bits() == 0);
            assert_eq!(ranges.first().map(|r| r.start), Some(0));
            assert_eq!(ranges.last().map(|r| r.end), Some(rows));
            assert!(ranges.windows(2).all(|w| w[0].end == w[1].start));
            assert!(ranges.iter().all(|r| !r.is_empty()));
            if b.count() < MAX_BATCHES {
                assert!(
                    b.per * k * 8 <= BATCH_ANSWER_BYTES || b.per == 1,
                    "{rows} x {k}"
                );
            }
            // The host's two arrays, cut: each piece as long as its part, in the parts' order.
            let (mut d, mut i) = (vec![0u8; rows * k * 4], vec![0u8; rows * k * 4]);
            let (d0, i0) = (d.as_ptr() as usize, i.as_ptr() as usize);
            let pieces: Vec<(usize, usize)> = b
                .cut(k, [&mut d, &mut i])
                .iter()
                .map(|s| (s.as_ptr() as usize, s.len()))
                .collect();
            assert_eq!(pieces.len(), 2 * b.count());
            for ((r, span), pair) in ranges.iter().zip(b.spans(k)).zip(pieces.chunks(2)) {
                assert_eq!(span, r.start * k * 4..r.end * k * 4);
                assert_eq!(pair[0], (d0 + span.start, span.len()));
                assert_eq!(pair[1], (i0 + span.start, span.len()));
            }
        }
    }
}
