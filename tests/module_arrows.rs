//! Arrows one way: no two source files of the library import each other, directly or round a
//! circle. A file's imports are read from its `use` lines and the paths in its code
//! (`crate::…`, `super::…`, and `child::…` for its own submodules); a name a module re-exports
//! counts as the file that defines it, so a module's face (`pub use`) is not an arrow. Test
//! code is left out. A circle found later can be named in `KNOWN` while it is being broken;
//! none is now.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Module = Vec<String>;

/// Known circles, each as the sorted set of its files' module paths.
const KNOWN: &[&[&str]] = &[];

fn modules(src: &Path) -> BTreeMap<Module, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if !path.ends_with("bin") {
                    stack.push(path);
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut m: Module = rel
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect();
            if matches!(m.last().map(String::as_str), Some("mod" | "lib")) {
                m.pop();
            }
            out.insert(m, std::fs::read_to_string(&path).unwrap());
        }
    }
    out
}

/// The text without line comments (doc comments included) and without its test module.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `use` statements' bodies (after `use `, before `;`), each with whether it is `pub`.
fn uses(code: &str) -> Vec<(bool, String)> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = find_word(rest, "use") {
        let before = rest[..at].trim_end();
        let public = before.ends_with("pub") || before.ends_with(')') && before.contains("pub(");
        let after = &rest[at + 3..];
        let Some(end) = after.find(';') else { break };
        out.push((public, after[..end].trim().to_string()));
        rest = &after[end..];
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The byte offset of `word` standing alone.
fn find_word(s: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = s[from..].find(word) {
        let at = from + i;
        let ok_before = s[..at].chars().next_back().is_none_or(|c| !is_ident(c));
        let ok_after = s[at + word.len()..]
            .chars()
            .next()
            .is_none_or(|c| !is_ident(c));
        if ok_before && ok_after {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// `a::{b, c::{d, e as f}}` as paths [a, b], [a, c, d], [a, c, e].
fn expand(prefix: &[String], body: &str) -> Vec<Vec<String>> {
    let mut items = Vec::new();
    let (mut depth, mut cur) = (0, String::new());
    for ch in body.chars() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if ch == ',' && depth == 0 {
            items.push(std::mem::take(&mut cur));
        } else {
            cur.push(ch);
        }
    }
    items.push(cur);
    let mut out = Vec::new();
    for item in items {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        if let (Some(open), Some(close)) = (item.find('{'), item.rfind('}')) {
            let head: Vec<String> = split_path(item[..open].trim_end_matches(':'));
            let p: Vec<String> = prefix.iter().cloned().chain(head).collect();
            out.extend(expand(&p, &item[open + 1..close]));
        } else {
            let item = item.split(" as ").next().unwrap_or("").trim();
            out.push(prefix.iter().cloned().chain(split_path(item)).collect());
        }
    }
    out
}

fn split_path(s: &str) -> Vec<String> {
    s.split("::")
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(String::from)
        .collect()
}

/// Every `a::b::c` path in the code (identifiers joined by `::`), as segments.
fn inline_paths(code: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts =
            is_ident(chars[i]) && (i == 0 || !is_ident(chars[i - 1]) && chars[i - 1] != ':');
        if !starts {
            i += 1;
            continue;
        }
        let mut segs = Vec::new();
        let mut j = i;
        loop {
            let s = j;
            while j < chars.len() && is_ident(chars[j]) {
                j += 1;
            }
            segs.push(chars[s..j].iter().collect::<String>());
            if j + 2 < chars.len()
                && chars[j] == ':'
                && chars[j + 1] == ':'
                && is_ident(chars[j + 2])
            {
                j += 2;
            } else {
                break;
            }
        }
        if segs.len() > 1 {
            out.push(segs);
        }
        i = j.max(i + 1);
    }
    out
}

struct Crate {
    files: BTreeMap<Module, String>,
    /// Per module: a name it re-exports -> the path it names.
    reexports: BTreeMap<Module, BTreeMap<String, Vec<String>>>,
}

impl Crate {
    /// The file `path`, written in module `m`, leads to.
    fn resolve(&self, m: &Module, path: &[String], depth: usize) -> Option<Module> {
        let (mut cur, rest): (Module, &[String]) = match path.first().map(String::as_str) {
            Some("crate") => (Vec::new(), &path[1..]),
            Some("self") => (m.clone(), &path[1..]),
            Some("super") => {
                let mut cur = m.clone();
                let mut rest = path;
                while rest.first().is_some_and(|s| s == "super") {
                    cur.pop();
                    rest = &rest[1..];
                }
                (cur, rest)
            }
            _ => return None,
        };
        for seg in rest {
            let mut next = cur.clone();
            next.push(seg.clone());
            if self.files.contains_key(&next) {
                cur = next;
                continue;
            }
            if depth < 4 {
                if let Some(target) = self.reexports.get(&cur).and_then(|r| r.get(seg)) {
                    let target: Vec<String> = match target[0].as_str() {
                        "crate" | "self" | "super" => target.clone(),
                        _ => std::iter::once("self".to_string())
                            .chain(target.iter().cloned())
                            .collect(),
                    };
                    return self.resolve(&cur, &target, depth + 1).or(Some(cur));
                }
            }
            break;
        }
        Some(cur)
    }
}

/// Strongly connected components with more than one file (Tarjan's).
fn circles(edges: &BTreeMap<Module, BTreeSet<Module>>, nodes: &[Module]) -> Vec<Vec<Module>> {
    struct T<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<Module, usize>,
        low: BTreeMap<Module, usize>,
        stack: Vec<Module>,
        on: BTreeSet<Module>,
        next: usize,
        out: Vec<Vec<Module>>,
    }
    fn visit(t: &mut T, v: &Module) {
        t.index.insert(v.clone(), t.next);
        t.low.insert(v.clone(), t.next);
        t.next += 1;
        t.stack.push(v.clone());
        t.on.insert(v.clone());
        let targets: Vec<Module> = t.edges.get(v).into_iter().flatten().cloned().collect();
        for w in targets {
            if !t.index.contains_key(&w) {
                visit(t, &w);
                let l = t.low[&w].min(t.low[v]);
                t.low.insert(v.clone(), l);
            } else if t.on.contains(&w) {
                let l = t.index[&w].min(t.low[v]);
                t.low.insert(v.clone(), l);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = t.stack.pop().unwrap();
                t.on.remove(&w);
                let done = &w == v;
                comp.push(w);
                if done {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in nodes {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

fn arrows() -> (Crate, BTreeMap<Module, BTreeSet<Module>>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = modules(&src);
    let mut reexports = BTreeMap::new();
    for (m, text) in &files {
        let mut names = BTreeMap::new();
        for (public, body) in uses(&code(text)) {
            if public {
                for p in expand(&[], &body) {
                    if let Some(last) = p.last() {
                        names.insert(last.clone(), p.clone());
                    }
                }
            }
        }
        reexports.insert(m.clone(), names);
    }
    let krate = Crate { files, reexports };
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (m, text) in &krate.files {
        let code = code(text);
        let mut paths = Vec::new();
        for (public, body) in uses(&code) {
            if !public {
                paths.extend(expand(&[], &body));
            }
        }
        // Paths in the code, the `use` lines' included (a re-export line adds nothing new:
        // its paths resolve to files the module's face names, not to arrows).
        let without_pub_uses: String = {
            let mut s = code.clone();
            for (public, body) in uses(&code) {
                if public {
                    s = s.replace(&body, "");
                }
            }
            s
        };
        for p in inline_paths(&without_pub_uses) {
            match p[0].as_str() {
                "crate" | "super" | "self" => paths.push(p),
                child => {
                    let mut c = m.clone();
                    c.push(child.to_string());
                    if krate.files.contains_key(&c) {
                        paths.push(std::iter::once("self".to_string()).chain(p).collect());
                    }
                }
            }
        }
        for p in paths {
            if let Some(t) = krate.resolve(m, &p, 0) {
                if &t != m && !t.is_empty() {
                    edges.entry(m.clone()).or_default().insert(t);
                }
            }
        }
    }
    (krate, edges)
}

#[test]
fn no_two_files_import_each_other() {
    let (krate, edges) = arrows();
    let nodes: Vec<Module> = krate.files.keys().cloned().collect();
    let found = circles(&edges, &nodes);
    let name = |m: &Module| m.join("::");
    let mut unknown = Vec::new();
    for comp in &found {
        let names: Vec<String> = comp.iter().map(name).collect();
        if KNOWN
            .iter()
            .any(|k| k.iter().copied().eq(names.iter().map(String::as_str)))
        {
            continue;
        }
        let inside: BTreeSet<&Module> = comp.iter().collect();
        let arrows: Vec<String> = comp
            .iter()
            .flat_map(|a| {
                edges[a]
                    .iter()
                    .filter(|b| inside.contains(b))
                    .map(move |b| format!("{} -> {}", name(a), name(b)))
            })
            .collect();
        unknown.push(format!("{names:?}: {arrows:?}"));
    }
    assert!(
        unknown.is_empty(),
        "files that import each other:\n{}",
        unknown.join("\n")
    );
    // The known circles are still circles (drop one from KNOWN once it is broken).
    for k in KNOWN {
        assert!(
            found.iter().any(|c| k.iter().copied().eq(c
                .iter()
                .map(name)
                .collect::<Vec<_>>()
                .iter()
                .map(String::as_str))),
            "{k:?} is no longer a circle: take it out of KNOWN"
        );
    }
}

/// The reading above can fail: two files made to import each other are found.
#[test]
fn a_circle_is_found() {
    let m = |s: &str| -> Module { split_path(s) };
    let mut edges = BTreeMap::new();
    edges.insert(m("a"), BTreeSet::from([m("b")]));
    edges.insert(m("b"), BTreeSet::from([m("c")]));
    edges.insert(m("c"), BTreeSet::from([m("a")]));
    edges.insert(m("d"), BTreeSet::from([m("a")]));
    let found = circles(&edges, &[m("a"), m("b"), m("c"), m("d")]);
    assert_eq!(found, vec![vec![m("a"), m("b"), m("c")]]);
    // And the path reading: braces, renames, nested groups.
    let p = expand(&[], "crate::a::{b, c::{d, e as f}}");
    let want: Vec<Vec<String>> = ["crate::a::b", "crate::a::c::d", "crate::a::c::e"]
        .iter()
        .map(|s| split_path(s))
        .collect();
    assert_eq!(p, want);
    assert_eq!(
        inline_paths("let x = super::gpu::DeviceGrid::new(a::b);"),
        vec![
            split_path("super::gpu::DeviceGrid::new"),
            split_path("a::b")
        ]
    );
}
