//! The descent on the device: the path from a start down the field to the goal, by the
//! one-block window walk (lee_descend) or, for long paths, over the tiles it crosses or by
//! pointer jumping over every cell (kernels/lee/descent.cu).

use cudarc::driver::{CudaSlice, DevicePtr, LaunchConfig, PushKernelArg};

use super::device::{
    DeviceGrid, Scratch, TileBuffers, DESCENT_BORDER, DESCENT_BROKEN, DESCENT_LONG, DESCENT_OK,
    DESCENT_TILE, DESCENT_TILE_THREADS, DESCENT_TOO_LONG, DESCENT_UNREACHED, SHORT_PATH,
    STATE_LENGTH, STATE_SLOTS, STATE_STATUS,
};
use crate::compute::cuda::{gpu_err, launch_err, one_per_item};
use crate::error::{Error, Result};
use crate::sync::lock;

/// Moves a tile visit is taken to have when the descent cuts the visits' chain, before it
/// knows how many there are (2^k visits a jump, k from len / this). On open terrain a path
/// crosses a tile in about DESCENT_TILE moves; on a maze its visits are shorter, but a guess
/// 4x off makes the two chains only 2x longer than they could be.
const MOVES_PER_VISIT_GUESS: u32 = DESCENT_TILE;

/// How the device descends paths longer than [`long_path_from`] moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LongDescent {
    /// The tiles the path crosses, by pointer jumping over their border cells; then each
    /// visit walked in its tile (the default).
    Tiles,
    /// Pointer jumping over every cell of the grid, a pass per doubling.
    Jumps,
}

/// Paths longer than this many moves, and than [`CELLS_PER_LONG_MOVE`] of the grid's cells,
/// are descended over the tiles they cross ([`LongDescent::Tiles`]: lee_tile_exits and after)
/// instead of by the one-block window walk. On the H100 (docs/bench-history, twentieth part) the
/// walk costs about 0.12-0.14 µs a move on open terrain and 0.7 µs on a maze (its windows lean
/// towards the goal, a maze path does not); the tiles about 75 µs plus 9 µs per million
/// cells, whatever the path: 1,000 moves on 1000² took 0.143 ms walked and 0.080 over the
/// tiles, 500 moves on 500² 0.082 and 0.070; the two meet at about 400 moves on small grids.
pub const LONG_PATH_FROM: u32 = 400;
/// See [`LONG_PATH_FROM`]: on 10000² the tiles cost about 1 ms, which the walk matches at
/// about 8,000 moves of open terrain (10,000 moves: 1.18 ms walked, 1.05 over the tiles); the
/// bound sits below that, as a maze's path of the same length costs five times as much walked.
pub const CELLS_PER_LONG_MOVE: u64 = 16_000;

/// The path length above which a grid of `cells` descends over the tiles.
pub fn long_path_from(cells: u64) -> u32 {
    (cells / CELLS_PER_LONG_MOVE).clamp(LONG_PATH_FROM as u64, u32::MAX as u64) as u32
}

/// Rounds of pointer jumping for a chain of `steps`: 2^k steps a jump, k = ceil(log2(steps) /
/// 2), so the checkpoints' chain and each segment's walk are both about sqrt(steps) long.
fn jumps_for(steps: u32) -> u32 {
    (32 - steps.max(1).leading_zeros()).div_ceil(2)
}

/// What a descent on the device left: its status (`DESCENT_*`), its length in moves, and the
/// path's cells when the status is `DESCENT_OK` and they came back with it (up to
/// [`SHORT_PATH`] cells).
pub(super) struct DescentHeader {
    pub(super) status: u32,
    pub(super) len: u32,
    pub(super) cells: Option<Vec<u32>>,
}

impl DescentHeader {
    /// From the state slots and the cells [`DeviceGrid::fetch_state`] brought with them.
    pub(super) fn from_state(st: &[u32; STATE_SLOTS], cells: Option<Vec<u32>>) -> DescentHeader {
        DescentHeader {
            status: st[STATE_STATUS],
            len: st[STATE_LENGTH],
            cells,
        }
    }
}

impl DeviceGrid {
    /// The descent from `start` queued on the stream (nothing without a start).
    pub(super) fn queue_descent(
        &self,
        scratch: &mut Scratch,
        start: Option<u64>,
        goal: u64,
    ) -> Result<()> {
        match start {
            Some(s) => self.launch_descend(scratch, s, goal),
            None => Ok(()),
        }
    }

    /// What the descent queued last left, when there was a start: its status and length and,
    /// for a path of fewer than [`SHORT_PATH`] cells, the cells too, all in one wait for the
    /// stream ([`Self::fetch_state`]).
    pub(super) fn descent_header(
        &self,
        scratch: &mut Scratch,
        start: Option<u64>,
    ) -> Result<Option<DescentHeader>> {
        if start.is_none() {
            return Ok(None);
        }
        let (st, cells) = self.fetch_state(scratch, true)?;
        Ok(Some(DescentHeader::from_state(&st, cells)))
    }

