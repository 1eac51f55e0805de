//! The APSP solver a caller keeps: its backend, its variant and the out-of-memory policy,
//! set once; each graph it is given becomes a [`Solution`] that answers pairs. Device out of
//! memory solves on the CPU where `cpu_fallback` allows ([`device_or_cpu`]).

use super::{solve, Config, Graph, Solution};
use crate::compute::fallback::device_or_cpu;
use crate::compute::Backend;
use crate::error::Result;

/// ```
/// use gpu_planning::apsp::{Config, Graph, Solver, Weights};
/// use gpu_planning::compute::Backend;
///
/// let graph = Graph {
///     vertices: 3,
///     from: vec![0, 1, 0],
///     to: vec![1, 2, 2],
///     weights: Weights::Int(vec![1, 2, 5]),
/// };
/// let solution = Solver::new(&Backend::Cpu, Config::default())?.solve(&graph)?;
/// let p = solution.query(0, 2)?;
/// assert_eq!((p.distance, p.path), (3.0, vec![0, 1, 2])); // cheaper than the direct 5
/// # Ok::<(), gpu_planning::error::Error>(())
/// ```
pub struct Solver {
    backend: Backend,
    config: Config,
    cpu_fallback: bool,
    /// Names the solver in its log lines (a node's name).
    label: String,
}

impl Solver {
    /// A solver of `config`'s variant on `backend` (the variant checked now), failing on a
    /// device out of memory until [`Solver::with_cpu_fallback`] says otherwise.
    pub fn new(backend: &Backend, config: Config) -> Result<Solver> {
        config.validate()?;
        Ok(Solver {
            backend: backend.clone(),
            config,
            cpu_fallback: false,
            label: "apsp".into(),
        })
    }

    /// With `allowed`, a graph that does not fit the device is solved on the CPU; `label`
    /// names the solver in that log line.
    pub fn with_cpu_fallback(mut self, allowed: bool, label: &str) -> Solver {
        self.cpu_fallback = allowed;
        self.label = label.into();
        self
    }

    /// The variant it solves with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Solves `graph` ([`Solution::backend`] says where); a negative cycle is
    /// `Error::NegativeCycle`.
    pub fn solve(&self, graph: &Graph) -> Result<Solution> {
        if matches!(self.backend, Backend::Cpu) {
            return solve(&self.backend, graph, &self.config);
        }
        let what = format!("{}: graph of {} vertices", self.label, graph.vertices);
        let on_device = || solve(&self.backend, graph, &self.config);
        let on_cpu = || solve(&Backend::Cpu, graph, &self.config);
        Ok(device_or_cpu(self.cpu_fallback, &what, on_device, on_cpu)?.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apsp::Weights;

    #[test]
    fn the_solver_answers_as_the_one_call_face() {
        // 0 -> 1 -> 2 and a dearer 0 -> 2.
        let g = Graph {
            vertices: 3,
            from: vec![0, 1, 0],
            to: vec![1, 2, 2],
            weights: Weights::Int(vec![1, 2, 5]),
        };
        let s = Solver::new(&Backend::Cpu, Config::default()).unwrap();
        let got = s.solve(&g).unwrap();
        assert_eq!(got.backend, "cpu");
        let want = solve(&Backend::Cpu, &g, &Config::default()).unwrap();
        assert_eq!(got.successors, want.successors);
        let p = got.query(0, 2).unwrap();
        assert_eq!((p.reachable, p.path), (true, vec![0, 1, 2]));
        let bad = Config {
            block_x: 0,
            ..Config::default()
        };
        assert!(Solver::new(&Backend::Cpu, bad).is_err());
    }
}
