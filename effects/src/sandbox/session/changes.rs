//! The session's view and the changeset: what the container sees at each path that
//! differs from the synced baseline, split into changes for the journal, paths that
//! stay in the session (git ignores them) and entries that are refused.
//!
//! Both capture modes describe their view as [`Obs`] by path, so the split below is one
//! piece of code and the two modes cannot drift apart in what they report.

use super::ignore::Ignores;
use super::state::Entry;
use crate::safe_fs::{sha256_hex, SafeRoot};
use crate::sandbox::workspace::{excluded, Refused};
use contextos_core::canon::canonical_path;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

/// What the container sees at one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Obs {
    /// A regular file, stored at `disk` in the scratch area.
    File {
        sha256: String,
        mode: u32,
        disk: PathBuf,
        size: u64,
    },
    Link {
        target: String,
    },
    /// Nothing (deleted, hidden by a whiteout or an opaque directory, or a directory
    /// where the baseline had a file).
    Absent,
    /// Something that can never come back, with the reason.
    Odd(String),
}

impl Obs {
    /// Whether the view shows exactly `entry` (`None`: nothing) at the path.
    pub fn shows(&self, entry: Option<&Entry>) -> bool {
        match (self, entry) {
            (Obs::Absent, None) => true,
            (Obs::File { sha256, mode, .. }, Some(Entry::File { sha256: s, mode: m })) => {
                sha256 == s && mode == m
            }
            (Obs::Link { target }, Some(Entry::Link { target: t })) => target == t,
            _ => false,
        }
    }
}

/// Only the executable bit is carried, as git does.
pub fn norm_mode(mode: u32) -> u32 {
    if mode & 0o111 != 0 {
        0o755
    } else {
        0o644
    }
}

/// A regular file of the scratch area as an observation (content hashed).
pub fn observe_file(disk: &Path, meta: &std::fs::Metadata) -> std::io::Result<Obs> {
    use std::os::unix::fs::MetadataExt as _;
    if meta.nlink() > 1 {
        return Ok(Obs::Odd(format!(
            "the file has {} hard links; a hard link cannot come back",
            meta.nlink()
        )));
    }
    let bytes = std::fs::read(disk)?;
    Ok(Obs::File {
        sha256: sha256_hex(&bytes),
        mode: norm_mode(meta.permissions().mode()),
        disk: disk.to_path_buf(),
        size: bytes.len() as u64,
    })
}

/// Why an entry of a type other than file, directory or link cannot come back.
pub fn odd_reason(ty: std::fs::FileType) -> String {
    use std::os::unix::fs::FileTypeExt as _;
    let what = if ty.is_fifo() {
        "a fifo"
    } else if ty.is_socket() {
        "a socket"
    } else if ty.is_char_device() || ty.is_block_device() {
        "a device node"
    } else {
        "a special file"
    };
    format!("{what} cannot come back; only regular files can")
}

/// The host's entry at `rel` as the container may see it: `None` when absent, not a
/// file or link, excluded, or withheld. Read beneath the root without following links.
pub fn host_entry(
    root: &SafeRoot,
    rel: &str,
    withheld: &BTreeSet<String>,
) -> std::io::Result<Option<Entry>> {
    if excluded(rel) || withheld.contains(rel) {
        return Ok(None);
    }
    let path = root.path().join(rel);
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let ty = meta.file_type();
    if ty.is_symlink() {
        let target = std::fs::read_link(&path)?;
        return Ok(Some(Entry::Link {
            target: target.to_string_lossy().into_owned(),
        }));
    }
    if !ty.is_file() {
        return Ok(None);
    }
    match root.read(rel) {
        Ok(bytes) => Ok(Some(Entry::File {
            sha256: sha256_hex(&bytes),
            mode: norm_mode(meta.permissions().mode()),
        })),
        Err(e) if e.code == "path.not-found" => Ok(None),
        Err(e) => Err(std::io::Error::other(format!("{rel}: {}", e.message))),
    }
}

/// One change for the journal. Paths are project-relative with `/` separators.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum Change {
    #[serde(rename_all = "camelCase")]
    Write {
        path: String,
        #[serde(skip)]
        content: Vec<u8>,
        mode: u32,
        /// The host file's sha256 at the last sync (what the command saw); `None` for a
        /// file the command created.
        #[serde(skip_serializing_if = "Option::is_none")]
        expect_sha256: Option<String>,
        /// The file was not on the host at the last sync and must not have appeared.
        must_not_exist: bool,
    },
    #[serde(rename_all = "camelCase")]
    Delete {
        path: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        expect_sha256: Option<String>,
    },
}

impl Change {
    pub fn path(&self) -> &str {
        match self {
            Change::Write { path, .. } | Change::Delete { path, .. } => path,
        }
    }
}

/// The changeset since the last sync.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pending {
    /// Sorted by path (bytewise).
    pub changes: Vec<Change>,
    /// Changed paths git ignores: they stay in the session, are never applied and stay
    /// visible to the next command.
    pub kept_in_session: Vec<String>,
    /// Entries that cannot come back, with the reason.
    pub refused: Vec<Refused>,
    /// Bytes of content carried by `changes`.
    pub bytes: u64,
}

impl Pending {
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty() && self.refused.is_empty()
    }
}

fn refuse(out: &mut Pending, path: &str, reason: impl Into<String>) {
    out.refused.push(Refused {
        path: path.to_string(),
        reason: reason.into(),
    });
}

