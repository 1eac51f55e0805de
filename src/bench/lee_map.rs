//! `bench lee --map`: a real map_server map, upscaled K x (nearest neighbour), N seeded random
//! start/goal pairs in its largest free component (under the run's connectivity: 4 or 8
//! neighbours, the planner node's default for the cost model unless asked), planned on the CPU reference
//! and on CUDA in the chosen cost model; every CUDA answer checked equal to the CPU's (path and
//! length or cost) before the row is printed. Times per query are field + path, medians over
//! the pairs, each pair's goal new to the planner (a repeated
//! goal would only descend the field it left).

use std::collections::VecDeque;
use std::fmt::Write;
use std::time::Instant;

use super::median;
use crate::compute::Backend;
use crate::error::{Error, Result};
use crate::lee::costmap::{CostModel, CostParams};
use crate::lee::{Connectivity, Grid, RobotConfig, RobotPlanner, DIRECTIONS};
use crate::rng::XorShift;

/// The largest side `--sizes` takes: 32768² cells, 2^30, above any robot's map and within a
/// single device's memory for every model.
pub const MAX_SIDE: u32 = 32_768;

/// The most start/goal pairs a run takes (each is planned on every backend).
pub const MAX_PAIRS: usize = 100_000;

pub struct MapOptions {
    pub map: std::path::PathBuf,
    pub scale: u32,
    pub pairs: usize,
    pub cost_model: CostModel,
    pub connectivity: Connectivity,
    pub robot_radius: f64,
    pub seed: u64,
}

/// The cells of the largest component of free cells, neighbours as `g`'s connectivity has them
/// (the first four of [`DIRECTIONS`] are the axis moves).
fn largest_component(g: &Grid) -> Vec<usize> {
    let moves = &DIRECTIONS[..g.connectivity.directions()];
    let (w, h) = (g.width as i64, g.height as i64);
    let mut seen = vec![false; g.len()];
    let mut best = Vec::new();
    for s in 0..g.len() {
        if seen[s] || !g.free[s] {
            continue;
        }
        seen[s] = true;
        let mut comp = vec![s];
        let mut q = VecDeque::from([s]);
        while let Some(c) = q.pop_front() {
            let (x, y) = (c as i64 % w, c as i64 / w);
            for &(dx, dy) in moves {
                let (nx, ny) = (x + dx as i64, y + dy as i64);
                if nx < 0 || ny < 0 || nx >= w || ny >= h {
                    continue;
                }
                let n = (ny * w + nx) as usize;
                if g.free[n] && !seen[n] {
                    seen[n] = true;
                    comp.push(n);
                    q.push_back(n);
                }
            }
        }
        if comp.len() > best.len() {
            best = comp;
        }
    }
    best
}

/// One plan's answer, comparable across backends: (path, length or cost).
type Answer = (Vec<(u32, u32)>, Option<u64>);

fn answer(p: &RobotPlanner, s: (i64, i64), g: (i64, i64)) -> Result<Answer> {
    let r = p.plan(s, g, false)?;
    Ok((r.path, r.cost))
}

