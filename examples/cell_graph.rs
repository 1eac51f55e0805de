//! The cell graph of an arrangement of constraints on SO(3): rotations are sampled, each
//! sample classified by the side of every constraint it lies on (a bit vector), and cells
//! whose vectors differ in one bit are joined. Then a path of cells between two rotations.
//!
//!     cargo run --release --example cell_graph

use gpu_planning::cellgraph::samples::UnitSamples;
use gpu_planning::cellgraph::{Arrangement, Builder, Config};
use gpu_planning::compute::{Backend, BackendKind};

fn main() -> gpu_planning::error::Result<()> {
    // Two quadratic constraints q^T M q on the unit quaternion q (10 unique coefficients of
    // each symmetric M, upper triangle row by row): x^2 - w^2 and y^2 - z^2.
    let mut coefficients = vec![0.0; 20];
    coefficients[0] = 1.0; // x x
    coefficients[9] = -1.0; // w w
    coefficients[10 + 4] = 1.0; // y y
    coefficients[10 + 7] = -1.0; // z z
    let arrangement = Arrangement::from_unique(2, &coefficients)?;
    let samples = UnitSamples::shoemake(20_000, 7)?;
    let backend = Backend::select(BackendKind::Auto)?;
    let builder = Builder::new(&backend, false, "example");
    let (graph, ran) = builder.build(&arrangement, samples, &Config::default())?;
    println!(
        "{} cells, {} edges between them (built on {ran})",
        graph.cells.counts.len(),
        graph.edges.len()
    );
    let identity = [0.0, 0.0, 0.0, 1.0];
    let quarter_turn = [
        0.0,
        0.0,
        std::f64::consts::FRAC_1_SQRT_2,
        std::f64::consts::FRAC_1_SQRT_2,
    ];
    let path = graph.path(identity, quarter_turn)?;
    println!("identity -> a quarter turn about z: cells {:?}", path.cells);
    Ok(())
}
