//! Where a project-relative path really lands once symbolic links are followed.
//!
//! The effect handlers never follow links (openat2 `RESOLVE_BENEATH`), but an agent's
//! own tools do: when a hook judges `docs/link/pre-commit` and `docs/link` points at
//! `.git/hooks`, the write lands on a git hook. The hook therefore judges the path where
//! the file system would put the bytes, in addition to the path the agent named. This is
//! a check at decision time; the agent acts later, so a link swapped in between is not
//! seen here (the sandbox and the journal are the boundaries that hold under races).

use std::path::{Component, Path, PathBuf};

/// The physical destination of a project-relative path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Landing {
    /// No symbolic link on the way: the path is where it says.
    Same,
    /// Links lead to another path inside the project (relative, `/`-separated).
    Inside(String),
    /// Links lead out of the project (the absolute destination).
    Outside(PathBuf),
    /// The links cannot be resolved (a loop, too many hops, unreadable).
    Unresolvable(String),
}

/// Hops allowed before a chain of links counts as a loop (Linux's own limit is 40).
const MAX_HOPS: usize = 40;

/// Resolves `rel` (already canonical: no `.`/`..`, `/`-separated) beneath `root`.
pub fn landing(root: &Path, rel: &str) -> Landing {
    let root = match std::fs::canonicalize(root) {
        Ok(r) => r,
        Err(e) => return Landing::Unresolvable(format!("{}: {e}", root.display())),
    };
    let mut cur = root.clone();
    let mut pending: Vec<String> = rel.split('/').rev().map(str::to_string).collect();
    let mut hops = 0usize;
    let mut followed = false;
    while let Some(part) = pending.pop() {
        match part.as_str() {
            "" | "." => continue,
            ".." => {
                cur.pop();
                continue;
            }
            _ => {}
        }
        let next = cur.join(&part);
        match std::fs::symlink_metadata(&next) {
            Ok(m) if m.file_type().is_symlink() => {
                hops += 1;
                if hops > MAX_HOPS {
                    return Landing::Unresolvable(format!("more than {MAX_HOPS} symbolic links"));
                }
                followed = true;
                let target = match std::fs::read_link(&next) {
                    Ok(t) => t,
                    Err(e) => return Landing::Unresolvable(format!("{}: {e}", next.display())),
                };
                // The target's components are walked like the rest of the path, so links
                // inside the target are followed too, and a dangling link still shows
                // where a write through it would create the file.
                if target.is_absolute() {
                    cur = PathBuf::from("/");
                }
                for c in target.components().rev() {
                    match c {
                        Component::Normal(s) => pending.push(s.to_string_lossy().into_owned()),
                        Component::ParentDir => pending.push("..".into()),
                        Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
                    }
                }
            }
            Ok(_) => cur = next,
            // Not there yet: a write would create it here.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => cur = next,
            // Unreadable (permissions, I/O): whether it is a link cannot be known.
            Err(e) => return Landing::Unresolvable(format!("{}: {e}", next.display())),
        }
    }
    if !followed {
        return Landing::Same;
    }
    match cur.strip_prefix(&root) {
        Ok(inside) => {
            let text = inside
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            if text == rel {
                Landing::Same
            } else {
                Landing::Inside(text)
            }
        }
        Err(_) => Landing::Outside(cur),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn links_are_followed_inside_and_out() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::create_dir_all(dir.path().join("outside")).unwrap();
        symlink("../.git/hooks", root.join("docs/h")).unwrap();
        symlink(dir.path().join("outside"), root.join("out")).unwrap();
        symlink("nowhere/x", root.join("dangling")).unwrap();
        symlink("loop", root.join("loop")).unwrap();
        std::fs::write(root.join("plain.txt"), "x").unwrap();

        assert_eq!(landing(&root, "plain.txt"), Landing::Same);
        assert_eq!(landing(&root, "new/file.rs"), Landing::Same);
        assert_eq!(
            landing(&root, "docs/h/pre-commit"),
            Landing::Inside(".git/hooks/pre-commit".into())
        );
        match landing(&root, "out/secret") {
            Landing::Outside(p) => assert!(p.ends_with("outside/secret")),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            landing(&root, "dangling"),
            Landing::Inside("nowhere/x".into())
        );
        assert!(matches!(landing(&root, "loop"), Landing::Unresolvable(_)));
    }

    #[test]
    fn a_link_climbing_out_through_dotdot_is_outside() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        std::fs::create_dir_all(root.join("a")).unwrap();
        symlink("../../etc", root.join("a/up")).unwrap();
        assert!(matches!(landing(&root, "a/up/passwd"), Landing::Outside(_)));
    }
}
