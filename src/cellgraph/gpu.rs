//! The cell graph on the device: classification, cells by an LSD sort over the words of the
//! bit vectors (the foundation's stable radix sort, most significant word last), and edges by
//! hash probes, the pivot heuristic or tree lookups; edges sorted on the device.

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::arrangement::Arrangement;
use super::cells::Cells;
use super::classify::{bit_keys, Bits};
use super::config::{Algorithm, Config};
use super::edges::{pivots, Edges};
use super::tree::Tree;
use crate::compute::cuda::{launch_err, CudaRuntime};
use crate::compute::kernels::CELLGRAPH;
use crate::compute::primitives::gpu::Primitives;
use crate::compute::warmup::Module;
use crate::error::{Error, Result};

const THREADS: u32 = 256;

/// Tree lookups keep one flipped key in registers: at most 16 words.
pub const TREE_MAX_CONSTRAINTS: usize = 1024;

struct Kernels {
    classify: CudaFunction,
    gather: CudaFunction,
    flags: CudaFunction,
    cells: CudaFunction,
}

/// (cells, edges, classify seconds, graph seconds).
/// The modules a cell graph uses (both algorithms, and the sort), for a node's start-up
/// warm-up.
pub fn modules() -> Vec<Module> {
    let mut all = vec![Module::new(CELLGRAPH, &[])];
    all.extend(crate::compute::primitives::gpu::modules());
    all
}

/// Classifies `samples` and builds cells and edges on the device: the same cells and edges
/// as [`super::cpu::build`], and the seconds spent classifying and building.
pub fn build(
    rt: &Arc<CudaRuntime>,
    arr: &Arrangement,
    samples: &[[f64; 4]],
    cfg: &Config,
) -> Result<(Cells, Edges, f64, f64)> {
    let l = arr.len();
    let words = arr.words();
    let n = samples.len();
    if cfg.algorithm == Algorithm::Tree && l > TREE_MAX_CONSTRAINTS {
        return Err(Error::invalid(
            "constraints",
            format!("{l} constraints: the CUDA tree lookup handles at most {TREE_MAX_CONSTRAINTS}"),
        ));
    }
    let f = |name: &str| rt.function(&CELLGRAPH, name);
    let k = Kernels {
        classify: f("cg_classify")?,
        gather: f("cg_gather_word")?,
        flags: f("cg_flags")?,
        cells: f("cg_cells")?,
    };
    let stream = rt.stream().clone();
    let prim = Primitives::new(rt)?;
    let coef: Vec<f64> = arr.coefficients.iter().flatten().copied().collect();
    let coef = rt.upload(if coef.is_empty() { &[0.0] } else { &coef[..] })?;
    let z = bit_keys(l.max(1));
    let z = rt.upload(&z)?;
    // [[f64; 4]] is already one contiguous run of f64: no host copy before the upload.
    let flat: &[f64] = samples.as_flattened();
    let n32 = n as u32;
    let (li, wi) = (l as i32, words as i32);
    if n == 0 {
        let empty = Cells {
            constraints: l,
            bits: Bits {
                words,
                data: vec![],
            },
            counts: vec![],
            representatives: vec![],
        };
        return Ok((empty, Edges::default(), 0.0, 0.0));
    }
    let dev_samples = rt.upload(flat)?;
    rt.synchronize()?;
    // Timed from here: the inputs are on the device.
    let t0 = Instant::now();
    // SAFETY: cg_classify writes every word and hash of the n samples.
    let mut bits = unsafe { rt.alloc::<u64>(n * words) }?;
    // SAFETY: uninitialised; cg_classify writes all of it before anything reads it.
    let mut hash = unsafe { rt.alloc::<u64>(n) }?;
    let mut b = stream.launch_builder(&k.classify);
    b.arg(&coef).arg(&li).arg(&wi).arg(&dev_samples).arg(&n32);
    b.arg(&z).arg(&mut bits).arg(&mut hash);
    // SAFETY: cg_classify: (coef, l, words, samples, n, z, bits, hash) as cg_classify declares; it writes bits[n * words] and hash[n], allocated above
    unsafe { b.launch(rt.grid_stride(n, THREADS)) }.map_err(launch_err("cg_classify"))?;
    rt.synchronize()?;
    let classify_s = t0.elapsed().as_secs_f64();

    let t1 = Instant::now();
    let mut perm = prim.iota(n)?;
    // SAFETY: cg_gather_word writes all n keys before the sort reads them.
    let mut keys = unsafe { rt.alloc::<u64>(n) }?;
    // Least significant word first; the stable sort keeps equal vectors in sample order, so
    // each run starts with its smallest sample index.
    for wd in 0..words as i32 {
        let mut b = stream.launch_builder(&k.gather);
        b.arg(&bits)
            .arg(&wi)
            .arg(&wd)
            .arg(&perm)
            .arg(&n32)
            .arg(&mut keys);
        // SAFETY: cg_gather_word: (bits, words, wd, perm, n, keys) as declared; writes keys[0..n), allocated n
        unsafe { b.launch(rt.grid_stride(n, THREADS)) }.map_err(launch_err("cg_gather_word"))?;
        prim.sort_pairs(&mut keys, &mut perm, n)?;
    }
    // SAFETY: cg_flags writes all n flags; the scan copies them first.
    let mut flags = unsafe { rt.alloc::<u32>(n) }?;
    let mut b = stream.launch_builder(&k.flags);
    b.arg(&bits).arg(&wi).arg(&perm).arg(&n32).arg(&mut flags);
    // SAFETY: cg_flags: (bits, words, perm, n, flags) as declared; writes flags[0..n), allocated n
    unsafe { b.launch(rt.grid_stride(n, THREADS)) }.map_err(launch_err("cg_flags"))?;
    let mut pos = stream
        .clone_dtod(&flags)
        .map_err(crate::compute::cuda::gpu_err)?;
    prim.exclusive_scan_in_place(&mut pos, n)?;
    let last = rt.download_range(&pos, n - 1..n)?[0] + rt.download_range(&flags, n - 1..n)?[0];
    let cells = last as usize;
    // SAFETY: cg_cells writes one entry of each per cell.
    let mut cell_bits = unsafe { rt.alloc::<u64>(cells * words) }?;
    // SAFETY: uninitialised; cg_cells writes all of it before anything reads it.
    let mut starts = unsafe { rt.alloc::<u32>(cells) }?;
    // SAFETY: uninitialised; cg_cells writes all of it before anything reads it.
    let mut reps = unsafe { rt.alloc::<u32>(cells) }?;
    // SAFETY: uninitialised; cg_cells writes all of it before anything reads it.
    let mut cell_hash = unsafe { rt.alloc::<u64>(cells) }?;
    let mut b = stream.launch_builder(&k.cells);
    b.arg(&flags)
        .arg(&pos)
        .arg(&perm)
        .arg(&bits)
        .arg(&hash)
        .arg(&wi)
        .arg(&n32);
    b.arg(&mut cell_bits)
        .arg(&mut starts)
        .arg(&mut reps)
        .arg(&mut cell_hash);
    // SAFETY: cg_cells: as cg_cells declares; writes one entry of cell_bits/starts/reps/cell_hash per run start, cells = the scanned flag count they were allocated for
    unsafe { b.launch(rt.grid_stride(n, THREADS)) }.map_err(launch_err("cg_cells"))?;
    drop((bits, hash, perm, keys, flags, pos, dev_samples));
    let starts_h = rt.download(&starts, cells)?;
    let counts: Vec<u32> = (0..cells)
        .map(|c| starts_h.get(c + 1).copied().unwrap_or(n32) - starts_h[c])
        .collect();
    let cell_set = Cells {
        constraints: l,
        bits: Bits {
            words,
            data: rt.download(&cell_bits, cells * words)?,
        },
        counts,
        representatives: rt.download(&reps, cells)?,
    };
    let edges = edges(rt, &prim, &cell_set, &cell_bits, &cell_hash, &z, cfg)?;
    Ok((cell_set, edges, classify_s, t1.elapsed().as_secs_f64()))
}

