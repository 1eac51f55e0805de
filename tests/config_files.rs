//! config/default.yaml, the launch files and the code agree: every key in the YAML is known to
//! its node, every node section names a node the code starts, and every executable a launch
//! file names is one Cargo builds.

use std::path::PathBuf;

use gpu_planning::nodes::runtime::RuntimeParams;
use gpu_planning::ros::ParamsFile;

fn root() -> PathBuf {
    gpu_planning::testing::repo()
}

/// The node names the code starts (base names).
const NODES: &[&str] = &gpu_planning::nodes::NODE_NAMES;

#[test]
fn default_yaml_parses_for_every_node_with_known_keys() {
    let file = ParamsFile::load(&root().join("config/default.yaml")).unwrap();
    for key in file.node_keys() {
        assert!(
            key == "/**" || NODES.contains(&key),
            "config section '{key}' is no node of this package"
        );
    }
    let m = file.for_node("/", gpu_planning::nodes::runtime::NODE_NAME, &[]);
    let s = gpu_planning::ros::node_params::service_params(&m).unwrap();
    assert_eq!(s, gpu_planning::ros::node_params::ServiceParams::default());
    let p: RuntimeParams = gpu_planning::ros::node_params::node_params(&m).unwrap();
    p.validate().unwrap();
    assert_eq!(
        p,
        RuntimeParams::default(),
        "the YAML restates the defaults of the code"
    );
    let m = file.for_node("/", gpu_planning::nodes::lee_planner::NODE_NAME, &[]);
    let p: gpu_planning::nodes::lee_planner::LeeParams =
        gpu_planning::ros::node_params::node_params(&m).unwrap();
    p.validate().unwrap();
    assert_eq!(p, gpu_planning::nodes::lee_planner::LeeParams::default());
    let m = file.for_node("/", gpu_planning::nodes::apsp::NODE_NAME, &[]);
    let p: gpu_planning::nodes::apsp::ApspParams =
        gpu_planning::ros::node_params::node_params(&m).unwrap();
    p.validate().unwrap();
    assert_eq!(p, gpu_planning::nodes::apsp::ApspParams::default());
    let m = file.for_node("/", gpu_planning::nodes::polyline::NODE_NAME, &[]);
    let p: gpu_planning::nodes::polyline::PolylineParams =
        gpu_planning::ros::node_params::node_params(&m).unwrap();
    p.validate().unwrap();
    assert_eq!(p, gpu_planning::nodes::polyline::PolylineParams::default());
    let m = file.for_node("/", gpu_planning::nodes::cell_graph::NODE_NAME, &[]);
    let p: gpu_planning::nodes::cell_graph::CellGraphParams =
        gpu_planning::ros::node_params::node_params(&m).unwrap();
    p.validate().unwrap();
    assert_eq!(
        p,
        gpu_planning::nodes::cell_graph::CellGraphParams::default()
    );
    let m = file.for_node("/", gpu_planning::nodes::nearest_neighbors::NODE_NAME, &[]);
    let p: gpu_planning::nodes::nearest_neighbors::NearestNeighborsParams =
        gpu_planning::ros::node_params::node_params(&m).unwrap();
    p.validate().unwrap();
    assert_eq!(
        p,
        gpu_planning::nodes::nearest_neighbors::NearestNeighborsParams::default()
    );
}

#[test]
fn every_default_key_is_commented() {
    let text = std::fs::read_to_string(root().join("config/default.yaml")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        // Parameter lines sit at depth 4, under `node: ros__parameters:`.
        if indent == 4 && !t.starts_with('#') && t.contains(':') {
            assert!(
                i > 0 && lines[i - 1].trim_start().starts_with('#'),
                "parameter line {} has no comment above it: {line}",
                i + 1
            );
        }
    }
}

fn launch_files() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(root().join("launch"))
        .unwrap()
        .map(|e| format!("launch/{}", e.unwrap().file_name().to_string_lossy()))
        .collect();
    files.sort();
    files
}

