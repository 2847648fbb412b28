//! The per-run directory: a snapshot of the project the command may read, an empty
//! output area it may write, and the way results come back.
//!
//! The project itself is never mounted. Its files are copied into
//! `<tmp>/contextos-run-<id>/workspace` (without `.git`, `.contextos/state` and any file
//! the caller's filter refuses, e.g. a path whose `read` verdict is deny), which the
//! container sees read-only at `/workspace`. The command hands results back by writing
//! them under the output area at their project-relative path; after the run the area is
//! read without following links and turned into changes that the caller applies through
//! the journal, with the path verdicts, the lock and one atomic transaction. A file the
//! command read and rewrote carries the sha256 of the snapshot as a precondition, so a
//! host edit made during the run aborts the transaction instead of being overwritten.

use crate::safe_fs::sha256_hex;
use contextos_core::canon::canonical_path;
use serde::Serialize;
use std::collections::BTreeMap;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Where the container sees the snapshot (read-only) and the output area.
pub const WORKSPACE_MOUNT: &str = "/workspace";
pub const OUTPUT_MOUNT: &str = "/output";

/// A run directory could not be prepared or read.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

fn io(path: &Path, source: std::io::Error) -> WorkspaceError {
    WorkspaceError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Directories never copied into the sandbox: git internals (hooks, config, credentials
/// helpers) and ContextOS's own state (lock, journal, decision log).
pub fn excluded(rel: &str) -> bool {
    rel == ".contextos/state"
        || rel.starts_with(".contextos/state/")
        || rel.split('/').any(|seg| seg == ".git")
}

/// The directories of one run; removed when dropped.
#[derive(Debug)]
pub struct RunDir {
    pub root: PathBuf,
    pub workspace: PathBuf,
    pub output: PathBuf,
    /// sha256 of every regular file copied, by project-relative path.
    pub snapshot: BTreeMap<String, String>,
    /// Files left out by the filter (not by [`excluded`]).
    pub withheld: Vec<String>,
}

impl Drop for RunDir {
    fn drop(&mut self) {
        // The output area may hold read-only directories the sandbox user created.
        let _ = make_removable(&self.root);
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn make_removable(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let ty = entry.file_type()?;
        if ty.is_dir() {
            let _ = std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(0o700));
            let _ = make_removable(&entry.path());
        }
    }
    Ok(())
}

impl RunDir {
    /// Copies `project` into a fresh run directory under `base` (the system temp dir
    /// when `None`). `keep(rel)` decides per regular file whether it enters the copy.
    pub fn prepare(
        project: &Path,
        base: Option<&Path>,
        id: &str,
        keep: &mut dyn FnMut(&str) -> bool,
    ) -> Result<RunDir, WorkspaceError> {
        let base = base.map_or_else(std::env::temp_dir, Path::to_path_buf);
        let root = base.join(format!("contextos-run-{id}"));
        // Private to the invoking user on the host; the container only sees the two
        // subdirectories it mounts, whose own modes let the sandbox user in.
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&root)
            .map_err(|e| io(&root, e))?;
        let mut run = RunDir {
            workspace: root.join("workspace"),
            output: root.join("output"),
            root,
            snapshot: BTreeMap::new(),
            withheld: Vec::new(),
        };
        for (dir, mode) in [(&run.workspace, 0o755), (&run.output, 0o777)] {
            std::fs::create_dir(dir).map_err(|e| io(dir, e))?;
            // Set explicitly: the umask would otherwise take the write bits away.
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode))
                .map_err(|e| io(dir, e))?;
        }
        let dest = run.workspace.clone();
        copy_tree(project, &dest, "", keep, &mut run)?;
        Ok(run)
    }

    /// Reads the output area into changes (see [`Results`]).
    pub fn collect(&self, cap: u64) -> Result<Results, WorkspaceError> {
        let mut out = Results::default();
        let mut total = 0u64;
        collect_tree(&self.output, "", &self.snapshot, cap, &mut total, &mut out)?;
        out.bytes = total;
        out.changes
            .sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
        Ok(out)
    }
}

fn join_rel(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}/{name}")
    }
}

