//! The reference: the dynamic programme over (point on layer k, point on layer k + 1) pair states, O(d^3 m),
//! and a brute-force enumerator that checks it.

use rayon::prelude::*;

use super::geometry::{cos_limit, turn_ok, Polyline, Problem, Pt};
use super::image::Gradient;
use super::score::link;
use crate::error::Result;

/// The best polyline. Among equal scores the DP keeps, at each guide going back from b, the
/// smallest point index: of all optimal choices, the first when compared from the last guide
/// to the first (what [`brute_force`] returns).
pub fn solve(g: &Gradient, p: &Problem) -> Result<Polyline> {
    p.validate()?;
    let m = p.guides;
    let cos_max = cos_limit(p.max_angle);
    let layers: Vec<Vec<Pt>> = (0..=m + 1)
        .map(|k| (0..p.layer_size(k)).map(|j| p.vertex(k, j)).collect())
        .collect();
    // best[i * s1 + j]: best score of a prefix ending with the link layers[k-1][i] -> layers[k][j].
    let mut best: Vec<f64> = layers[1].iter().map(|&q| link(g, p.a, q)).collect();
    let mut args: Vec<Vec<u32>> = Vec::with_capacity(m as usize);
    // A stage is O(d^3): rows check the request's cancel flag too, so a request past its
    // deadline stops within one row's work.
    let cancel = crate::cancel::current();
    for k in 1..=m as usize {
        crate::cancel::checkpoint()?;
        let (prev, cur, next) = (&layers[k - 1], &layers[k], &layers[k + 1]);
        let (sn, sc) = (next.len(), cur.len());
        let mut nb = vec![f64::NEG_INFINITY; sc * sn];
        let mut arg = vec![u32::MAX; sc * sn];
        nb.par_chunks_mut(sn)
            .zip(arg.par_chunks_mut(sn))
            .enumerate()
            .for_each(|(j, (row, arow))| {
                if cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
                    return;
                }
                let q = cur[j];
                for (l, &r) in next.iter().enumerate() {
                    let mut top = f64::NEG_INFINITY;
                    let mut at = u32::MAX;
                    for (i, &pp) in prev.iter().enumerate() {
                        let s = best[i * sc + j];
                        if s > top && turn_ok(pp, q, r, cos_max) {
                            top = s;
                            at = i as u32;
                        }
                    }
                    if at != u32::MAX {
                        row[l] = top + link(g, q, r);
                        arow[l] = at;
                    }
                }
            });
        crate::cancel::checkpoint()?;
        best = nb;
        args.push(arg);
    }
    if m == 0 {
        let score = best[0];
        return Ok(Polyline {
            feasible: true,
            points: vec![p.a, p.b],
            indices: vec![],
            score,
        });
    }
    // best now holds (guide m point j) -> b.
    let mut top = f64::NEG_INFINITY;
    let mut jm = None;
    for (j, &s) in best.iter().enumerate() {
        if s > top {
            top = s;
            jm = Some(j as u32);
        }
    }
    let Some(jm) = jm else {
        return Ok(Polyline {
            feasible: false,
            points: vec![],
            indices: vec![],
            score: f64::NEG_INFINITY,
        });
    };
    // Walk back: idx[k] for layers 0..=m+1.
    let mut idx = vec![0u32; m as usize + 2];
    idx[m as usize] = jm;
    for k in (1..=m as usize).rev() {
        let sn = layers[k + 1].len();
        idx[k - 1] = args[k - 1][idx[k] as usize * sn + idx[k + 1] as usize];
    }
    Ok(Polyline {
        feasible: true,
        points: (0..=m as usize + 1)
            .map(|k| layers[k][idx[k] as usize])
            .collect(),
        indices: idx[1..=m as usize].to_vec(),
        score: top,
    })
}

/// The best score with the DP's choice among those reaching it (see [`brute_force`]).
pub type Best = Option<(f64, Vec<u32>)>;

/// Every choice of one point per guide, enumerated with the last guide slowest: the best score,
/// the first choice reaching it in that order (the smallest compared from the last guide to
/// the first: the DP's tie rule), and how many choices reach it exactly.
pub fn brute_force(g: &Gradient, p: &Problem) -> Result<(Best, usize)> {
    p.validate()?;
    let m = p.guides as usize;
    let cos_max = cos_limit(p.max_angle);
    let mut choice = vec![0u32; m];
    let mut best: Best = None;
    let mut count = 0;
    loop {
        let pts: Vec<Pt> = std::iter::once(p.a)
            .chain((0..m).map(|k| p.vertex(k as u32 + 1, choice[k])))
            .chain(std::iter::once(p.b))
            .collect();
        if pts.windows(3).all(|w| turn_ok(w[0], w[1], w[2], cos_max)) {
            let mut s = 0.0;
            for w in pts.windows(2) {
                s += link(g, w[0], w[1]);
            }
            match &best {
                Some((b, _)) if s < *b => {}
                Some((b, _)) if s == *b => count += 1,
                _ => {
                    best = Some((s, choice.clone()));
                    count = 1;
                }
            }
        }
        // Next choice, first guide fastest.
        let mut k = 0;
        loop {
            if k == m {
                return Ok((best, count));
            }
            choice[k] += 1;
            if choice[k] < p.points {
                break;
            }
            choice[k] = 0;
            k += 1;
        }
    }
}
