//! Floyd–Warshall: the CPU solvers against Bellman–Ford, path validity, negative cycles,
//! integer limits, file formats, the CLI; networkx's real graphs (LANL's routes, WormNet)
//! against Dijkstra; and every GPU memory model against the CPU reference of its relaxation
//! order (distances and successors, bit for bit) on fresh random graphs with negative edges,
//! many ties and odd sizes, and on the real graphs.

use gpu_planning::apsp::graph::dense;
use gpu_planning::apsp::io::{parse_csv, parse_dimacs};
use gpu_planning::apsp::synth::{random_graph, to_float};
use gpu_planning::apsp::{cpu, Config, Graph, MemoryModel, Weight, Weights, NO_VERTEX};
use gpu_planning::apsp::{finish, padded_size, run, solve, Distances};
use gpu_planning::compute::testing::cuda_or_skip;
use gpu_planning::compute::Backend;
use gpu_planning::Error;
use proptest::prelude::*;

/// Bellman–Ford from every source, in i64: the independent reference for distances.
fn bellman_ford(g: &Graph) -> Vec<Option<i64>> {
    let n = g.vertices as usize;
    let Weights::Int(w) = &g.weights else {
        panic!("integer graphs only")
    };
    let mut out = vec![None; n * n];
    for s in 0..n {
        let mut d: Vec<Option<i64>> = vec![None; n];
        d[s] = Some(0);
        for _ in 0..n {
            let mut changed = false;
            for ((&u, &v), &x) in g.from.iter().zip(&g.to).zip(w) {
                let (u, v) = (u as usize, v as usize);
                if let Some(du) = d[u] {
                    let c = du + x as i64;
                    if d[v].is_none_or(|dv| c < dv) {
                        d[v] = Some(c);
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        out[s * n..(s + 1) * n].copy_from_slice(&d);
    }
    out
}

fn lightest(g: &Graph, u: u32, v: u32) -> Option<i64> {
    let Weights::Int(w) = &g.weights else {
        unreachable!()
    };
    (0..w.len())
        .filter(|&e| g.from[e] == u && g.to[e] == v)
        .map(|e| w[e] as i64)
        .min()
}

/// The lightest edge of every ordered pair, as a dense matrix.
fn lightest_matrix(g: &Graph) -> Vec<Option<i64>> {
    let n = g.vertices as usize;
    let Weights::Int(w) = &g.weights else {
        unreachable!()
    };
    let mut m = vec![None; n * n];
    for ((&u, &v), &x) in g.from.iter().zip(&g.to).zip(w) {
        let c = u as usize * n + v as usize;
        if m[c].is_none_or(|y| (x as i64) < y) {
            m[c] = Some(x as i64);
        }
    }
    m
}

/// Every reachable pair's path is simple, uses existing edges and weighs its distance.
fn assert_paths_valid(g: &Graph, d: &[i32], h: &[u32]) {
    let n = g.vertices as usize;
    let edge = lightest_matrix(g);
    for u in 0..n as u32 {
        for v in 0..n as u32 {
            let c = u as usize * n + v as usize;
            if !d[c].reached() {
                assert_eq!(h[c], NO_VERTEX, "unreached {u}->{v} has a successor");
                continue;
            }
            let p = gpu_planning::apsp::paths::path(h, n, u, v)
                .unwrap_or_else(|| panic!("no path {u}->{v} though distance {}", d[c]));
            let mut seen = std::collections::HashSet::new();
            assert!(
                p.iter().all(|x| seen.insert(*x)),
                "path {u}->{v} not simple: {p:?}"
            );
            let total: i64 = if u == v {
                0
            } else {
                p.windows(2)
                    .map(|s| {
                        edge[s[0] as usize * n + s[1] as usize].expect("path uses a missing edge")
                    })
                    .sum()
            };
            assert_eq!(total, d[c] as i64, "path {u}->{v} {p:?} weighs {total}");
        }
    }
}

fn int_solution(g: &Graph, config: &Config) -> (Vec<i32>, Vec<u32>) {
    let s = solve(&Backend::Cpu, g, config).expect("solve");
    match s.distances {
        Distances::Int(d) => (d, s.successors),
        _ => panic!("integer graph gave float distances"),
    }
}

fn model(m: MemoryModel) -> Config {
    Config {
        memory_model: m,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn cpu_solvers_match_bellman_ford(n in 0u32..45, density in 0.0f64..1.0, hi in 0i32..6, shift in 0i32..8, seed in any::<u64>(), tile in prop::sample::select(vec![16u32, 32, 64])) {
        let g = random_graph(n, density, 0, hi, shift, seed);
        let bf = bellman_ford(&g);
        for m in [MemoryModel::Linear, MemoryModel::Tiled] {
            let config = Config { memory_model: m, tile, thread_tile: tile / 16, ..Config::default() };
            let (d, h) = int_solution(&g, &config);
            for (c, want) in bf.iter().enumerate() {
                prop_assert_eq!(d[c].reached().then_some(d[c] as i64), *want, "pair {}", c);
            }
            assert_paths_valid(&g, &d, &h);
        }
    }
}

#[test]
fn blocked_order_may_keep_another_equal_path() {
    // i = 20 -> j = 21 two ways of length 3: via 1 (found at k = 1 in the textbook order) and
    // via 2 -> 0 (found at k = 2 by the textbook, but already at k = 0 by the blocked order,
    // whose phase 2 has improved d[20][0] through vertex 2 before phase 3 runs k = 0).
    let (from, to, w) = (
        vec![20, 2, 0, 20, 1],
        vec![2, 0, 21, 1, 21],
        vec![1, 1, 1, 1, 2],
    );
    let g = Graph {
        vertices: 22,
        from,
        to,
        weights: Weights::Int(w),
    };
    let (dt, ht) = int_solution(&g, &model(MemoryModel::Linear));
    let blocked = Config {
        memory_model: MemoryModel::Tiled,
        tile: 16,
        thread_tile: 1,
        ..Config::default()
    };
    let (db, hb) = int_solution(&g, &blocked);
    assert_eq!(dt, db);
    assert_eq!(ht[20 * 22 + 21], 1);
    assert_eq!(hb[20 * 22 + 21], 2);
    assert_paths_valid(&g, &dt, &ht);
    assert_paths_valid(&g, &db, &hb);
}

#[test]
fn parallel_edges_keep_the_lightest_and_positive_self_loops_are_ignored() {
    let g = Graph {
        vertices: 3,
        from: vec![0, 0, 0, 1, 1],
        to: vec![1, 1, 1, 1, 2],
        weights: Weights::Int(vec![5, 2, 7, 4, 1]),
    };
    let (d, h) = int_solution(&g, &Config::default());
    assert_eq!(&d[0..3], &[0, 2, 3]);
    assert_eq!(h[2], 1);
    assert_eq!(d[4], 0);
    assert!(!d[2 * 3].reached());
}

fn expect_cycle(g: &Graph, on_cycle: &[u32]) {
    for m in MemoryModel::ALL {
        match solve(&Backend::Cpu, g, &model(m)) {
            Err(Error::NegativeCycle { vertex, cycle }) => {
                assert!(on_cycle.contains(&vertex), "{m:?}: vertex {vertex}");
                // Integer weights: the cycle is always named, closed, and really negative.
                let c = cycle.unwrap_or_else(|| panic!("{m:?}: no cycle reported"));
                assert_eq!(c.first(), c.last());
                assert!(c.iter().all(|v| on_cycle.contains(v)), "{m:?}: {c:?}");
                let total: i64 = c.windows(2).map(|s| lightest(g, s[0], s[1]).unwrap()).sum();
                assert!(total < 0, "{m:?}: reported cycle {c:?} weighs {total}");
            }
            other => panic!("{m:?}: expected a negative cycle, got {other:?}"),
        }
    }
}

#[test]
fn negative_cycles_are_reported_with_a_vertex_on_them() {
    // 3 -> 4 -> 5 -> 3 weighs -1, reachable from 0; 6 hangs off it.
    let g = Graph {
        vertices: 7,
        from: vec![0, 1, 3, 4, 5, 5],
        to: vec![1, 3, 4, 5, 3, 6],
        weights: Weights::Int(vec![1, 1, 2, -4, 1, 1]),
    };
    expect_cycle(&g, &[3, 4, 5]);
    // A negative self loop is a cycle too, even with nothing else around.
    let g = Graph {
        vertices: 2,
        from: vec![1],
        to: vec![1],
        weights: Weights::Int(vec![-1]),
    };
    expect_cycle(&g, &[1]);
    // Large negative weights on a cycle must not wrap around to positive distances.
    let g = Graph {
        vertices: 40,
        from: (0..40).collect(),
        to: (0..40).map(|v| (v + 1) % 40).collect(),
        weights: Weights::Int(vec![-13_000_000; 40]),
    };
    expect_cycle(&g, &(0..40).collect::<Vec<_>>());
}

#[test]
fn integer_weights_are_exact_up_to_the_documented_limit_and_refused_beyond() {
    // A chain whose total is just below 2^29: every prefix distance is exact.
    let n = 9u32;
    let w = ((1i32 << 29) - 1) / 8;
    let g = Graph {
        vertices: n,
        from: (0..n - 1).collect(),
        to: (1..n).collect(),
        weights: Weights::Int(vec![w; n as usize - 1]),
    };
    for m in MemoryModel::ALL {
        let (d, _) = int_solution(&g, &model(m));
        for (v, &x) in d.iter().take(n as usize).enumerate() {
            assert_eq!(x, v as i32 * w, "{m:?}");
        }
        assert!(
            !d[n as usize].reached(),
            "{m:?}: 1 -> 0 must be unreachable"
        );
    }
    for bad in [i32::MAX, 1 << 29, i32::MIN, -(1 << 29)] {
        let g = Graph {
            vertices: 2,
            from: vec![0],
            to: vec![1],
            weights: Weights::Int(vec![bad]),
        };
        let e = solve(&Backend::Cpu, &g, &Config::default()).unwrap_err();
        assert!(e.to_string().contains("integer_weights"), "{bad}: {e}");
    }
}

#[test]
fn bad_graphs_are_named() {
    let g = Graph {
        vertices: 3,
        from: vec![0, 5],
        to: vec![1, 2],
        weights: Weights::Int(vec![1, 1]),
    };
    let e = solve(&Backend::Cpu, &g, &Config::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("edge_from[1]") && e.contains('5'), "{e}");
    let g = Graph {
        vertices: 3,
        from: vec![0],
        to: vec![1],
        weights: Weights::Float(vec![f32::NAN]),
    };
    let e = solve(&Backend::Cpu, &g, &Config::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("weights[0]") && e.contains("NaN"), "{e}");
    let g = Graph {
        vertices: 3,
        from: vec![0, 1],
        to: vec![1],
        weights: Weights::Int(vec![1, 1]),
    };
    assert!(solve(&Backend::Cpu, &g, &Config::default()).is_err());
    let bad = Config {
        tile: 48,
        ..Config::default()
    };
    let e = solve(&Backend::Cpu, &g, &bad).unwrap_err().to_string();
    assert!(e.contains("tile") && e.contains("48"), "{e}");
}

#[test]
fn files_parse_and_errors_name_the_line() {
    let g = parse_csv("t.csv", "from,to,weight\n0,1,4\n1,2,-1.5\n", None).unwrap();
    assert_eq!(g.vertices, 3);
    assert_eq!(g.weights, Weights::Float(vec![4.0, -1.5]));
    let g = parse_dimacs("t.gr", "c x\np sp 4 2\na 1 2 3\na 4 1 -2\n", None).unwrap();
    assert_eq!(
        (g.vertices, g.from.clone(), g.to.clone()),
        (4, vec![0, 3], vec![1, 0])
    );
    assert_eq!(g.weights, Weights::Int(vec![3, -2]));
    for (text, want) in [
        ("from,to\n0,1\n", "t.csv:1"),
        ("from,to,weight\n0,1,x\n", "weight 'x'"),
        ("from,to,weight\n0,-1,2\n", "t.csv:2"),
        ("from,to,weight\n0,1\n", "t.csv:2"),
    ] {
        let e = parse_csv("t.csv", text, None).unwrap_err().to_string();
        assert!(e.contains(want), "{text:?}: {e}");
    }
    let e = parse_dimacs("t.gr", "p sp 2 1\na 0 1 1\n", None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("t.gr:2"), "{e}");
    // An id beyond the vertex count is named as the file writes it (1-based in DIMACS), at
    // its line; --vertices overrides the file's count; a weight's error carries its line.
    for (got, wants) in [
        (
            parse_dimacs("t.gr", "p sp 2 1\nc x\na 1 3 1\n", None),
            ["t.gr:3", "head 3 is not one of the 2 vertices (ids 1..=2)"],
        ),
        (
            parse_dimacs("t.gr", "p sp 3 2\na 1 2 1\na 4 1 1\n", Some(2)),
            ["t.gr:3", "tail 4 is not one of the 2"],
        ),
        (
            parse_csv("t.csv", "from,to,weight\n0,1,1\n\n2,0,1\n", Some(2)),
            ["t.csv:4", "from 2 is not one of the 2 vertices (ids 0..=1)"],
        ),
        (
            parse_csv("t.csv", "from,to,weight\n0,1,1\n0,1,x\n", None),
            ["t.csv:3: edge 1", "weight 'x'"],
        ),
    ] {
        let e = got.unwrap_err().to_string();
        assert!(wants.iter().all(|w| e.contains(w)), "{e}");
    }
}

#[test]
fn cli_answers_queries_as_json() {
    // The device machine runs copied test binaries beside a copied executable.
    let exe = gpu_planning::env::BIN
        .get()
        .ok_or(())
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_gpu_planning").to_string());
    let out = std::process::Command::new(&exe)
        .args([
            "apsp",
            "--graph",
            "tests/data/graphs/triangle.gr",
            "--query",
            "1,4",
        ])
        .args(["--query", "4,5", "--backend", "cpu", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["vertices"], 5);
    assert_eq!(v["negative_cycle"], false);
    let q = &v["queries"];
    assert_eq!(q[0]["distance"], 2);
    assert_eq!(q[0]["path"], serde_json::json!([1, 3, 2, 4]));
    assert_eq!(q[1]["reachable"], false);
    assert_eq!(q[1]["distance"], serde_json::Value::Null);
    let out = std::process::Command::new(&exe)
        .args([
            "apsp",
            "--graph",
            "tests/data/graphs/negative_cycle.csv",
            "--json",
        ])
        .args(["--backend", "cpu"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["negative_cycle"], true);
    assert!(v["vertex"].as_u64().is_some_and(|x| x <= 2), "{v}");
}

/// A graph of networkx's examples (tests/data/graphs/networkx/) as networkx reads it:
/// undirected, each line's two ends (names, numbered in order of first appearance) joined both
/// ways, weighted by `weight` of the line's fields.
fn networkx_graph(
    file: &str,
    weight: impl Fn(&[&str]) -> f64,
) -> (u32, Vec<u32>, Vec<u32>, Vec<f64>) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/graphs/networkx")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let mut ids = std::collections::HashMap::new();
    let (mut from, mut to, mut w) = (Vec::new(), Vec::new(), Vec::new());
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let mut id = |name: &str| {
            let next = ids.len() as u32;
            *ids.entry(name.to_string()).or_insert(next)
        };
        let (a, b) = (id(fields[0]), id(fields[1]));
        let x = weight(&fields);
        from.extend([a, b]);
        to.extend([b, a]);
        w.extend([x, x]);
    }
    (ids.len() as u32, from, to, w)
}

/// The real graphs: LANL's routes by hops and by the head host's round-trip time (ms, f32),
/// WormNet by hops.
fn real_graphs() -> Vec<(&'static str, Graph)> {
    let graph = |(n, from, to, w): (u32, Vec<u32>, Vec<u32>, Vec<f64>), float: bool| Graph {
        vertices: n,
        from,
        to,
        weights: if float {
            Weights::Float(w.iter().map(|&x| x as f32).collect())
        } else {
            Weights::Int(w.iter().map(|&x| x as i32).collect())
        },
    };
    let rtt = |f: &[&str]| f[2].parse::<f64>().expect("rtt");
    vec![
        (
            "lanl hops",
            graph(networkx_graph("lanl_routes.edgelist", |_| 1.0), false),
        ),
        (
            "lanl rtt",
            graph(networkx_graph("lanl_routes.edgelist", rtt), true),
        ),
        (
            "wormnet hops",
            graph(networkx_graph("WormNet.v3.benchmark.txt", |_| 1.0), false),
        ),
    ]
}

/// Every edge's weight as f64.
fn weights_f64(g: &Graph) -> Vec<f64> {
    match &g.weights {
        Weights::Int(w) => w.iter().map(|&x| x as f64).collect(),
        Weights::Float(w) => w.iter().map(|&x| x as f64).collect(),
    }
}

/// Dijkstra from every vertex in f64 (weights non-negative): the independent reference.
fn dijkstra_all(g: &Graph) -> Vec<Option<f64>> {
    let n = g.vertices as usize;
    let mut adj = vec![Vec::new(); n];
    for ((&u, &v), x) in g.from.iter().zip(&g.to).zip(weights_f64(g)) {
        adj[u as usize].push((v as usize, x));
    }
    let mut out = vec![None; n * n];
    for s in 0..n {
        let row = &mut out[s * n..(s + 1) * n];
        let mut heap = std::collections::BinaryHeap::new();
        row[s] = Some(0.0);
        heap.push((std::cmp::Reverse(0u64), s));
        while let Some((std::cmp::Reverse(bits), u)) = heap.pop() {
            let du = f64::from_bits(bits);
            if row[u].is_some_and(|d| d < du) {
                continue;
            }
            for &(v, x) in &adj[u] {
                let c = du + x;
                if row[v].is_none_or(|d| c < d) {
                    row[v] = Some(c);
                    // Non-negative f64s order as their bits do.
                    heap.push((std::cmp::Reverse(c.to_bits()), v));
                }
            }
        }
    }
    out
}

/// Networkx's real graphs on the CPU: every distance equal to Dijkstra's (hops exactly, the
/// routes' f32 times within 1e-5 relative), and every path, followed through the successors,
/// made of the graph's edges and weighing its distance.
#[test]
fn real_graphs_from_networkx_match_dijkstra() {
    for (name, g) in real_graphs() {
        let n = g.vertices as usize;
        let s = solve(&Backend::Cpu, &g, &Config::default()).expect(name);
        let reference = dijkstra_all(&g);
        let d: Vec<f64> = (0..n * n)
            .map(|c| s.distance((c / n) as u32, (c % n) as u32))
            .collect();
        let mut edge = std::collections::HashMap::new();
        for ((&u, &v), x) in g.from.iter().zip(&g.to).zip(weights_f64(&g)) {
            let y = edge.entry((u, v)).or_insert(x);
            *y = x.min(*y);
        }
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-5 * b.abs().max(1.0);
        let mut reached = 0usize;
        for c in 0..n * n {
            let (u, v) = ((c / n) as u32, (c % n) as u32);
            match reference[c] {
                None => {
                    assert!(
                        d[c].is_infinite(),
                        "{name}: {u}->{v} unreachable, got {}",
                        d[c]
                    );
                    assert_eq!(s.successors[c], NO_VERTEX, "{name}: {u}->{v}");
                }
                Some(r) => {
                    reached += 1;
                    assert!(close(d[c], r), "{name}: {u}->{v} {} against {r}", d[c]);
                    let p = gpu_planning::apsp::paths::path(&s.successors, n, u, v)
                        .unwrap_or_else(|| panic!("{name}: no path {u}->{v}"));
                    let total: f64 = p
                        .windows(2)
                        .map(|s| *edge.get(&(s[0], s[1])).expect("path uses a missing edge"))
                        .sum();
                    assert!(
                        close(total, r),
                        "{name}: path {u}->{v} weighs {total}, not {r}"
                    );
                }
            }
        }
        // Each graph is one large component and a few small ones.
        assert!(
            reached > n * n / 2,
            "{name}: {reached} pairs reached of {}",
            n * n
        );
    }
}

// ---- GPU ------------------------------------------------------------------------------------

/// Networkx's real graphs on the GPU: every memory model against the CPU reference of its
/// order, bit for bit, and the whole solve (edges in, answer out) against the CPU's.
#[test]
fn gpu_real_graphs_from_networkx_match_the_cpu() {
    let Some(rt) = cuda_or_skip("gpu_real_graphs_from_networkx_match_the_cpu") else {
        return;
    };
    let backend = Backend::Cuda(rt);
    for (name, g) in real_graphs() {
        for m in MemoryModel::ALL {
            match &g.weights {
                Weights::Int(w) => check_gpu(&backend, &g, w, &model(m), name),
                Weights::Float(w) => check_gpu(&backend, &g, w, &model(m), name),
            }
        }
        let host = solve(&Backend::Cpu, &g, &Config::default()).expect(name);
        let device = solve(&backend, &g, &Config::default()).expect(name);
        assert_eq!(device.distances, host.distances, "{name}: whole solve");
        assert_eq!(device.successors, host.successors, "{name}: whole solve");
    }
}

/// The GPU result of `config` against the CPU reference of the same order, bit for bit.
fn check_gpu<T: Weight>(backend: &Backend, g: &Graph, w: &[T], config: &Config, what: &str) {
    let n = g.vertices as usize;
    let np = padded_size(n, config);
    let (d0, h0) = dense(n, np, &g.from, &g.to, w);
    let (mut dc, mut hc) = (d0.clone(), h0.clone());
    if config.memory_model.is_blocked() {
        cpu::blocked(&mut dc, &mut hc, np, config.blocked_shape(np).0 as usize).unwrap();
    } else {
        cpu::textbook(&mut dc, &mut hc, np).unwrap();
    }
    let (mut dg, mut hg) = (d0, h0);
    run(backend, &mut dg, &mut hg, np, config).expect("gpu run");
    // A cycle of total weight zero can round to a tiny negative sum in floats: a negative
    // cycle, which the solver reports instead of distances (values past it depend on how
    // often each order goes round it). Then both sides must see one, and nothing else counts.
    let negative = |d: &[T]| (0..n).any(|i| d[i * np + i] < T::ZERO);
    if negative(&dc) {
        assert!(
            negative(&dg),
            "{what}: the CPU finds a negative cycle, the GPU does not"
        );
        return;
    }
    let (dc, hc) = finish(dc, hc, n, np);
    let (dg, hg) = finish(dg, hg, n, np);
    let bits = |d: &[T]| d.iter().map(|x| format!("{x:?}")).collect::<Vec<_>>();
    if bits(&dc) != bits(&dg) || hc != hg {
        let c = (0..n * n)
            .find(|&c| format!("{:?}", dc[c]) != format!("{:?}", dg[c]) || hc[c] != hg[c]);
        panic!(
            "{what} {:?} tile {} tt {}: first difference at {c:?}: cpu {:?}/{:?} gpu {:?}/{:?}",
            config.memory_model,
            config.tile,
            config.thread_tile,
            c.map(|c| dc[c]),
            c.map(|c| hc[c]),
            c.map(|c| dg[c]),
            c.map(|c| hg[c])
        );
    }
}

#[test]
fn gpu_models_match_cpu_references() {
    let Some(rt) = cuda_or_skip("gpu_models_match_cpu_references") else {
        return;
    };
    let backend = Backend::Cuda(rt);
    let seed = gpu_planning::compute::testing::seed(0xf10d);
    let shapes = [
        (16, 1),
        (16, 4),
        (32, 2),
        (32, 8),
        (64, 4),
        (64, 8),
        (64, 2),
    ];
    let mut order_sensitive = false;
    for (i, n) in [1u32, 2, 17, 31, 33, 64, 65, 100, 129, 257]
        .into_iter()
        .enumerate()
    {
        // Shift 5 makes many edges negative (the generic phase 3); shift 0 keeps every weight
        // non-negative, so integer tiles run packed.
        for (density, hi, shift) in [
            (0.15, 3, 5),
            (0.85, 1, 5),
            (0.5, 40, 5),
            (0.3, 2, 0),
            (0.6, 40, 0),
        ] {
            let g = random_graph(
                n,
                density,
                0,
                hi,
                shift,
                seed ^ (i as u64 * 7919) ^ hi as u64,
            );
            let Weights::Int(w) = &g.weights else {
                unreachable!()
            };
            let f = to_float(&g);
            let Weights::Float(wf) = &f.weights else {
                unreachable!()
            };
            order_sensitive |= wf
                .windows(3)
                .any(|t| (t[0] + t[1]) + t[2] != t[0] + (t[1] + t[2]));
            for m in MemoryModel::ALL {
                let mut configs = vec![model(m)];
                if m == MemoryModel::Tiled {
                    configs.extend(shapes.iter().map(|&(tile, thread_tile)| Config {
                        memory_model: m,
                        tile,
                        thread_tile,
                        ..Config::default()
                    }));
                }
                if m == MemoryModel::Coalesced || m == MemoryModel::Shared {
                    configs.push(Config {
                        memory_model: m,
                        block_x: 7,
                        block_y: 5,
                        ..Config::default()
                    });
                }
                for c in &configs {
                    check_gpu(&backend, &g, w, c, &format!("n {n} density {density} int"));
                    check_gpu(
                        &backend,
                        &f,
                        wf,
                        c,
                        &format!("n {n} density {density} float"),
                    );
                }
            }
        }
    }
    // The float weights must make sums order-dependent, or the float comparison is vacuous.
    assert!(
        order_sensitive,
        "no float weights whose sums depend on order"
    );
}

#[test]
fn gpu_default_matches_cpu_on_a_larger_graph_and_finds_cycles() {
    let Some(rt) = cuda_or_skip("gpu_default_matches_cpu_on_a_larger_graph_and_finds_cycles")
    else {
        return;
    };
    let backend = Backend::Cuda(rt);
    let seed = gpu_planning::compute::testing::seed(0xbeef);
    let g = random_graph(777, 0.3, 0, 9, 50, seed);
    let Weights::Int(w) = &g.weights else {
        unreachable!()
    };
    check_gpu(&backend, &g, w, &Config::default(), "n 777");
    let s = solve(&backend, &g, &Config::default()).unwrap();
    let (d, h) = int_solution(&g, &Config::default());
    assert_eq!(s.distances, Distances::Int(d.clone()));
    assert_eq!(s.successors, h);
    assert_paths_valid(&g, &d, &h);
    // Negative cycles on every model, also with values driven far below the limits.
    let g = Graph {
        vertices: 130,
        from: (0..130).collect(),
        to: (0..130).map(|v| (v + 1) % 130).collect(),
        weights: Weights::Int(vec![-4_000_000; 130]),
    };
    for m in MemoryModel::ALL {
        match solve(&backend, &g, &model(m)) {
            Err(Error::NegativeCycle { vertex, cycle }) => {
                assert!(vertex < 130);
                let c = cycle.unwrap_or_else(|| panic!("{m:?}: no cycle reported"));
                assert_eq!((c.len(), c.first()), (131, c.last()), "{m:?}: {c:?}");
            }
            other => panic!("{m:?}: expected a negative cycle, got {other:?}"),
        }
    }
    // Near the integer limit on the GPU too.
    let n = 70u32;
    let w = ((1i32 << 29) - 1) / 69;
    let g = Graph {
        vertices: n,
        from: (0..n - 1).collect(),
        to: (1..n).collect(),
        weights: Weights::Int(vec![w; n as usize - 1]),
    };
    for m in MemoryModel::ALL {
        let s = solve(&backend, &g, &model(m)).unwrap();
        assert_eq!(s.distance(0, n - 1), (69 * w) as f64, "{m:?}");
        assert_eq!(s.distance(n - 1, 0), f64::INFINITY, "{m:?}");
    }
}

/// Packed and generic phase-3 tiles in one solve: non-negative weights 1 and 2 (many equal
/// alternatives), except that every edge into the last five vertices weighs more than the packed
/// range (2^22), so tiles holding their columns run the generic loop and the others packed, on
/// shapes whose tiles do not divide n.
#[test]
fn gpu_packed_and_generic_tiles_agree_with_the_cpu() {
    let Some(rt) = cuda_or_skip("gpu_packed_and_generic_tiles_agree_with_the_cpu") else {
        return;
    };
    let backend = Backend::Cuda(rt);
    let seed = gpu_planning::compute::testing::seed(0x9ac4);
    for (i, n) in [300u32, 517].into_iter().enumerate() {
        let mut g = random_graph(n, 0.05, 1, 2, 0, seed ^ i as u64);
        let mut rng = gpu_planning::rng::XorShift::new(seed ^ 0x5eed ^ i as u64);
        let Weights::Int(w) = &mut g.weights else {
            unreachable!()
        };
        for (x, &to) in w.iter_mut().zip(&g.to) {
            if to >= n - 5 {
                *x = 4_500_000 + (rng.next_u64() % 1_500_000) as i32;
            }
        }
        let w = w.clone();
        for (tile, thread_tile) in [(0, 0), (64, 4), (64, 8), (32, 2), (16, 1)] {
            let c = Config {
                memory_model: MemoryModel::Tiled,
                tile,
                thread_tile,
                ..Config::default()
            };
            check_gpu(&backend, &g, &w, &c, &format!("n {n} heavy edges"));
        }
        // The solver refuses graphs whose path bound passes 2^29 (these edges' sums could), so
        // the range check reads the CPU reference's matrix directly.
        let np = padded_size(n as usize, &Config::default());
        let tile = Config::default().blocked_shape(np).0 as usize;
        let (mut d, mut h) = dense(n as usize, np, &g.from, &g.to, &w);
        cpu::blocked(&mut d, &mut h, np, tile).unwrap();
        let wide = d
            .iter()
            .filter(|&&x| (1 << 22..1 << 29).contains(&x))
            .count();
        let packed = d.iter().filter(|&&x| (0..1 << 22).contains(&x)).count();
        assert!(
            wide >= n as usize && packed >= n as usize * (n as usize - 10),
            "n {n}: {wide} distances beyond the packed range, {packed} inside"
        );
    }
}

/// Found by `fuzz/graph_files`: a DIMACS header claiming 3.3 billion vertices made validation
/// allocate per vertex (53 GB). It is refused, naming the count, before anything n-sized.
#[test]
fn graph_file_claiming_billions_of_vertices_is_refused() {
    let e = gpu_planning::apsp::io::parse_dimacs("g.gr", "p sp 3333333333  3\n", None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("vertices") && e.contains("3333333333"), "{e}");
}

/// Bellman–Ford's cycle (the fallback when successors do not close a cycle) against the
/// definition on random small integer graphs: Some exactly when some vertex reaches itself at
/// negative cost (the textbook Floyd–Warshall diagonal), and then a closed, negative walk
/// along edges of the graph.
#[test]
fn bellman_ford_finds_a_negative_cycle_exactly_when_there_is_one() {
    use gpu_planning::apsp::paths::bellman_ford_cycle;
    let seed = gpu_planning::compute::testing::seed(0xb0f0);
    let (mut with, mut without) = (0, 0);
    for i in 0..300u64 {
        let n = 1 + (i % 9) as u32;
        let g = random_graph(n, 0.4, -6, 9, 0, seed.wrapping_add(i));
        let Weights::Int(w) = &g.weights else {
            unreachable!()
        };
        let n = n as usize;
        let (mut d, mut h) = dense(n, n, &g.from, &g.to, w);
        cpu::textbook(&mut d, &mut h, n).unwrap();
        let negative = (0..n).any(|v| d[v * n + v] < 0);
        let c = bellman_ford_cycle(&g.from, &g.to, w, n, |u, v| {
            lightest(&g, u, v).map(|x| x as i32)
        });
        assert_eq!(c.is_some(), negative, "seed {:#x}, graph {g:?}", seed + i);
        if let Some(c) = c {
            with += 1;
            assert_eq!(c.first(), c.last(), "{c:?}");
            let total: i64 = c
                .windows(2)
                .map(|s| lightest(&g, s[0], s[1]).unwrap())
                .sum();
            assert!(total < 0, "seed {:#x}: {c:?} weighs {total}", seed + i);
        } else {
            without += 1;
        }
    }
    assert!(
        with > 20 && without > 20,
        "{with} with a cycle, {without} without"
    );
}

/// The size-aware default picks one shape for a graph and for its padded matrix (a mismatch
/// would pad to one tile and run another), and switches at apsp::config::AUTO_LARGE_FROM.
#[test]
fn the_default_shape_is_the_same_for_a_graph_and_its_padded_matrix() {
    let c = Config::default();
    for n in (1..9000).step_by(7).chain(4030..4100) {
        let np = padded_size(n, &c);
        assert_eq!(
            c.blocked_shape(n),
            c.blocked_shape(np),
            "n {n}, padded {np}"
        );
        assert_eq!(np % c.blocked_shape(n).0 as usize, 0, "n {n}");
    }
    assert_eq!(c.blocked_shape(2000), (32, 2));
    assert_eq!(c.blocked_shape(8192), (64, 4));
    let explicit = Config {
        tile: 16,
        thread_tile: 1,
        ..c
    };
    assert_eq!(explicit.blocked_shape(8192), (16, 1));
    assert!(Config {
        tile: 0,
        thread_tile: 2,
        ..c
    }
    .validate()
    .is_err());
}

/// The start matrices built on the device from the edge list equal the host's `dense`, bit
/// for bit: parallel edges (the lightest kept), self loops (negative, zero, -0.0, positive),
/// padding vertices, both weight kinds, every graph on fresh random edges.
/// The host's and the device's matrices equal bit for bit (a float's -0 is not its 0), or the
/// first cell where they differ.
fn assert_same_bits<T: Weight>(d0: &[T], h0: &[u32], d: &[T], h: &[u32], what: &str) {
    let bits = |x: &T| format!("{x:?}");
    let c = (0..d0.len().max(d.len()))
        .find(|&c| d0.get(c).map(bits) != d.get(c).map(bits) || h0.get(c) != h.get(c));
    assert!(
        c.is_none(),
        "{what}: first difference at {c:?}: host {:?}/{:?} device {:?}/{:?}",
        c.and_then(|c| d0.get(c)),
        c.and_then(|c| h0.get(c)),
        c.and_then(|c| d.get(c)),
        c.and_then(|c| h.get(c))
    );
}

#[test]
fn gpu_start_matrices_from_edges_equal_the_hosts() {
    use gpu_planning::apsp::gpu::DeviceMatrices;
    let Some(rt) = cuda_or_skip("gpu_start_matrices_from_edges_equal_the_hosts") else {
        return;
    };
    fn check<T: Weight>(
        rt: &std::sync::Arc<gpu_planning::compute::cuda::CudaRuntime>,
        g: &Graph,
        w: &[T],
        np: usize,
        what: &str,
    ) {
        let n = g.vertices as usize;
        let (d0, h0) = dense(n, np, &g.from, &g.to, w);
        let m = DeviceMatrices::from_edges(rt, &Config::default(), n, np, &g.from, &g.to, w)
            .expect("from_edges");
        let (mut d, mut h) = (vec![T::ZERO; np * np], vec![0u32; np * np]);
        m.download(&mut d, &mut h).expect("download");
        assert_same_bits(&d0, &h0, &d, &h, what);
    }
    let seed = gpu_planning::compute::testing::seed(0xa95d);
    for (i, (n, density, pad)) in [
        (1u32, 1.0, 0usize),
        (37, 0.3, 27),
        (200, 0.05, 0),
        (301, 0.8, 19),
        // Ids sent packed through the pinned chunks: in one chunk's pieces, and over three
        // chunks (2.4M edges, 9.6 MB packed).
        (1100, 0.5, 0),
        (2000, 0.6, 5),
    ]
    .into_iter()
    .enumerate()
    {
        let mut g = random_graph(n, density, -5, 40, 0, seed ^ i as u64);
        // Parallel copies of some edges with other weights, and self loops of every sign.
        let Weights::Int(w) = &mut g.weights else {
            unreachable!()
        };
        let m = g.from.len();
        for e in (0..m).step_by(3) {
            let (u, v, x) = (g.from[e], g.to[e], w[e]);
            g.from.push(u);
            g.to.push(v);
            w.push(x + (e as i32 % 5) - 2);
        }
        for (k, x) in [-1, 0, 3].into_iter().enumerate() {
            let u = (k as u32 * 7) % n;
            g.from.push(u);
            g.to.push(u);
            w.push(x);
        }
        let np = n as usize + pad;
        let Weights::Int(wi) = &g.weights else {
            unreachable!()
        };
        check(&rt, &g, wi, np, &format!("int n {n}"));
        let mut wf: Vec<f32> = wi.iter().map(|&x| x as f32 * 0.25).collect();
        // A -0.0 self loop and a -0.0 edge: the host keeps 0 on the diagonal.
        g.from.extend([0, 0]);
        g.to.extend([0, n - 1]);
        wf.extend([-0.0f32, -0.0]);
        check(&rt, &g, &wf, np, &format!("float n {n}"));
    }
}

/// The whole solve's checks and endings on the device: the edges' errors equal the host's
/// (`Graph::validate`: the first bad id of each side, the first non-finite weight, the integer
/// range from each vertex's extreme out-weights, with many edges of one vertex in a warp), and
/// after the solve the zero-weight-cycle test and the finished n x n answer equal
/// `has_zero_weight_cycle` and `finish` on the host's matrices, padded or not, for graphs with
/// and without zero-weight cycles.
#[test]
fn gpu_edge_checks_and_finished_answers_equal_the_hosts() {
    use gpu_planning::apsp::gpu::DeviceMatrices;
    use gpu_planning::apsp::paths::has_zero_weight_cycle;
    let Some(rt) = cuda_or_skip("gpu_edge_checks_and_finished_answers_equal_the_hosts") else {
        return;
    };
    let cuda = Backend::Cuda(rt.clone());
    let errors = |g: &Graph, what: &str| {
        let host = solve(&Backend::Cpu, g, &Config::default())
            .map(|_| ())
            .map_err(|e| e.to_string());
        let device = solve(&cuda, g, &Config::default())
            .map(|_| ())
            .map_err(|e| e.to_string());
        assert_eq!(host, device, "{what}");
        host
    };
    let seed = gpu_planning::compute::testing::seed(0x0ed9);
    // Ids: a later bad id on each side, and a bad `to` before a bad `from` (from is named);
    // on a small graph and on one whose ids go up packed through the pinned chunks, bad ids
    // just above n, at the packing's saturation (0xFFFF) and above it.
    for (n, density) in [(300u32, 0.2), (1500, 0.5)] {
        let g = random_graph(n, density, 1, 9, 0, seed);
        let m = g.from.len();
        for (k, &e) in [m / 3, m / 2, m - 1].iter().enumerate() {
            let mut b = g.clone();
            b.from[e] = [n, 0xFFFF, 0x1_0000][k];
            b.from[m - 1] = u32::MAX;
            b.to[e / 2] = n + 1;
            let named = format!("edge_from[{e}]");
            assert!(errors(&b, "bad ids").is_err_and(|t| t.contains(&named)));
            let mut b = g.clone();
            b.to[e] = [0x1_0000, n + k as u32, 0xFFFF][k];
            b.to[m - 1] = n;
            let named = format!("edge_to[{e}]");
            assert!(errors(&b, "bad heads").is_err_and(|t| t.contains(&named)));
        }
    }
    let g = random_graph(300, 0.2, 1, 9, 0, seed);
    let m = g.from.len();
    // Weights that are not finite: the first is named, whichever kind.
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let mut b = to_float(&g);
        let Weights::Float(w) = &mut b.weights else {
            unreachable!()
        };
        w[m / 4] = bad;
        w[m / 2] = f32::NAN;
        assert!(
            errors(&b, "bad weights").is_err_and(|e| e.contains(&format!("weights[{}]", m / 4)))
        );
    }
    // The integer range: 2000 vertices of 40 out-edges each (to 40 sinks: no cycles), their
    // largest (smallest) weight summing to just inside and just outside the exact range, both
    // signs.
    let (n, per) = (2000u32, 40u32);
    let limit = 1i64 << 29;
    for (sum, sign) in [(limit - 1, 1i64), (limit, 1), (limit - 1, -1), (limit, -1)] {
        let (mut from, mut to, mut w) = (Vec::new(), Vec::new(), Vec::new());
        let share = sum / n as i64;
        for u in 0..n {
            let top = share + if (u as i64) < sum % n as i64 { 1 } else { 0 };
            for k in 0..per {
                from.push(u);
                to.push(n + k);
                // The vertex's extreme weight on one lane of its warp, lesser ones beside it.
                let x = if k == (u * 7) % per {
                    top
                } else {
                    top / 2 + k as i64
                };
                w.push((sign * x) as i32);
            }
        }
        let b = Graph {
            vertices: n + per,
            from,
            to,
            weights: Weights::Int(w),
        };
        let got = errors(&b, &format!("range {sum} sign {sign}"));
        assert_eq!(
            got.is_err_and(|e| e.contains("integer_weights")),
            sum >= limit,
            "range {sum} sign {sign}"
        );
    }
    // After the solve, on graphs with zero-weight cycles (weights 0..2 and a 0-weight back
    // edge on each) and without (weights 1..9), padded and not.
    for (i, (n, density, lo, hi)) in [
        (1u32, 1.0, 0, 2),
        (37, 0.3, 0, 2),
        (64, 0.2, 1, 9),
        (200, 0.05, 0, 2),
        (301, 0.4, 1, 9),
        // Answers back through the pinned chunks: padded, not padded, and over two chunks
        // with unreached cells (about four out-edges a vertex).
        (1000, 0.05, 1, 9),
        (1024, 0.01, 0, 2),
        (2100, 0.002, 0, 2),
    ]
    .into_iter()
    .enumerate()
    {
        let config = Config::default();
        let g = random_graph(n, density, lo, hi, 0, seed ^ (i as u64 + 1));
        let np = padded_size(n as usize, &config);
        let Weights::Int(wi) = &g.weights else {
            unreachable!()
        };
        check_after_solve(&rt, &g, wi, &config, np, &format!("int n {n}"));
        let gf = to_float(&g);
        let Weights::Float(wf) = &gf.weights else {
            unreachable!()
        };
        check_after_solve(&rt, &gf, wf, &config, np, &format!("float n {n}"));
    }
    fn check_after_solve<T: Weight>(
        rt: &std::sync::Arc<gpu_planning::compute::cuda::CudaRuntime>,
        g: &Graph,
        w: &[T],
        config: &Config,
        np: usize,
        what: &str,
    ) {
        let n = g.vertices as usize;
        let (mut d0, mut h0) = dense(n, np, &g.from, &g.to, w);
        run(&Backend::Cuda(rt.clone()), &mut d0, &mut h0, np, config).expect("host-built solve");
        let (d0, h0) = finish(d0, h0, n, np);
        let z0 = has_zero_weight_cycle(&g.from, &g.to, w, &d0, n);
        let mut m =
            DeviceMatrices::from_edges(rt, config, n, np, &g.from, &g.to, w).expect("from_edges");
        m.solve(config).expect("solve");
        let z = m.verdict(config, &g.from, &g.to, w).expect("verdict");
        let (mut d, mut h) = (vec![T::ZERO; n * n], vec![0u32; n * n]);
        m.download_finished(config, n, &mut d, &mut h)
            .expect("download_finished");
        assert_eq!(z, z0, "{what}: zero-weight cycle");
        assert_same_bits(&d0, &h0, &d, &h, what);
    }
}
