//! A k-d index: one tree built over a point set and queried many times. The host tree is
//! always there (the CPU reference answers from it, and it is the fallback); on CUDA the
//! tree is built on the device and kept there. The device query's limit on k ([`MAX_K`]) and
//! device out of memory (with `cpu_fallback`, [`device_or_cpu`]) are handled here: callers
//! ask and get the same answers from either backend.

use super::gpu::{DeviceTree, KnnRows, MAX_K};
use super::{check_result_size, cpu, KdTree, Metric, Neighbors, Points, ResultSize, Traversal};
use crate::compute::fallback::device_or_cpu;
use crate::compute::Backend;
use crate::error::Result;

/// How an index is built and answers.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexConfig {
    /// How distance is measured.
    pub metric: Metric,
    /// How the device's k-nearest search rules out far sides (the CPU's answers are the
    /// same whichever).
    pub traversal: Traversal,
    /// Device out of memory builds or answers on the CPU instead of failing.
    pub cpu_fallback: bool,
    /// Names the index in its log lines (a node's name).
    pub label: String,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            metric: Metric::Euclidean,
            traversal: Traversal::Auto,
            cpu_fallback: false,
            label: "k-d index".into(),
        }
    }
}

/// Neighbours of a batch of queries in one flat layout: query i's are
/// `offsets[i]..offsets[i + 1]` of `indices` and `distances`, nearest first. The device's k
/// nearest arrive flat and stay so (a vector per query cost an allocation per query).
#[derive(Debug, Clone, PartialEq)]
pub struct FlatNeighbors {
    /// The neighbours' input indices.
    pub indices: Vec<u32>,
    /// Their distances, as `indices`.
    pub distances: Vec<f32>,
    /// Query i's neighbours are `offsets[i]..offsets[i + 1]`.
    pub offsets: Vec<u32>,
    /// The backend that answered ([`Backend::name`]).
    pub backend: &'static str,
}

impl FlatNeighbors {
    fn from_rows(rows: &[Neighbors], backend: &'static str) -> FlatNeighbors {
        let total = rows.iter().map(Vec::len).sum();
        let mut a = FlatNeighbors {
            indices: Vec::with_capacity(total),
            distances: Vec::with_capacity(total),
            offsets: Vec::with_capacity(rows.len() + 1),
            backend,
        };
        a.offsets.push(0);
        for r in rows {
            a.indices.extend(r.iter().map(|e| e.1));
            a.distances.extend(r.iter().map(|e| e.0));
            a.offsets.push(a.indices.len() as u32);
        }
        a
    }

    fn from_knn(r: KnnRows, backend: &'static str) -> FlatNeighbors {
        FlatNeighbors {
            offsets: (0..=r.rows).map(|i| (i * r.k) as u32).collect(),
            indices: r.indices,
            distances: r.distances,
            backend,
        }
    }

    /// The queries' rows, one vector each.
    pub fn rows(&self) -> Vec<Neighbors> {
        self.offsets
            .windows(2)
            .map(|w| {
                let r = w[0] as usize..w[1] as usize;
                self.distances[r.clone()]
                    .iter()
                    .copied()
                    .zip(self.indices[r].iter().copied())
                    .collect()
            })
            .collect()
    }
}

/// One point set's tree, on its backend.
///
/// ```
/// use gpu_planning::compute::Backend;
/// use gpu_planning::kdtree::{Index, IndexConfig, Points};
///
/// let points = Points::new(2, vec![0.0, 0.0, 1.0, 0.0, 5.0, 5.0])?;
/// let index = Index::build(&Backend::Cpu, &points, IndexConfig::default())?;
/// let near = index.knn(&[0.9, 0.1], 2)?;
/// assert_eq!(near.indices, vec![1, 0]); // the point (1, 0), then (0, 0)
/// assert_eq!(near.offsets, vec![0, 2]);
/// # Ok::<(), gpu_planning::error::Error>(())
/// ```
pub struct Index {
    host: KdTree,
    device: Option<DeviceTree>,
    config: IndexConfig,
}

impl Index {
    /// Builds the tree over `points` (on CUDA, on the device, and its host copy downloaded).
    pub fn build(backend: &Backend, points: &Points, config: IndexConfig) -> Result<Index> {
        let (host, device) = match backend {
            Backend::Cpu => (cpu::build(points), None),
            Backend::Cuda(rt) => {
                let what = format!("{}: tree of {} points", config.label, points.len());
                let on_device = || {
                    let (dev, _) = DeviceTree::build(rt, points)?;
                    dev.set_traversal(config.traversal);
                    Ok((dev.download(points.len())?, Some(dev)))
                };
                let on_cpu = || Ok((cpu::build(points), None));
                device_or_cpu(config.cpu_fallback, &what, on_device, on_cpu)?.0
            }
        };
        Ok(Index {
            host,
            device,
            config,
        })
    }

