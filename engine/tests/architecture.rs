#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail loudly at the first unexpected value"
)]
//! The workspace's shape, checked: which crate may depend on which, and no import cycle
//! between the files of any crate.
//!
//! The crate graph is read from each member's `Cargo.toml`; the file graph from the
//! sources themselves (`use` trees, `crate::`/`super::`/`self::` paths and paths through
//! a file's own child modules), with comments, strings and `#[cfg(test)]` modules left
//! out. A name a parent re-exports (`pub use child::Item`) resolves to the file that
//! defines it, so a child using `super::Item` is not mistaken for an edge to its parent.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Each member crate's directory and the workspace crates it may depend on (normal
/// dependencies; dev-dependencies may reach further, e.g. the stdlib in tests).
const ALLOWED: &[(&str, &[&str])] = &[
    ("grammar", &[]),
    ("stdlib-policies", &[]),
    ("shell", &[]),
    ("core", &["contextos-grammar", "contextos-shell"]),
    // The routed shell line is quoted by the one shell model.
    (
        "adapters",
        &["contextos-core", "contextos-grammar", "contextos-shell"],
    ),
    ("scan", &["contextos-core", "contextos-grammar"]),
    ("effects", &["contextos-core"]),
    ("plugins", &["contextos-core", "contextos-effects"]),
    (
        "engine",
        &[
            "contextos-grammar",
            "contextos-shell",
            "contextos-core",
            "contextos-adapters",
            "contextos-scan",
            "contextos-effects",
            "contextos-plugins",
            "contextos-stdlib",
        ],
    ),
    ("cli", &["contextos-engine"]),
];

