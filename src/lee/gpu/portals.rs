//! Bitwave's portal schedule (kernels/lee/portals.cu): the wave over the cells with a move out of
//! their tile, each tile crossed in one step through a table of the distances inside it,
//! then every tile filled from its border. The tables depend on the map only: they are built
//! once per grid (by the planner when it takes the map, else by the first query) and kept
//! with it.

use std::sync::atomic::Ordering;
use std::time::Instant;

use cudarc::driver::sys;
use cudarc::driver::{
    CudaFunction, CudaSlice, DevicePtr, DevicePtrMut, DeviceRepr, LaunchConfig, PushKernelArg,
};

use super::bitwave::{per_tile_launch, BitwaveQueueArgs};
use super::descent::DescentHeader;
use super::device::{
    DeviceGrid, Portals, Scratch, BW_SMEM_PER_WARP, PT_DIST_THREADS, PT_MAX, PT_WARP_SMEM,
};
use crate::compute::cuda::{gpu_err, launch_err};
use crate::error::{Error, Result};
use crate::lee::config::Config;

/// Table memory one grid's portals may take on the device by default (MiB; u16 entries), at
/// most a sixteenth of the device's memory (512 MiB on an 8 GB Jetson), and the variable that
/// sets it (0: no tables, the rounds and the work queue only). A maze tile has a few dozen
/// portals, an open tile up to 188, and the tables' size is also the work of an open map's
/// query: on the H100 the portals were faster than the rounds on every map whose tables took
/// up to 1019 MiB (an empty 5600² map: 4.27 against 6.64 ms; nav2's depot x10, 573 MiB: 3.38
/// against 5.63) and slower above (random 8000², 1038 MiB: 8.04 against 6.72; 10000², 1625
/// MiB: 16.4 against 8.8), where their queue runs too many large tiles for its warps.
const PORTAL_MIB_DEFAULT: u64 = 1024;
const PORTAL_MIB_VAR: &str = crate::env::LEE_PORTAL_MIB.name;
/// Warps per block of the per-tile kernels and the fill.
const PT_WARPS: u32 = 4;
/// Blocks of the portal queue per SM: a narrow wave keeps a few warps busy, and the others'
/// waits slowed their atomics. On the H100 the 4000² maze's field took 129-144 ms with every
/// block that fits, 120 with 2 per SM and 118-120 with 1; the 1000² maze's 7.9 ms either way.
const PT_QUEUE_PER_SM: u32 = 1;

/// The table entries a grid's portals may take on a device of `device_bytes`:
/// [`PORTAL_MIB_VAR`] in MiB, else the default.
pub(super) fn portal_cap_from_env(device_bytes: u64) -> u64 {
    portal_cap(device_bytes, crate::env::LEE_PORTAL_MIB.get().as_deref())
}

/// [`portal_cap_from_env`] with the variable's value (a value that does not parse is logged
/// and the default taken).
fn portal_cap(device_bytes: u64, var: Option<&str>) -> u64 {
    let default = PORTAL_MIB_DEFAULT.min((device_bytes >> 20) / 16);
    let mib = var.map_or(default, |v| {
        v.trim().parse::<u64>().unwrap_or_else(|_| {
            tracing::warn!("{PORTAL_MIB_VAR}: '{v}' is not a whole number of MiB; using {default}");
            default
        })
    });
    table_entries(mib)
}

/// The u16 table entries `mib` MiB hold.
pub(super) fn table_entries(mib: u64) -> u64 {
    mib.saturating_mul(1 << 20) / 2
}

/// The MiB `entries` u16 table entries take.
fn table_mib(entries: u64) -> u64 {
    entries.saturating_mul(2) >> 20
}

/// lee_portal_queue's one argument (kernels/lee/portals.cu's PortalArgs: the queue's arguments, then
/// the portals' buffers, in the same order).
#[repr(C)]
#[derive(Clone, Copy)]
struct PortalArgs {
    queue: BitwaveQueueArgs,
    pcount: sys::CUdeviceptr,
    pinfo: sys::CUdeviceptr,
    doff: sys::CUdeviceptr,
    dist: sys::CUdeviceptr,
    mark: sys::CUdeviceptr,
}

// SAFETY: plain old data of the C layout the kernel declares; the pointers stay valid for the
// launch (their buffers live in the grid's scratch, guarded above the launch).
unsafe impl DeviceRepr for PortalArgs {}