/// Splits the view into the changeset. `obs` holds the view at every path where it may
/// differ from `baseline`; a baseline path missing from `obs` is unchanged.
pub fn classify(
    baseline: &BTreeMap<String, Entry>,
    obs: &BTreeMap<String, Obs>,
    withheld: &BTreeSet<String>,
    ignores: &Ignores,
    cap: u64,
) -> std::io::Result<Pending> {
    let mut out = Pending::default();
    for (path, o) in obs {
        let before = baseline.get(path);
        if o.shows(before) {
            continue;
        }
        if excluded(path) {
            refuse(
                &mut out,
                path,
                "`.git` and `.contextos/state` are never writable from the sandbox",
            );
            continue;
        }
        if withheld.contains(path) {
            refuse(
                &mut out,
                path,
                "the file is withheld from the sandbox (its read verdict is not allow)",
            );
            continue;
        }
        match canonical_path(path) {
            Ok(c) if c == *path => {}
            Ok(c) => {
                refuse(&mut out, path, format!("not in canonical form (`{c}`)"));
                continue;
            }
            Err(e) => {
                refuse(&mut out, path, format!("[{}] {}", e.code, e.message));
                continue;
            }
        }
        if ignores.ignored(path) {
            out.kept_in_session.push(path.clone());
            continue;
        }
        match (o, before) {
            (Obs::Odd(reason), _) => refuse(&mut out, path, reason.clone()),
            (Obs::Link { .. }, _) => refuse(
                &mut out,
                path,
                "a symbolic link cannot come back; write the file itself",
            ),
            (_, Some(Entry::Link { .. })) => refuse(
                &mut out,
                path,
                "a symbolic link of the project cannot be replaced or deleted from the sandbox",
            ),
            (Obs::Absent, Some(Entry::File { sha256, .. })) => out.changes.push(Change::Delete {
                path: path.clone(),
                expect_sha256: Some(sha256.clone()),
            }),
            (Obs::Absent, None) => {}
            (
                Obs::File {
                    disk, mode, size, ..
                },
                before,
            ) => {
                if out.bytes.saturating_add(*size) > cap {
                    refuse(
                        &mut out,
                        path,
                        format!("the changeset holds more than {cap} bytes"),
                    );
                    continue;
                }
                let content = std::fs::read(disk)?;
                out.bytes = out.bytes.saturating_add(content.len() as u64);
                let expect = match before {
                    Some(Entry::File { sha256, .. }) => Some(sha256.clone()),
                    _ => None,
                };
                out.changes.push(Change::Write {
                    path: path.clone(),
                    content,
                    mode: *mode,
                    must_not_exist: expect.is_none(),
                    expect_sha256: expect,
                });
            }
        }
    }
    out.changes
        .sort_by(|a, b| a.path().as_bytes().cmp(b.path().as_bytes()));
    Ok(out)
}

/// The baseline after the host took `p` through the journal.
pub fn accept_into(baseline: &mut BTreeMap<String, Entry>, p: &Pending) {
    for c in &p.changes {
        match c {
            Change::Write {
                path,
                content,
                mode,
                ..
            } => {
                baseline.insert(
                    path.clone(),
                    Entry::File {
                        sha256: sha256_hex(content),
                        mode: *mode,
                    },
                );
            }
            Change::Delete { path, .. } => {
                baseline.remove(path);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(dir: &Path, name: &str, text: &str) -> Obs {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        observe_file(&p, &std::fs::symlink_metadata(&p).unwrap()).unwrap()
    }

    #[test]
    fn the_split_keeps_ignored_paths_refuses_what_cannot_come_back_and_caps_bytes() {
        let project = tempfile::tempdir().unwrap();
        std::fs::write(project.path().join(".gitignore"), "target/\n").unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let s = scratch.path();
        let baseline = BTreeMap::from([
            (
                "same.txt".to_string(),
                Entry::File {
                    sha256: sha256_hex(b"same\n"),
                    mode: 0o644,
                },
            ),
            (
                "gone.txt".to_string(),
                Entry::File {
                    sha256: sha256_hex(b"gone\n"),
                    mode: 0o644,
                },
            ),
            (
                "link".to_string(),
                Entry::Link {
                    target: "same.txt".into(),
                },
            ),
        ]);
        let obs = BTreeMap::from([
            ("same.txt".to_string(), file(s, "1", "same\n")),
            ("gone.txt".to_string(), Obs::Absent),
            ("link".to_string(), Obs::Absent),
            ("target/out".to_string(), file(s, "2", "bin\n")),
            (".git/config".to_string(), file(s, "3", "x\n")),
            ("secret".to_string(), file(s, "4", "x\n")),
            ("new.txt".to_string(), file(s, "5", "new\n")),
            ("big.txt".to_string(), file(s, "6", "0123456789\n")),
            (
                "evil".to_string(),
                Obs::Link {
                    target: "/etc/passwd".into(),
                },
            ),
        ]);
        let withheld = BTreeSet::from(["secret".to_string()]);
        let ig = Ignores::load(project.path());
        let p = classify(&baseline, &obs, &withheld, &ig, 8).unwrap();
        let changed: Vec<&str> = p.changes.iter().map(Change::path).collect();
        assert_eq!(changed, vec!["gone.txt", "new.txt"]);
        assert_eq!(p.kept_in_session, vec!["target/out"]);
        let refused: Vec<&str> = p.refused.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(
            refused,
            vec![".git/config", "big.txt", "evil", "link", "secret"]
        );
        assert_eq!(p.bytes, 4);

        let mut b = baseline.clone();
        accept_into(&mut b, &p);
        assert!(!b.contains_key("gone.txt"));
        assert_eq!(
            b.get("new.txt"),
            Some(&Entry::File {
                sha256: sha256_hex(b"new\n"),
                mode: 0o644
            })
        );
    }
}
