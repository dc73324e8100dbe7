//! The crate's modules form layers that import only downward, and no modules import each
//! other in a circle (docs/architecture.md). Read from the source: every `crate::<module>`
//! path in code (comments and doc comments left out) is an edge from the module it is written
//! in; every `super::<sibling>` path inside `endpoints/`, `registry/`, `server/` and
//! `core_v1/` is an edge between siblings.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top to bottom; modules on one line are one layer and may use each other, without a
/// circle. A module missing from the table fails the test, so a new one is placed on purpose.
const LAYERS: &[&[&str]] = &[
    &["testing"],
    &["config", "prelude"],
    &["server"],
    &["flowcontrol"],
    &["customresource"],
    &["core_v1"],
    &["endpoints"],
    &["registry"],
    &["storage"],
    &[
        "serve",
        "middleware",
        "http2",
        "timeouts",
        "tls",
        "auth",
        "definitions",
        "declarative",
        "apply",
        "patch",
        "metadata_only",
        "validation",
        "selector",
        "names",
        "meta",
        "resource",
        "live",
        "apiextensions",
    ],
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `text` without its comments (line comments, doc comments and block comments).
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut block = 0usize;
    for line in text.lines() {
        let mut rest = line;
        let mut kept = String::new();
        loop {
            if block > 0 {
                match rest.find("*/") {
                    Some(i) => {
                        block -= 1;
                        rest = &rest[i + 2..];
                    }
                    None => break,
                }
            } else if let Some(i) = rest.find("/*") {
                let before = &rest[..i];
                match before.find("//") {
                    Some(j) => {
                        kept.push_str(&before[..j]);
                        break;
                    }
                    None => {
                        kept.push_str(before);
                        block += 1;
                        rest = &rest[i + 2..];
                    }
                }
            } else {
                kept.push_str(rest.split("//").next().unwrap_or(""));
                break;
            }
        }
        out.push_str(&kept);
        out.push('\n');
    }
    out
}

/// The identifiers that follow `prefix` in `code` (`crate::` → `registry`, `storage`...).
fn after(code: &str, prefix: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().next_back();
        rest = &rest[i + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            found.insert(name);
        }
    }
    found
}

fn layer_of(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|l| l.contains(&module))
        .unwrap_or_else(|| panic!("module {module} is in no layer of tests/layers.rs"))
}

/// A circle in `graph`, if there is one.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == n) {
            let mut c = path[i..].to_vec();
            c.push(n.to_owned());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_owned());
        for m in graph.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

#[test]
fn modules_import_only_downward_and_in_no_circle() {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut top: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut siblings: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    let mut upward = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&root).unwrap();
        let parts: Vec<String> = rel
            .iter()
            .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
            .collect();
        if parts == ["lib"] {
            continue;
        }
        let module = parts[0].clone();
        let code = code(&std::fs::read_to_string(file).unwrap());
        for used in after(&code, "crate::") {
            // Macros exported at the root and the derive re-export are not modules.
            if used == module || !LAYERS.iter().any(|l| l.contains(&used.as_str())) {
                continue;
            }
            top.entry(module.clone()).or_default().insert(used.clone());
            if layer_of(&used) < layer_of(&module) {
                upward.push(format!("{} uses crate::{used}", rel.display()));
            }
        }
        // Siblings inside a layer's folder (mod.rs is their parent, not a sibling).
        if parts.len() == 2 && parts[1] != "mod" {
            let dir = parts[0].clone();
            let names: BTreeSet<String> = std::fs::read_dir(root.join(&dir))
                .unwrap()
                .map(|e| {
                    e.unwrap()
                        .file_name()
                        .to_string_lossy()
                        .trim_end_matches(".rs")
                        .to_owned()
                })
                .filter(|n| n != "mod")
                .collect();
            let uses: BTreeSet<String> = after(&code, "super::")
                .into_iter()
                .chain(after(&code, &format!("crate::{dir}::")))
                .filter(|n| names.contains(n) && *n != parts[1])
                .collect();
            siblings
                .entry(dir)
                .or_default()
                .entry(parts[1].clone())
                .or_default()
                .extend(uses);
        }
    }
    assert!(
        upward.is_empty(),
        "imports from a layer above:\n{}",
        upward.join("\n")
    );
    assert_eq!(
        circle(&top),
        None,
        "modules importing each other in a circle"
    );
    for (dir, graph) in &siblings {
        assert_eq!(
            circle(graph),
            None,
            "files of {dir}/ importing each other in a circle"
        );
    }
    // The test sees the crate: the layers it checks are there and used.
    assert!(top["endpoints"].contains("registry") && top["server"].contains("endpoints"));
}

#[test]
fn the_circle_finder_finds_circles() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            g.entry((*a).to_owned())
                .or_default()
                .insert((*b).to_owned());
        }
        g
    };
    assert_eq!(circle(&graph(&[("a", "b"), ("b", "c")])), None);
    let found = circle(&graph(&[("a", "b"), ("b", "c"), ("c", "a")])).unwrap();
    assert_eq!((found.first(), found.len()), (found.last(), 4));
    assert!(after("use crate::registry::{Strategy}; x::crate::no", "crate::").contains("registry"));
    assert!(!code("let a = 1; // crate::server\n/* crate::server */").contains("server"));
}
