//! Synthetic terrains for tests and benchmarks, reproducible from a seed.

use crate::rng::XorShift;

/// Heights uniform in [0, s) with max_step 1 blocking a `blocked` fraction of transitions:
/// for uniform heights P(|a - b| > 1) = (1 - 1/s)^2, so s = 1 / (1 - sqrt(blocked)).
pub fn random_terrain(width: u32, height: u32, blocked: f64, seed: u64) -> Vec<f32> {
    let blocked = blocked.clamp(0.0, 0.99);
    let s = 1.0 / (1.0 - blocked.sqrt());
    let mut rng = XorShift::new(seed);
    (0..width as u64 * height as u64)
        .map(|_| ((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * s) as f32)
        .collect()
}

/// An occupancy grid with an `occupied` fraction of its cells occupied at random, as heights:
/// free cells at 0, occupied ones NaN.
pub fn occupancy(width: u32, height: u32, occupied: f64, seed: u64) -> Vec<f32> {
    let mut rng = XorShift::new(seed);
    let cut = (occupied.clamp(0.0, 1.0) * (1u64 << 53) as f64) as u64;
    (0..width as u64 * height as u64)
        .map(|_| {
            if rng.next_u64() >> 11 < cut {
                f32::NAN
            } else {
                0.0
            }
        })
        .collect()
}

/// A perfect maze (one path between any two open cells): open cells at height 0, walls NaN.
/// Rooms sit at even coordinates; a randomized depth-first search knocks walls out.
pub fn maze(width: u32, height: u32, seed: u64) -> Vec<f32> {
    let (w, h) = (width as usize, height as usize);
    let mut cells = vec![f32::NAN; w * h];
    if w == 0 || h == 0 {
        return cells;
    }
    let (rw, rh) = (w.div_ceil(2), h.div_ceil(2));
    let mut rng = XorShift::new(seed);
    let mut visited = vec![false; rw * rh];
    let mut stack = vec![(0usize, 0usize)];
    visited[0] = true;
    cells[0] = 0.0;
    while let Some(&(x, y)) = stack.last() {
        let mut options = [(0usize, 0usize); 4];
        let mut count = 0;
        for (dx, dy) in [(-1i64, 0i64), (1, 0), (0, -1), (0, 1)] {
            let (nx, ny) = (x as i64 + dx, y as i64 + dy);
            if nx >= 0
                && ny >= 0
                && (nx as usize) < rw
                && (ny as usize) < rh
                && !visited[ny as usize * rw + nx as usize]
            {
                options[count] = (nx as usize, ny as usize);
                count += 1;
            }
        }
        if count == 0 {
            stack.pop();
            continue;
        }
        let (nx, ny) = options[(rng.next_u64() % count as u64) as usize];
        visited[ny * rw + nx] = true;
        cells[(2 * ny) * w + 2 * nx] = 0.0;
        cells[(y + ny) * w + (x + nx)] = 0.0; // the wall between the two rooms
        stack.push((nx, ny));
    }
    cells
}

/// The open cell nearest to (x, y) in scan order from there (for picking start and goal).
pub fn nearest_open(heights: &[f32], width: u32, x: u32, y: u32) -> Option<(u32, u32)> {
    let start = y as usize * width as usize + x as usize;
    (start..heights.len())
        .chain(0..start)
        .find(|&i| !heights[i].is_nan())
        .map(|i| ((i % width as usize) as u32, (i / width as usize) as u32))
}
