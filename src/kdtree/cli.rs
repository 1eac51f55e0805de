//! `gpu_planning knn`: nearest neighbours of query points in a point file.

use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use super::config::{DEFAULT_K, DEFAULT_MAX_RESULTS};
use super::io::{npz, read_points};
use super::{
    check_unit_quaternions, FiniteRows, Index, IndexConfig, Metric, Neighbors, Points, ResultSize,
    Traversal,
};
use crate::compute::{Backend, BackendKind};
use crate::error::{Error, Result};

/// `gpu_planning knn`'s flags: points, queries, k or a radius, the metric and the caps.
#[derive(Debug, Args)]
pub struct KnnArgs {
    /// Points: .npy (N, D) float32/float64, or .pcd / .ply / .las / .laz (x, y, z).
    #[arg(long)]
    pub points: PathBuf,
    /// Queries: .npy (M, D), or .pcd / .ply / .las / .laz.
    #[arg(long)]
    pub queries: PathBuf,
    /// Neighbours per query.
    #[arg(long, default_value_t = DEFAULT_K)]
    pub k: usize,
    /// With --radius: report at most this many per query, nearest first (0 = all).
    #[arg(long, default_value_t = 0)]
    pub max_count: usize,
    /// euclidean, or so3 for 4-D unit quaternions.
    #[arg(long, value_enum, default_value = "euclidean")]
    pub metric: Metric,
    /// How the GPU's k-nearest search rules out a far side: by the split plane, by the far
    /// side's bounding box (faster on scans of flat surfaces, and from k = 32), or auto (plane
    /// below k = 32); the node's knn_traversal.
    #[arg(long, value_enum, default_value = "auto")]
    pub traversal: Traversal,
    /// Radius search instead of k nearest: every point within this distance, nearest first.
    #[arg(long)]
    pub radius: Option<f32>,
    /// Refuse a query whose answer could hold more neighbours in all (queries x k, or queries x
    /// --max-count, 0 counting as every point): the node's max_results.
    #[arg(long, default_value_t = DEFAULT_MAX_RESULTS)]
    pub max_results: u64,
    /// auto (CUDA when a device is there), cpu or cuda.
    #[arg(long, default_value = "auto")]
    pub backend: BackendKind,
    /// Print one JSON object instead of a summary.
    #[arg(long)]
    pub json: bool,
    /// Also write the results to an .npz (k nearest: indices (M, k) uint32, distances (M, k)
    /// float32; radius: flat indices and distances plus offsets (M + 1)).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Reads points and queries, builds the index, prints (or writes) the answers.
pub fn run(a: KnnArgs) -> Result<()> {
    let (dims, coords) = read_points(&a.points)?;
    let mut cloud = FiniteRows::new(dims, coords);
    if cloud.dropped > 0 {
        eprintln!(
            "note: {} points of {} with a NaN or infinite coordinate left out; indices are \
             those of the file",
            cloud.dropped,
            a.points.display()
        );
    }
    let (qdims, queries) = read_points(&a.queries)?;
    if let Some(i) = super::points::first_non_finite(&queries) {
        return Err(Error::invalid(
            format!("{}: query {}", a.queries.display(), i / qdims.max(1)),
            format!("coordinate {} is {}", i % qdims.max(1), queries[i]),
        ));
    }
    if qdims != dims {
        return Err(Error::invalid(
            a.queries.display().to_string(),
            format!("{qdims} dimensions, the points have {dims}"),
        ));
    }
    if a.metric == Metric::So3 && dims == 4 {
        check_unit_quaternions(&a.points.display().to_string(), &cloud.coords)?;
        check_unit_quaternions(&a.queries.display().to_string(), &queries)?;
    }
    let p = Points::new(dims, std::mem::take(&mut cloud.coords))?;
    let backend = Backend::select(a.backend)?;
    let started = std::time::Instant::now();
    let index = Index::build(
        &backend,
        &p,
        IndexConfig {
            metric: a.metric,
            traversal: a.traversal,
            ..IndexConfig::default()
        },
    )?;
    let tree = index.tree();
    let size = match a.radius {
        Some(_) => ResultSize::Radius {
            max_count: a.max_count,
        },
        None => ResultSize::Nearest { k: a.k },
    };
    index.check_result_size(&queries, size, a.max_results)?;
    let answer = match a.radius {
        Some(r) => index.radius(&queries, r, a.max_count)?,
        None => {
            if a.k > tree.len() {
                eprintln!(
                    "note: k = {} is above the {} distinct points; every query lists all of them",
                    a.k,
                    tree.len()
                );
            }
            index.knn(&queries, a.k)?
        }
    };
    let mut result: Vec<Neighbors> = answer.rows();
    cloud.to_cloud_indices(result.iter_mut().flatten().map(|e| &mut e.1));
    let elapsed = started.elapsed().as_secs_f64();
    if a.json {
        let indices: Vec<Vec<u32>> = result
            .iter()
            .map(|r| r.iter().map(|e| e.1).collect())
            .collect();
        let distances: Vec<Vec<f32>> = result
            .iter()
            .map(|r| r.iter().map(|e| e.0).collect())
            .collect();
        println!("{}", json!({"indices": indices, "distances": distances}));
    } else {
        println!(
            "{} points ({} distinct), {} queries, {} in {:.3} s ({})",
            p.len(),
            tree.len(),
            result.len(),
            match a.radius {
                Some(r) => format!("radius {r}"),
                None => format!("k = {}", a.k),
            },
            elapsed,
            answer.backend
        );
    }
    if let Some(out) = &a.out {
        let idx: Vec<u8> = result
            .iter()
            .flatten()
            .flat_map(|e| e.1.to_le_bytes())
            .collect();
        let dist: Vec<u8> = result
            .iter()
            .flatten()
            .flat_map(|e| e.0.to_le_bytes())
            .collect();
        let bytes = if a.radius.is_some() {
            let mut offsets = vec![0u32];
            for r in &result {
                offsets.push(offsets[offsets.len() - 1] + r.len() as u32);
            }
            let total = offsets[offsets.len() - 1] as usize;
            let off: Vec<u8> = offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
            npz(&[
                ("indices", "<u4", vec![total], idx),
                ("distances", "<f4", vec![total], dist),
                ("offsets", "<u4", vec![result.len() + 1], off),
            ])
        } else {
            let k = result.first().map_or(0, Vec::len);
            npz(&[
                ("indices", "<u4", vec![result.len(), k], idx),
                ("distances", "<f4", vec![result.len(), k], dist),
            ])
        };
        std::fs::write(out, bytes).map_err(|e| Error::invalid(out.display().to_string(), e))?;
    }
    Ok(())
}
