//! The least-cost field on the device (kernels/costfield.cu): the grid's masks and the cells'
//! step costs uploaded once per map; per goal, tile rounds that follow the front until the
//! start's least-cost paths are final (or, for a whole field, until nothing improves). The
//! field stays on the device: a plan descends it there, queued behind the rounds, and only the
//! path comes back, in the launch's one wait; a plan to the same goal again goes on from where
//! the field stopped, or only descends.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, LaunchConfig, PushKernelArg};

use super::cpu::CellPath;
use super::search::Heuristic;
use crate::compute::cuda::{gpu_err, launch_err, CudaRuntime};
use crate::compute::kernels::COSTFIELD;
use crate::compute::readback::Readback;
use crate::compute::warmup::Module;
use crate::error::{Error, Result};
use crate::lee::grid::Grid;
use crate::sync::lock;

/// Tiles are TILE x TILE cells, a block of TILE x TILE threads each (kernels/costfield.cu).
const TILE: u32 = 32;
/// Launches between two reads of the "improved" flag (each read is a host round trip; a launch
/// with no front left returns at once).
/// cf_rounds's barrier and state words: arrivals, generation, the next round, and how the last
/// round ended (CF_GO_ON: more rounds to run, CF_SETTLED: the fixed point, CF_START_FINAL: the
/// start's cost is final).
const CF_BAR_WORDS: usize = 4;
const CF_NEXT_ROUND: usize = 2;
const CF_DECISION: usize = 3;
const CF_GO_ON: u32 = 0;
const CF_SETTLED: u32 = 1;
const CF_START_FINAL: u32 = 2;
/// The start of a field wanted whole (cf_rounds runs it to the fixed point).
const CF_NO_START: u64 = u64::MAX;
/// Rounds one launch may run before the host looks: bounds how long a cancelled plan's launch
/// holds the device. A round takes its slowest tile's time, up to about 150 us on nav2's maps
/// on an H200, so a launch ends within about 5 ms; a field of more rounds (113 on depot x10)
/// pays a host round trip per launch.
const ROUNDS_PER_LAUNCH: u32 = 32;
/// Slots of the descent's state (cf_descend) and its statuses.
const CF_STATUS: usize = 0;
const CF_LENGTH: usize = 1;
const CF_COST: usize = 2;
const CF_SLOTS: usize = 3;
/// The rounds' fronts: per round (r % 3) the least cost of an improved border cell that queued a
/// tile, then at 3 + r % 3 that cost plus its bound to the start.
const CF_FRONT_WORDS: usize = 6;
const CF_OK: u64 = 0;
const CF_BROKEN: u64 = 1;
const CF_UNREACHED: u64 = 2;
const CF_TOO_LONG: u64 = 3;
const CF_PENDING: u64 = 4;
/// Path cells the first descent has room for; a longer path grows the buffer once.
const PATH_CAP_START: usize = 1 << 16;
/// Path cells that come back with the bar and the descent's state, in the launch's one wait;
/// a longer path costs a second.
const SHORT_PATH: usize = 4096;
/// The dearest step into a cell the kernels take: its diagonal, enter * 141, stays in 32 bits.
const ENTER_MAX: u32 = u32::MAX / 141;
/// cf_descend's block (a define for the kernel: its window loops' stride), a thread for each
/// cell of its window.
const DESCEND_THREADS: u32 = 256;
/// cf_descend's window: DESCEND_WINDOW x DESCEND_WINDOW cells staged, and their successors
/// found, at a time. The walk takes a window's cells a dozen or a few dozen at a time whatever
/// its size, so a smaller window finds fewer successors it never uses: on the H200 (same runs,
/// bench-logs/2026-12-01-h200-costmap-descent-window.txt) 16 against 64 (the Lee descent's)
/// took tb3_sandbox's median plan from 0.079-0.095 to 0.074-0.080 ms, x3's from 0.23 to
/// 0.20-0.21 and x10's from 0.53 to 0.43-0.44, depot's from 0.21 to 0.20; 32 was 1-3 %
/// faster on the long paths of depot x3 and x10 and 3 % slower on tb3_sandbox x3, 8 no
/// faster on tb3_sandbox and slower elsewhere, 48 slower than 64.
const DESCEND_WINDOW: u32 = 16;
/// cf_passes' patches: a warp holds PASS_PATCH_WIDTH x (32 / PASS_PATCH_WIDTH) cells of a tile.
/// On the H200 (bench-history 54) 8 x 4 made tb3_sandbox's plans 14 % faster than a warp per
/// row; 4 x 8 was alike, 16 x 2 only a few per cent faster.
const PASS_PATCH_WIDTH: u32 = 8;
/// cf_passes' steps inside a warp between two of the block's barriers, at most: 4 and 8 were
/// alike, 16 slower.
const PASS_WARP_STEPS: u32 = 8;
/// The readback's words: the bar's, the descent's state (two words a slot), the short path.
const HEADER_WORDS: usize = CF_BAR_WORDS + 2 * CF_SLOTS + SHORT_PATH;