pub fn run(backend: &Backend, o: &MapOptions) -> Result<String> {
    if o.pairs > MAX_PAIRS {
        return Err(Error::invalid(
            "--pairs",
            format!("{} is above {MAX_PAIRS} pairs", o.pairs),
        ));
    }
    let m = crate::lee::io::map_yaml::load(&o.map)?;
    let k = o.scale.max(1);
    let side = |n: u32| n.checked_mul(k).filter(|&s| s <= MAX_SIDE);
    let (Some(w), Some(h)) = (side(m.width), side(m.height)) else {
        return Err(Error::invalid(
            "--scale",
            format!(
                "{k} makes the {} x {} map wider or taller than {} cells",
                m.width, m.height, MAX_SIDE
            ),
        ));
    };
    let data: Vec<i8> = (0..h as usize * w as usize)
        .map(|i| {
            let (x, y) = (i % w as usize, i / w as usize);
            m.data[(y / k as usize) * m.width as usize + x / k as usize]
        })
        .collect();
    let res = m.meta.resolution / k as f64;
    let grid = Grid::from_occupancy(w, h, &data, 65, false, o.connectivity)?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "map {} x{k}: {w} x {h} = {} cells at {res} m, {}-connected, {:?}, robot_radius {} m; {} pairs",
        o.map.display(),
        w as u64 * h as u64,
        o.connectivity.directions(),
        o.cost_model,
        o.robot_radius,
        o.pairs
    );
    let _ = writeln!(
        out,
        "| implementation | map setup ms (once per map) | field + path ms, median per query | same goal again: path ms | check |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---|");
    let config = RobotConfig {
        cost_model: o.cost_model,
        costs: CostParams {
            robot_radius: o.robot_radius,
            inflation_radius: o.robot_radius.max(0.55),
            ..CostParams::default()
        },
        ..RobotConfig::default()
    };
    let setup = |b: &Backend| RobotPlanner::new(b, grid.clone(), res, &config);
    let s = Instant::now();
    let cpu = setup(&Backend::Cpu)?;
    let cpu_setup = s.elapsed().as_secs_f64() * 1e3;
    let free_grid = cpu.grid();
    let comp = largest_component(free_grid);
    if comp.is_empty() {
        return Err(Error::invalid("--map", "no free cell at this robot radius"));
    }
    let mut rng = XorShift::new(o.seed);
    let cell = |i: usize| ((i as u32 % w) as i64, (i as u32 / w) as i64);
    let pairs: Vec<((i64, i64), (i64, i64))> = (0..o.pairs.max(1))
        .map(|_| {
            let a = comp[(rng.next_u64() % comp.len() as u64) as usize];
            let b = comp[(rng.next_u64() % comp.len() as u64) as usize];
            (cell(a), cell(b))
        })
        .collect();
    let mut want = Vec::new();
    let mut cpu_times = Vec::new();
    let mut cpu_again = Vec::new();
    for &(a, b) in &pairs {
        let s = Instant::now();
        want.push(answer(&cpu, a, b)?);

        cpu_times.push(s.elapsed().as_secs_f64() * 1e3);
        let s = Instant::now();
        answer(&cpu, a, b)?;
        cpu_again.push(s.elapsed().as_secs_f64() * 1e3);
    }
    let _ = writeln!(
        out,
        "| cpu | {cpu_setup:.1} | {:.3} | {:.3} | (the answers checked against) |",
        median(cpu_times),
        median(cpu_again)
    );
    let found: Vec<f64> = want
        .iter()
        .filter(|(path, _)| !path.is_empty())
        .map(|(path, _)| metres(path, res))
        .collect();
    let mut footer = format!(
        "paths found: {} of {}; grid path length, median: {:.3} m",
        found.len(),
        pairs.len(),
        median(found)
    );
    // What the node sends out in costmap mode (path: auto): the smooth path, made on the CPU
    // from the grid path whichever backend planned it.
    if o.cost_model == CostModel::Costmap {
        let (mut lengths, mut times, mut per_pair) = (Vec::new(), Vec::new(), Vec::new());
        for (path, _) in &want {
            if path.is_empty() {
                per_pair.push("-".to_string());
                continue;
            }
            let s = Instant::now();
            let smooth = cpu.smooth(path).unwrap_or_default();
            times.push(s.elapsed().as_secs_f64() * 1e3);
            let m = crate::lee::costmap::smooth::length(&smooth) * res;
            lengths.push(m);
            per_pair.push(format!("{m:.4}"));
        }
        let _ = write!(
            footer,
            "; smooth path length, median: {:.3} m (smoothing, median: {:.3} ms)",
            median(lengths),
            median(times)
        );
        // Pair by pair, in the pairs' order (scripts/race-navfn sets each beside NavFn's).
        let _ = write!(
            footer,
            "\nsmooth path m per pair (-: none): {}",
            per_pair.join(" ")
        );
    }
    if let Backend::Cuda(_) = backend {
        let dev = setup(backend)?; // warm-up: kernels compile
        drop(dev);
        let s = Instant::now();
        let dev = setup(backend)?;
        let dev_setup = s.elapsed().as_secs_f64() * 1e3;
        let mut times = Vec::new();
        let mut again = Vec::new();
        let mut launches = Vec::new();
        for (i, &(a, b)) in pairs.iter().enumerate() {
            // One timed plan per pair, no warm-up: a second plan to the same goal would only
            // descend the field the first one left (the planners reuse it).
            let s = Instant::now();
            let got = Some(answer(&dev, a, b)?);
            times.push(s.elapsed().as_secs_f64() * 1e3);
            launches.extend(dev.last_rounds().map(f64::from));
            let s = Instant::now();
            let repeat = answer(&dev, a, b)?;
            again.push(s.elapsed().as_secs_f64() * 1e3);
            if got.as_ref() != Some(&want[i]) || Some(&repeat) != got.as_ref() {
                return Err(Error::Gpu(format!(
                    "map bench: pair {a:?} -> {b:?} differs from the CPU's"
                )));
            }
        }
        let rounds = if launches.is_empty() {
            String::new()
        } else {
            format!(
                " (tile rounds per field: median {:.0})",
                median(launches.clone())
            )
        };
        let _ = writeln!(
            out,
            "| cuda | {dev_setup:.1} | {:.3} | {:.3} | every pair equal to the CPU's{rounds} |",
            median(times.clone()),
            median(again)
        );
        // Pair by pair, in the pairs' order: where a median moves, which pairs moved it.
        let per_pair: Vec<String> = times
            .iter()
            .zip(launches.iter().map(Some).chain(std::iter::repeat(None)))
            .map(|(t, r)| match r {
                Some(r) => format!("{t:.3} ({r:.0})"),
                None => format!("{t:.3}"),
            })
            .collect();
        let _ = write!(
            footer,
            "\ncuda field + path ms per pair (tile rounds): {}",
            per_pair.join(" ")
        );
    }
    let _ = writeln!(out, "{footer}");
    Ok(out)
}

/// The length of a grid path in metres (cells `res` apart, diagonals `res * sqrt 2`).
fn metres(path: &[(u32, u32)], res: f64) -> f64 {
    path.windows(2)
        .map(|w| {
            let diagonal = w[0].0 != w[1].0 && w[0].1 != w[1].1;
            if diagonal {
                res * std::f64::consts::SQRT_2
            } else {
                res
            }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pairs_come_from_a_component_under_the_runs_connectivity() {
        // Two free 2 x 2 blocks that touch only at a corner.
        #[rustfmt::skip]
        let data: Vec<i8> = vec![
            0, 0, 100, 100,
            0, 0, 100, 100,
            100, 100, 0, 0,
            100, 100, 0, 0,
        ];
        let sizes = [Connectivity::Four, Connectivity::Eight].map(|c| {
            let g = Grid::from_occupancy(4, 4, &data, 65, false, c).unwrap();
            largest_component(&g).len()
        });
        assert_eq!(sizes, [4, 8]);
    }
}
