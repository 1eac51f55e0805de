//! Each node's page in docs/nodes/ names exactly what the node has: the topics it subscribes
//! and publishes, its services and actions (as the node's source creates them: the names given
//! to `subscription`, `publisher`, `server` and `ActionServer::new`), and its parameters with
//! their defaults (as config/default.yaml has them, which tests/config_files.rs holds equal to
//! the node's parameter struct). An endpoint or parameter added, removed or renamed without
//! its line fails here, and so does a line for one that is gone.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// (page, config/default.yaml section, the node's source files and folders).
const NODES: &[(&str, &str, &[&str])] = &[
    (
        "lee_planner",
        "lee_planner",
        &[
            "src/nodes/lee_planner",
            "src/nodes/planner_server",
            "src/nodes/lifecycle.rs",
        ],
    ),
    ("apsp", "apsp", &["src/nodes/apsp"]),
    ("polyline", "polyline", &["src/nodes/polyline"]),
    ("cell_graph", "cell_graph", &["src/nodes/cell_graph"]),
    (
        "nearest_neighbors",
        "nearest_neighbors",
        &["src/nodes/nearest_neighbors"],
    ),
    ("gpu_planning", "gpu_planning", &["src/nodes/runtime"]),
    ("common", "/**", &[]),
];

/// Every .rs file under `p` (or `p` itself), without its test module.
fn sources(p: &Path, out: &mut Vec<String>) {
    if p.is_dir() {
        for e in std::fs::read_dir(p).unwrap() {
            sources(&e.unwrap().path(), out);
        }
    } else if p.extension().is_some_and(|e| e == "rs") {
        let text = std::fs::read_to_string(p).unwrap();
        out.push(text.split("#[cfg(test)]").next().unwrap_or("").to_string());
    }
}

/// The string literal right after `at` (skipping `::<...>`, `(` and blanks), if one is there.
fn literal_after(text: &str, at: usize) -> Option<String> {
    let mut rest = &text[at..];
    if let Some(r) = rest.strip_prefix("::<") {
        let mut depth = 1;
        let end = r.char_indices().find(|&(_, c)| {
            match c {
                '<' => depth += 1,
                '>' => depth -= 1,
                _ => {}
            }
            depth == 0
        })?;
        rest = &r[end.0 + 1..];
    }
    let rest = rest.strip_prefix('(')?.trim_start();
    let rest = rest.strip_prefix('"')?;
    Some(rest[..rest.find('"')?].to_string())
}

/// The names given to `.{call}(…"name"…)` in `text`.
fn created(text: &str, call: &str) -> BTreeSet<String> {
    let pat = format!(".{call}");
    text.match_indices(&pat)
        .filter_map(|(at, _)| literal_after(text, at + pat.len()))
        .collect()
}

/// Action names: `ActionServer::new(ctx, NAME, …)` with `const NAME: &str = "…";`.
fn actions(text: &str) -> BTreeSet<String> {
    let pat = "ActionServer::new(ctx, ";
    text.match_indices(pat)
        .filter_map(|(at, _)| {
            let rest = &text[at + pat.len()..];
            let ident: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let def = format!("const {ident}: &str = \"");
            let from = text.find(&def)? + def.len();
            Some(text[from..from + text[from..].find('"')?].to_string())
        })
        .collect()
}

/// The page's tables by section: each `## heading` -> the rows' cells.
fn tables(page: &str) -> Vec<(String, Vec<Vec<String>>)> {
    let mut out: Vec<(String, Vec<Vec<String>>)> = Vec::new();
    for line in page.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            out.push((h.trim().to_string(), Vec::new()));
        } else if line.starts_with("| ") && !line.starts_with("| ---") {
            if let Some((_, rows)) = out.last_mut() {
                let cells: Vec<String> = line
                    .replace("\\|", "\u{1}")
                    .split('|')
                    .map(|c| c.trim().replace('\u{1}', "|"))
                    .collect();
                rows.push(cells[1..cells.len() - 1].to_vec());
            }
        }
    }
    // The header row of each table is not a row.
    for (_, rows) in &mut out {
        if !rows.is_empty() {
            rows.remove(0);
        }
    }
    out
}

/// First cells of a section's rows, without their backticks.
fn names(tables: &[(String, Vec<Vec<String>>)], section: &str) -> BTreeSet<String> {
    tables
        .iter()
        .filter(|(h, _)| h == section)
        .flat_map(|(_, rows)| rows.iter().map(|r| r[0].trim_matches('`').to_string()))
        .collect()
}