/// The constants above, for kernels/costfield.cu (NVRTC -D): one definition for both sides.
fn kernel_defines() -> [(&'static str, String); 21] {
    [
        ("CF_BAR_WORDS", CF_BAR_WORDS.to_string()),
        ("CF_NEXT_ROUND", CF_NEXT_ROUND.to_string()),
        ("CF_DECISION", CF_DECISION.to_string()),
        ("CF_GO_ON", format!("{CF_GO_ON}u")),
        ("CF_SETTLED", format!("{CF_SETTLED}u")),
        ("CF_START_FINAL", format!("{CF_START_FINAL}u")),
        ("CF_NO_START", format!("{CF_NO_START}ull")),
        ("CF_STATUS", CF_STATUS.to_string()),
        ("CF_LENGTH", CF_LENGTH.to_string()),
        ("CF_COST", CF_COST.to_string()),
        ("CF_SLOTS", CF_SLOTS.to_string()),
        ("CF_OK", format!("{CF_OK}ull")),
        ("CF_BROKEN", format!("{CF_BROKEN}ull")),
        ("CF_UNREACHED", format!("{CF_UNREACHED}ull")),
        ("CF_TOO_LONG", format!("{CF_TOO_LONG}ull")),
        ("CF_PENDING", format!("{CF_PENDING}ull")),
        ("CF_FRONT_WORDS", CF_FRONT_WORDS.to_string()),
        ("CF_DESCEND_THREADS", DESCEND_THREADS.to_string()),
        ("CF_DW", DESCEND_WINDOW.to_string()),
        ("CF_PW", PASS_PATCH_WIDTH.to_string()),
        ("CF_INNER", PASS_WARP_STEPS.to_string()),
    ]
}

/// The kernel module of costmap queries, for a node's start-up warm-up.
pub fn modules() -> Vec<Module> {
    vec![Module::new(COSTFIELD, &kernel_defines())]
}

/// A costmap on the device: its masks and step costs, and the field of the last goal.
pub struct DeviceCosts {
    rt: Arc<CudaRuntime>,
    width: u32,
    height: u32,
    ndirs: u32,
    masks: CudaSlice<u8>,
    enter: CudaSlice<u32>,
    /// The map's cheapest straight and diagonal steps: the rounds' bound on a path's cost
    /// from a cell to the start (kernels/costfield.cu, cf_bound).
    cheapest: (u64, u64),
    init: CudaFunction,
    rounds: CudaFunction,
    descend: CudaFunction,
    /// The last field computed, kept for descents: one plan at a time uses it.
    field: Mutex<Field>,
    /// Tile rounds the last field took (what the bench reports next to its time).
    last_rounds: AtomicU32,
}

/// The per-map buffers of the field and the descent, allocated on the first plan.
struct Field {
    /// The goal whose costs `cost` holds, as far as `rounds` says.
    goal: Option<(u32, u32)>,
    rounds: Rounds,
    buffers: Option<FieldBuffers>,
    /// Page-locked: the bar, the state and a short path come back in one wait. Taken with
    /// the map (a spare from the readback pool where one is free: allocating page-locked
    /// memory took the H200's host about 2 ms, which the map's first plan paid).
    header: Readback,
}

/// How far a goal's field has gone: final everywhere once `complete`, else final at least on
/// every least-cost path from the last plan's start (the rounds stopped there and go on from
/// `next` for a later start).
struct Rounds {
    complete: bool,
    next: u32,
    /// The start whose bounds the last round's bounded front holds (CF_NO_START: none).
    bounded: u64,
}

impl Rounds {
    /// A field just initialised: round 1 next.
    fn first() -> Rounds {
        Rounds {
            complete: false,
            next: 1,
            bounded: CF_NO_START,
        }
    }
}

struct FieldBuffers {
    cost: CudaSlice<u64>,
    /// The rounds' three tile lists, their lengths, per tile the last round it was queued
    /// for, and the barrier and state words (kernels/costfield.cu).
    lists: CudaSlice<u32>,
    counts: CudaSlice<u32>,
    queued: CudaSlice<u32>,
    bar: CudaSlice<u32>,
    /// Per round (r % 3): the least cost an improved border cell that queued a tile took in it,
    /// and at 3 + r % 3 the least such cost plus the cell's bound to the start.
    front: CudaSlice<u64>,
    path: CudaSlice<u32>,
    path_cap: usize,
}

/// What one wait brings back after a launch of the rounds and, with a start, the descent
/// queued behind it.
struct Header {
    decision: u32,
    next_round: u32,
    /// The descent's state slots (CF_STATUS, CF_LENGTH, CF_COST), when it was queued.
    state: Option<[u64; CF_SLOTS]>,
    /// The path's cells, when the descent found one of fewer than [`SHORT_PATH`].
    cells: Option<Vec<u32>>,
}

/// Device buffers free themselves on the dropping thread, where cudarc does not make the
/// context current.
impl Drop for DeviceCosts {
    fn drop(&mut self) {
        let _ = self.rt.context().bind_to_thread();
    }
}

impl DeviceCosts {
    /// Uploads the grid's masks and the cells' straight step costs; `bound` is the map's
    /// lower bound on a path's cost between two cells.
    pub fn upload(
        rt: &Arc<CudaRuntime>,
        grid: &Grid,
        enter: &[u32],
        bound: &Heuristic,
    ) -> Result<DeviceCosts> {
        // The kernels take a diagonal step's cost in 32 bits (kernels/costfield.cu,
        // step_cost).
        if let Some(e) = enter.iter().find(|&&e| e > ENTER_MAX) {
            return Err(Error::invalid(
                "enter",
                format!("a step cost of {e} is above {ENTER_MAX}"),
            ));
        }
        let defines = kernel_defines();
        let f = |name: &str| rt.function_with(&COSTFIELD, &defines, name);
        Ok(DeviceCosts {
            rt: rt.clone(),
            width: grid.width,
            height: grid.height,
            ndirs: grid.connectivity.directions() as u32,
            masks: rt.upload(&grid.masks)?,
            enter: rt.upload(enter)?,
            cheapest: bound.steps(),
            init: f("cf_init")?,
            rounds: f("cf_rounds")?,
            descend: f("cf_descend")?,
            field: Mutex::new(Field {
                goal: None,
                rounds: Rounds::first(),
                buffers: None,
                header: Readback::take(rt.context(), HEADER_WORDS)?,
            }),
            last_rounds: AtomicU32::new(0),
        })
    }

    fn cells(&self) -> usize {
        self.width as usize * self.height as usize
    }

    fn tiles(&self) -> (u32, u32) {
        (self.width.div_ceil(TILE), self.height.div_ceil(TILE))
    }

    /// Tile rounds the last computed field took.
    pub fn last_rounds(&self) -> u32 {
        self.last_rounds.load(Ordering::Relaxed)
    }

    /// The least total cost from every cell to `goal` (u64::MAX where unreached), row-major.
    pub fn field(&self, goal: (u32, u32)) -> Result<Vec<u64>> {
        let mut f = lock(&self.field);
        self.field_on_device(&mut f, goal, None)?;
        let b = f
            .buffers
            .as_ref()
            .ok_or_else(|| Error::Gpu("cost field buffers missing".into()))?;
        self.rt.download(&b.cost, self.cells())
    }

    /// The least-cost path from `start` to `goal` (None: start unreached) and whether the
    /// field of the plan before (same goal) answered it.
    pub fn plan(&self, goal: (u32, u32), start: (u32, u32)) -> Result<(Option<CellPath>, bool)> {
        let mut f = lock(&self.field);
        let reused = f.goal == Some(goal);
        let header = self.field_on_device(&mut f, goal, Some(start))?;
        Ok((self.descend(&mut f, header, goal, start)?, reused))
    }

    /// The field for `goal` in the buffers, final at least on the least-cost paths from
    /// `start` (with no start: everywhere), computed as far as that needs unless it is already
    /// there; with a start, the descent queued behind the last launch and its header.
    fn field_on_device(
        &self,
        f: &mut Field,
        goal: (u32, u32),
        start: Option<(u32, u32)>,
    ) -> Result<Option<Header>> {
        if f.buffers.is_none() {
            let ntiles = {
                let (x, y) = self.tiles();
                x as usize * y as usize
            };
            // SAFETY: cf_init writes every cost, queued flag, count and barrier word before
            // cf_rounds reads them, and each list entry is written before its count covers
            // it; the descent writes the path before it reports it.
            f.buffers = Some(unsafe {
                FieldBuffers {
                    cost: self.rt.alloc(self.cells())?,
                    lists: self.rt.alloc(3 * ntiles)?,
                    counts: self.rt.alloc(3)?,
                    queued: self.rt.alloc(ntiles)?,
                    bar: self.rt.alloc(CF_BAR_WORDS)?,
                    front: self.rt.alloc(CF_FRONT_WORDS)?,
                    path: self.rt.alloc(PATH_CAP_START.min(self.cells().max(1)))?,
                    path_cap: PATH_CAP_START.min(self.cells().max(1)),
                }
            });
        }
        let Field {
            goal: at,
            rounds,
            buffers,
            header,
        } = f;
        let b = buffers
            .as_mut()
            .ok_or_else(|| Error::Gpu("cost field buffers missing".into()))?;
        let start = start.map(|(x, y)| y as u64 * self.width as u64 + x as u64);
        if *at != Some(goal) {
            // A field cut short by an error must not be taken for the goal's.
            *at = None;
            self.init(b, goal)?;
            *rounds = Rounds::first();
            self.last_rounds.store(0, Ordering::Relaxed);
            let header = self.run(b, header, goal, start, rounds)?;
            // Nor one that settled after its plan was cancelled.
            crate::cancel::checkpoint()?;
            *at = Some(goal);
            Ok(header)
        } else if !rounds.complete {
            // The rounds go on from where the last start's cost was final (a valid state:
            // costs only fall), at once done where this start's already is. A run cut short
            // leaves its round and bound unrecorded: the field is then made again.
            *at = None;
            self.last_rounds.store(0, Ordering::Relaxed);
            let header = self.run(b, header, goal, start, rounds)?;
            *at = Some(goal);
            Ok(header)
        } else {
            // The whole field is there (its bar says settled): only the descent.
            start
                .map(|s| {
                    self.launch_descend(b, header, goal, s)?;
                    self.fetch(b, header, true)
                })
                .transpose()
        }
    }

    /// cf_init: every cost unreached but the goal's, round 1's tiles queued.
    fn init(&self, b: &mut FieldBuffers, goal: (u32, u32)) -> Result<()> {
        let rt = &self.rt;
        let n = self.cells();
        let (tiles_x, tiles_y) = self.tiles();
        let ntiles = tiles_x * tiles_y;
        let n64 = n as u64;
        let goal_idx = goal.1 as u64 * self.width as u64 + goal.0 as u64;
        let goal_tile = (goal.1 / TILE) * tiles_x + goal.0 / TILE;
        let mut l = rt.stream().launch_builder(&self.init);
        l.arg(&mut b.cost)
            .arg(&n64)
            .arg(&goal_idx)
            .arg(&mut b.lists)
            .arg(&mut b.counts)
            .arg(&mut b.queued)
            .arg(&tiles_x)
            .arg(&tiles_y)
            .arg(&goal_tile)
            .arg(&mut b.bar)
            .arg(&mut b.front);
        // SAFETY: cf_init(cost, n, goal, lists, counts, queued, tiles_x, tiles_y, goal_tile,
        // bar, front): writes cost[0..n), queued[0..ntiles), counts[0..3), at most 9 entries of
        // list 1 (from lists[ntiles]; ntiles >= that many when they exist), bar[0..CF_BAR_WORDS)
        // and front[0..CF_FRONT_WORDS), each allocated so.
        unsafe { l.launch(rt.grid_stride(n.max(ntiles as usize), 256)) }
            .map_err(launch_err("cf_init"))?;
        Ok(())
    }

    /// Launches of cf_rounds from `rounds.next` until the fixed point (`complete`) or, with a
    /// start, until its cost is final, each followed by the start's descent (which runs only
    /// once the field is ready for it) and one wait; adds the rounds run to `last_rounds`.
    /// Returns the last wait's header (with a start, the descent's).
    fn run(
        &self,
        b: &mut FieldBuffers,
        readback: &mut Readback,
        goal: (u32, u32),
        start: Option<u64>,
        rounds: &mut Rounds,
    ) -> Result<Option<Header>> {
        let rt = &self.rt;
        let (w, h) = (self.width, self.height);
        let (tiles_x, tiles_y) = self.tiles();
        let ntiles = tiles_x * tiles_y;
        let stream = rt.stream();
        let launch = self.rounds_launch(ntiles)?;
        // A round settles at least the tiles the front has crossed for good, but a winding
        // corridor enters one tile many times: the bound only stops a kernel that never
        // settles. A launch runs at most ROUNDS_PER_LAUNCH rounds before the host looks (and
        // a cancelled plan stops).
        let max_rounds = (ntiles as u64 + 2) * 32;
        let start_word = start.unwrap_or(CF_NO_START);
        loop {
            let first = rounds.next;
            let mut l = stream.launch_builder(&self.rounds);
            l.arg(&self.masks)
                .arg(&self.enter)
                .arg(&mut b.cost)
                .arg(&w)
                .arg(&h)
                .arg(&self.ndirs)
                .arg(&tiles_x)
                .arg(&tiles_y)
                .arg(&mut b.lists)
                .arg(&mut b.counts)
                .arg(&mut b.queued)
                .arg(&mut b.bar)
                .arg(&mut b.front)
                .arg(&start_word)
                .arg(&rounds.bounded)
                .arg(&self.cheapest.0)
                .arg(&self.cheapest.1)
                .arg(&first)
                .arg(&ROUNDS_PER_LAUNCH);
            // SAFETY: cf_rounds(masks, enter, cost, w, h, ndirs, tiles_x, tiles_y, lists,
            // counts, queued, bar, front, start, bounded, straight, diagonal, first_round,
            // max_rounds): reads masks/enter/cost within w x h and cost[start] (a cell of the
            // grid, or none), writes cost cells of the tiles it runs, the lists, counts and
            // queued flags (sized for every tile), bar and front[0..CF_FRONT_WORDS); blocks <=
            // the occupancy bound, as a cooperative launch requires.
            unsafe { l.launch_cooperative(launch) }.map_err(launch_err("cf_rounds"))?;
            if let Some(s) = start {
                self.launch_descend(b, readback, goal, s)?;
            }
            let header = self.fetch(b, readback, start.is_some())?;
            rounds.next = header.next_round;
            // Rounds run leave fronts bounded to this launch's start.
            if rounds.next > first {
                rounds.bounded = start_word;
            }
            self.last_rounds
                .fetch_add(rounds.next - first, Ordering::Relaxed);
            match header.decision {
                CF_SETTLED => {
                    rounds.complete = true;
                    return Ok(Some(header).filter(|_| start.is_some()));
                }
                CF_START_FINAL => return Ok(Some(header)),
                CF_GO_ON => {}
                other => return Err(Error::Gpu(format!("cf_rounds: decision {other}"))),
            }
            // A cancelled plan stops between launches (the field is then not taken for the
            // goal's: the caller leaves the goal unset).
            crate::cancel::checkpoint()?;
            if rounds.next as u64 > max_rounds {
                return Err(Error::Gpu(format!(
                    "cost field did not settle within {max_rounds} rounds"
                )));
            }
        }
    }

    /// The cooperative launch of cf_rounds: a thread per cell of a tile, as many blocks as are
    /// resident at once (its grid barrier needs them all), no more than there are tiles.
    fn rounds_launch(&self, ntiles: u32) -> Result<LaunchConfig> {
        let threads = TILE * TILE;
        let per_sm = self
            .rounds
            .occupancy_max_active_blocks_per_multiprocessor(threads, 0, None)
            .map_err(gpu_err)?;
        let resident = per_sm * self.rt.info().multiprocessors.max(1) as u32;
        if resident == 0 {
            return Err(Error::Gpu(
                "cf_rounds cannot be resident on this device".into(),
            ));
        }
        Ok(LaunchConfig {
            grid_dim: (resident.min(ntiles).max(1), 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 0,
        })
    }

    /// The path from `start` down the field in `f` (its goal `goal`), found on the device by
    /// the descent whose `header` came back with the field.
    fn descend(
        &self,
        f: &mut Field,
        header: Option<Header>,
        goal: (u32, u32),
        start: (u32, u32),
    ) -> Result<Option<CellPath>> {
        let Field {
            buffers,
            header: readback,
            ..
        } = f;
        let b = buffers
            .as_mut()
            .ok_or_else(|| Error::Gpu("cost field buffers missing".into()))?;
        let s = start.1 as u64 * self.width as u64 + start.0 as u64;
        let mut header = header.ok_or_else(|| Error::Gpu("cf_descend: not queued".into()))?;
        let mut state = header
            .state
            .ok_or_else(|| Error::Gpu("cf_descend: no state".into()))?;
        if state[CF_STATUS] == CF_TOO_LONG {
            // No cell repeats on a path whose costs strictly fall: the grid's cells bound it.
            let cap = self.cells().max(1);
            // SAFETY: the descent writes path[0..=length] before it reports success.
            b.path = unsafe { self.rt.alloc::<u32>(cap) }?;
            b.path_cap = cap;
            self.launch_descend(b, readback, goal, s)?;
            header = self.fetch(b, readback, true)?;
            state = header
                .state
                .ok_or_else(|| Error::Gpu("cf_descend: no state".into()))?;
        }
        match state[CF_STATUS] {
            CF_OK => {
                let cells = match header.cells {
                    Some(cells) => cells,
                    None => self.rt.download(&b.path, state[CF_LENGTH] as usize + 1)?,
                };
                let w = self.width;
                Ok(Some((
                    cells.into_iter().map(|c| (c % w, c / w)).collect(),
                    state[CF_COST],
                )))
            }
            CF_UNREACHED => Ok(None),
            CF_BROKEN => Err(Error::Gpu("cf_descend: the field has no descent".into())),
            CF_PENDING => Err(Error::Gpu("cf_descend: ran before its field".into())),
            other => Err(Error::Gpu(format!("cf_descend: status {other}"))),
        }
    }

    /// Queues cf_descend from cell `s` behind the stream's work; it writes the header
    /// ([`Self::fetch`]'s words) into `readback` itself.
    fn launch_descend(
        &self,
        b: &mut FieldBuffers,
        readback: &mut Readback,
        goal: (u32, u32),
        s: u64,
    ) -> Result<()> {
        let g = goal.1 as u64 * self.width as u64 + goal.0 as u64;
        let cap = b.path_cap as u32;
        let short = b.path_cap.min(SHORT_PATH) as u32;
        let out = readback.device_ptr(self.rt.context())?;
        let stream = self.rt.stream();
        let mut l = stream.launch_builder(&self.descend);
        l.arg(&self.masks)
            .arg(&self.enter)
            .arg(&b.cost)
            .arg(&self.width)
            .arg(&self.height)
            .arg(&self.ndirs)
            .arg(&s)
            .arg(&g)
            .arg(&mut b.path)
            .arg(&cap)
            .arg(&b.bar)
            .arg(&out)
            .arg(&short);
        // SAFETY: cf_descend(masks, enter, cost, w, h, ndirs, start, goal, path, cap, bar, out,
        // short_cap): one block; reads within w x h and bar[0..CF_BAR_WORDS), writes
        // path[0..cap) (checked) and out's HEADER_WORDS at most (the bar's, the state's and
        // fewer than short_cap <= SHORT_PATH cells), a mapped buffer of HEADER_WORDS that the
        // field holds.
        unsafe {
            l.launch(LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (DESCEND_THREADS, 1, 1),
                shared_mem_bytes: 0,
            })
        }
        .map_err(launch_err("cf_descend"))?;
        Ok(())
    }

    /// The bar, and after a descent (`descended`) its state and, for a path of fewer than
    /// [`SHORT_PATH`] cells, the path, after one wait: a descent writes them into the mapped
    /// page-locked buffer itself (three copies queued behind it cost a plan 5-6 us on an
    /// H200), the bar alone is copied.
    fn fetch(&self, b: &FieldBuffers, readback: &mut Readback, descended: bool) -> Result<Header> {
        let short = if descended {
            b.path_cap.min(SHORT_PATH)
        } else {
            0
        };
        let stream = self.rt.stream();
        let state_words = if descended { 2 * CF_SLOTS } else { 0 };
        let words = if descended {
            // cf_descend wrote them into the mapped buffer: only the wait.
            readback.wait(stream, CF_BAR_WORDS + state_words + short)?
        } else {
            let (bp, _read_bar) = b.bar.device_ptr(stream);
            // SAFETY: `bar` holds CF_BAR_WORDS words and is borrowed here, not freed meanwhile.
            unsafe { readback.fetch(stream, &[(bp, CF_BAR_WORDS)]) }?
        };
        let (bar, rest) = words.split_at(CF_BAR_WORDS);
        let (state, cells) = rest.split_at(state_words);
        let state = descended.then(|| {
            std::array::from_fn(|i| state[2 * i] as u64 | (state[2 * i + 1] as u64) << 32)
        });
        let cells = state.and_then(|st: [u64; CF_SLOTS]| {
            let len = st[CF_LENGTH] as usize;
            (st[CF_STATUS] == CF_OK && len < short).then(|| cells[..=len].to_vec())
        });
        Ok(Header {
            decision: bar[CF_DECISION],
            next_round: bar[CF_NEXT_ROUND],
            state,
            cells,
        })
    }
}