#[test]
fn every_node_has_a_launch_file_that_starts_only_it() {
    let files = launch_files();
    assert!(files.contains(&"launch/gpu_planning.launch.py".to_string()));
    assert!(files.contains(&"launch/gpu_planning.launch.xml".to_string()));
    for node in gpu_planning::nodes::NODE_NAMES {
        if node == "gpu_planning" {
            continue; // the process's own node: started with every other node
        }
        let f = format!("launch/{node}.launch.py");
        assert!(files.contains(&f), "{node} has no {f}");
        let text = std::fs::read_to_string(root().join(&f)).unwrap();
        assert!(
            text.contains(&format!(r#"arguments=["run", "--nodes", "{node}"]"#)),
            "{f} does not start {node} alone"
        );
    }
    // Every --nodes value in any launch file names a node the code has.
    for f in &files {
        let text = std::fs::read_to_string(root().join(f)).unwrap();
        if let Some(i) = text.find(r#""--nodes", ""#) {
            let rest = &text[i + r#""--nodes", ""#.len()..];
            let names = &rest[..rest.find('"').unwrap()];
            for n in names.split(',') {
                assert!(
                    gpu_planning::nodes::NODE_NAMES.contains(&n),
                    "{f} starts unknown node '{n}'"
                );
            }
        }
    }
}

#[test]
fn launch_files_name_only_executables_cargo_builds() {
    let cargo = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let cargo: toml_names::Bins = toml_names::bins(&cargo);
    for f in launch_files() {
        let text = std::fs::read_to_string(root().join(&f)).unwrap();
        for exe in toml_names::launch_executables(&text) {
            assert!(
                cargo.contains(&exe),
                "{f} starts '{exe}', which Cargo does not build ({cargo:?})"
            );
        }
        assert!(
            text.contains("backend") && text.contains("params_file") && text.contains("namespace"),
            "{f}"
        );
    }
}

mod toml_names {
    pub type Bins = Vec<String>;

    /// `name = "..."` lines inside [[bin]] tables.
    pub fn bins(cargo_toml: &str) -> Bins {
        let mut out = Vec::new();
        let mut in_bin = false;
        for line in cargo_toml.lines().map(str::trim) {
            if line.starts_with('[') {
                in_bin = line == "[[bin]]";
            } else if in_bin {
                if let Some(v) = line.strip_prefix("name = ") {
                    out.push(v.trim_matches('"').to_string());
                }
            }
        }
        out
    }

    /// Values of `executable="..."` (Python) and `exec="..."` (XML).
    pub fn launch_executables(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for key in ["executable=\"", "exec=\""] {
            let mut rest = text;
            while let Some(i) = rest.find(key) {
                rest = &rest[i + key.len()..];
                if let Some(end) = rest.find('"') {
                    out.push(rest[..end].to_string());
                }
            }
        }
        assert!(!out.is_empty(), "no executable found in a launch file");
        out
    }
}

/// Every topic the shipped RViz view shows is one a node subscribes or publishes (or RViz's own
/// /goal_pose, which lee_planner follows).
#[test]
fn rviz_view_shows_only_topics_the_nodes_use() {
    let text = std::fs::read_to_string(root().join("rviz/gpu_planning.rviz")).unwrap();
    let topics: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Value: /"))
        .collect();
    assert!(topics.len() >= 5, "{topics:?}");
    for t in topics {
        if t == "map" || t == "goal_pose" {
            continue; // lee_planner's and the runtime node's relative subscriptions
        }
        let (node, rest) = t.split_once('/').unwrap_or(("", t));
        assert!(NODES.contains(&node), "/{t}: no node '{node}'");
        // A node is one file, or a folder whose mod.rs declares its topics; a node that
        // runs the planner server declares the server's through it.
        let file = root().join(format!("src/nodes/{node}.rs"));
        let file = if file.exists() {
            file
        } else {
            root().join(format!("src/nodes/{node}/mod.rs"))
        };
        let mut src = std::fs::read_to_string(&file).unwrap();
        if src.contains("planner_server::") {
            let server = root().join("src/nodes/planner_server");
            for f in std::fs::read_dir(server).unwrap() {
                src += &std::fs::read_to_string(f.unwrap().path()).unwrap();
            }
        }
        assert!(
            src.contains(&format!("\"~/{rest}\"")),
            "/{t}: {node} has no ~/{rest}"
        );
    }
}

/// docs/bad-input.md's table of caps names every `max_*` key of config/default.yaml with its node and
/// default, and nothing else: a cap added, renamed or changed there must be changed here too.
#[test]
fn the_readme_caps_table_is_config_default_yaml() {
    let yaml: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(root().join("config/default.yaml")).unwrap())
            .unwrap();
    let mut want = std::collections::BTreeSet::new();
    for (node, section) in yaml.as_mapping().unwrap() {
        let node = node.as_str().unwrap();
        let shown = if node == "/**" {
            "every service (`/**`)"
        } else {
            node
        };
        for (key, value) in section["ros__parameters"].as_mapping().unwrap() {
            let key = key.as_str().unwrap();
            // max_step and max_angle are a planner's and a polyline's settings, not caps.
            if key.starts_with("max_") && key != "max_step" && key != "max_angle" {
                let default = match value {
                    serde_yaml::Value::Number(n) => n.to_string(),
                    other => panic!("{node}.{key}: {other:?} is not a number"),
                };
                want.insert((shown.to_string(), key.to_string(), default));
            }
        }
    }
    let readme = std::fs::read_to_string(root().join("docs/bad-input.md")).unwrap();
    let table = readme
        .split("| node | key | default | bounds | beyond it |")
        .nth(1)
        .expect("docs/bad-input.md has the table of caps");
    let got: std::collections::BTreeSet<(String, String, String)> = table
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (
                cells[1].to_string(),
                cells[2].trim_matches('`').to_string(),
                cells[3].to_string(),
            )
        })
        .collect();
    assert!(want.len() >= 17, "{want:?}");
    assert_eq!(
        got.difference(&want).collect::<Vec<_>>(),
        Vec::<&(String, String, String)>::new(),
        "rows of docs/bad-input.md's caps table that config/default.yaml does not have"
    );
    assert_eq!(
        want.difference(&got).collect::<Vec<_>>(),
        Vec::<&(String, String, String)>::new(),
        "caps of config/default.yaml missing from docs/bad-input.md's table"
    );
}

