//! Copy mode: a private copy of the project in the scratch area, bind-mounted
//! read-write at `/workspace` and diffed against the recorded baseline after each
//! command. It is the fallback where overlay volumes are not available (Docker Desktop,
//! rootless Podman, a remote engine) or cannot be written by the sandbox user (a
//! root-owned project), with the same change semantics as overlay mode.
//!
//! The copy never contains `.git`, `.contextos/state` or a withheld file. When running
//! as root it is owned by the sandbox user; otherwise it is world-writable inside a
//! scratch directory only the invoking user can enter.

use super::changes::{host_entry, norm_mode, observe_file, odd_reason, Obs};
use super::fingerprint::join_rel;
use super::state::Entry;
use crate::safe_fs::{sha256_hex, SafeRoot};
use crate::sandbox::workspace::excluded;
use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

/// Who owns the copy, so the sandbox user can write it.
#[derive(Debug, Clone, Copy)]
pub enum Owner {
    /// Running as root: chowned to the sandbox user.
    Chown(u32, u32),
    /// The sandbox user is the invoking user: nothing to change.
    Mine,
    /// Neither: world-writable modes, inside a scratch directory only the invoking
    /// user can enter.
    World,
}

impl Owner {
    fn dir_mode(self) -> u32 {
        match self {
            Owner::World => 0o777,
            _ => 0o755,
        }
    }

    fn file_mode(self, mode: u32) -> u32 {
        match (self, mode & 0o111 != 0) {
            (Owner::World, true) => 0o777,
            (Owner::World, false) => 0o666,
            (_, true) => 0o755,
            (_, false) => 0o644,
        }
    }

    fn own(self, path: &Path) -> std::io::Result<()> {
        match self {
            Owner::Chown(u, g) => std::os::unix::fs::lchown(path, Some(u), Some(g)),
            _ => Ok(()),
        }
    }
}

fn mkdir(path: &Path, owner: Owner) -> std::io::Result<()> {
    std::fs::create_dir(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(owner.dir_mode()))?;
    owner.own(path)
}

fn write_file(path: &Path, bytes: &[u8], mode: u32, owner: Owner) -> std::io::Result<()> {
    std::fs::write(path, bytes)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(owner.file_mode(mode)))?;
    owner.own(path)
}

/// Copies the project into `copy` (an existing empty directory) and returns the
/// baseline and the withheld files.
pub fn populate(
    root: &SafeRoot,
    copy: &Path,
    withhold: &mut dyn FnMut(&str) -> bool,
    owner: Owner,
) -> std::io::Result<(BTreeMap<String, Entry>, BTreeSet<String>)> {
    std::fs::set_permissions(copy, std::fs::Permissions::from_mode(owner.dir_mode()))?;
    owner.own(copy)?;
    let mut baseline = BTreeMap::new();
    let mut withheld = BTreeSet::new();
    copy_tree(
        root,
        "",
        copy,
        withhold,
        owner,
        &mut baseline,
        &mut withheld,
    )?;
    Ok((baseline, withheld))
}

fn copy_tree(
    root: &SafeRoot,
    prefix: &str,
    dest: &Path,
    withhold: &mut dyn FnMut(&str) -> bool,
    owner: Owner,
    baseline: &mut BTreeMap<String, Entry>,
    withheld: &mut BTreeSet<String>,
) -> std::io::Result<()> {
    let src = root.path().join(prefix);
    let mut entries: Vec<_> = std::fs::read_dir(&src)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let rel = join_rel(prefix, &name);
        if excluded(&rel) {
            continue;
        }
        let meta = std::fs::symlink_metadata(entry.path())?;
        let ty = meta.file_type();
        let to = dest.join(&name);
        if ty.is_dir() {
            mkdir(&to, owner)?;
            copy_tree(root, &rel, &to, withhold, owner, baseline, withheld)?;
        } else if ty.is_symlink() {
            let target = std::fs::read_link(entry.path())?;
            std::os::unix::fs::symlink(&target, &to)?;
            owner.own(&to)?;
            baseline.insert(
                rel,
                Entry::Link {
                    target: target.to_string_lossy().into_owned(),
                },
            );
        } else if ty.is_file() {
            if withhold(&rel) {
                withheld.insert(rel);
                continue;
            }
            let bytes = root
                .read(&rel)
                .map_err(|e| std::io::Error::other(format!("{rel}: {}", e.message)))?;
            let mode = norm_mode(meta.permissions().mode());
            write_file(&to, &bytes, mode, owner)?;
            baseline.insert(
                rel,
                Entry::File {
                    sha256: sha256_hex(&bytes),
                    mode,
                },
            );
        }
        // Sockets, fifos and devices of the project have no content to copy.
    }
    Ok(())
}

