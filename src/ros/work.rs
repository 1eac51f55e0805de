//! What each node computed, and on which backend: a node on a CUDA process answers on the CPU
//! after a device out-of-memory (`cpu_fallback`) or for a request the device cannot take, and
//! an answer does not show which. The count lets a caller holding the runtime (the tests, under
//! `GPU_PLANNING_REQUIRE_CUDA=1`) see that the device did the work it was given.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Computations finished per node and backend name, for one runtime.
#[derive(Debug, Default)]
pub struct WorkTally {
    counts: Mutex<BTreeMap<(String, &'static str), u64>>,
}

impl WorkTally {
    fn record(&self, node: &str, backend: &'static str) {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        *counts.entry((node.to_string(), backend)).or_default() += 1;
    }

    /// Computations node `node` (its name, without namespace) finished on `backend` ("cpu" or
    /// "cuda").
    pub fn count(&self, node: &str, backend: &str) -> u64 {
        let counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        counts
            .iter()
            .filter(|((n, b), _)| n == node && *b == backend)
            .map(|(_, c)| c)
            .sum()
    }
}

/// One node's handle on its runtime's [`WorkTally`], cheap to clone into worker threads.
#[derive(Debug, Clone)]
pub struct NodeWork {
    tally: Arc<WorkTally>,
    node: Arc<str>,
}

impl NodeWork {
    pub fn new(tally: Arc<WorkTally>, node: &str) -> NodeWork {
        NodeWork {
            tally,
            node: node.into(),
        }
    }

    /// One computation finished on `backend` ([`crate::compute::Backend::name`]).
    pub fn record(&self, backend: &'static str) {
        self.tally.record(&self.node, backend);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_per_node_and_backend() {
        let tally = Arc::new(WorkTally::default());
        let a = NodeWork::new(tally.clone(), "a");
        let b = NodeWork::new(tally.clone(), "b");
        a.record("cuda");
        a.record("cuda");
        a.record("cpu");
        b.record("cpu");
        assert_eq!(tally.count("a", "cuda"), 2);
        assert_eq!(tally.count("a", "cpu"), 1);
        assert_eq!(tally.count("b", "cuda"), 0);
        assert_eq!(tally.count("b", "cpu"), 1);
    }
}
