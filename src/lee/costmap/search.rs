//! The CPU backend's least-cost search: A* from the goal towards the start over the small
//! integer step costs, with a bucket queue (Dial's) keyed by cost + heuristic (the octile
//! distance at the cheapest step costs, which never overestimates and is consistent), stopped
//! once every cell that could lie on a least-cost path is settled. Cells are stamped with
//! the search they belong to, so a new query costs nothing per cell of the map: it touches
//! only the cells its wave reaches. A plan asked again (same goal and start, as nav2 replans
//! while the robot stands) only descends.
//!
//! The path is the reference's ([`super::cpu::descend`]'s tie rule) exactly: every cell with
//! cost + heuristic at most the start's cost C is settled with its least cost, and every cell
//! on a least-cost path from the start has cost + heuristic <= C (the heuristic is below the
//! rest of that path's cost); a cell the descent accepts (`cost[n] + step = cost[c]`, with
//! `cost[n]` settled or a tentative value some path achieves) holds its least cost, so the
//! descent over this partial field takes the same steps as over the whole one.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::cpu::{step, UNREACHED_COST};
use crate::error::Result;
use crate::lee::grid::{Grid, DIRECTIONS};

/// Above this largest step cost the ring of buckets would be mostly empty: a binary heap
/// takes over (only for cost_factor values far beyond nav2's).
const MAX_BUCKETS: u64 = 1 << 16;

/// Pops between two looks at the cancel flag: about 100 µs of work.
const POPS_PER_CHECK: u32 = 1 << 14;

/// The cells waiting to be settled, by tentative cost.
enum Queue {
    /// Dial's ring: bucket `cost % len` holds the cells of that tentative cost; every cost in
    /// the queue lies in `level..=level + max_step`, so one ring of `max_step + 1` buckets
    /// holds them apart.
    Buckets {
        ring: Vec<Vec<u32>>,
        level: u64,
        len: usize,
    },
    Heap(BinaryHeap<Reverse<(u64, u32)>>),
}

impl Queue {
    fn new(max_step: u64) -> Queue {
        if max_step < MAX_BUCKETS {
            Queue::Buckets {
                ring: vec![Vec::new(); max_step as usize + 1],
                level: 0,
                len: 0,
            }
        } else {
            Queue::Heap(BinaryHeap::new())
        }
    }

    /// Empties the queue for keys from `first` on.
    fn clear(&mut self, first: u64) {
        match self {
            Queue::Buckets { ring, level, len } => {
                ring.iter_mut().for_each(Vec::clear);
                *level = first;
                *len = 0;
            }
            Queue::Heap(h) => h.clear(),
        }
    }

    fn push(&mut self, cost: u64, cell: u32) {
        match self {
            Queue::Buckets { ring, len, .. } => {
                let n = ring.len() as u64;
                ring[(cost % n) as usize].push(cell);
                *len += 1;
            }
            Queue::Heap(h) => h.push(Reverse((cost, cell))),
        }
    }

    /// The cell of least tentative cost, with that cost.
    fn pop(&mut self) -> Option<(u64, u32)> {
        match self {
            Queue::Buckets { ring, level, len } => {
                if *len == 0 {
                    return None;
                }
                let n = ring.len() as u64;
                loop {
                    if let Some(c) = ring[(*level % n) as usize].pop() {
                        *len -= 1;
                        return Some((*level, c));
                    }
                    *level += 1;
                }
            }
            Queue::Heap(h) => h.pop().map(|Reverse(e)| e),
        }
    }
}

/// A lower bound on the cost between two cells: the octile (8-connected) or Manhattan
/// distance at the cheapest straight and diagonal steps any cell costs. Consistent: a move
/// changes it by no more than that move's least cost.
#[derive(Debug, Clone, Copy)]
pub struct Heuristic {
    /// 4 or 8: the moves it bounds.
    pub directions: usize,
    straight: u64,
    diagonal: u64,
}