    /// The state slots once the stream has run, and, after a descent (`descended`) that ended
    /// `DESCENT_OK` in fewer than [`SHORT_PATH`] cells, its path: two copies into page-locked
    /// memory queued back to back, one wait (a path downloaded after its length was known cost
    /// a second).
    pub(super) fn fetch_state(
        &self,
        scratch: &mut Scratch,
        descended: bool,
    ) -> Result<([u32; STATE_SLOTS], Option<Vec<u32>>)> {
        let Scratch {
            state,
            path,
            path_cap,
            header,
            ..
        } = scratch;
        let short = if descended {
            (*path_cap).min(SHORT_PATH)
        } else {
            0
        };
        let stream = self.rt.stream();
        let words = {
            let (sp, _read_state) = state.device_ptr(stream);
            let (pp, _read_path) = path.device_ptr(stream);
            // SAFETY: `state` holds STATE_SLOTS words and `path` path_cap >= short, and the
            // scratch (borrowed here) is not freed meanwhile.
            unsafe { header.fetch(stream, &[(sp, STATE_SLOTS), (pp, short)]) }?
        };
        let (slots, cells) = words.split_at(STATE_SLOTS);
        let mut st = [0u32; STATE_SLOTS];
        st.copy_from_slice(slots);
        let len = st[STATE_LENGTH] as usize;
        let cells = (short > 0 && st[STATE_STATUS] == DESCENT_OK && len < short)
            .then(|| cells[..=len].to_vec());
        Ok((st, cells))
    }