fn normal_dependencies(manifest: &str) -> BTreeSet<String> {
    let value: toml::Value = toml::from_str(manifest).unwrap();
    value
        .get("dependencies")
        .and_then(|d| d.as_table())
        .map(|t| {
            t.keys()
                .filter(|k| k.starts_with("contextos"))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn crates_depend_one_way_only() {
    let root = workspace();
    let members: toml::Value =
        toml::from_str(&fs::read_to_string(root.join("Cargo.toml")).unwrap()).unwrap();
    let listed: BTreeSet<String> = members["workspace"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect();
    let known: BTreeSet<String> = ALLOWED.iter().map(|(d, _)| d.to_string()).collect();
    assert_eq!(listed, known, "every member has its place in the crate map");
    let mut wrong = Vec::new();
    for (dir, allowed) in ALLOWED {
        let manifest = fs::read_to_string(root.join(dir).join("Cargo.toml")).unwrap();
        for dep in normal_dependencies(&manifest) {
            if !allowed.contains(&dep.as_str()) {
                wrong.push(format!("{dir} depends on {dep}"));
            }
        }
    }
    assert!(wrong.is_empty(), "dependencies against the map: {wrong:#?}");
}

#[test]
fn only_scan_links_gix_and_only_effects_links_the_docker_client() {
    let root = workspace();
    for (dir, _) in ALLOWED {
        let manifest = fs::read_to_string(root.join(dir).join("Cargo.toml")).unwrap();
        let deps: toml::Value = toml::from_str(&manifest).unwrap();
        let names: BTreeSet<String> = deps
            .get("dependencies")
            .and_then(|d| d.as_table())
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default();
        if *dir != "scan" {
            assert!(!names.contains("gix"), "{dir} must not use gix");
        }
        if *dir != "effects" {
            assert!(!names.contains("bollard"), "{dir} must not use bollard");
        }
        // The async runtime: the docker client's crate, and the CLI's MCP server — there
        // only as an optional dependency of the `docker` feature, so the front binary
        // (built without it) links no runtime.
        match *dir {
            "effects" => {}
            "cli" => {
                let optional = deps["dependencies"]
                    .get("tokio")
                    .and_then(|t| t.get("optional"))
                    .and_then(toml::Value::as_bool);
                assert_eq!(
                    optional,
                    Some(true),
                    "cli may use tokio only as an optional dependency"
                );
                let docker = deps["features"]["docker"].as_array().unwrap();
                assert!(
                    docker.iter().any(|f| f.as_str() == Some("dep:tokio")),
                    "cli's tokio belongs to its docker feature"
                );
            }
            _ => assert!(!names.contains("tokio"), "{dir} must not use tokio"),
        }
    }
}

// ----- the file graph --------------------------------------------------------------

/// Source text without comments, string and char literals, and `#[cfg(test)]` items,
/// so that only code can make an edge.
fn code_only(src: &str) -> String {
    let b: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == 'r' && (next == Some('#') || next == Some('"')) && !ident_before(&b, i) {
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            'raw: while j < b.len() {
                if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break 'raw;
                }
                j += 1;
            }
            i = j;
            out.push_str("\"\"");
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}'), or a lifetime, which is kept.
            if next == Some('\\') {
                let mut j = i + 2;
                while j < b.len() && b[j] != '\'' {
                    j += 1;
                }
                i = j + 1;
                out.push_str("' '");
            } else if b.get(i + 2) == Some(&'\'') {
                i += 3;
                out.push_str("' '");
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    strip_test_items(&out)
}

fn ident_before(b: &[char], i: usize) -> bool {
    i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_')
}

/// Removes each `#[cfg(test)]` item (an attribute, then an item up to its matching brace
/// or semicolon).
fn strip_test_items(src: &str) -> String {
    let mut out = String::new();
    let mut rest = src;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let mut depth = 0usize;
        let mut end = after.len();
        for (k, ch) in after.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = k + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = k + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// One source file as a module of its crate.
#[derive(Debug)]
struct ModFile {
    path: PathBuf,
    /// Module path from the crate root (`[]` for lib.rs / main.rs).
    module: Vec<String>,
    code: String,
}

fn module_files(src: &Path) -> Vec<ModFile> {
    let mut out = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().and_then(|e| e.to_str()) != Some("rs") {
                continue;
            }
            let rel = p.strip_prefix(src).unwrap();
            let mut module: Vec<String> = rel
                .iter()
                .map(|s| s.to_string_lossy().trim_end_matches(".rs").to_string())
                .collect();
            if matches!(
                module.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                module.pop();
            }
            // Extra binaries (src/bin/x.rs) are crate roots of their own; they are
            // checked as leaves.
            let code = code_only(&fs::read_to_string(&p).unwrap());
            out.push(ModFile {
                path: p,
                module,
                code,
            });
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// Every path the code names: each leaf of every `use` tree, and each `a::b::c` path
/// written in expressions and types.
fn named_paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphabetic() || c == '_' {
            if i > 0
                && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_' || chars[i - 1] == ':')
            {
                i += 1;
                continue;
            }
            let start = i;
            let mut path = Vec::new();
            let mut j = i;
            loop {
                let s = j;
                while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_') {
                    j += 1;
                }
                if s == j {
                    break;
                }
                path.push(chars[s..j].iter().collect::<String>());
                if chars.get(j) == Some(&':') && chars.get(j + 1) == Some(&':') {
                    j += 2;
                    if chars.get(j) == Some(&'{') {
                        // A use tree: expand its leaves.
                        let (leaves, end) = use_tree(&chars, j);
                        for leaf in leaves {
                            let mut p = path.clone();
                            p.extend(leaf);
                            paths.push(p);
                        }
                        path.clear();
                        j = end;
                        break;
                    }
                } else {
                    break;
                }
            }
            if path.len() > 1
                || (path.len() == 1 && chars[start..].starts_with(&['s', 'e', 'l', 'f']))
            {
                paths.push(path);
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    paths
}

/// The leaves of a `{ … }` use tree starting at `open`, and the index after its `}`.
fn use_tree(chars: &[char], open: usize) -> (Vec<Vec<String>>, usize) {
    let mut leaves = Vec::new();
    let mut prefix: Vec<String> = Vec::new();
    let mut i = open + 1;
    let mut word = String::new();
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            i += 1;
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            prefix.push(std::mem::take(&mut word));
            i += 2;
            if chars.get(i) == Some(&'{') {
                let (inner, end) = use_tree(chars, i);
                for leaf in inner {
                    let mut p = prefix.clone();
                    p.extend(leaf);
                    leaves.push(p);
                }
                prefix.clear();
                i = end;
            }
        } else if c == ',' || c == '}' {
            if !word.is_empty() {
                let mut p = std::mem::take(&mut prefix);
                p.push(std::mem::take(&mut word));
                leaves.push(p);
            }
            prefix.clear();
            i += 1;
            if c == '}' {
                return (leaves, i);
            }
        } else if c == ' ' || c == '\n' || c == '\t' || c == '\r' {
            // `as name` renames: skip the alias.
            let rest: String = chars[i..chars.len().min(i + 5)].iter().collect();
            if rest.trim_start().starts_with("as ") {
                if !word.is_empty() {
                    let mut p = std::mem::take(&mut prefix);
                    p.push(std::mem::take(&mut word));
                    leaves.push(p);
                }
                while i < chars.len() && chars[i] != ',' && chars[i] != '}' {
                    i += 1;
                }
                continue;
            }
            i += 1;
        } else {
            i += 1;
        }
    }
    (leaves, i)
}

/// Child modules declared in a file (`mod x;` / `pub mod x;`, not inline `mod x { … }`).
fn declared_children(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in code.lines() {
        let t = line.trim();
        let t = t.strip_prefix("pub(crate) ").unwrap_or(t);
        let t = t.strip_prefix("pub ").unwrap_or(t);
        if let Some(rest) = t.strip_prefix("mod ") {
            if let Some(name) = rest.strip_suffix(';') {
                out.insert(name.trim().to_string());
            }
        }
    }
    out
}

/// Names a file re-exports or imports from a child module: `name -> module path`.
fn reexports(file: &ModFile, modules: &BTreeSet<Vec<String>>) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for stmt in file.code.split(';') {
        let t = stmt.trim();
        let Some(body) = t
            .strip_prefix("pub use ")
            .or_else(|| t.strip_prefix("pub(crate) use "))
        else {
            continue;
        };
        for path in named_paths(body) {
            if let Some(target) = resolve(&file.module, &path, modules, &BTreeMap::new()) {
                if let Some(last) = path.last() {
                    out.insert(last.clone(), target);
                }
            }
        }
    }
    out
}

/// The file module a path lands in, if it is inside this crate.
fn resolve(
    from: &[String],
    path: &[String],
    modules: &BTreeSet<Vec<String>>,
    root_exports: &BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
) -> Option<Vec<String>> {
    let mut base: Vec<String> = match path.first().map(String::as_str) {
        Some("crate") => Vec::new(),
        Some("self") => from.to_vec(),
        Some("super") => {
            let mut b = from.to_vec();
            b.pop();
            b
        }
        Some(_) => from.to_vec(),
        None => return None,
    };
    let mut rest: &[String] = match path.first().map(String::as_str) {
        Some("crate" | "self" | "super") => &path[1..],
        _ => path,
    };
    while rest.first().map(String::as_str) == Some("super") {
        base.pop();
        rest = &rest[1..];
    }
    let relative = !matches!(
        path.first().map(String::as_str),
        Some("crate" | "self" | "super")
    );
    if relative {
        // Only a path through a declared child module of this file counts.
        let mut child = base.clone();
        child.push(rest.first()?.clone());
        if !modules.contains(&child) {
            return None;
        }
    }
    let mut deepest = base.clone();
    let mut cur = base;
    for seg in rest {
        cur.push(seg.clone());
        if modules.contains(&cur) {
            deepest = cur.clone();
        } else {
            // A name defined in (or re-exported by) `deepest`.
            if let Some(target) = root_exports.get(&deepest).and_then(|m| m.get(seg)) {
                return Some(target.clone());
            }
            break;
        }
    }
    Some(deepest)
}

fn crate_cycles(src: &Path) -> Vec<Vec<String>> {
    let files = module_files(src);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| f.module.clone()).collect();
    let exports: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>> = files
        .iter()
        .map(|f| (f.module.clone(), reexports(f, &modules)))
        .collect();
    let index: BTreeMap<&Vec<String>, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (&f.module, i))
        .collect();
    let mut edges: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); files.len()];
    for (i, f) in files.iter().enumerate() {
        let _children = declared_children(&f.code);
        for path in named_paths(&f.code) {
            if let Some(target) = resolve(&f.module, &path, &modules, &exports) {
                if let Some(&j) = index.get(&target) {
                    if j != i {
                        edges[i].insert(j);
                    }
                }
            }
        }
    }
    strongly_connected(&edges)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            c.into_iter()
                .map(|i| {
                    files[i]
                        .path
                        .strip_prefix(workspace())
                        .unwrap()
                        .display()
                        .to_string()
                })
                .collect()
        })
        .collect()
}

