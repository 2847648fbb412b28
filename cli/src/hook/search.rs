//! The files a search tool's glob picks (Claude Glob/Grep, Copilot glob/grep, Cursor
//! Glob/Grep), as path reads the policies can decide. A glob is not a path — the path
//! checks refuse `*` — so before judging, each glob read becomes:
//!
//! - one representative file it names (`secrets/**` → `secrets/x`, `**/*.pem` → `x.pem`),
//!   so a rule over the glob's own region decides it even when no file exists yet;
//! - every file in the project it matches now (a bounded walk below the glob's literal
//!   directory), so `**/*.yaml` meets `deny path read "secrets/**"` through
//!   `secrets/db.yaml`;
//! - outside the project, its literal directory (`/home/dev/.ssh/*` → `/home/dev/.ssh`),
//!   which the outside-path checks decide.
//!
//! The search directory itself, when it is the project root, is dropped: it names no file
//! (the path checks refuse `.` as the project itself), and what the search reads is judged
//! through its glob.

use crate::hook::judge::Place;
use contextos_engine::emit::Action;
use contextos_engine::glob::path_glob;
use contextos_engine::PathOp;
use std::path::Path;

/// Directory entries looked at per glob before the walk stops; the representative file
/// is judged whatever the walk found.
const MAX_VISITED: usize = 20_000;
/// Matches judged per glob.
const MAX_MATCHES: usize = 1_000;

fn is_glob(p: &str) -> bool {
    p.contains(['*', '?', '[', '{'])
}

/// `actions` with every glob read replaced by the files it stands for.
pub fn expand(actions: &[Action], place: &Place) -> Vec<Action> {
    let mut out: Vec<Action> = Vec::with_capacity(actions.len());
    let push = |a: Action, out: &mut Vec<Action>| {
        if !out.contains(&a) {
            out.push(a);
        }
    };
    for a in actions {
        let Action::Path {
            op: PathOp::Read,
            path,
        } = a
        else {
            push(a.clone(), &mut out);
            continue;
        };
        let rel = place.base.resolve(&path.replace('\\', "/"));
        if rel == "." {
            continue;
        }
        if !is_glob(&rel) {
            push(a.clone(), &mut out);
            continue;
        }
        let prefix = literal_prefix(&rel);
        if rel.starts_with('/') || rel.starts_with('~') || rel.starts_with("..") {
            let dir = if prefix.is_empty() { "/" } else { prefix };
            push(read(dir.to_string()), &mut out);
            continue;
        }
        push(read(absolute(place, &sample(&rel))), &mut out);
        for m in matches(&place.root, prefix, &rel) {
            push(read(absolute(place, &m)), &mut out);
        }
    }
    out
}

fn read(path: String) -> Action {
    Action::Path {
        op: PathOp::Read,
        path,
    }
}

/// The project-relative `rel` spelled from the root, so the judge does not join it to the
/// working directory a second time.
fn absolute(place: &Place, rel: &str) -> String {
    let root = place.root.to_string_lossy();
    format!("{}/{rel}", root.trim_end_matches('/'))
}

/// The segments before the first one with glob syntax (`src/**/*.rs` → `src`).
fn literal_prefix(rel: &str) -> &str {
    let mut end = 0;
    for (i, seg) in rel.split('/').enumerate() {
        if is_glob(seg) {
            break;
        }
        end += seg.len() + usize::from(i > 0);
    }
    rel.get(..end).unwrap_or_default()
}

/// One file the glob names: `**` segments dropped (a trailing one becomes a file), other
/// wildcards replaced by a letter, the first alternative of a brace taken.
fn sample(rel: &str) -> String {
    let segs: Vec<&str> = rel.split('/').filter(|s| !s.is_empty()).collect();
    let mut out: Vec<String> = Vec::new();
    for (i, seg) in segs.iter().enumerate() {
        if *seg == "**" {
            if i + 1 == segs.len() {
                out.push("x".into());
            }
            continue;
        }
        out.push(sample_segment(seg));
    }
    if out.is_empty() {
        out.push("x".into());
    }
    out.join("/")
}

