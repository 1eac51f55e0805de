//! Bitwave's portal wave in one block (kernels/lee/portals.cu's lee_portal_block): where every
//! portal's label fits one SM's shared memory (a maze of up to about 50,000 portals: the
//! 1000² maze has 23,000), the wave's claims, labels, offers and fences stay inside the SM
//! instead of crossing L2 for each tile crossed. The links it needs (which portal each move
//! out of a tile reaches) are built with the tables, once per map.

use std::sync::atomic::Ordering;

use cudarc::driver::sys;
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, DeviceRepr, LaunchConfig, PushKernelArg};

use super::bitwave::per_tile_launch;
use super::device::{DeviceGrid, PortalBlock, Portals, Scratch, PB_THREADS, PT_MAX};
use crate::compute::cuda::{gpu_err, launch_err};
use crate::error::{Error, Result};

/// Shared control words of lee_portal_block (PBQ_WORDS there).
const PBQ_WORDS: u64 = 4;
/// Portals a link can name (PB_DIR_SHIFT there: the bits above hold its tile's direction).
const PB_MAX_PORTALS: u32 = 1 << 29;
/// The one block takes the wave only where the tables average at most this many entries a
/// tile: corridors, whose wave is a few tiles at a time. An open map's wave is wide, and the
/// device-wide queue's warps on every SM run it faster: on the H100 nav2's depot map (15,421
/// portals, 25,400 entries a tile) took 0.61 ms a query in one block against 0.40 on the
/// queue; the 1000² maze (2,100 a tile) 3.72 against 5.9 (docs/bench-history, fifteenth part).
const PB_ENTRIES_PER_TILE: u64 = 64 * 64;

/// lee_portal_block's one argument (kernels/lee/portals.cu's PortalBlockArgs, the same fields in the
/// same order).
#[repr(C)]
#[derive(Clone, Copy)]
struct PortalBlockArgs {
    labels: sys::CUdeviceptr,
    pcount: sys::CUdeviceptr,
    poff: sys::CUdeviceptr,
    plink: sys::CUdeviceptr,
    doff: sys::CUdeviceptr,
    pcell: sys::CUdeviceptr,
    dist: sys::CUdeviceptr,
    ctl: sys::CUdeviceptr,
    ntiles: u32,
    total: u32,
    tiles_x: u32,
    tiles_y: u32,
    ndirs: u32,
    visit_limit: u32,
}

// SAFETY: plain old data of the C layout the kernel declares; the pointers stay valid for the
// launch (their buffers live in the grid's scratch, guarded above the launch).
unsafe impl DeviceRepr for PortalBlockArgs {}

/// Shared bytes lee_portal_block needs for `total` portals in `ntiles` tiles: the control
/// words, a word per portal, five per tile (state, ring, head) and two slot lists per warp.
pub(super) fn block_smem_bytes(total: u32, ntiles: u32) -> u64 {
    4 * (PBQ_WORDS + total as u64 + 5 * ntiles as u64)
        + (PB_THREADS / 32) as u64 * 2 * PT_MAX as u64 * 4
}

impl DeviceGrid {
    /// The one-block wave's links for `total` portals whose tables take `entries`, or None
    /// where the map is open (see [`PB_ENTRIES_PER_TILE`]), its labels do not fit one block's
    /// shared memory, a label could pass 2^31 (a bit of each shared word is the mark), or a
    /// move out of a tile reaches a cell that is no portal of its own tile (moves not
    /// symmetric).
    pub(super) fn build_portal_block(
        &self,
        pcount: &CudaSlice<u32>,
        poff: CudaSlice<u32>,
        pinfo: &CudaSlice<u32>,
        (total, entries): (u32, u64),
    ) -> Result<Option<PortalBlock>> {
        let (_, tiles) = self.bitwave_tiles(0);
        let ntiles = tiles.0 * tiles.1;
        let optin = self.rt.info().max_shared_per_block_optin.max(0) as u64;
        let smem = block_smem_bytes(total, ntiles);
        if total == 0
            || total >= PB_MAX_PORTALS
            || entries > PB_ENTRIES_PER_TILE * ntiles as u64
            || entries > u32::MAX as u64
            || smem > optin
            || self.cells() as u64 >= 1 << 31
        {
            return Ok(None);
        }
        let stream = self.rt.stream().clone();
        let n = total as usize;
        // SAFETY: lee_portal_links writes every portal's cell and its 8 links.
        let (mut plink, mut pcell) =
            unsafe { (self.rt.alloc::<u32>(8 * n)?, self.rt.alloc::<u64>(n)?) };
        let mut bad = self.rt.alloc_zeros::<u32>(1)?;
        let mut b = stream.launch_builder(&self.kernels.portal_links);
        b.arg(pcount)
            .arg(&poff)
            .arg(pinfo)
            .arg(&self.width)
            .arg(&tiles.0)
            .arg(&ntiles)
            .arg(&total)
            .arg(&mut plink)
            .arg(&mut pcell)
            .arg(&mut bad);
        // SAFETY: lee_portal_links(pcount, poff, pinfo, w, tiles_x, ntiles, total, plink, pcell,
        // bad) as declared: reads the tables' slots, writes plink[0..8 total), pcell[0..total),
        // bad[0]
        unsafe { b.launch(per_tile_launch(total)) }.map_err(launch_err("lee_portal_links"))?;
        if self.rt.download(&bad, 1)?[0] != 0 {
            tracing::info!(
                "lee bitwave: a move out of a tile reaches no portal (moves not symmetric); \
                 the portal wave stays on the device-wide queue"
            );
            return Ok(None);
        }
        self.kernels
            .portal_block
            .set_attribute(
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                optin as i32,
            )
            .map_err(gpu_err)?;
        Ok(Some(PortalBlock {
            poff,
            plink,
            pcell,
            total,
            smem_bytes: smem as u32,
        }))
    }