    pub(super) fn launch_descend(
        &self,
        scratch: &mut Scratch,
        start: u64,
        goal: u64,
    ) -> Result<()> {
        let cap = scratch.path_cap as u32;
        let long_from = self
            .long_path_from
            .load(std::sync::atomic::Ordering::Relaxed);
        let Scratch {
            labels,
            state,
            path,
            ..
        } = scratch;
        let mut b = self.field_launch(&self.kernels.descend, labels);
        b.arg(&start)
            .arg(&goal)
            .arg(&mut *path)
            .arg(&cap)
            .arg(&long_from)
            .arg(&mut *state);
        // SAFETY: lee_descend: as declared; writes path[0..cap) only (checked against cap) and the state slots
        unsafe {
            b.launch(LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (1024, 1, 1),
                shared_mem_bytes: 0,
            })
        }
        .map_err(launch_err("lee_descend"))?;
        Ok(())
    }

    /// A descent's header into its path: the cells that came with it, or downloaded, or the
    /// descent relaunched with room for the whole path when the first path buffer was too short.
    pub(super) fn finish_descent(
        &self,
        goal: (u32, u32),
        start: (u32, u32),
        DescentHeader {
            mut status,
            len,
            mut cells,
        }: DescentHeader,
    ) -> Result<Option<Vec<(u32, u32)>>> {
        let w = self.width as u64;
        let (s, g) = (
            start.1 as u64 * w + start.0 as u64,
            goal.1 as u64 * w + goal.0 as u64,
        );
        let mut scratch = lock(&self.scratch);
        if status == DESCENT_TOO_LONG || status == DESCENT_LONG {
            // Room for the path and its status after it: one download brings both.
            let room = len as usize + 2;
            if scratch.path_cap < room {
                let cap = room.next_power_of_two().min(self.cells() + 1);
                // SAFETY: the descent writes path[0..=len] before it reports success, and
                // the status is copied to path[len + 1] below.
                scratch.path = unsafe { self.rt.alloc::<u32>(cap) }?;
                scratch.path_cap = cap;
            }
            if status == DESCENT_LONG {
                if self.jump_cells.load(std::sync::atomic::Ordering::Relaxed) {
                    self.jump_descent(&mut scratch, s, len)?;
                } else {
                    self.tile_descent(&mut scratch, s, len)?;
                }
            } else {
                self.launch_descend(&mut scratch, s, g)?;
            }
            let Scratch { state, path, .. } = &mut *scratch;
            self.rt
                .stream()
                .memcpy_dtod(
                    &state.slice(STATE_STATUS..STATE_STATUS + 1),
                    &mut path.slice_mut(room - 1..room),
                )
                .map_err(gpu_err)?;
            let mut got = self.rt.download(&scratch.path, room)?;
            status = got.pop().unwrap_or(DESCENT_BROKEN);
            cells = Some(got);
        }
        match status {
            DESCENT_OK => {
                let cells = match cells {
                    Some(c) => c,
                    None => self.rt.download(&scratch.path, len as usize + 1)?,
                };
                Ok(Some(
                    cells
                        .into_iter()
                        .map(|c| (c % self.width, c / self.width))
                        .collect(),
                ))
            }
            DESCENT_UNREACHED => Ok(None),
            DESCENT_BROKEN => Err(Error::Gpu("lee_descend: labels have no descent".into())),
            other => Err(Error::Gpu(format!("lee_descend: status {other}"))),
        }
    }

    /// The path of `len` moves from `start` by pointer jumping (kernels/lee/descent.cu, "Long
    /// paths"): leaves path[0..=len] and the status in the scratch. Needs three grids of u32
    /// for the moment it runs (the next cells and two jump tables).
    pub(super) fn jump_descent(&self, scratch: &mut Scratch, start: u64, len: u32) -> Result<()> {
        let stream = self.rt.stream().clone();
        let n = self.cells() as u64;
        let k = jumps_for(len);
        let stride = 1u32 << k;
        // SAFETY: lee_next writes every cell of `next`, each lee_jump every cell of the table
        // it writes, before anything reads them.
        let (mut next, mut tables) = unsafe {
            (
                self.rt.alloc::<u32>(n as usize)?,
                [
                    self.rt.alloc::<u32>(n as usize)?,
                    self.rt.alloc::<u32>(n as usize)?,
                ],
            )
        };
        let pass = self.rt.grid_stride(n as usize, 256);
        let mut b = self.field_launch(&self.kernels.next, &scratch.labels);
        b.arg(&mut next);
        // SAFETY: lee_next: as declared; reads masks and labels, writes next[0..n), n = w x h
        unsafe { b.launch(pass) }.map_err(launch_err("lee_next"))?;
        let jump = self.jump_passes(&next, &mut tables, k)?;
        let Scratch { path, state, .. } = scratch;
        let mut b = stream.launch_builder(&self.kernels.checkpoints);
        b.arg(jump)
            .arg(&start)
            .arg(&len)
            .arg(&stride)
            .arg(&mut *path)
            .arg(&mut *state);
        // SAFETY: lee_checkpoints: as declared; one thread writes path[i * stride] for i * stride <= len < path's capacity
        unsafe { b.launch(LaunchConfig::for_num_elems(1)) }
            .map_err(launch_err("lee_checkpoints"))?;
        let segments = len / stride + 1;
        let mut b = stream.launch_builder(&self.kernels.walk_segments);
        b.arg(&next)
            .arg(&len)
            .arg(&stride)
            .arg(&mut *path)
            .arg(&mut *state);
        // SAFETY: lee_walk_segments: as declared; thread i writes path[i * stride + 1 ..= min(len, (i + 1) * stride - 1)]
        unsafe { b.launch(one_per_item(segments as usize, 128, "path length")?) }
            .map_err(launch_err("lee_walk_segments"))?;
        Ok(())
    }

    /// `k` rounds of lee_jump over `first`'s entries (each a cell or a node, or NEXT_NONE),
    /// each round squaring the one before, between the two `tables`: the table whose entries
    /// move 2^k steps (`first` itself for k = 0). The tables are `first`'s length.
    pub(super) fn jump_passes<'a>(
        &self,
        first: &'a CudaSlice<u32>,
        tables: &'a mut [CudaSlice<u32>; 2],
        k: u32,
    ) -> Result<&'a CudaSlice<u32>> {
        let n = first.len();
        let pass = self.rt.grid_stride(n, 256);
        let n = n as u64;
        for r in 0..k {
            let [a, t] = &mut *tables;
            let (from, to) = match r {
                0 => (first, a),
                _ if r % 2 == 1 => (&*a, t),
                _ => (&*t, a),
            };
            let mut b = self.rt.stream().launch_builder(&self.kernels.jump);
            b.arg(from).arg(to).arg(&n);
            // SAFETY: lee_jump: as declared; reads from[0..n) (values below n or NEXT_NONE), writes to[0..n), every table at least n long
            unsafe { b.launch(pass) }.map_err(launch_err("lee_jump"))?;
        }
        Ok(match k {
            0 => first,
            _ if k % 2 == 1 => &tables[0],
            _ => &tables[1],
        })
    }

    /// The path of `len` moves from `start` over the tiles it crosses (kernels/lee/descent.cu, "Long
    /// paths over tiles"): leaves path[0..=len] and the status in the scratch. Keeps the
    /// border cells' exits and two jump tables over them (each 252/4096 of the grid's cells),
    /// and the visits and their checkpoints (at most len + 1 each), for the next long path.
    pub(super) fn tile_descent(&self, scratch: &mut Scratch, start: u64, len: u32) -> Result<()> {
        let stream = self.rt.stream().clone();
        let (tiles_x, tiles_y) = (
            self.width.div_ceil(DESCENT_TILE),
            self.height.div_ceil(DESCENT_TILE),
        );
        let goal_node = tiles_x as u64 * tiles_y as u64 * DESCENT_BORDER as u64;
        if goal_node >= (1 << 31) - 1 || tiles_y > 65_535 {
            // The kernels tag a node with bit 31 and take the tile rows as grid rows.
            return Err(Error::Gpu(format!(
                "lee: a {}x{} grid has too many tiles for the tile descent",
                self.width, self.height
            )));
        }
        let goal_node = goal_node as u32;
        let nodes = goal_node as usize + 1;
        let k = jumps_for(len / MOVES_PER_VISIT_GUESS + 1);
        let stride = 1u32 << k;
        // The chain has at most len + 1 visits, so at most len / stride + 2 checkpoints, and
        // the segments write visits below (cap - 1) x stride + 1.
        let cap = len / stride + 2;
        let hop_cap = (cap as usize - 1) * stride as usize + 1;
        let fits = |t: &TileBuffers| t.checkpoint_cap >= cap as usize && t.hop_cap >= hop_cap;
        if !scratch.tiles.as_ref().is_some_and(fits) {
            let (checkpoint_cap, hop_cap) = (
                (cap as usize).next_power_of_two(),
                hop_cap.next_power_of_two(),
            );
            // SAFETY: lee_tile_exits writes every node of `exits` (each tile its border's,
            // the first the goal node); lee_jump every node of the table it writes; the
            // checkpoints and visits are read only below the counts their writers set.
            scratch.tiles = Some(unsafe {
                TileBuffers {
                    exits: self.rt.alloc::<u32>(nodes)?,
                    tables: [self.rt.alloc::<u32>(nodes)?, self.rt.alloc::<u32>(nodes)?],
                    checkpoints: self.rt.alloc::<u32>(checkpoint_cap)?,
                    checkpoint_cap,
                    hops: self.rt.alloc::<u32>(hop_cap)?,
                    hop_cap,
                }
            });
        }
        let Scratch {
            labels,
            path,
            state,
            tiles,
            ..
        } = scratch;
        let TileBuffers {
            exits,
            tables,
            checkpoints,
            hops,
            ..
        } = tiles
            .as_mut()
            .ok_or_else(|| Error::Gpu("lee: the tile descent's buffers are missing".into()))?;
        let mut b = self.field_launch(&self.kernels.tile_exits, labels);
        b.arg(&start).arg(&mut *exits).arg(&mut *state);
        // SAFETY: lee_tile_exits: as declared; a block per tile (the grid's dimensions are
        // the tiles'), writes exits[0..=goal_node] and the start's slot of the state
        unsafe {
            b.launch(LaunchConfig {
                grid_dim: (tiles_x, tiles_y, 1),
                block_dim: (DESCENT_TILE_THREADS, 1, 1),
                shared_mem_bytes: 0,
            })
        }
        .map_err(launch_err("lee_tile_exits"))?;
        let jump = self.jump_passes(exits, tables, k)?;
        let mut b = stream.launch_builder(&self.kernels.hop_checkpoints);
        b.arg(jump)
            .arg(&goal_node)
            .arg(&cap)
            .arg(&mut *checkpoints)
            .arg(&mut *state);
        // SAFETY: lee_hop_checkpoints: as declared; one thread writes checkpoints[0..cap) and the state
        unsafe { b.launch(LaunchConfig::for_num_elems(1)) }
            .map_err(launch_err("lee_hop_checkpoints"))?;
        let mut b = stream.launch_builder(&self.kernels.hop_segments);
        b.arg(&*exits)
            .arg(&*checkpoints)
            .arg(&stride)
            .arg(&goal_node)
            .arg(&self.width)
            .arg(&tiles_x)
            .arg(&start)
            .arg(&mut *hops)
            .arg(&mut *state);
        // SAFETY: lee_hop_segments: as declared; thread i < the checkpoints' count (<= cap) writes hops[1 + i * stride ..][..stride] (< hop_cap) and thread 0 hops[0]
        unsafe { b.launch(one_per_item(cap as usize, 128, "path length")?) }
            .map_err(launch_err("lee_hop_segments"))?;
        let mut b = self.field_launch(&self.kernels.tile_fill, labels);
        b.arg(&*hops).arg(&len).arg(&mut *path).arg(&mut *state);
        let blocks = (self.rt.info().multiprocessors.max(1) as u32) * 2;
        // SAFETY: lee_tile_fill: as declared; writes path[len - label] for labels <= len (path holds len + 1 cells) and the status
        unsafe {
            b.launch(LaunchConfig {
                grid_dim: (blocks, 1, 1),
                block_dim: (DESCENT_TILE_THREADS, 1, 1),
                shared_mem_bytes: 0,
            })
        }
        .map_err(launch_err("lee_tile_fill"))?;
        Ok(())
    }
}
