//! Path recovery: from the start, step to the first neighbour (in the fixed priority of
//! [`super::DIRECTIONS`]) whose label is one less, until the goal.

use super::{Grid, DIRECTIONS, UNREACHED};

/// The cells from `start` to the goal (label 0), both included; `None` when the start was not
/// reached. The length in moves is the start's label.
pub fn descend(grid: &Grid, labels: &[u32], start: (u32, u32)) -> Option<Vec<(u32, u32)>> {
    let w = grid.width as i64;
    let mut c = grid.index(start.0, start.1);
    if labels[c] == UNREACHED {
        return None;
    }
    let dirs = grid.connectivity.directions();
    let mut path = Vec::with_capacity(labels[c] as usize + 1);
    path.push(start);
    while labels[c] != 0 {
        let (x, y) = ((c as i64) % w, (c as i64) / w);
        let want = labels[c] - 1;
        let mask = grid.masks[c];
        let step = DIRECTIONS
            .iter()
            .enumerate()
            .take(dirs)
            .find_map(|(k, &(dx, dy))| {
                if mask & (1 << k) == 0 {
                    return None;
                }
                let n = ((y + dy as i64) * w + x + dx as i64) as usize;
                (labels[n] == want).then_some(n)
            })?; // labels that are not a BFS field have no descent; report no path
        c = step;
        path.push(((c as i64 % w) as u32, (c as i64 / w) as u32));
    }
    Some(path)
}
