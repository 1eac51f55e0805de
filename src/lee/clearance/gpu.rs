//! The distance transform on the device (kernels/clearance.cu): row distances, then the
//! column envelopes, then (for clearance) one flag per cell, so only a byte per cell comes back.

use cudarc::driver::{CudaSlice, PushKernelArg};

use crate::compute::cuda::{launch_err, CudaRuntime};
use crate::compute::kernels::CLEARANCE;
use crate::compute::warmup::Module;
use crate::error::Result;

const THREADS: u32 = 128;

/// The kernel module of the clearance transform, for a node's start-up warm-up.
pub fn modules() -> Vec<Module> {
    vec![Module::new(CLEARANCE, &[])]
}

/// Squared distances on the device, left there (w x h u64, row-major).
fn transform(rt: &CudaRuntime, w: usize, h: usize, obstacle: &[bool]) -> Result<CudaSlice<u64>> {
    let n = w * h;
    let bytes: Vec<u8> = obstacle.iter().map(|&o| u8::from(o)).collect();
    let obstacle = rt.upload(&bytes)?;
    // SAFETY: every element is written by clr_rows / clr_columns before it is read.
    let mut g = unsafe { rt.alloc::<u32>(n) }?;
    // SAFETY: clr_columns writes each column's scratch entry k before it reads it.
    let mut v = unsafe { rt.alloc::<u32>(n) }?;
    // SAFETY: as v.
    let mut z = unsafe { rt.alloc::<i64>(n) }?;
    // SAFETY: clr_columns writes every cell.
    let mut d2 = unsafe { rt.alloc::<u64>(n) }?;
    if n == 0 {
        return Ok(d2);
    }
    let (w32, h32) = (w as u32, h as u32);
    let stream = rt.stream();
    let rows = rt.function(&CLEARANCE, "clr_rows")?;
    let mut b = stream.launch_builder(&rows);
    b.arg(&obstacle).arg(&w32).arg(&h32).arg(&mut g);
    // SAFETY: clr_rows(obstacle, w, h, g): reads obstacle[0..w h), writes g[0..w h).
    unsafe { b.launch(rt.grid_stride(h, THREADS)) }.map_err(launch_err("clr_rows"))?;
    let columns = rt.function(&CLEARANCE, "clr_columns")?;
    let mut b = stream.launch_builder(&columns);
    b.arg(&g)
        .arg(&w32)
        .arg(&h32)
        .arg(&mut v)
        .arg(&mut z)
        .arg(&mut d2);
    // SAFETY: clr_columns(g, w, h, v, z, d2): reads g[0..w h); writes v, z (entries k w + x,
    // k < h) and d2[0..w h).
    unsafe { b.launch(rt.grid_stride(w, THREADS)) }.map_err(launch_err("clr_columns"))?;
    Ok(d2)
}

/// Squared distances in cells² to the nearest obstacle cell, row-major.
pub fn squared_distances(
    rt: &CudaRuntime,
    w: usize,
    h: usize,
    obstacle: &[bool],
) -> Result<Vec<u64>> {
    let d2 = transform(rt, w, h, obstacle)?;
    rt.download(&d2, w * h)
}

/// Per cell: is its distance to the nearest obstacle, sqrt(d2) x resolution, at most `radius`?
pub fn blocked(
    rt: &CudaRuntime,
    w: usize,
    h: usize,
    obstacle: &[bool],
    resolution: f64,
    radius: f64,
) -> Result<Vec<bool>> {
    let n = w * h;
    let d2 = transform(rt, w, h, obstacle)?;
    // SAFETY: clr_blocked writes every flag.
    let mut flags = unsafe { rt.alloc::<u8>(n) }?;
    if n > 0 {
        let f = rt.function(&CLEARANCE, "clr_blocked")?;
        let n64 = n as u64;
        let mut b = rt.stream().launch_builder(&f);
        b.arg(&d2)
            .arg(&n64)
            .arg(&resolution)
            .arg(&radius)
            .arg(&mut flags);
        // SAFETY: clr_blocked(d2, n, resolution, radius, blocked): reads d2[0..n), writes
        // blocked[0..n).
        unsafe { b.launch(rt.grid_stride(n, 256)) }.map_err(launch_err("clr_blocked"))?;
    }
    Ok(rt
        .download(&flags, n)?
        .into_iter()
        .map(|b| b != 0)
        .collect())
}