/// The copy as the container leaves it, at every path where it may differ from
/// `baseline`.
pub fn scan(
    copy: &Path,
    baseline: &BTreeMap<String, Entry>,
) -> std::io::Result<BTreeMap<String, Obs>> {
    let mut out = BTreeMap::new();
    walk(copy, "", &mut out)?;
    for rel in baseline.keys() {
        out.entry(rel.clone()).or_insert(Obs::Absent);
    }
    Ok(out)
}

fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Obs>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let raw = entry.file_name();
        let Some(name) = raw.to_str() else {
            out.insert(
                join_rel(prefix, &raw.to_string_lossy()),
                Obs::Odd("the name is not UTF-8".into()),
            );
            continue;
        };
        let rel = join_rel(prefix, name);
        let path = entry.path();
        let meta = std::fs::symlink_metadata(&path)?;
        let ty = meta.file_type();
        if ty.is_dir() {
            walk(&path, &rel, out)?;
        } else if ty.is_file() {
            out.insert(rel, observe_file(&path, &meta)?);
        } else if ty.is_symlink() {
            let target = std::fs::read_link(&path)?;
            out.insert(
                rel,
                Obs::Link {
                    target: target.to_string_lossy().into_owned(),
                },
            );
        } else {
            out.insert(rel, Obs::Odd(odd_reason(ty)));
        }
    }
    Ok(())
}

fn remove_any(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// What the copy shows at `rel`.
pub fn obs_at(copy: &Path, rel: &str) -> std::io::Result<Obs> {
    let path = copy.join(rel);
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(m) => m,
        // Missing, or a file where a directory of the path was.
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound
                || e.raw_os_error() == Some(rustix::io::Errno::NOTDIR.raw_os_error()) =>
        {
            return Ok(Obs::Absent)
        }
        Err(e) => return Err(e),
    };
    let ty = meta.file_type();
    Ok(if ty.is_dir() {
        Obs::Absent
    } else if ty.is_file() {
        observe_file(&path, &meta)?
    } else if ty.is_symlink() {
        Obs::Link {
            target: std::fs::read_link(&path)?.to_string_lossy().into_owned(),
        }
    } else {
        Obs::Odd(odd_reason(ty))
    })
}

/// Makes the copy show the host at `rel` (or nothing, when the host has nothing the
/// container may see there). Returns false, doing nothing, when a session entry of
/// another kind is in the way and `force` is not set (a conflicting session change,
/// which stays).
pub fn restore(
    root: &SafeRoot,
    copy: &Path,
    rel: &str,
    withheld: &BTreeSet<String>,
    owner: Owner,
    force: bool,
) -> std::io::Result<bool> {
    let host = host_entry(root, rel, withheld)?;
    let parts: Vec<&str> = rel.split('/').collect();
    let Some((last, dirs)) = parts.split_last() else {
        return Ok(false);
    };
    let mut cur = copy.to_path_buf();
    for part in dirs {
        cur.push(part);
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.is_dir() => {}
            Ok(_) if force => {
                remove_any(&cur)?;
                if host.is_some() {
                    mkdir(&cur, owner)?;
                } else {
                    return Ok(true);
                }
            }
            Ok(_) => return Ok(false),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if host.is_none() {
                    return Ok(true);
                }
                mkdir(&cur, owner)?;
            }
            Err(e) => return Err(e),
        }
    }
    cur.push(last);
    if let Ok(m) = std::fs::symlink_metadata(&cur) {
        if m.is_dir() && !force {
            return Ok(false);
        }
        remove_any(&cur)?;
    }
    match host {
        None => {}
        Some(Entry::Link { target }) => {
            std::os::unix::fs::symlink(&target, &cur)?;
            owner.own(&cur)?;
        }
        Some(Entry::File { mode, .. }) => {
            let bytes = root
                .read(rel)
                .map_err(|e| std::io::Error::other(format!("{rel}: {}", e.message)))?;
            write_file(&cur, &bytes, mode, owner)?;
        }
    }
    Ok(true)
}