/// Tarjan's algorithm, iteratively.
fn strongly_connected(edges: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    let n = edges.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut out = Vec::new();
    let mut next = 0;
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        let mut work: Vec<(usize, Vec<usize>)> =
            vec![(start, edges[start].iter().copied().collect())];
        index[start] = next;
        low[start] = next;
        next += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some((v, pending)) = work.last_mut() {
            let v = *v;
            if let Some(w) = pending.pop() {
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, edges[w].iter().copied().collect()));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                work.pop();
                if let Some((parent, _)) = work.last() {
                    low[*parent] = low[*parent].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut comp = Vec::new();
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        comp.push(w);
                        if w == v {
                            break;
                        }
                    }
                    out.push(comp);
                }
            }
        }
    }
    out
}

#[test]
fn no_import_cycle_between_files() {
    let root = workspace();
    let mut cycles = Vec::new();
    for (dir, _) in ALLOWED {
        let src = root.join(dir).join("src");
        if src.is_dir() {
            for c in crate_cycles(&src) {
                cycles.push(c);
            }
        }
    }
    assert!(
        cycles.is_empty(),
        "files that import each other: {cycles:#?}"
    );
}

#[test]
fn the_cycle_finder_sees_a_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    fs::write(src.join("lib.rs"), "mod a;\nmod b;\n").unwrap();
    fs::write(src.join("a.rs"), "use crate::b::B;\npub struct A;\n").unwrap();
    fs::write(src.join("b.rs"), "pub struct B(crate::a::A);\n").unwrap();
    let files = module_files(src);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| f.module.clone()).collect();
    assert_eq!(modules.len(), 3);
    // Reuse the crate walk on the temporary crate; its paths are outside the workspace,
    // so compare module names instead of paths.
    let exports = BTreeMap::new();
    let a = files.iter().find(|f| f.module == ["a"]).unwrap();
    let hits: Vec<_> = named_paths(&a.code)
        .into_iter()
        .filter_map(|p| resolve(&a.module, &p, &modules, &exports))
        .collect();
    assert!(hits.contains(&vec!["b".to_string()]), "{hits:?}");
    let edges = vec![BTreeSet::new(), BTreeSet::from([2]), BTreeSet::from([1])];
    let sccs: Vec<_> = strongly_connected(&edges)
        .into_iter()
        .filter(|c| c.len() > 1)
        .collect();
    assert_eq!(sccs.len(), 1);
}

#[test]
fn comments_strings_and_tests_make_no_edges() {
    let code = code_only(
        "// crate::x::y\nlet s = \"crate::z\";\n#[cfg(test)]\nmod tests { use crate::w; }\nuse crate::{a::A, b::{B, C as D}};\n",
    );
    let paths = named_paths(&code);
    assert!(paths.iter().all(|p| !p.contains(&"x".to_string())));
    assert!(paths.iter().all(|p| !p.contains(&"z".to_string())));
    assert!(paths.iter().all(|p| !p.contains(&"w".to_string())));
    assert!(paths.contains(&vec!["crate".into(), "a".into(), "A".into()]));
    assert!(paths.contains(&vec!["crate".into(), "b".into(), "C".into()]));
}