/// `key: value` lines of a config/default.yaml section, values as written.
fn yaml_section(yaml: &str, section: &str) -> Vec<(String, String)> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in yaml.lines() {
        if !line.starts_with(' ') && !line.starts_with('#') && line.ends_with(':') {
            inside = line.trim_end_matches(':') == section;
        } else if inside {
            if let Some(kv) = line.strip_prefix("    ") {
                if let Some((k, v)) = kv.split_once(':') {
                    if !k.starts_with('#') && !k.starts_with(' ') {
                        out.push((k.to_string(), v.trim().to_string()));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_page_names_exactly_the_nodes_endpoints_and_parameters() {
    let yaml = std::fs::read_to_string(root().join("config/default.yaml")).unwrap();
    let mut failures = Vec::new();
    for &(page, section, paths) in NODES {
        let text = std::fs::read_to_string(root().join(format!("docs/nodes/{page}.md")))
            .unwrap_or_else(|e| panic!("docs/nodes/{page}.md: {e}"));
        let t = tables(&text);
        let mut code = Vec::new();
        for p in paths {
            sources(&root().join(p), &mut code);
        }
        let all = code.join("\n");
        if !paths.is_empty() {
            for (heading, call) in [
                ("Subscribed topics", "subscription"),
                ("Published topics", "publisher"),
                ("Services", "server"),
            ] {
                let want = created(&all, call);
                let got = names(&t, heading);
                if want != got {
                    failures.push(format!(
                        "docs/nodes/{page}.md, {heading}: the node creates {want:?}, the page lists {got:?}"
                    ));
                }
            }
            let want = actions(&all);
            let got = names(&t, "Actions");
            if want != got {
                failures.push(format!(
                    "docs/nodes/{page}.md, Actions: the node serves {want:?}, the page lists {got:?}"
                ));
            }
        }
        let range = |key: &str| {
            gpu_planning::nodes::PARAM_RANGES
                .iter()
                .filter(|(s, _)| *s == section)
                .flat_map(|(_, params)| params.iter())
                .find(|p| p.key == key)
                .map_or(String::new(), |p| p.range.shown())
        };
        let want: BTreeSet<(String, String, String)> = yaml_section(&yaml, section)
            .into_iter()
            .map(|(k, v)| {
                let r = range(&k);
                (k, v.replace('|', "\\|"), r)
            })
            .collect();
        assert!(
            !want.is_empty(),
            "config/default.yaml has no section {section}"
        );
        let got: BTreeSet<(String, String, String)> = t
            .iter()
            .filter(|(h, _)| h == "Parameters")
            .flat_map(|(_, rows)| {
                rows.iter().map(|r| {
                    (
                        r[0].trim_matches('`').to_string(),
                        r[2].trim_matches('`').replace('|', "\\|"),
                        r.get(3).cloned().unwrap_or_default(),
                    )
                })
            })
            .collect();
        if want != got {
            failures.push(format!(
                "docs/nodes/{page}.md, Parameters (name, default, range) missing from the page: {:?}; on the page but not in config/default.yaml's {section}: {:?} (python3 scripts/node-pages rewrites the tables)",
                want.difference(&got).collect::<Vec<_>>(),
                got.difference(&want).collect::<Vec<_>>()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The checks above can fail: a renamed endpoint, a missing action and a changed default are
/// each seen.
#[test]
fn the_page_check_sees_what_differs() {
    let code = r#"
        const TO: &str = "go";
        let a = ctx.subscription::<Image>("~/image", qos::sensor())?;
        let b = ctx.publisher("~/out", qos::result())?;
        let c = ctx.server::<Srv>("~/do")?;
        ActionServer::new(ctx, TO, pkg, x)?;
    "#;
    assert_eq!(
        created(code, "subscription"),
        BTreeSet::from(["~/image".to_string()])
    );
    assert_eq!(
        created(code, "publisher"),
        BTreeSet::from(["~/out".to_string()])
    );
    assert_eq!(
        created(code, "server"),
        BTreeSet::from(["~/do".to_string()])
    );
    assert_eq!(actions(code), BTreeSet::from(["go".to_string()]));
    let page = "## Services\n\n| name | type |\n| --- | --- |\n| `~/done` | x |\n\n## Parameters\n\n| name | type | default |\n| --- | --- | --- |\n| `k` | integer | `2` |\n";
    let t = tables(page);
    assert_ne!(names(&t, "Services"), created(code, "server"));
    assert!(names(&t, "Actions").is_empty());
    let yaml = "k:\n  ros__parameters:\n    # a comment\n    k: 3\n";
    assert_eq!(
        yaml_section(yaml, "k"),
        vec![("k".to_string(), "3".to_string())]
    );
    assert_eq!(t[1].1[0][2], "`2`");
}
