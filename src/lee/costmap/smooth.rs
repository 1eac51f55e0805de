//! The path that goes out in costmap mode (`path: smooth`): the exact least-cost grid path,
//! shortened along lines of sight, as NavFn's interpolated path is shorter than its cells.
//!
//! The grid path's vertex i may be joined straight to a later vertex j, replacing the cells
//! between them, when the segment between the two cell centres
//! - crosses only free cells, and where it passes exactly through a cell corner, both cells
//!   beside that corner are free too (the grid's own rule for a diagonal move), and
//! - costs no more than the grid path between them, both measured as the line integral of the
//!   cells' straight step costs (a grid step of length l from cell a to cell b: l (e_a + e_b)
//!   / 2; a segment: the length it runs in each cell times that cell's step cost).
//!
//! So the smooth path never enters a blocked (lethal, inscribed or unknown) cell, is never
//! longer than the grid path (each join replaces a polyline by its chord), and its integral
//! cost is at most the grid path's, the least path under the discrete step costs: that is the
//! bound held and tested. Joins are found greedily from the start: the vertex reached by
//! doubling the stride while the joins pass, then a bisection between the last that passed and
//! the first that failed (any passing vertex keeps the guarantees); O(n log n) segment checks.
//! Corner passes are found in integers, so the checks are exact.

/// The cells a segment may cross and what crossing each costs.
pub struct Costs<'a> {
    /// Cells per row.
    pub width: u32,
    /// Cells the robot may occupy (row-major).
    pub free: &'a [bool],
    /// Each cell's straight step cost (row-major).
    pub enter: &'a [u32],
}

impl Costs<'_> {
    fn index(&self, x: i64, y: i64) -> usize {
        y as usize * self.width as usize + x as usize
    }

    fn free(&self, x: i64, y: i64) -> bool {
        self.free[self.index(x, y)]
    }

    fn enter(&self, x: i64, y: i64) -> f64 {
        self.enter[self.index(x, y)] as f64
    }
}

/// The integral cost of the segment between the centres of cells `a` and `b`, or None when it
/// leaves the free cells (a corner pass needs both side cells free). The cells between the two
/// lie in their bounding box, so on the map when `a` and `b` are.
pub fn segment_cost(c: &Costs, a: (u32, u32), b: (u32, u32)) -> Option<f64> {
    let (ax, ay, bx, by) = (a.0 as i64, a.1 as i64, b.0 as i64, b.1 as i64);
    let (dx, dy) = (bx - ax, by - ay);
    let (sx, sy) = (dx.signum(), dy.signum());
    let (adx, ady) = (dx.abs(), dy.abs());
    let length = ((dx * dx + dy * dy) as f64).sqrt();
    let (mut x, mut y) = (ax, ay);
    // Boundaries crossed so far on each axis; the next x boundary is at t = (2 kx + 1) / (2
    // |dx|), so comparing two crossings is comparing (2 kx + 1) |dy| with (2 ky + 1) |dx|.
    let (mut kx, mut ky) = (0i64, 0i64);
    let (mut t, mut cost) = (0.0f64, 0.0f64);
    while (x, y) != (bx, by) {
        let next_x = (kx < adx).then(|| (2 * kx + 1) * ady);
        let next_y = (ky < ady).then(|| (2 * ky + 1) * adx);
        let (step_x, step_y) = match (next_x, next_y) {
            (Some(_), None) => (true, false),
            (None, Some(_)) => (false, true),
            (Some(nx), Some(ny)) => (nx <= ny, ny <= nx),
            (None, None) => unreachable!("the segment ends at b"),
        };
        let crossing = if step_x {
            (2 * kx + 1) as f64 / (2 * adx) as f64
        } else {
            (2 * ky + 1) as f64 / (2 * ady) as f64
        };
        cost += (crossing - t) * length * c.enter(x, y);
        t = crossing;
        if step_x && step_y && !(c.free(x + sx, y) && c.free(x, y + sy)) {
            return None;
        }
        if step_x {
            x += sx;
            kx += 1;
        }
        if step_y {
            y += sy;
            ky += 1;
        }
        if !c.free(x, y) {
            return None;
        }
    }
    Some(cost + (1.0 - t) * length * c.enter(bx, by))
}

/// The integral cost of the grid path up to each of its vertices.
pub fn grid_costs(c: &Costs, cells: &[(u32, u32)]) -> Vec<f64> {
    let mut sums = Vec::with_capacity(cells.len());
    let mut total = 0.0;
    for (i, &(x, y)) in cells.iter().enumerate() {
        if i > 0 {
            let (px, py) = cells[i - 1];
            let (dx, dy) = (x as f64 - px as f64, y as f64 - py as f64);
            let e = (c.enter(px as i64, py as i64) + c.enter(x as i64, y as i64)) / 2.0;
            total += (dx * dx + dy * dy).sqrt() * e;
        }
        sums.push(total);
    }
    sums
}