/// Where each tile's portal list and table start, from the tiles' portal counts: (poff with
/// the total last, doff, table entries).
fn offsets(counts: &[u32]) -> (Vec<u32>, Vec<u64>, u64) {
    let mut poff = Vec::with_capacity(counts.len() + 1);
    let mut doff = Vec::with_capacity(counts.len());
    let (mut p, mut d) = (0u32, 0u64);
    for &k in counts {
        poff.push(p);
        doff.push(d);
        p += k;
        d += k as u64 * k as u64;
    }
    poff.push(p);
    (poff, doff, d)
}

/// Warps striding over `items`, PT_WARPS to a block.
fn per_warp_launch(items: u32, warps: u32, smem_per_warp: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (items.div_ceil(warps).clamp(1, 1 << 16), 1, 1),
        block_dim: (warps * 32, 1, 1),
        shared_mem_bytes: warps * smem_per_warp,
    }
}

impl DeviceGrid {
    /// lee_portal_count or lee_portal_list (`f`, `name`): a warp per tile over the grid's
    /// planes, writing `out` (a count per tile, or a tile's portals in its PT_MAX slots).
    fn portal_tile_launch(
        &self,
        f: &CudaFunction,
        name: &str,
        out: &mut CudaSlice<u32>,
    ) -> Result<()> {
        let stream = self.rt.stream().clone();
        let (_, tiles) = self.bitwave_tiles(0);
        let mut b = stream.launch_builder(f);
        b.arg(&self.planes)
            .arg(&self.height)
            .arg(&tiles.0)
            .arg(&self.ndirs)
            .arg(&tiles.0)
            .arg(&tiles.1)
            .arg(out);
        // SAFETY: lee_portal_count / lee_portal_list: (planes, h, wwords, ndirs, tiles_x, tiles_y,
        // out) as declared; they read the planes and write out[0..ntiles) or the slots
        // out[t * PT_MAX..][..count of t], which the caller allocated for every tile
        unsafe { b.launch(per_warp_launch(tiles.0 * tiles.1, PT_WARPS, 0)) }
            .map_err(launch_err(name))?;
        Ok(())
    }

    /// Whether this grid's portal tables fit (see [`portal_cap_from_env`]), building them
    /// first when no query has yet.
    pub(super) fn portals_fit(&self, scratch: &mut Scratch) -> Result<bool> {
        if scratch.portals.is_none() {
            scratch.portals = Some(match self.build_portals() {
                Ok(p) => p,
                // A device without room for the tables still plans, on the rounds and queue.
                Err(Error::OutOfMemory {
                    requested_bytes, ..
                }) => {
                    tracing::warn!(
                        "lee bitwave: no device memory for the portal tables \
                         ({requested_bytes} bytes); this grid runs on the rounds and the work queue"
                    );
                    None
                }
                Err(e) => return Err(e),
            });
        }
        Ok(matches!(scratch.portals, Some(Some(_))))
    }