/// Runs an edge kernel into a buffer of `cap` edges; reruns with room for all if it overflowed.
fn collect_edges(
    rt: &Arc<CudaRuntime>,
    prim: &Primitives,
    mut launch: impl FnMut(
        &mut CudaSlice<u64>,
        &mut CudaSlice<u32>,
        &mut CudaSlice<u32>,
        u32,
    ) -> Result<()>,
    guess: usize,
) -> Result<Edges> {
    let mut cap = guess.clamp(1 << 16, u32::MAX as usize - 1);
    loop {
        // SAFETY: only the first `count` entries, which the kernel wrote, are read.
        let mut keys = unsafe { rt.alloc::<u64>(cap) }?;
        // SAFETY: uninitialised; written in full before any read.
        let mut bits = unsafe { rt.alloc::<u32>(cap) }?;
        let mut counter = rt.alloc_zeros::<u32>(1)?;
        launch(&mut keys, &mut bits, &mut counter, cap as u32)?;
        let count = rt.download(&counter, 1)?[0] as usize;
        if count > cap {
            if count >= u32::MAX as usize - 1 {
                return Err(Error::invalid(
                    "edges",
                    format!("{count} edges exceed u32 counts"),
                ));
            }
            cap = count;
            continue;
        }
        prim.sort_pairs(&mut keys, &mut bits, count)?;
        let k = if count == 0 {
            vec![]
        } else {
            rt.download(&keys, count)?
        };
        let bit = if count == 0 {
            vec![]
        } else {
            rt.download(&bits, count)?
        };
        return Ok(Edges {
            from: k.iter().map(|&x| (x >> 32) as u32).collect(),
            to: k.iter().map(|&x| x as u32).collect(),
            bit,
        });
    }
}