fn sample_segment(seg: &str) -> String {
    let mut s = String::new();
    let mut chars = seg.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' | '?' => {
                if !s.ends_with('x') {
                    s.push('x');
                }
            }
            '[' => {
                for d in chars.by_ref() {
                    if d == ']' {
                        break;
                    }
                }
                s.push('x');
            }
            '{' => {
                let mut first = String::new();
                let mut in_first = true;
                for d in chars.by_ref() {
                    match d {
                        '}' => break,
                        ',' => in_first = false,
                        _ if in_first => first.push(d),
                        _ => {}
                    }
                }
                s.push_str(&sample_segment(&first));
            }
            '\\' => {
                if let Some(d) = chars.next() {
                    s.push(d);
                }
            }
            _ => s.push(c),
        }
    }
    if s.is_empty() {
        "x".into()
    } else {
        s
    }
}

/// The files (and directories) below `prefix` that `glob` matches, project-relative;
/// symbolic links are not followed (the judge follows the ones it is given).
fn matches(root: &Path, prefix: &str, glob: &str) -> Vec<String> {
    let Ok(g) = path_glob(glob) else {
        return Vec::new();
    };
    let m = g.compile_matcher();
    let mut found = Vec::new();
    let mut visited = 0usize;
    let mut stack: Vec<String> = vec![prefix.to_string()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&dir)) else {
            continue;
        };
        for e in entries.flatten() {
            visited += 1;
            if visited > MAX_VISITED || found.len() >= MAX_MATCHES {
                return found;
            }
            let name = e.file_name().to_string_lossy().into_owned();
            let rel = if dir.is_empty() {
                name
            } else {
                format!("{dir}/{name}")
            };
            if m.is_match(&rel) {
                found.push(rel.clone());
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(rel);
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_and_prefixes() {
        assert_eq!(sample("secrets/**"), "secrets/x");
        assert_eq!(sample("**/*.pem"), "x.pem");
        assert_eq!(sample("src/**/*.{rs,toml}"), "src/x.rs");
        assert_eq!(sample("a/[ab]c?.d"), "a/xcx.d");
        assert_eq!(sample("**"), "x");
        assert_eq!(literal_prefix("src/**/*.rs"), "src");
        assert_eq!(literal_prefix("a/b/*.rs"), "a/b");
        assert_eq!(literal_prefix("**/*.pem"), "");
    }

    #[test]
    fn globs_become_the_files_they_pick() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("secrets/deep")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("secrets/deep/db.yaml"), "x").unwrap();
        std::fs::write(root.join("src/ci.yaml"), "x").unwrap();
        std::fs::write(root.join("src/lib.rs"), "x").unwrap();
        let place = Place::new(root, Some(&root.join("src").to_string_lossy()));
        let r = root.to_string_lossy().into_owned();
        let abs = |p: &str| read(format!("{r}/{p}"));
        let got = expand(&[read("**/*.yaml".into())], &place);
        // Relative to the working directory (`src`).
        assert_eq!(got, vec![abs("src/x.yaml"), abs("src/ci.yaml")]);
        let got = expand(&[read(format!("{r}/**/*.yaml"))], &place);
        assert!(got.contains(&abs("x.yaml")), "{got:?}");
        assert!(got.contains(&abs("secrets/deep/db.yaml")), "{got:?}");
        assert!(got.contains(&abs("src/ci.yaml")), "{got:?}");
        assert!(!got.contains(&abs("src/lib.rs")), "{got:?}");
        // The root as a search directory names no file; a plain path is kept as sent.
        let got = expand(&[read(r.clone()), read(format!("{r}/src"))], &place);
        assert_eq!(got, vec![read(format!("{r}/src"))]);
        // Outside the project: the literal directory, for the outside-path checks.
        let got = expand(&[read("/home/dev/.ssh/*".into())], &place);
        assert_eq!(got, vec![read("/home/dev/.ssh".into())]);
        // Writes and shell lines are not touched.
        let w = Action::Path {
            op: PathOp::Write,
            path: "a*".into(),
        };
        assert_eq!(expand(std::slice::from_ref(&w), &place), vec![w]);
    }
}