/// The vertices of `cells` (a grid path of free cells, each step to a neighbour the grid
/// allows) that the smooth path keeps: the first, the last, and each join's end.
pub fn shorten(c: &Costs, cells: &[(u32, u32)]) -> Vec<usize> {
    let n = cells.len();
    if n < 3 {
        return (0..n).collect();
    }
    let sums = grid_costs(c, cells);
    let joins = |i: usize, j: usize| {
        let along = sums[j] - sums[i];
        segment_cost(c, cells[i], cells[j]).is_some_and(|s| s <= along + 1e-9 * along.max(1.0))
    };
    let mut kept = vec![0];
    let mut i = 0;
    while i + 1 < n {
        // One step is a grid move, which always joins.
        let (mut passed, mut stride) = (i + 1, 2);
        while i + stride < n && joins(i, i + stride) {
            passed = i + stride;
            stride *= 2;
        }
        let mut failed = (i + stride).min(n);
        while failed - passed > 1 {
            let mid = (passed + failed) / 2;
            if joins(i, mid) {
                passed = mid;
            } else {
                failed = mid;
            }
        }
        kept.push(passed);
        i = passed;
    }
    kept
}

/// The smooth path through the kept vertices, in cell units (cell (x, y)'s centre is (x + 0.5,
/// y + 0.5)), with a point at least every cell along each join, as nav2's controllers expect
/// paths as dense as the grid's.
pub fn densify(cells: &[(u32, u32)], kept: &[usize]) -> Vec<(f64, f64)> {
    let centre = |i: usize| (cells[i].0 as f64 + 0.5, cells[i].1 as f64 + 0.5);
    let mut points = Vec::with_capacity(kept.len());
    if let Some(&first) = kept.first() {
        points.push(centre(first));
    }
    for w in kept.windows(2) {
        let (a, b) = (centre(w[0]), centre(w[1]));
        let length = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
        let parts = length.ceil().max(1.0) as usize;
        for k in 1..parts {
            let f = k as f64 / parts as f64;
            points.push((a.0 + f * (b.0 - a.0), a.1 + f * (b.1 - a.1)));
        }
        points.push(b);
    }
    points
}

/// Length of a polyline in cell units.
pub fn length(points: &[(f64, f64)]) -> f64 {
    points
        .windows(2)
        .map(|w| ((w[1].0 - w[0].0).powi(2) + (w[1].1 - w[0].1).powi(2)).sqrt())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn costs<'a>(width: u32, free: &'a [bool], enter: &'a [u32]) -> Costs<'a> {
        Costs { width, free, enter }
    }

    #[test]
    fn a_segment_through_a_corner_needs_both_side_cells() {
        // 2 x 2: the diagonal from (0, 0) to (1, 1) passes the corner between (1, 0) and (0, 1).
        let enter = [10u32; 4];
        let open = [true; 4];
        let c = costs(2, &open, &enter);
        let s = segment_cost(&c, (0, 0), (1, 1)).unwrap();
        assert!((s - 2f64.sqrt() * 10.0).abs() < 1e-12);
        let one_side = [true, false, true, true];
        assert_eq!(
            segment_cost(&costs(2, &one_side, &enter), (0, 0), (1, 1)),
            None
        );
    }

    #[test]
    fn a_segment_costs_the_length_it_runs_in_each_cell() {
        // 3 x 1, straight: half of cell 0, all of cell 1, half of cell 2.
        let enter = [10u32, 100, 20];
        let open = [true; 3];
        let s = segment_cost(&costs(3, &open, &enter), (0, 0), (2, 0)).unwrap();
        assert!((s - (5.0 + 100.0 + 10.0)).abs() < 1e-12);
        // (0, 0) to (2, 1) in a 3 x 2 grid: lengths 0.5, 0.5, 0.5, 0.5 of sqrt(5) / 2 units
        // each in (0, 0), (1, 0), (1, 1), (2, 1) (crossings at t = 1/4, 1/2, 3/4).
        let enter = [1u32, 2, 3, 4, 5, 6];
        let open = [true; 6];
        let s = segment_cost(&costs(3, &open, &enter), (0, 0), (2, 1)).unwrap();
        let quarter = 5f64.sqrt() / 4.0;
        assert!((s - quarter * (1.0 + 2.0 + 5.0 + 6.0)).abs() < 1e-12, "{s}");
    }

    #[test]
    fn a_wall_cell_on_the_line_refuses_the_join() {
        // 5 x 3, wall cell (2, 1): the path around it cannot be joined through it.
        let mut open = [true; 15];
        open[7] = false;
        let enter = [50u32; 15];
        let c = costs(5, &open, &enter);
        let path = [(0, 1), (1, 0), (2, 0), (3, 0), (4, 1)];
        assert_eq!(segment_cost(&c, (0, 1), (4, 1)), None);
        let kept = shorten(&c, &path);
        assert_eq!(kept.first(), Some(&0));
        assert_eq!(kept.last(), Some(&4));
        for w in kept.windows(2) {
            assert!(segment_cost(&c, path[w[0]], path[w[1]]).is_some());
        }
        let points = densify(&path, &kept);
        let grid: Vec<(f64, f64)> = path
            .iter()
            .map(|&(x, y)| (x as f64 + 0.5, y as f64 + 0.5))
            .collect();
        assert!(length(&points) <= length(&grid) + 1e-12);
    }
}