fn copy_tree(
    src: &Path,
    dest: &Path,
    prefix: &str,
    keep: &mut dyn FnMut(&str) -> bool,
    run: &mut RunDir,
) -> Result<(), WorkspaceError> {
    let mut entries: Vec<_> = std::fs::read_dir(src)
        .map_err(|e| io(src, e))?
        .collect::<Result<_, _>>()
        .map_err(|e| io(src, e))?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            run.withheld
                .push(join_rel(prefix, &entry.file_name().to_string_lossy()));
            continue;
        };
        let rel = join_rel(prefix, &name);
        if excluded(&rel) {
            continue;
        }
        let from = entry.path();
        let to = dest.join(&name);
        let meta = std::fs::symlink_metadata(&from).map_err(|e| io(&from, e))?;
        let ty = meta.file_type();
        if ty.is_dir() {
            std::fs::create_dir(&to).map_err(|e| io(&to, e))?;
            std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| io(&to, e))?;
            copy_tree(&from, &to, &rel, keep, run)?;
        } else if ty.is_symlink() {
            // Copied as a link, never followed: inside the container it resolves within
            // the container's own file system.
            let target = std::fs::read_link(&from).map_err(|e| io(&from, e))?;
            std::os::unix::fs::symlink(&target, &to).map_err(|e| io(&to, e))?;
        } else if ty.is_file() {
            if !keep(&rel) {
                run.withheld.push(rel);
                continue;
            }
            let bytes = std::fs::read(&from).map_err(|e| io(&from, e))?;
            std::fs::write(&to, &bytes).map_err(|e| io(&to, e))?;
            let exec = meta.permissions().mode() & 0o111 != 0;
            // Readable by the sandbox user whatever the host mode was; the run directory
            // itself is private to the host user.
            let mode = if exec { 0o755 } else { 0o644 };
            std::fs::set_permissions(&to, std::fs::Permissions::from_mode(mode))
                .map_err(|e| io(&to, e))?;
            run.snapshot.insert(rel, sha256_hex(&bytes));
        }
        // Sockets, fifos and devices have no content to copy.
    }
    Ok(())
}

/// One file the command produced, in the shape `contextos apply` takes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultChange {
    pub path: String,
    #[serde(skip)]
    pub content: Vec<u8>,
    pub mode: u32,
    /// The snapshot's hash when the file was in the snapshot: the host file must still
    /// be what the command saw.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expect_sha256: Option<String>,
    /// The file was not in the snapshot: it must not have appeared on the host since.
    pub must_not_exist: bool,
}

/// An entry of the output area that cannot come back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refused {
    pub path: String,
    pub reason: String,
}

/// The output area read back.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Results {
    pub changes: Vec<ResultChange>,
    /// Entries that cannot come back (links, devices, non-UTF-8 names or content,
    /// over the size cap). Any refusal refuses the whole result.
    pub refused: Vec<Refused>,
    /// Files identical to the snapshot, dropped as no-ops.
    pub unchanged: Vec<String>,
    pub bytes: u64,
}

fn collect_tree(
    dir: &Path,
    prefix: &str,
    snapshot: &BTreeMap<String, String>,
    cap: u64,
    total: &mut u64,
    out: &mut Results,
) -> Result<(), WorkspaceError> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| io(dir, e))?
        .collect::<Result<_, _>>()
        .map_err(|e| io(dir, e))?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let raw = entry.file_name();
        let shown = join_rel(prefix, &raw.to_string_lossy());
        let Some(name) = raw.to_str() else {
            out.refused.push(Refused {
                path: shown,
                reason: "the name is not UTF-8".into(),
            });
            continue;
        };
        let rel = join_rel(prefix, name);
        let path = entry.path();
        let meta = std::fs::symlink_metadata(&path).map_err(|e| io(&path, e))?;
        let ty = meta.file_type();
        if ty.is_dir() {
            collect_tree(&path, &rel, snapshot, cap, total, out)?;
            continue;
        }
        if !ty.is_file() {
            out.refused.push(Refused {
                path: rel,
                reason: if ty.is_symlink() {
                    "a symbolic link cannot come back; write the file itself".into()
                } else {
                    "only regular files can come back".into()
                },
            });
            continue;
        }
        match canonical_path(&rel) {
            Ok(c) if c == rel => {}
            Ok(c) => {
                out.refused.push(Refused {
                    path: rel,
                    reason: format!("not in canonical form (`{c}`)"),
                });
                continue;
            }
            Err(e) => {
                out.refused.push(Refused {
                    path: rel,
                    reason: format!("[{}] {}", e.code, e.message),
                });
                continue;
            }
        }
        *total = total.saturating_add(meta.len());
        if *total > cap {
            out.refused.push(Refused {
                path: rel,
                reason: format!("the output area holds more than {cap} bytes"),
            });
            continue;
        }
        let content = std::fs::read(&path).map_err(|e| io(&path, e))?;
        if std::str::from_utf8(&content).is_err() {
            out.refused.push(Refused {
                path: rel,
                reason: "binary content cannot be carried by a changeset (UTF-8 text only)".into(),
            });
            continue;
        }
        let sha = sha256_hex(&content);
        let before = snapshot.get(&rel);
        if before == Some(&sha) {
            out.unchanged.push(rel);
            continue;
        }
        let mode = if meta.permissions().mode() & 0o111 != 0 {
            0o755
        } else {
            0o644
        };
        out.changes.push(ResultChange {
            expect_sha256: before.cloned(),
            must_not_exist: before.is_none(),
            path: rel,
            content,
            mode,
        });
    }
    Ok(())
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]
mod tests {
    use super::*;

