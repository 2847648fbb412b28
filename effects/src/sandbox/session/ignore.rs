//! Which changed paths git ignores: those stay in the session (build outputs such as
//! `target/` or `node_modules/`), are never applied to the host, and stay visible to the
//! next command.
//!
//! The rules are read from the *host* project — every nested `.gitignore` and
//! `.git/info/exclude` — never from the session's own view, so a command cannot hide
//! its changes from review by writing a `.gitignore`. The user's global excludes file
//! is left out on purpose: what stays in a session must not depend on who runs it.
//! Git's order of precedence is followed: for each path component from the top, a
//! deeper `.gitignore` wins over a shallower one, `info/exclude` comes last, and once a
//! directory is ignored nothing under it can be re-included.

use crate::sandbox::workspace::excluded;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct Ignores {
    root: PathBuf,
    /// (directory relative to the root, its `.gitignore`), deepest first.
    levels: Vec<(String, Gitignore)>,
    exclude: Option<Gitignore>,
}

impl Ignores {
    pub fn load(project: &Path) -> Ignores {
        let mut levels = Vec::new();
        collect(project, "", &mut levels);
        // Deepest first: the first matcher with an opinion decides.
        levels.sort_by_key(|(dir, _)| std::cmp::Reverse(depth(dir)));
        let info = project.join(".git/info/exclude");
        let exclude = info.is_file().then(|| build(project, &info)).flatten();
        Ignores {
            root: project.to_path_buf(),
            levels,
            exclude,
        }
    }

    /// Whether git ignores the file `rel` (project-relative, `/`-separated).
    pub fn ignored(&self, rel: &str) -> bool {
        let parts: Vec<&str> = rel.split('/').collect();
        let mut prefix = String::new();
        for (i, part) in parts.iter().enumerate() {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(part);
            let is_dir = i + 1 < parts.len();
            if self.decide(&prefix, is_dir) == Some(true) {
                return true;
            }
        }
        false
    }

    fn decide(&self, rel: &str, is_dir: bool) -> Option<bool> {
        let abs = self.root.join(rel);
        for (dir, gi) in &self.levels {
            if !(dir.is_empty() || rel.starts_with(&format!("{dir}/"))) {
                continue;
            }
            let m = gi.matched(&abs, is_dir);
            if m.is_ignore() {
                return Some(true);
            }
            if m.is_whitelist() {
                return Some(false);
            }
        }
        let m = self.exclude.as_ref()?.matched(&abs, is_dir);
        if m.is_ignore() {
            Some(true)
        } else if m.is_whitelist() {
            Some(false)
        } else {
            None
        }
    }
}

fn depth(dir: &str) -> usize {
    if dir.is_empty() {
        0
    } else {
        dir.split('/').count()
    }
}

fn build(root: &Path, file: &Path) -> Option<Gitignore> {
    let mut b = GitignoreBuilder::new(root);
    // A malformed line is skipped by git too; the rest of the file still applies.
    let _ = b.add(file);
    b.build().ok()
}

fn collect(dir: &Path, prefix: &str, out: &mut Vec<(String, Gitignore)>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let file = dir.join(".gitignore");
    if file.is_file() {
        if let Some(gi) = build(dir, &file) {
            out.push((prefix.to_string(), gi));
        }
    }
    for entry in rd.flatten() {
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let rel = super::fingerprint::join_rel(prefix, &name);
        if excluded(&rel) {
            continue;
        }
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            collect(&entry.path(), &rel, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_gitignores_and_info_exclude_follow_git_precedence() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        std::fs::create_dir_all(p.join(".git/info")).unwrap();
        std::fs::create_dir_all(p.join("web/keep")).unwrap();
        std::fs::write(p.join(".gitignore"), "target/\n*.log\n").unwrap();
        std::fs::write(p.join("web/.gitignore"), "node_modules/\n!important.log\n").unwrap();
        std::fs::write(p.join(".git/info/exclude"), "scratch.txt\n").unwrap();
        let ig = Ignores::load(p);
        assert!(ig.ignored("target/debug/app"));
        assert!(ig.ignored("a.log"));
        assert!(ig.ignored("web/node_modules/x/index.js"));
        assert!(!ig.ignored("node_modules/x"), "web's rule is web's only");
        assert!(
            !ig.ignored("web/important.log"),
            "a deeper rule re-includes"
        );
        assert!(ig.ignored("scratch.txt"));
        assert!(!ig.ignored("src/main.rs"));
        assert!(
            !ig.ignored("target"),
            "a file named like an ignored directory"
        );
    }
}