impl Heuristic {
    /// For a grid of `directions` moves whose cheapest straight step costs `min_enter`.
    pub fn new(directions: usize, min_enter: u32) -> Heuristic {
        Heuristic {
            directions,
            straight: step(0, min_enter),
            diagonal: step(4, min_enter),
        }
    }

    /// The cheapest straight and diagonal steps it counts in.
    pub fn steps(&self) -> (u64, u64) {
        (self.straight, self.diagonal)
    }

    /// The bound between cells `a` and `b` given as (x, y).
    pub fn between(&self, a: (u32, u32), b: (u32, u32)) -> u64 {
        let dx = a.0.abs_diff(b.0) as u64;
        let dy = a.1.abs_diff(b.1) as u64;
        if self.directions > 4 {
            let (lo, hi) = (dx.min(dy), dx.max(dy));
            lo * self.diagonal + (hi - lo) * self.straight
        } else {
            (dx + dy) * self.straight
        }
    }

    fn to(&self, a: u32, width: u32, b: u32) -> u64 {
        self.between((a % width, a / width), (b % width, b / width))
    }
}

/// A cell's state word: the search it belongs to (15 bits), whether it is still open (not
/// settled: 1 bit) and its cost (48 bits), so that one load tells whether a move improves
/// it and one compare whether a queue entry is current.
const COST_BITS: u32 = 48;
const COST: u64 = (1 << COST_BITS) - 1;
const OPEN: u64 = 1 << COST_BITS;
const TAG_SHIFT: u32 = COST_BITS + 1;
/// Epochs run 1..=MAX_EPOCH (0: never reached), then the states are cleared once.
const MAX_EPOCH: u64 = (1 << (64 - TAG_SHIFT)) - 1;

/// What a search reads of each cell, in one word: its straight step cost (below 2^24, as
/// [`super::config::MAX_NEUTRAL_COST`] and [`super::config::MAX_COST_FACTOR`] bound it) and
/// the grid's move mask above it.
pub fn cell_words(grid: &Grid, enter: &[u32]) -> Vec<u32> {
    grid.masks
        .iter()
        .zip(enter)
        .map(|(&m, &e)| (e & 0xff_ffff) | (m as u32) << 24)
        .collect()
}

/// One goal's search, kept between queries.
pub struct GoalSearch {
    goal: Option<u32>,
    /// The goal and start of the last search that ran to its end.
    ends: Option<(u32, u32)>,
    epoch: u64,
    state: Vec<u64>,
    queue: Queue,
}

impl GoalSearch {
    /// Whether a search can hold every cost of a grid of `cells` cells whose largest
    /// straight step cost is `max_enter` (48 bits: always, but for absurd step costs on
    /// huge grids).
    pub fn fits(cells: usize, max_enter: u32) -> bool {
        (cells as u128 + 1) * (step(4, max_enter) as u128) < COST as u128
    }

    /// A search over a grid of `cells` cells whose largest straight step cost is `max_enter`.
    pub fn new(cells: usize, max_enter: u32) -> GoalSearch {
        GoalSearch {
            goal: None,
            ends: None,
            epoch: 0,
            state: vec![0; cells],
            // A key grows by at most a step plus the heuristic's largest change over a move.
            queue: Queue::new(2 * step(4, max_enter).max(step(0, max_enter))),
        }
    }

    /// The goal of the last search started.
    pub fn goal(&self) -> Option<u32> {
        self.goal
    }

    fn tag(&self) -> u64 {
        self.epoch << TAG_SHIFT
    }

    fn settled(&self, c: usize) -> bool {
        self.state[c] & !COST == self.tag()
    }

    /// The cost of cell `c` as far as the search has come: least once settled, a cost some
    /// path achieves once reached, [`UNREACHED_COST`] before.
    pub fn cost(&self, c: usize) -> u64 {
        let s = self.state[c];
        if s >> TAG_SHIFT == self.epoch {
            s & COST
        } else {
            UNREACHED_COST
        }
    }