    fn project() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        std::fs::create_dir_all(p.join("src")).unwrap();
        std::fs::create_dir_all(p.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(p.join(".contextos/state")).unwrap();
        std::fs::create_dir_all(p.join(".contextos/policies")).unwrap();
        std::fs::write(p.join("src/lib.rs"), "pub fn a() {}\n").unwrap();
        std::fs::write(p.join(".env"), "TOKEN=x\n").unwrap();
        std::fs::write(p.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(p.join(".contextos/state/lock"), "").unwrap();
        std::fs::write(p.join(".contextos/policies/a.policy"), "language 1;\n").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", p.join("link")).unwrap();
        d
    }

    #[test]
    fn the_snapshot_leaves_out_git_state_and_withheld_files() {
        let p = project();
        let base = tempfile::tempdir().unwrap();
        let run =
            RunDir::prepare(p.path(), Some(base.path()), "t1", &mut |rel| rel != ".env").unwrap();
        assert!(run.workspace.join("src/lib.rs").is_file());
        assert!(run.workspace.join(".contextos/policies/a.policy").is_file());
        assert!(!run.workspace.join(".git").exists());
        assert!(!run.workspace.join(".contextos/state").exists());
        assert!(!run.workspace.join(".env").exists());
        assert_eq!(run.withheld, vec![".env"]);
        assert_eq!(
            std::fs::read_link(run.workspace.join("link")).unwrap(),
            PathBuf::from("/etc/passwd")
        );
        assert_eq!(
            run.snapshot.get("src/lib.rs").unwrap(),
            &sha256_hex(b"pub fn a() {}\n")
        );
        let mode = std::fs::metadata(&run.output).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o777);
        let root = run.root.clone();
        drop(run);
        assert!(!root.exists(), "the run directory is removed");
    }

    #[test]
    fn results_carry_preconditions_and_refuse_what_cannot_come_back() {
        let p = project();
        let base = tempfile::tempdir().unwrap();
        let run = RunDir::prepare(p.path(), Some(base.path()), "t2", &mut |_| true).unwrap();
        std::fs::create_dir_all(run.output.join("src")).unwrap();
        std::fs::write(run.output.join("src/lib.rs"), "pub fn b() {}\n").unwrap();
        std::fs::write(run.output.join("src/new.rs"), "// new\n").unwrap();
        std::fs::write(run.output.join(".env"), "TOKEN=x\n").unwrap();
        let r = run.collect(1 << 20).unwrap();
        assert!(r.refused.is_empty(), "{:?}", r.refused);
        assert_eq!(r.unchanged, vec![".env"]);
        let paths: Vec<&str> = r.changes.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, vec!["src/lib.rs", "src/new.rs"]);
        assert_eq!(
            r.changes[0].expect_sha256.as_deref(),
            Some(sha256_hex(b"pub fn a() {}\n").as_str())
        );
        assert!(r.changes[1].must_not_exist);

        std::os::unix::fs::symlink("/etc/shadow", run.output.join("evil")).unwrap();
        std::fs::write(run.output.join("bin"), [0xff, 0xfe, 0x00]).unwrap();
        let r = run.collect(1 << 20).unwrap();
        let refused: Vec<&str> = r.refused.iter().map(|x| x.path.as_str()).collect();
        assert_eq!(refused, vec!["bin", "evil"]);
        let r = run.collect(4).unwrap();
        assert!(!r.refused.is_empty(), "over the cap");
    }
}