    /// The wave over the portals in one block, from the labels the goal's round left; after
    /// each of its launches, `then` (the caller's tile fill and descent, as
    /// `DeviceGrid::portal_field` runs them after the device-wide queue).
    pub(super) fn portal_block_wave(
        &self,
        scratch: &mut Scratch,
        tiles: (u32, u32),
        mut then: impl FnMut(&mut Scratch) -> Result<()>,
    ) -> Result<()> {
        let stream = self.rt.stream().clone();
        stream.memset_zeros(&mut scratch.ctl).map_err(gpu_err)?;
        self.drain_queue(scratch, |scratch, visit_limit| {
            {
                let Scratch {
                    labels,
                    ctl,
                    portals,
                    ..
                } = &mut *scratch;
                let Some(Some(p)) = portals.as_ref() else {
                    return Err(Error::Gpu("lee bitwave: the portals went missing".into()));
                };
                let Some(pb) = p.block.as_ref() else {
                    return Err(Error::Gpu("lee bitwave: no one-block links".into()));
                };
                let args = block_args(&stream, p, pb, labels, ctl, tiles, self.ndirs, visit_limit);
                let mut b = stream.launch_builder(&self.kernels.portal_block);
                b.arg(&args.0);
                let launch = LaunchConfig {
                    grid_dim: (1, 1, 1),
                    block_dim: (PB_THREADS, 1, 1),
                    shared_mem_bytes: pb.smem_bytes,
                };
                // SAFETY: lee_portal_block(PortalBlockArgs): one block of PB_THREADS with the
                // shared memory block_smem_bytes gives (the function allows the device's
                // opt-in maximum, checked at build); writes the labels at the portals and the
                // control words
                unsafe { b.launch(launch) }.map_err(launch_err("lee_portal_block"))?;
            }
            then(scratch)
        })?;
        self.portal_block_used.store(true, Ordering::Relaxed);
        Ok(())
    }
}

/// The kernel's argument and the guards that keep each buffer's stream order (cudarc's
/// events) until the launch.
#[allow(clippy::too_many_arguments)]
fn block_args<'a>(
    stream: &'a std::sync::Arc<cudarc::driver::CudaStream>,
    p: &'a Portals,
    pb: &'a PortalBlock,
    labels: &'a mut CudaSlice<u32>,
    ctl: &'a mut CudaSlice<u32>,
    tiles: (u32, u32),
    ndirs: u32,
    visit_limit: u32,
) -> (PortalBlockArgs, Vec<cudarc::driver::SyncOnDrop<'a>>) {
    let mut guards = Vec::with_capacity(9);
    let mut ptr = |(d, g): (sys::CUdeviceptr, cudarc::driver::SyncOnDrop<'a>)| {
        guards.push(g);
        d
    };
    let args = PortalBlockArgs {
        labels: ptr(labels.device_ptr_mut(stream)),
        pcount: ptr(p.pcount.device_ptr(stream)),
        poff: ptr(pb.poff.device_ptr(stream)),
        plink: ptr(pb.plink.device_ptr(stream)),
        doff: ptr(p.doff.device_ptr(stream)),
        pcell: ptr(pb.pcell.device_ptr(stream)),
        dist: ptr(p.dist.device_ptr(stream)),
        ctl: ptr(ctl.device_ptr_mut(stream)),
        ntiles: tiles.0 * tiles.1,
        total: pb.total,
        tiles_x: tiles.0,
        tiles_y: tiles.1,
        ndirs,
        visit_limit,
    };
    (args, guards)
}