/// What each CLI runs with by default is what its node runs with by default (and so what
/// config/default.yaml says: the tests above hold the YAML equal to the nodes' defaults).
#[test]
fn every_cli_default_is_its_nodes() {
    use clap::Parser;
    use gpu_planning::nodes::{apsp, cell_graph, lee_planner, nearest_neighbors, polyline};

    #[derive(Parser)]
    enum Cli {
        Lee(gpu_planning::lee::cli::LeeArgs),
        Apsp(gpu_planning::apsp::cli::ApspArgs),
        Knn(gpu_planning::kdtree::cli::KnnArgs),
        Polyline(gpu_planning::polyline::cli::PolylineArgs),
        CellGraph(gpu_planning::cellgraph::cli::CellGraphArgs),
    }
    let parse = |args: &[&str]| Cli::parse_from(std::iter::once("cli").chain(args.iter().copied()));

    let Cli::Lee(a) = parse(&["lee", "--map", "m.yaml", "--start", "0,0", "--goal", "1,1"]) else {
        unreachable!()
    };
    let p = lee_planner::LeeParams::default();
    assert_eq!(a.connectivity, p.connectivity);
    assert_eq!(a.cost_model, p.cost_model.name());
    assert_eq!(a.memory_model, p.memory_model.name());
    assert_eq!((a.block_x, a.block_y), (p.block_x, p.block_y));
    assert_eq!(a.robot_radius, p.robot_radius);
    assert_eq!(
        (a.neutral_cost, a.cost_factor),
        (p.neutral_cost, p.cost_factor)
    );
    assert_eq!(a.inflation_radius, p.inflation_radius);
    assert_eq!(a.cost_scaling_factor, p.cost_scaling_factor);
    // The moves: 4 for unit moves (the seed's), 8 in costmap mode (NavFn's).
    let moves = |costmap| gpu_planning::lee::Connectivity::for_model(a.connectivity, costmap);
    assert_eq!(moves(false).unwrap(), gpu_planning::lee::Connectivity::Four);
    assert_eq!(moves(true).unwrap(), gpu_planning::lee::Connectivity::Eight);

    let Cli::Apsp(a) = parse(&["apsp", "--graph", "g.csv"]) else {
        unreachable!()
    };
    let p = apsp::ApspParams::default();
    assert_eq!(a.memory_model, p.memory_model.name());
    assert_eq!((a.tile, a.thread_tile), (p.tile, p.thread_tile));
    assert_eq!(a.max_vertices, p.max_vertices);

    let Cli::Knn(a) = parse(&["knn", "--points", "p.npy", "--queries", "q.npy"]) else {
        unreachable!()
    };
    let p = nearest_neighbors::NearestNeighborsParams::default();
    assert_eq!(a.k, p.k as usize);
    assert_eq!(a.traversal, p.knn_traversal);
    assert_eq!(a.max_results, p.max_results);

    let Cli::Polyline(a) = parse(&["polyline", "--image", "i.png", "--a", "0,0", "--b", "1,1"])
    else {
        unreachable!()
    };
    let p = polyline::PolylineParams::default();
    assert_eq!((a.guides, a.points), (p.guides, p.points_per_guide));
    assert_eq!(a.half_width, p.half_width);
    assert_eq!(a.max_angle.to_radians(), p.max_angle);
    assert_eq!(
        (a.max_guides, a.max_points),
        (p.max_guides, p.max_points_per_guide)
    );

    let Cli::CellGraph(a) = parse(&["cell-graph", "--constraints", "c.npy"]) else {
        unreachable!()
    };
    let p = cell_graph::CellGraphParams::default();
    assert_eq!(a.algorithm.name(), p.algorithm);
    assert_eq!((a.r, a.h, a.seed), (p.r, p.h, p.seed));
    assert_eq!(a.max_samples, p.max_samples as usize);
}
