//! CPU solvers on dense matrices: the textbook triple loop (the reference for the per-k GPU
//! models) and Venkataraman's blocked order on rayon (the reference for the blocked GPU models
//! with the same tile, and the fallback of a robot without a GPU).
//!
//! Why two references: with equal-length alternatives, which path a strict `<` keeps depends
//! on the order cells are relaxed in, and the blocked order lets a tile see "later" k values
//! early. Both orders give the same distances and valid shortest paths; the successor matrix
//! of each is reproduced exactly by the GPU models that use the same order.

use rayon::prelude::*;

use super::weight::{relax, Weight};
use crate::cancel::checkpoint;
use crate::error::Result;

/// The textbook loop over k, i, j on an np x np matrix. Stops at a k boundary when the
/// current cancel scope is cancelled (the matrices are then partial).
pub fn textbook<T: Weight>(d: &mut [T], h: &mut [u32], np: usize) -> Result<()> {
    let mut row_k = vec![T::ZERO; np];
    for k in 0..np {
        checkpoint()?;
        for (j, x) in row_k.iter_mut().enumerate() {
            *x = d[k * np + j].operand();
        }
        for i in 0..np {
            let a = d[i * np + k].operand();
            if !a.reached() {
                continue;
            }
            let ha = h[i * np + k];
            let (dr, hr) = (&mut d[i * np..(i + 1) * np], &mut h[i * np..(i + 1) * np]);
            for j in 0..np {
                relax(&mut dr[j], &mut hr[j], a, row_k[j], ha);
            }
        }
    }
    Ok(())
}

/// The blocked order with `tile` x `tile` tiles; `np` must be a multiple of `tile`. Stops at
/// a k-block boundary when the current cancel scope is cancelled.
pub fn blocked<T: Weight>(d: &mut [T], h: &mut [u32], np: usize, tile: usize) -> Result<()> {
    assert!(
        tile > 0 && np.is_multiple_of(tile),
        "np {np} is not a multiple of tile {tile}"
    );
    let nb = np / tile;
    for kb in 0..nb {
        checkpoint()?;
        let k0 = kb * tile;
        let ks = k0..k0 + tile;
        // Phase 1: the diagonal tile, textbook order inside.
        for k in ks.clone() {
            for i in ks.clone() {
                let a = d[i * np + k].operand();
                let ha = h[i * np + k];
                for j in ks.clone() {
                    let b = d[k * np + j].operand();
                    relax(&mut d[i * np + j], &mut h[i * np + j], a, b, ha);
                }
            }
        }
        // Phase 2, row tiles (kb, J): gathered, solved in parallel, scattered back.
        let diag: Vec<(T, u32)> = ks
            .clone()
            .flat_map(|i| ks.clone().map(move |k| (i, k)))
            .map(|(i, k)| (d[i * np + k].operand(), h[i * np + k]))
            .collect();
        let tiles: Vec<(usize, Vec<T>, Vec<u32>)> = (0..nb)
            .into_par_iter()
            .filter(|&jb| jb != kb)
            .map(|jb| {
                let j0 = jb * tile;
                let mut td = Vec::with_capacity(tile * tile);
                let mut th = Vec::with_capacity(tile * tile);
                for i in ks.clone() {
                    td.extend_from_slice(&d[i * np + j0..i * np + j0 + tile]);
                    th.extend_from_slice(&h[i * np + j0..i * np + j0 + tile]);
                }
                for k in 0..tile {
                    for i in 0..tile {
                        let (a, ha) = diag[i * tile + k];
                        for j in 0..tile {
                            let b = td[k * tile + j].operand();
                            relax(&mut td[i * tile + j], &mut th[i * tile + j], a, b, ha);
                        }
                    }
                }
                (jb, td, th)
            })
            .collect();
        for (jb, td, th) in tiles {
            let j0 = jb * tile;
            for (r, i) in ks.clone().enumerate() {
                d[i * np + j0..i * np + j0 + tile].copy_from_slice(&td[r * tile..(r + 1) * tile]);
                h[i * np + j0..i * np + j0 + tile].copy_from_slice(&th[r * tile..(r + 1) * tile]);
            }
        }
        // The k-block's rows are final now; phases 2 (column tile) and 3 of every other
        // row block read them.
        let rows_k: Vec<T> = d[k0 * np..(k0 + tile) * np]
            .iter()
            .map(|x| x.operand())
            .collect();
        let diag_d: Vec<T> = diag.iter().map(|&(x, _)| x).collect();
        d.par_chunks_mut(tile * np)
            .zip(h.par_chunks_mut(tile * np))
            .enumerate()
            .filter(|&(ib, _)| ib != kb)
            .for_each(|(_, (dblk, hblk))| {
                // Phase 2, column tile (I, kb).
                for k in 0..tile {
                    for r in 0..tile {
                        let a = dblk[r * np + k0 + k].operand();
                        let ha = hblk[r * np + k0 + k];
                        for j in 0..tile {
                            let c = r * np + k0 + j;
                            relax(&mut dblk[c], &mut hblk[c], a, diag_d[k * tile + j], ha);
                        }
                    }
                }
                // Phase 3, tiles (I, J != kb): each cell sees k in order, operands final.
                for r in 0..tile {
                    let (dr, hr) = (
                        &mut dblk[r * np..(r + 1) * np],
                        &mut hblk[r * np..(r + 1) * np],
                    );
                    for k in 0..tile {
                        let a = dr[k0 + k].operand();
                        if !a.reached() {
                            continue;
                        }
                        let ha = hr[k0 + k];
                        let rk = &rows_k[k * np..(k + 1) * np];
                        for j in (0..k0).chain(k0 + tile..np) {
                            relax(&mut dr[j], &mut hr[j], a, rk[j], ha);
                        }
                    }
                }
            });
    }
    Ok(())
}
