//! The DP on the device (kernels/polyline.cu): all link scores and directions of a stage in one
//! launch, then one launch per guide with a max-with-argmax over the previous guide's points.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

use super::geometry::{cos_limit, Polyline, Problem, Pt};
use super::image::Gradient;
use crate::compute::cuda::{gpu_err, launch_err, one_per_item, CudaRuntime};
use crate::compute::kernels::POLYLINE;
use crate::compute::warmup::Module;
use crate::error::{Error, Result};

/// The module the polyline DP uses, for a node's start-up warm-up.
pub fn modules() -> Vec<Module> {
    vec![Module::new(POLYLINE, &[])]
}

/// An image's gradient on the device, uploaded once and reused by every request on it.
pub struct DeviceGradient {
    rt: Arc<CudaRuntime>,
    width: u32,
    height: u32,
    /// (gx, gy) interleaved per pixel.
    g: CudaSlice<f64>,
    /// Largest points per guide for which stages sort predecessors (see [`SORT_MAX`]).
    sort_limit: usize,
}

const BLOCK: u32 = 256;
/// Stages with at most this many predecessors per point sort them in shared memory
/// (12 bytes each: 48 KiB) and scan best-first; larger ones scan all predecessors.
pub const SORT_MAX: usize = 4096;
const SORT_BLOCK: u32 = 512;

/// Device buffers free themselves on the dropping thread, where cudarc does not make the
/// context current; without this the free fails and poisons the next CUDA call.
impl Drop for DeviceGradient {
    fn drop(&mut self) {
        let _ = self.rt.context().bind_to_thread();
    }
}

impl DeviceGradient {
    /// Uploads `g` on `rt`'s stream.
    pub fn upload(rt: &Arc<CudaRuntime>, g: &Gradient) -> Result<DeviceGradient> {
        Ok(DeviceGradient {
            rt: rt.clone(),
            width: g.width,
            height: g.height,
            g: rt.upload(
                &g.gx
                    .iter()
                    .zip(&g.gy)
                    .flat_map(|(&x, &y)| [x, y])
                    .collect::<Vec<_>>(),
            )?,
            sort_limit: SORT_MAX,
        })
    }

    /// Stages sort predecessors only up to `points` per guide (clamped to [`SORT_MAX`]); 0
    /// makes every stage scan all predecessors, the kernel the sorted one is checked against.
    pub fn with_sort_limit(mut self, points: usize) -> Self {
        self.sort_limit = points.min(SORT_MAX);
        self
    }

    /// The same result as [`super::cpu::solve`], bit for bit.
    pub fn solve(&self, p: &Problem) -> Result<Polyline> {
        Ok(self.solve_with(p, false)?.0)
    }

    /// [`Self::solve`] and the milliseconds its device work took (CUDA events around the
    /// launches, from the first link kernel to the last stage): what the whole call adds to
    /// it is the layers' upload and the path's way back, for the benchmark.
    pub fn solve_timed(&self, p: &Problem) -> Result<(Polyline, f64)> {
        let (r, ms) = self.solve_with(p, true)?;
        Ok((r, ms.unwrap_or(0.0)))
    }