    /// Restarts from `goal` (a cell index, `h` from the start): no cell is reached but the
    /// goal.
    fn restart(&mut self, goal: u32, h: u64) {
        self.epoch += 1;
        if self.epoch > MAX_EPOCH {
            // Once in 2^15 goals: the old tags would read as this search's.
            self.state.iter_mut().for_each(|s| *s = 0);
            self.epoch = 1;
        }
        self.queue.clear(h);
        self.goal = Some(goal);
        self.state[goal as usize] = self.tag() | OPEN;
        self.queue.push(h, goal);
    }

    /// Searches from `goal` until every cell that could lie on a least-cost path from `start`
    /// is settled (or every reachable cell is, when `start` is not reachable), over the
    /// grid's [`cell_words`]; nothing to do when the last search had the same ends (then
    /// `Ok(true)`: the field is reused). Looks at the cancel flag of the calling scope before it
    /// starts and every `POPS_PER_CHECK` cells; a search cut short keeps no ends.
    pub fn settle(
        &mut self,
        width: u32,
        heuristic: Heuristic,
        cells: &[u32],
        goal: u32,
        start: u32,
    ) -> Result<bool> {
        if self.ends == Some((goal, start)) {
            return Ok(true);
        }
        // A plan cancelled before it began does no work, however few pops its search needs.
        crate::cancel::checkpoint()?;
        self.restart(goal, heuristic.to(goal, width, start));
        self.ends = None;
        let s = start as usize;
        let (sx, sy) = (start % width, start / width);
        let w = width as isize;
        let offsets: [isize; 8] =
            std::array::from_fn(|k| DIRECTIONS[k].1 as isize * w + DIRECTIONS[k].0 as isize);
        let tag = self.tag();
        let (state, queue) = (&mut self.state[..], &mut self.queue);
        let mut until_check = POPS_PER_CHECK;
        let mut least = None;
        while let Some((key, c)) = queue.pop() {
            if least.is_some_and(|l| key > l) {
                // Every cell left has cost + heuristic above the start's cost.
                break;
            }
            let ci = c as usize;
            let (x, y) = (c % width, c / width);
            let f = key - heuristic.between((x, y), (sx, sy));
            // A cell is queued once per improvement: only the entry of its current cost
            // while it is open counts.
            if state[ci] != tag | OPEN | f {
                continue;
            }
            state[ci] = tag | f;
            if ci == s {
                least = Some(f);
            }
            let word = cells[ci];
            let enter = word & 0xff_ffff;
            // Moves are symmetric: c's allowed neighbour n reaches c by the opposite move,
            // entering c.
            let costs = [f + step(0, enter), f + step(4, enter)];
            let mask = word >> 24;
            for (k, off) in offsets.iter().enumerate().take(heuristic.directions) {
                if mask & (1 << k) == 0 {
                    continue;
                }
                let n = ci.wrapping_add_signed(*off);
                let cand = costs[k / 4];
                let sn = state[n];
                // Unreached (another tag), or open at a higher cost: a settled state has no
                // OPEN bit, so no candidate is below it.
                if sn & !(COST | OPEN) != tag || cand | OPEN < sn & (COST | OPEN) {
                    state[n] = tag | OPEN | cand;
                    let (dx, dy) = DIRECTIONS[k];
                    let to = ((x as i64 + dx as i64) as u32, (y as i64 + dy as i64) as u32);
                    queue.push(cand + heuristic.between(to, (sx, sy)), n as u32);
                }
            }
            until_check -= 1;
            if until_check == 0 {
                until_check = POPS_PER_CHECK;
                crate::cancel::checkpoint()?;
            }
        }
        self.ends = Some((goal, start));
        Ok(false)
    }

    /// The cells from `start` to the goal down the search's costs (the reference's tie
    /// rule), after [`GoalSearch::settle`] for that start; `None` when it was not reached.
    pub fn descend(&self, grid: &Grid, enter: &[u32], start: u32) -> Option<Vec<(u32, u32)>> {
        if !self.settled(start as usize) {
            return None;
        }
        super::cpu::descend_by(grid, enter, start as usize, |c| self.cost(c))
    }
}
