//! The k nearest distinct points by brute force over every point: the oracle `bench kdtree`
//! checks the trees with and the real-cloud tests hold the CPU tree to.

use rayon::prelude::*;

use super::points::Points;
use super::query::dist2;

/// (distance, index of the first copy) of the k nearest distinct points of `q`, ordered by
/// distance then index, as the trees answer. Linear in the points: each thread keeps its best
/// candidates, with room for copies of a point among them; when copies crowd out distinct
/// points, it looks again with more room.
pub fn knn_distinct(p: &Points, q: &[f32], k: usize) -> Vec<(f32, u32)> {
    let by = |a: &(f32, u32), b: &(f32, u32)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
    let mut keep = k + 64;
    loop {
        let best = (0..p.len())
            .into_par_iter()
            .fold(Vec::new, |mut acc: Vec<(f32, u32)>, i| {
                // Ranked by the rounded square root, as the trees rank: two squared distances
                // can round to one distance, and the index then decides.
                acc.push((dist2(q, p.point(i)).sqrt(), i as u32));
                if acc.len() >= 4 * keep {
                    acc.sort_by(by);
                    acc.truncate(keep);
                }
                acc
            })
            .reduce(Vec::new, |mut a, b| {
                a.extend(b);
                a.sort_by(by);
                a.truncate(keep);
                a
            });
        let mut out: Vec<(f32, u32)> = Vec::with_capacity(k);
        for (d, i) in best {
            if out.len() == k {
                break;
            }
            // Candidates come by (distance, index), so the first copy of a point comes first.
            if !out
                .iter()
                .any(|&(_, j)| p.point(j as usize) == p.point(i as usize))
            {
                out.push((d, i));
            }
        }
        if out.len() == k || keep >= p.len() {
            return out;
        }
        keep *= 4;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Copies of one point crowd the first look (more than its room for copies): the second
    /// look still lists each distinct point once, by its first copy, nearest first.
    #[test]
    fn copies_beyond_the_first_look_are_passed_over() {
        let mut c = vec![5.0f32, 5.0];
        c.extend(std::iter::repeat_n([0.1f32, 0.0], 300).flatten());
        c.extend([0.2, 0.0, 3.0, 3.0, 0.3, 0.0]);
        let p = Points::new(2, c).unwrap();
        let got = knn_distinct(&p, &[0.0, 0.0], 3);
        let idx: Vec<u32> = got.iter().map(|e| e.1).collect();
        assert_eq!(idx, [1, 301, 303]);
        assert_eq!(knn_distinct(&p, &[0.0, 0.0], 10).len(), 5);
    }
}