    /// The grid's portals and tables, or None when the tables would take more entries than
    /// the grid's cap.
    fn build_portals(&self) -> Result<Option<Portals>> {
        let began = Instant::now();
        let stream = self.rt.stream().clone();
        let (_, tiles) = self.bitwave_tiles(0);
        let ntiles = tiles.0 * tiles.1;
        let (h, wwords, ndirs) = (self.height, tiles.0, self.ndirs);
        // SAFETY: lee_portal_count writes every tile's count.
        let mut pcount = unsafe { self.rt.alloc::<u32>(ntiles.max(1) as usize) }?;
        self.portal_tile_launch(&self.kernels.portal_count, "lee_portal_count", &mut pcount)?;
        let counts = self.rt.download(&pcount, ntiles as usize)?;
        let (poff, doff, entries) = offsets(&counts);
        let total = poff[ntiles as usize];
        let cap = self.portal_cap.load(Ordering::Relaxed);
        if entries > cap {
            tracing::info!(
                "lee bitwave: the portal tables would take {} MiB ({PORTAL_MIB_VAR} allows {}); \
                 this grid runs on the rounds and the work queue",
                table_mib(entries),
                table_mib(cap)
            );
            return Ok(None);
        }
        let poff_d = self.rt.upload(&poff)?;
        let doff_d = self.rt.upload(&doff)?;
        let slots = ntiles.max(1) as usize * PT_MAX as usize;
        // SAFETY: lee_portal_list writes every portal's slot (the slots past a tile's count are
        // loaded by lee_portal_queue and never used), lee_portal_dist every table row (each
        // portal's row, k entries); every query sets the marks before use.
        let (mut pinfo, mut dist, mark) = unsafe {
            (
                self.rt.alloc::<u32>(slots)?,
                self.rt.alloc::<u16>(entries.max(1) as usize)?,
                self.rt.alloc::<u32>(slots)?,
            )
        };
        self.portal_tile_launch(&self.kernels.portal_list, "lee_portal_list", &mut pinfo)?;
        if total > 0 {
            let mut b = stream.launch_builder(&self.kernels.portal_dist);
            b.arg(&self.planes)
                .arg(&h)
                .arg(&wwords)
                .arg(&ndirs)
                .arg(&tiles.0)
                .arg(&tiles.1)
                .arg(&poff_d)
                .arg(&pinfo)
                .arg(&doff_d)
                .arg(&mut dist)
                .arg(&total);
            // SAFETY: lee_portal_dist: as declared, in blocks of PT_DIST_THREADS (its static shared
            // memory); writes every tile's k x k table inside dist (sized by the same offsets)
            unsafe { b.launch(per_warp_launch(total, PT_DIST_THREADS / 32, 0)) }
                .map_err(launch_err("lee_portal_dist"))?;
        }
        let block = self.build_portal_block(&pcount, poff_d, &pinfo, (total, entries))?;
        self.rt.synchronize()?;
        let us = began.elapsed().as_micros() as u64;
        self.portal_build_us.store(us, Ordering::Relaxed);
        tracing::info!(
            "lee bitwave: {total} portals, tables of {entries} entries ({} MiB) built in {:.1} ms; \
             the wave runs {}",
            table_mib(entries),
            us as f64 / 1e3,
            if block.is_some() { "in one block" } else { "on the device-wide queue" }
        );
        Ok(Some(Portals {
            pcount,
            doff: doff_d,
            pinfo,
            dist,
            mark,
            block,
        }))
    }

    /// The field over the portals: the goal's tile in one round, the wave over the portals
    /// from its labels, every tile filled, and the descent from `start`, all queued on the
    /// stream before the host waits for an answer (while it waits, another stream's blocks
    /// take the SMs the next launch needs: a get_plan beside APSP and cell graphs). The
    /// caller has built the tables ([`DeviceGrid::portals_fit`]) and the rounds' lists. The
    /// wave runs in one block where the grid's portals allow it and `in_block` is set
    /// (portal_block.rs), else on the device-wide queue.
    pub(super) fn portal_field(
        &self,
        scratch: &mut Scratch,
        goal_idx: u64,
        config: &Config,
        start: Option<u64>,
        in_block: bool,
    ) -> Result<Option<DescentHeader>> {
        let stream = self.rt.stream().clone();
        let (_, tiles) = self.bitwave_tiles(goal_idx);
        let ntiles = tiles.0 * tiles.1;
        // One block: the round runs one tile, and a cooperative launch of one block waits for
        // one block's room, not the whole device's.
        let launch = LaunchConfig {
            grid_dim: (1, 1, 1),
            ..self.rounds_launch(config, tiles)?
        };
        stream.memset_zeros(&mut scratch.state).map_err(gpu_err)?;
        self.launch_rounds(scratch, goal_idx, tiles, launch, (1, 1), 0)?;
        self.rounds.store(1, Ordering::Relaxed);
        self.portals_used.store(true, Ordering::Relaxed);
        if in_block && matches!(&scratch.portals, Some(Some(p)) if p.block.is_some()) {
            self.portal_block_wave(scratch, tiles, |scratch| {
                self.portal_fill(scratch, goal_idx, tiles)?;
                self.queue_descent(scratch, start, goal_idx)
            })?;
            return self.descent_header(scratch, start);
        }
        {
            let Scratch {
                portals,
                queued,
                ring,
                ctl,
                ..
            } = &mut *scratch;
            let Some(Some(p)) = portals.as_mut() else {
                return Err(Error::Gpu("lee bitwave: no portal tables to run on".into()));
            };
            let mut b = stream.launch_builder(&self.kernels.portal_queue_all);
            b.arg(ring)
                .arg(queued)
                .arg(ctl)
                .arg(&mut p.mark)
                .arg(&ntiles);
            // SAFETY: lee_portal_queue_all: as declared; writes the ring and tile states (ntiles each), the marks (ntiles x PT_MAX) and the control words
            unsafe { b.launch(per_tile_launch(ntiles.saturating_mul(PT_MAX))) }
                .map_err(launch_err("lee_portal_queue_all"))?;
        }
        let launch = self.bitwave_launch(
            &self.kernels.portal_queue,
            config,
            ntiles,
            PT_QUEUE_PER_SM,
            PT_WARP_SMEM,
        )?;
        self.drain_queue(scratch, |scratch, visit_limit| {
            {
                let Scratch {
                    labels,
                    queued,
                    ring,
                    ctl,
                    portals,
                    ..
                } = &mut *scratch;
                let Some(Some(p)) = portals.as_mut() else {
                    return Err(Error::Gpu("lee bitwave: the portals went missing".into()));
                };
                let (queue, _guards) = self.queue_args(
                    &stream,
                    (labels, ring, queued, ctl),
                    tiles,
                    visit_limit,
                    goal_idx,
                );
                // The guards keep each buffer's stream order (cudarc's events) until the launch.
                let (pcount, _g1) = p.pcount.device_ptr(&stream);
                let (pinfo, _g2) = p.pinfo.device_ptr(&stream);
                let (doff, _g3) = p.doff.device_ptr(&stream);
                let (dist, _g4) = p.dist.device_ptr(&stream);
                let (mark, _g5) = p.mark.device_ptr_mut(&stream);
                let args = PortalArgs {
                    queue,
                    pcount,
                    pinfo,
                    doff,
                    dist,
                    mark,
                };
                let mut b = stream.launch_builder(&self.kernels.portal_queue);
                b.arg(&args);
                // SAFETY: lee_portal_queue(PortalArgs): writes labels (w x h, at portals and the
                // cells they move to), the ring and tile states, the marks and the control words;
                // blocks <= the occupancy bound, as the queue's waits require (a cooperative
                // launch checks it).
                unsafe { b.launch_cooperative(launch) }.map_err(launch_err("lee_portal_queue"))?;
            }
            // The fill and the descent go right behind each launch of the queue; a launch
            // that ran out of tickets leaves tiles queued, and the next one's fill and descent
            // overwrite these. Every label stays a real path's length (an upper bound), and a
            // fill lowers no portal below what its tile's table gave, so the queue's exactness
            // holds across an early fill.
            self.portal_fill(scratch, goal_idx, tiles)?;
            self.queue_descent(scratch, start, goal_idx)
        })?;
        self.descent_header(scratch, start)
    }

