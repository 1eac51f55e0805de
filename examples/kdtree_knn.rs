//! Nearest neighbours in a point cloud: a k-d index built once (on the device when there is
//! one), then asked for the 3 nearest points of a few queries and for every point within a
//! radius. Answers are exact and the same on either backend.
//!
//!     cargo run --release --example kdtree_knn

use gpu_planning::compute::{Backend, BackendKind};
use gpu_planning::kdtree::{Index, IndexConfig, Points};

fn main() -> gpu_planning::error::Result<()> {
    // A 20 x 20 x 5 lattice of points 0.5 m apart, flat x, y, z.
    let coords: Vec<f32> = (0..20 * 20 * 5)
        .flat_map(|i| {
            let (x, y, z) = (i % 20, (i / 20) % 20, i / 400);
            [x as f32 * 0.5, y as f32 * 0.5, z as f32 * 0.5]
        })
        .collect();
    let points = Points::new(3, coords)?;
    let backend = Backend::select(BackendKind::Auto)?;
    let index = Index::build(&backend, &points, IndexConfig::default())?;
    let queries = [1.1f32, 2.0, 0.2, 9.6, 9.6, 2.1];
    let near = index.knn(&queries, 3)?;
    for (q, row) in near.rows().iter().enumerate() {
        println!("query {q}: 3 nearest (distance, point) {row:?}");
    }
    let within = index.radius(&queries, 0.6, 0)?;
    println!(
        "within 0.6 m: {:?} points per query, answered on {}",
        within
            .offsets
            .windows(2)
            .map(|w| w[1] - w[0])
            .collect::<Vec<_>>(),
        within.backend
    );
    Ok(())
}