    /// An index over a tree built already (a tree read from a file, or built elsewhere).
    pub fn from_tree(backend: &Backend, tree: KdTree, config: IndexConfig) -> Result<Index> {
        let device = match backend {
            Backend::Cpu => None,
            Backend::Cuda(rt) => {
                let what = format!("{}: tree of {} points", config.label, tree.len());
                let on_device = || {
                    let dev = DeviceTree::upload(rt, &tree)?;
                    dev.set_traversal(config.traversal);
                    Ok(Some(dev))
                };
                device_or_cpu(config.cpu_fallback, &what, on_device, || Ok(None))?.0
            }
        };
        Ok(Index {
            host: tree,
            device,
            config,
        })
    }

    /// The host tree (the CPU's, equal to the device's).
    pub fn tree(&self) -> &KdTree {
        &self.host
    }

    /// How it measures distance.
    pub fn metric(&self) -> Metric {
        self.config.metric
    }

    /// Where queries run: "cuda" while the tree is on the device, else "cpu".
    pub fn backend_name(&self) -> &'static str {
        if self.device.is_some() {
            "cuda"
        } else {
            "cpu"
        }
    }

    /// Refuses a query whose answer could hold more than `max_results` neighbours
    /// ([`check_result_size`]), before anything is allocated for it.
    pub fn check_result_size(
        &self,
        queries: &[f32],
        request: ResultSize,
        max_results: u64,
    ) -> Result<()> {
        check_result_size(&self.host, queries, request, max_results)
    }

    /// The k nearest of each query (all distinct points when k is above their count). Above
    /// the device query's [`MAX_K`] the CPU answers.
    pub fn knn(&self, queries: &[f32], k: usize) -> Result<FlatNeighbors> {
        let metric = self.config.metric;
        let on_cpu = || {
            Ok(FlatNeighbors::from_rows(
                &cpu::knn(&self.host, queries, k, metric)?,
                "cpu",
            ))
        };
        match &self.device {
            Some(_) if k > MAX_K => {
                tracing::warn!(
                    "{}: k = {k} is above the device query's limit of {MAX_K}: answered on \
                     the CPU",
                    self.config.label
                );
                on_cpu()
            }
            Some(d) => self.on_device_or_cpu(
                || {
                    Ok(FlatNeighbors::from_knn(
                        d.knn_rows(queries, k, metric)?,
                        "cuda",
                    ))
                },
                on_cpu,
            ),
            None => on_cpu(),
        }
    }

    /// Every point within `r` of each query, nearest first, at most `max_count` (0: all).
    pub fn radius(&self, queries: &[f32], r: f32, max_count: usize) -> Result<FlatNeighbors> {
        let metric = self.config.metric;
        let on_cpu = || {
            let rows = cpu::radius(&self.host, queries, r, max_count, metric)?;
            Ok(FlatNeighbors::from_rows(&rows, "cpu"))
        };
        match &self.device {
            Some(d) => self.on_device_or_cpu(
                || {
                    let rows = d.radius(queries, r, max_count, metric)?;
                    Ok(FlatNeighbors::from_rows(&rows, "cuda"))
                },
                on_cpu,
            ),
            None => on_cpu(),
        }
    }

    fn on_device_or_cpu(
        &self,
        device: impl FnOnce() -> Result<FlatNeighbors>,
        cpu: impl FnOnce() -> Result<FlatNeighbors>,
    ) -> Result<FlatNeighbors> {
        Ok(device_or_cpu(self.config.cpu_fallback, &self.config.label, device, cpu)?.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::XorShift;

    #[test]
    fn the_index_answers_as_the_cpu_reference_in_one_flat_layout() {
        let mut rng = XorShift::new(7);
        let coords: Vec<f32> = (0..3 * 301).map(|_| (rng.next_u64() % 50) as f32).collect();
        let points = Points::new(3, coords).unwrap();
        let tree = cpu::build(&points);
        let index = Index::build(&Backend::Cpu, &points, IndexConfig::default()).unwrap();
        assert_eq!(index.backend_name(), "cpu");
        let queries: Vec<f32> = (0..3 * 17).map(|_| (rng.next_u64() % 60) as f32).collect();
        assert!(index.knn(&queries, 0).is_err());
        for k in [1, 5, 300, 400] {
            let got = index.knn(&queries, k).unwrap();
            let want = cpu::knn(&tree, &queries, k, Metric::Euclidean).unwrap();
            assert_eq!(got.rows(), want, "k = {k}");
            assert_eq!(got.offsets.len(), 18);
        }
        for (r, max_count) in [(0.0, 0), (5.0, 0), (5.0, 3), (1e9, 0)] {
            let got = index.radius(&queries, r, max_count).unwrap();
            let want = cpu::radius(&tree, &queries, r, max_count, Metric::Euclidean).unwrap();
            assert_eq!(got.rows(), want, "r = {r}, max_count = {max_count}");
        }
        let again = Index::from_tree(&Backend::Cpu, tree, IndexConfig::default()).unwrap();
        assert_eq!(
            again.knn(&queries, 3).unwrap(),
            index.knn(&queries, 3).unwrap()
        );
    }
}
