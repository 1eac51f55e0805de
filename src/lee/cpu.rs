//! The reference: a plain queue BFS from the goal.

use std::collections::VecDeque;

use super::{Grid, DIRECTIONS, UNREACHED};

/// Wave numbers from `goal` (which must be on the grid); unreached cells are [`UNREACHED`].
pub fn distance_field(grid: &Grid, goal: (u32, u32)) -> Vec<u32> {
    let mut labels = vec![UNREACHED; grid.len()];
    if grid.is_empty() {
        return labels;
    }
    let (w, h) = (grid.width as i64, grid.height as i64);
    let dirs = grid.connectivity.directions();
    let g = grid.index(goal.0, goal.1);
    labels[g] = 0;
    let mut queue = VecDeque::from([g]);
    while let Some(c) = queue.pop_front() {
        let (x, y) = ((c as i64) % w, (c as i64) / w);
        let next = labels[c] + 1;
        let mask = grid.masks[c];
        for (k, &(dx, dy)) in DIRECTIONS.iter().enumerate().take(dirs) {
            if mask & (1 << k) == 0 {
                continue;
            }
            let (nx, ny) = (x + dx as i64, y + dy as i64);
            debug_assert!(nx >= 0 && ny >= 0 && nx < w && ny < h);
            let n = (ny * w + nx) as usize;
            if labels[n] == UNREACHED {
                labels[n] = next;
                queue.push_back(n);
            }
        }
    }
    labels
}
