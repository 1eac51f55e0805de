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
        // A node is one file, or a folder whose mod.rs declares its topics.
        let file = root().join(format!("src/nodes/{node}.rs"));
        let file = if file.exists() {
            file
        } else {
            root().join(format!("src/nodes/{node}/mod.rs"))
        };
        let src = std::fs::read_to_string(&file).unwrap();
        assert!(
            src.contains(&format!("\"~/{rest}\"")),
            "/{t}: {node} has no ~/{rest}"
        );
    }
}

/// The README's table of caps names every `max_*` key of config/default.yaml with its node and
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
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let table = readme
        .split("| node | key | default | bounds | beyond it |")
        .nth(1)
        .expect("README.md has the table of caps");
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
        "rows of the README's caps table that config/default.yaml does not have"
    );
    assert_eq!(
        want.difference(&got).collect::<Vec<_>>(),
        Vec::<&(String, String, String)>::new(),
        "caps of config/default.yaml missing from the README's table"
    );
}
