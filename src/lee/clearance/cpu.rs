//! The reference exact Euclidean distance transform: squared distances in cells² from every
//! cell to the nearest obstacle cell centre, by Felzenszwalb and Huttenlocher's separable
//! method in integers (a 1-D distance along each row, then the lower envelope of parabolas down
//! each column), so it is exact and equal bit for bit to the device's (kernels/clearance.cu).

/// Squared distance of a cell when the map has no obstacle at all.
pub const NO_OBSTACLE: u64 = u64::MAX;
/// Row distance of a cell whose row has no obstacle.
pub const NO_OBSTACLE_1D: u32 = u32::MAX;

/// Along each row: |x - x'| to the nearest obstacle x' of the row, NO_OBSTACLE_1D where the row
/// has none.
pub fn row_distances(width: usize, obstacle: &[bool]) -> Vec<u32> {
    use rayon::prelude::*;
    let mut g = vec![NO_OBSTACLE_1D; obstacle.len()];
    if width == 0 {
        return g;
    }
    g.par_chunks_mut(width)
        .zip(obstacle.par_chunks(width))
        .for_each(|(row, obs)| {
            let mut last: Option<usize> = None;
            for x in 0..width {
                if obs[x] {
                    last = Some(x);
                }
                if let Some(l) = last {
                    row[x] = (x - l) as u32;
                }
            }
            let mut next: Option<usize> = None;
            for x in (0..width).rev() {
                if obs[x] {
                    next = Some(x);
                }
                if let Some(n) = next {
                    row[x] = row[x].min((n - x) as u32);
                }
            }
        });
    g
}

/// The lower envelope of the parabolas (y - q)² + f(q) at integer y, for one column: f(q) =
/// g(x, q)², parabolas of rows without an obstacle in reach left out. `v` and `z` are scratch of
/// the column's height (+1 for z). Boundaries are kept as floors: a parabola dropped because its
/// interval holds no integer never decides a value, so the values at integer y are exact.
pub fn envelope_column(
    f: impl Fn(usize) -> Option<i64>,
    height: usize,
    v: &mut [usize],
    z: &mut [i64],
    mut out: impl FnMut(usize, u64),
) {
    let mut k: isize = -1;
    for q in 0..height {
        let Some(fq) = f(q) else { continue };
        let qi = q as i64;
        loop {
            if k < 0 {
                k = 0;
                v[0] = q;
                z[0] = i64::MIN;
                break;
            }
            let p = v[k as usize];
            let fp = f(p).unwrap_or(0);
            let pi = p as i64;
            // Where parabola q starts to be at most parabola p (q > p): floor of the crossing.
            let s = ((fq + qi * qi) - (fp + pi * pi)).div_euclid(2 * (qi - pi));
            if s <= z[k as usize] {
                k -= 1;
                continue;
            }
            k += 1;
            v[k as usize] = q;
            z[k as usize] = s;
            break;
        }
    }
    if k < 0 {
        for y in 0..height {
            out(y, NO_OBSTACLE);
        }
        return;
    }
    let last = k as usize;
    let mut j = 0usize;
    for y in 0..height {
        let yi = y as i64;
        while j < last && z[j + 1] < yi {
            j += 1;
        }
        let p = v[j];
        let d = yi - p as i64;
        out(y, (d * d + f(p).unwrap_or(0)) as u64);
    }
}

/// Squared distances in cells² to the nearest obstacle cell centre, row-major; NO_OBSTACLE
/// everywhere when there is no obstacle. `width` and `height` at most MAX_SIDE (checked by the
/// caller), so every intermediate fits an i64.
pub fn squared_distances(width: usize, height: usize, obstacle: &[bool]) -> Vec<u64> {
    use rayon::prelude::*;
    let g = row_distances(width, obstacle);
    let mut d2 = vec![NO_OBSTACLE; obstacle.len()];
    if width == 0 || height == 0 {
        return d2;
    }
    // Columns in parallel, each written through its own strided cells.
    let columns: Vec<Vec<u64>> = (0..width)
        .into_par_iter()
        .map(|x| {
            let mut v = vec![0usize; height];
            let mut z = vec![0i64; height + 1];
            let mut col = vec![NO_OBSTACLE; height];
            let f = |q: usize| {
                let gq = g[q * width + x];
                (gq != NO_OBSTACLE_1D).then(|| gq as i64 * gq as i64)
            };
            envelope_column(f, height, &mut v, &mut z, |y, d| col[y] = d);
            col
        })
        .collect();
    for (x, col) in columns.into_iter().enumerate() {
        for (y, d) in col.into_iter().enumerate() {
            d2[y * width + x] = d;
        }
    }
    d2
}