fn edges(
    rt: &Arc<CudaRuntime>,
    prim: &Primitives,
    c: &Cells,
    cell_bits: &CudaSlice<u64>,
    cell_hash: &CudaSlice<u64>,
    z: &CudaSlice<u64>,
    cfg: &Config,
) -> Result<Edges> {
    let cells = c.len();
    if cells < 2 {
        return Ok(Edges::default());
    }
    let stream = rt.stream().clone();
    let (l, words) = (c.constraints, c.bits.words);
    let (li, wi, c32) = (l as i32, words as i32, cells as u32);
    let guess = cells * 8;
    match cfg.algorithm {
        Algorithm::Hash => {
            let size = (2 * cells).next_power_of_two();
            let mask = (size - 1) as u32;
            // Every slot starts empty (EMPTY in kernels/cellgraph.cu).
            let mut table = prim.filled(size, u32::MAX)?;
            let insert = rt.function(&CELLGRAPH, "cg_hash_insert")?;
            let mut b = stream.launch_builder(&insert);
            b.arg(cell_hash).arg(&c32).arg(&mut table).arg(&mask);
            // SAFETY: cg_hash_insert: (cell_hash, cells, table, mask) as declared; writes table slots below mask + 1 = its size
            unsafe { b.launch(rt.grid_stride(cells, THREADS)) }
                .map_err(launch_err("cg_hash_insert"))?;
            let probe = rt.function(&CELLGRAPH, "cg_hash_probe")?;
            collect_edges(
                rt,
                prim,
                |keys, bits, counter, cap| {
                    let mut b = stream.launch_builder(&probe);
                    b.arg(cell_hash)
                        .arg(cell_bits)
                        .arg(&wi)
                        .arg(&c32)
                        .arg(&li)
                        .arg(z);
                    b.arg(&table)
                        .arg(&mask)
                        .arg(keys)
                        .arg(bits)
                        .arg(counter)
                        .arg(&cap);
                    // SAFETY: cg_hash_probe: as cg_hash_probe declares; appends pairs through the counter only while it is below cap, the buffers' length
                    unsafe { b.launch(rt.grid_stride(cells * l, THREADS)) }
                        .map_err(launch_err("cg_hash_probe"))?;
                    Ok(())
                },
                guess,
            )
        }
        Algorithm::Heuristic => {
            let piv: Vec<u32> = pivots(cells, cfg.h as usize)
                .into_iter()
                .map(|p| p as u32)
                .collect();
            let h = piv.len() as i32;
            let piv = rt.upload(&piv)?;
            // SAFETY: cg_pivot_dist writes cells x h distances.
            let mut dist = unsafe { rt.alloc::<u32>(cells * h as usize) }?;
            let pd = rt.function(&CELLGRAPH, "cg_pivot_dist")?;
            let mut b = stream.launch_builder(&pd);
            b.arg(cell_bits)
                .arg(&wi)
                .arg(&c32)
                .arg(&piv)
                .arg(&h)
                .arg(&mut dist);
            // SAFETY: cg_pivot_dist: as cg_pivot_dist declares; writes dist[cells * h], allocated so
            unsafe { b.launch(rt.grid_stride(cells, THREADS)) }
                .map_err(launch_err("cg_pivot_dist"))?;
            let heur = rt.function(&CELLGRAPH, "cg_heuristic")?;
            let cfg = LaunchConfig {
                grid_dim: (
                    (cells as u32).div_ceil(THREADS).min(8),
                    (cells as u32).min(65535),
                    1,
                ),
                block_dim: (THREADS, 1, 1),
                shared_mem_bytes: 0,
            };
            collect_edges(
                rt,
                prim,
                |keys, bits, counter, cap| {
                    let mut b = stream.launch_builder(&heur);
                    b.arg(cell_bits).arg(&wi).arg(&c32).arg(&dist).arg(&h);
                    b.arg(keys).arg(bits).arg(counter).arg(&cap);
                    // SAFETY: cg_heuristic: as cg_heuristic declares; appends pairs through the counter only while it is below cap, the buffers' length
                    unsafe { b.launch(cfg) }.map_err(launch_err("cg_heuristic"))?;
                    Ok(())
                },
                guess,
            )
        }
        Algorithm::Tree => {
            let tree = Tree::build(c, cfg.r);
            let nodes = rt.upload(&tree.flat())?;
            let r = cfg.r.clamp(1, 8) as i32;
            let probe = rt.function(&CELLGRAPH, "cg_tree_probe")?;
            collect_edges(
                rt,
                prim,
                |keys, bits, counter, cap| {
                    let mut b = stream.launch_builder(&probe);
                    b.arg(cell_bits)
                        .arg(&wi)
                        .arg(&c32)
                        .arg(&li)
                        .arg(&r)
                        .arg(&nodes);
                    b.arg(keys).arg(bits).arg(counter).arg(&cap);
                    // SAFETY: cg_tree_probe: as cg_tree_probe declares; appends pairs through the counter only while it is below cap, the buffers' length
                    unsafe { b.launch(rt.grid_stride(cells * l, THREADS)) }
                        .map_err(launch_err("cg_tree_probe"))?;
                    Ok(())
                },
                guess,
            )
        }
    }
}
