//! The host walk: a stat fingerprint of the project (kind, size, mtime, inode, mode by
//! path), cheap enough to take before every command.
//!
//! It exists because an overlay's merged view can keep showing a lower file that the
//! host replaced by rename while the dentry is cached: comparing fingerprints tells the
//! session which host paths changed since its last sync without reading any content.
//! `.git` and `.contextos/state` are never part of it (the container never sees them).

use crate::sandbox::workspace::excluded;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

/// What a path was on the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    File,
    Dir,
    Link,
    Other,
}

/// One path's stat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stat {
    pub kind: Kind,
    pub size: u64,
    pub mtime_ns: i128,
    pub ino: u64,
    pub mode: u32,
}

pub type Fingerprint = BTreeMap<String, Stat>;

pub(crate) fn join_rel(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}/{name}")
    }
}

/// The project's stat fingerprint. Names that are not UTF-8 cannot be named in a
/// change and are left out (the container still sees them; they never come back).
pub fn take(project: &Path) -> std::io::Result<Fingerprint> {
    let mut out = Fingerprint::new();
    walk(project, "", &mut out)?;
    Ok(out)
}

fn walk(dir: &Path, prefix: &str, out: &mut Fingerprint) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let rel = join_rel(prefix, &name);
        if excluded(&rel) {
            continue;
        }
        let meta = match std::fs::symlink_metadata(entry.path()) {
            Ok(m) => m,
            // Removed while walking: absent, as the next walk will also say.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        let ty = meta.file_type();
        let kind = if ty.is_dir() {
            Kind::Dir
        } else if ty.is_file() {
            Kind::File
        } else if ty.is_symlink() {
            Kind::Link
        } else {
            Kind::Other
        };
        out.insert(
            rel.clone(),
            Stat {
                kind,
                size: meta.len(),
                mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
                ino: meta.ino(),
                mode: meta.mode(),
            },
        );
        if kind == Kind::Dir {
            walk(&entry.path(), &rel, out)?;
        }
    }
    Ok(())
}

/// Paths whose stat differs between `old` and `new` (added, removed or changed).
pub fn changed(old: &Fingerprint, new: &Fingerprint) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (p, s) in old {
        if new.get(p) != Some(s) {
            out.insert(p.clone());
        }
    }
    for p in new.keys() {
        if !old.contains_key(p) {
            out.insert(p.clone());
        }
    }
    out
}

/// `.git` entries (at any depth) and `.contextos/state`, which the container must not
/// see: they are covered by empty read-only mounts in overlay mode.
pub fn hidden(project: &Path) -> std::io::Result<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    if project.join(".contextos/state").is_dir() {
        out.insert(".contextos/state".to_string());
    }
    find_git(project, "", &mut out)?;
    Ok(out)
}

fn find_git(dir: &Path, prefix: &str, out: &mut BTreeSet<String>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let rel = join_rel(prefix, &name);
        if name == ".git" {
            out.insert(rel);
            continue;
        }
        if rel == ".contextos/state" {
            continue;
        }
        if entry.file_type()?.is_dir() {
            find_git(&entry.path(), &rel, out)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rename_over_a_file_changes_its_fingerprint_and_git_is_left_out() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(".git/objects")).unwrap();
        std::fs::create_dir_all(d.path().join(".contextos/state")).unwrap();
        std::fs::create_dir_all(d.path().join("vendor/x/.git")).unwrap();
        std::fs::write(d.path().join("a"), "1").unwrap();
        let before = take(d.path()).unwrap();
        assert!(before
            .keys()
            .all(|k| !k.contains(".git") && !k.contains("state")));
        std::fs::write(d.path().join("a.tmp"), "2").unwrap();
        std::fs::rename(d.path().join("a.tmp"), d.path().join("a")).unwrap();
        let after = take(d.path()).unwrap();
        assert_eq!(changed(&before, &after), BTreeSet::from(["a".to_string()]));
        assert_eq!(
            hidden(d.path()).unwrap(),
            BTreeSet::from([
                ".contextos/state".to_string(),
                ".git".to_string(),
                "vendor/x/.git".to_string()
            ])
        );
    }
}