    /// lee_portal_fill: every tile filled from its border labels and the goal.
    pub(super) fn portal_fill(
        &self,
        scratch: &mut Scratch,
        goal_idx: u64,
        tiles: (u32, u32),
    ) -> Result<()> {
        let stream = self.rt.stream().clone();
        let (planes, _g1) = self.planes.device_ptr(&stream);
        let (labels, _g2) = scratch.labels.device_ptr_mut(&stream);
        let args = BitwaveQueueArgs {
            grid: self.bitwave_grid(planes, labels, tiles),
            ring: 0,
            tile_state: 0,
            ctl: 0,
            visit_limit: 0,
            goal: goal_idx,
        };
        let mut b = stream.launch_builder(&self.kernels.portal_fill);
        b.arg(&args);
        // SAFETY: lee_portal_fill(BitwaveQueueArgs, only the grid and goal read): each warp
        // writes the labels of the tiles it takes, nothing else; shared memory per warp as
        // bw_tile needs
        unsafe {
            b.launch(per_warp_launch(
                tiles.0 * tiles.1,
                PT_WARPS,
                BW_SMEM_PER_WARP,
            ))
        }
        .map_err(launch_err("lee_portal_fill"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_is_a_gib_at_most_a_sixteenth_of_the_device_or_the_variable() {
        const GIB: u64 = 1 << 30;
        assert_eq!(portal_cap(80 * GIB, None), GIB / 2);
        assert_eq!(portal_cap(8 * GIB, None), GIB / 4);
        assert_eq!(portal_cap(80 * GIB, Some(" 64 ")), 64 << 19);
        assert_eq!(portal_cap(80 * GIB, Some("0")), 0);
        assert_eq!(portal_cap(8 * GIB, Some("2048")), GIB);
        assert_eq!(portal_cap(80 * GIB, Some("lots")), GIB / 2);
        assert_eq!(portal_cap(80 * GIB, Some("-1")), GIB / 2);
    }

    #[test]
    fn offsets_skip_tiles_without_portals() {
        let (poff, doff, entries) = offsets(&[2, 0, 3, 0, 4]);
        assert_eq!(poff, vec![0, 2, 2, 5, 5, 9]);
        assert_eq!(doff, vec![0, 4, 4, 13, 13]);
        assert_eq!(entries, 29);
        assert_eq!(offsets(&[]), (vec![0], vec![], 0));
    }
}