    fn solve_with(&self, p: &Problem, timed: bool) -> Result<(Polyline, Option<f64>)> {
        p.validate()?;
        let rt = &self.rt;
        let links_fn = rt.function(&POLYLINE, "poly_links")?;
        let stage_fn = rt.function(&POLYLINE, "poly_stage")?;
        let stream = rt.stream().clone();
        let m = p.guides as usize;
        let layers: Vec<Vec<Pt>> = (0..=m as u32 + 1)
            .map(|k| (0..p.layer_size(k)).map(|j| p.vertex(k, j)).collect())
            .collect();
        let coords: Vec<CudaSlice<f64>> = layers
            .iter()
            .map(|l| rt.upload(&l.iter().flat_map(|&(x, y)| [x, y]).collect::<Vec<_>>()))
            .collect::<Result<_>>()?;
        let (w, h) = (self.width as i32, self.height as i32);
        let event = || {
            let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
            stream.record_event(flags).map_err(gpu_err)
        };
        let started = timed.then(event).transpose()?;
        // Stage k links layer k to layer k + 1.
        let mut scores = Vec::with_capacity(m + 1);
        let mut dirs = Vec::with_capacity(m + 1);
        for k in 0..=m {
            let (nf, nt) = (layers[k].len(), layers[k + 1].len());
            // SAFETY: the kernel writes every element.
            let mut score = unsafe { rt.alloc::<f64>(nf * nt) }?;
            // SAFETY: uninitialised; poly_links writes all of it before anything reads it.
            let mut dir = unsafe { rt.alloc::<f64>(3 * nf * nt) }?;
            let (nfi, nti) = (nf as i32, nt as i32);
            let mut b = stream.launch_builder(&links_fn);
            b.arg(&self.g).arg(&w).arg(&h);
            b.arg(&coords[k]).arg(&nfi).arg(&coords[k + 1]).arg(&nti);
            b.arg(&mut score).arg(&mut dir);
            // SAFETY: poly_links: as declared; writes score[nf * nt] and dir[3 * nf * nt], allocated so
            unsafe { b.launch(one_per_item(nf * nt, BLOCK, "guides x points")?) }
                .map_err(launch_err("poly_links"))?;
            scores.push(score);
            dirs.push(dir);
        }
        let cos_max = cos_limit(p.max_angle);
        let order_fn = rt.function(&POLYLINE, "poly_order")?;
        let sorted_fn = rt.function(&POLYLINE, "poly_stage_sorted")?;
        let mut args = Vec::with_capacity(m);
        let mut best: Option<CudaSlice<f64>> = None;
        // Stages k >= 2 have `points` predecessors per point; with a sort they scan best-first.
        let d = p.points as usize;
        let sorts = m >= 2 && d <= self.sort_limit;
        let len = if sorts { d * d } else { 1 };
        // SAFETY: poly_order writes the part of them that poly_stage_sorted reads.
        let (mut skey, mut order) = unsafe { (rt.alloc::<f64>(len)?, rt.alloc::<u32>(len)?) };
        // Under a request's cancel flag, every few stages wait for the device and check it:
        // queued stages cannot be recalled, so this bounds what runs after a deadline.
        let cancel = crate::cancel::current();
        for k in 1..=m {
            if let Some(c) = cancel.as_ref().filter(|_| k % 4 == 0) {
                stream
                    .synchronize()
                    .map_err(|e| Error::Gpu(format!("{e:?}")))?;
                c.check()?;
            }
            let (np, nc, nn) = (layers[k - 1].len(), layers[k].len(), layers[k + 1].len());
            let best_in = best.as_ref().unwrap_or(&scores[0]);
            // SAFETY: the kernel writes every element.
            let mut out = unsafe { rt.alloc::<f64>(nc * nn) }?;
            // SAFETY: uninitialised; poly_order writes all of it before anything reads it.
            let mut arg = unsafe { rt.alloc::<u32>(nc * nn) }?;
            let (npi, nci, nni) = (np as i32, nc as i32, nn as i32);
            let cfg = LaunchConfig {
                grid_dim: ((nn as u32).div_ceil(BLOCK), nc as u32, 1),
                block_dim: (BLOCK, 1, 1),
                shared_mem_bytes: 0,
            };
            if sorts && np >= 2 {
                let p2 = np.next_power_of_two();
                let p2i = p2 as i32;
                let mut b = stream.launch_builder(&order_fn);
                b.arg(best_in).arg(&npi).arg(&nci).arg(&p2i);
                b.arg(&mut skey).arg(&mut order);
                let sort_cfg = LaunchConfig {
                    grid_dim: (nc as u32, 1, 1),
                    block_dim: ((p2 as u32 / 2).min(SORT_BLOCK), 1, 1),
                    shared_mem_bytes: (p2 * 12) as u32,
                };
                // SAFETY: poly_order: as declared; writes skey and order, nprev per point (ncur * nprev allocated)
                unsafe { b.launch(sort_cfg) }.map_err(launch_err("poly_order"))?;
                let mut b = stream.launch_builder(&sorted_fn);
                b.arg(&skey).arg(&order);
                b.arg(&dirs[k - 1]).arg(&dirs[k]).arg(&scores[k]);
                b.arg(&npi).arg(&nci).arg(&nni).arg(&cos_max);
                b.arg(&mut out).arg(&mut arg);
                // SAFETY: poly_stage_sorted: as declared; writes best[nc * nn] and arg[nc * nn], allocated so
                unsafe { b.launch(cfg) }.map_err(launch_err("poly_stage_sorted"))?;
            } else {
                let mut b = stream.launch_builder(&stage_fn);
                b.arg(best_in)
                    .arg(&dirs[k - 1])
                    .arg(&dirs[k])
                    .arg(&scores[k]);
                b.arg(&npi).arg(&nci).arg(&nni).arg(&cos_max);
                b.arg(&mut out).arg(&mut arg);
                // SAFETY: poly_stage: as declared; writes best[nc * nn] and arg[nc * nn], allocated so
                unsafe { b.launch(cfg) }.map_err(launch_err("poly_stage"))?;
            }
            best = Some(out);
            args.push(arg);
        }
        let ended = timed.then(event).transpose()?;
        let last = best.as_ref().unwrap_or(&scores[0]);
        let finals = rt.download(last, layers[m].len())?;
        let device_ms = match (started, ended) {
            (Some(a), Some(b)) => Some(a.elapsed_ms(&b).map_err(gpu_err)? as f64),
            _ => None,
        };
        if m == 0 {
            let r = Polyline {
                feasible: true,
                points: vec![p.a, p.b],
                indices: vec![],
                score: finals[0],
            };
            return Ok((r, device_ms));
        }
        let mut top = f64::NEG_INFINITY;
        let mut jm = None;
        for (j, &s) in finals.iter().enumerate() {
            if s > top {
                top = s;
                jm = Some(j as u32);
            }
        }
        let Some(jm) = jm else {
            let r = Polyline {
                feasible: false,
                points: vec![],
                indices: vec![],
                score: f64::NEG_INFINITY,
            };
            return Ok((r, device_ms));
        };
        let mut idx = vec![0u32; m + 2];
        idx[m] = jm;
        for k in (1..=m).rev() {
            let nn = layers[k + 1].len();
            let at = idx[k] as usize * nn + idx[k + 1] as usize;
            idx[k - 1] = rt.download_range(&args[k - 1], at..at + 1)?[0];
        }
        let r = Polyline {
            feasible: true,
            points: (0..=m + 1).map(|k| layers[k][idx[k] as usize]).collect(),
            indices: idx[1..=m].to_vec(),
            score: top,
        };
        Ok((r, device_ms))
    }
}
