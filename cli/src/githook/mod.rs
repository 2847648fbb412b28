//! `contextos hook install|uninstall`: the managed block in the git `pre-commit` hook.
//!
//! The block runs one absolute, canonical contextos binary chosen at install time; the
//! hook never looks for `contextos` on `PATH` or in the repository, where a checked-out
//! file could stand in for it. A missing binary blocks the commit.

pub mod block;

use block::{BlockError, Installed, Removal};
use contextos_engine::effects::atomic_write::{self, Publish};
use contextos_engine::scan::repo::{self as location, HookLocation, LocateError};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

/// Mode of a hook file install creates: git runs only executable hooks.
const NEW_HOOK_MODE: u32 = 0o755;

#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error(transparent)]
    Locate(#[from] LocateError),
    #[error(transparent)]
    Project(#[from] crate::project::ProjectError),
    #[error("{path}: {source}")]
    Block { path: String, source: BlockError },
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is a symbolic link (to {target}); the contextos block is not written through it, because its target may be a tracked file or lie outside the repository. Replace the link with a file, or point core.hooksPath at the directory you want")]
    Symlink { path: String, target: String },
    #[error("{path} is not a regular file")]
    NotAFile { path: String },
    #[error("{path} is not executable, so git ignores it and would ignore the contextos block too; make it executable (chmod +x) if it should run, or move it away")]
    NotExecutable { path: String },
    #[error("the project {project} is not inside the working tree {workdir}")]
    Outside { project: String, workdir: String },
    #[error("{path} is not an executable contextos binary: {reason}")]
    Binary { path: String, reason: String },
}

impl HookError {
    fn io(path: &Path, source: std::io::Error) -> HookError {
        HookError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}

/// What install or uninstall did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Created,
    Inserted,
    Updated,
    Unchanged,
    Removed,
    Deleted,
    Absent,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Created => "created",
            Action::Inserted => "inserted",
            Action::Updated => "updated",
            Action::Unchanged => "unchanged",
            Action::Removed => "removed",
            Action::Deleted => "deleted",
            Action::Absent => "absent",
        }
    }
}

#[derive(Debug)]
pub struct Outcome {
    pub location: HookLocation,
    pub action: Action,
    /// The binary the block runs (install only).
    pub binary: Option<PathBuf>,
    /// The project directory relative to the working tree root ("" for the root).
    pub project: String,
    pub warnings: Vec<String>,
}

/// Installs (or refreshes) the block in the hook of the repository holding `project`,
/// running `binary` (absolute).
pub fn install(project: &Path, binary: &Path) -> Result<Outcome, HookError> {
    let loc = location::locate(project)?;
    let rel = project_rel(project, &loc)?;
    let body = block::body(binary.as_os_str().as_bytes(), rel.as_os_str().as_bytes()).map_err(
        |source| HookError::Block {
            path: binary.display().to_string(),
            source,
        },
    )?;
    let existing = read_hook(&loc.hook, true)?;
    let (text, installed) = block::install(existing.as_ref().map(|e| &e.bytes[..]), &body)
        .map_err(|source| HookError::Block {
            path: loc.hook.display().to_string(),
            source,
        })?;
    let mut warnings = Vec::new();
    if binary.starts_with(&loc.workdir) {
        warnings.push(format!(
            "the hook runs {}, which is inside the working tree: a checkout or merge could replace it. Install from a contextos outside the repository",
            binary.display()
        ));
    }
    if loc.in_working_tree() {
        warnings.push(format!(
            "the hook {} is inside the working tree (core.hooksPath); it now names this machine's contextos binary, so do not commit it (share `.pre-commit-hooks.yaml` or ask each developer to run `contextos hook install`)",
            loc.hook.display()
        ));
    }
    if loc.per_worktree() && loc.worktrees {
        warnings.push(
            "core.hooksPath is relative, so every worktree has its own hooks directory: run `contextos hook install` in each worktree".to_string(),
        );
    }
    if text
        .split(|b| *b == b'\n')
        .any(|l| l.starts_with(b"# BEGIN CONTEXTOS HOOK"))
    {
        warnings.push(format!(
            "{} still holds a `# BEGIN CONTEXTOS HOOK` block of the Node contextos-agents tool, which runs a contextos found in the repository; remove it by hand",
            loc.hook.display()
        ));
    }
    let action = match installed {
        Installed::Created => Action::Created,
        Installed::Inserted => Action::Inserted,
        Installed::Updated => Action::Updated,
        Installed::Unchanged => Action::Unchanged,
    };
    if action != Action::Unchanged {
        std::fs::create_dir_all(&loc.hooks_dir).map_err(|e| HookError::io(&loc.hooks_dir, e))?;
        let mode = existing.as_ref().map_or(NEW_HOOK_MODE, |e| e.mode);
        write_atomic(&loc.hook, &text, mode)?;
    }
    Ok(Outcome {
        location: loc,
        action,
        binary: Some(binary.to_path_buf()),
        project: rel.display().to_string(),
        warnings,
    })
}

/// Removes the block from the hook of the repository holding `project`, leaving every
/// other byte; deletes the file when install created it and nothing else is left.
pub fn uninstall(project: &Path) -> Result<Outcome, HookError> {
    let loc = location::locate(project)?;
    let rel = project_rel(project, &loc)?;
    let outcome = |action, warnings| Outcome {
        location: loc.clone(),
        action,
        binary: None,
        project: rel.display().to_string(),
        warnings,
    };
    let Some(existing) = read_hook(&loc.hook, false)? else {
        return Ok(outcome(Action::Absent, Vec::new()));
    };
    let removal = block::uninstall(&existing.bytes).map_err(|source| HookError::Block {
        path: loc.hook.display().to_string(),
        source,
    })?;
    if existing.symlink.is_some() && removal != Removal::Absent {
        // Install never writes through a link, so a block behind one was put there by
        // hand; editing the target is the user's call.
        return Err(HookError::Symlink {
            path: loc.hook.display().to_string(),
            target: existing
                .symlink
                .map(|t| t.display().to_string())
                .unwrap_or_default(),
        });
    }
    let action = match removal {
        Removal::Absent => Action::Absent,
        Removal::Delete => {
            std::fs::remove_file(&loc.hook).map_err(|e| HookError::io(&loc.hook, e))?;
            sync_dir(&loc.hooks_dir)?;
            Action::Deleted
        }
        Removal::Write(text) => {
            write_atomic(&loc.hook, &text, existing.mode)?;
            Action::Removed
        }
    };
    Ok(outcome(action, Vec::new()))
}

/// The binary the hook should run: canonical, a regular executable file.
pub fn resolve_binary(explicit: Option<&Path>) -> Result<PathBuf, HookError> {
    let (path, canonical) = match explicit {
        // A given path is kept as given (made absolute): a stable symlink such as
        // /usr/local/bin/contextos survives upgrades that move its versioned target.
        Some(p) => {
            let abs = if p.is_absolute() {
                p.to_path_buf()
            } else {
                std::env::current_dir()
                    .map_err(|e| HookError::io(Path::new("."), e))?
                    .join(p)
            };
            let canonical = abs.canonicalize().map_err(|e| HookError::Binary {
                path: abs.display().to_string(),
                reason: e.to_string(),
            })?;
            (abs, canonical)
        }
        None => {
            let mut exe = std::env::current_exe().map_err(|e| HookError::Binary {
                path: "the running contextos".into(),
                reason: e.to_string(),
            })?;
            // `contextos hook install` runs in the companion (it reads git); the hook
            // runs the command users call, which hands `scan` on the same way.
            if exe
                .file_name()
                .is_some_and(|n| n == crate::support::binaries::COMPANION)
            {
                let front = exe.with_file_name(crate::support::binaries::FRONT);
                if front.is_file() {
                    exe = front;
                }
            }
            let canonical = exe.canonicalize().map_err(|e| HookError::Binary {
                path: exe.display().to_string(),
                reason: e.to_string(),
            })?;
            (canonical.clone(), canonical)
        }
    };
    let meta = std::fs::metadata(&canonical).map_err(|e| HookError::Binary {
        path: path.display().to_string(),
        reason: e.to_string(),
    })?;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return Err(HookError::Binary {
            path: path.display().to_string(),
            reason: "not an executable file".into(),
        });
    }
    Ok(path)
}

struct Existing {
    bytes: Vec<u8>,
    mode: u32,
    symlink: Option<PathBuf>,
}

/// Reads the hook without following a symbolic link when `refuse_link` (install).
fn read_hook(path: &Path, refuse_link: bool) -> Result<Option<Existing>, HookError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(HookError::io(path, e)),
    };
    let symlink = if meta.file_type().is_symlink() {
        let target = std::fs::read_link(path).map_err(|e| HookError::io(path, e))?;
        if refuse_link {
            return Err(HookError::Symlink {
                path: path.display().to_string(),
                target: target.display().to_string(),
            });
        }
        Some(target)
    } else {
        None
    };
    let meta = if symlink.is_some() {
        match std::fs::metadata(path) {
            Ok(m) => m,
            // A dangling link holds no block.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(HookError::io(path, e)),
        }
    } else {
        meta
    };
    if !meta.is_file() {
        return Err(HookError::NotAFile {
            path: path.display().to_string(),
        });
    }
    let mode = meta.permissions().mode() & 0o7777;
    if refuse_link && mode & 0o111 == 0 {
        return Err(HookError::NotExecutable {
            path: path.display().to_string(),
        });
    }
    let bytes = std::fs::read(path).map_err(|e| HookError::io(path, e))?;
    Ok(Some(Existing {
        bytes,
        mode,
        symlink,
    }))
}

/// The project directory relative to the working tree root.
fn project_rel(project: &Path, loc: &HookLocation) -> Result<PathBuf, HookError> {
    let canonical = project
        .canonicalize()
        .map_err(|e| HookError::io(project, e))?;
    canonical
        .strip_prefix(&loc.workdir)
        .map(Path::to_path_buf)
        .map_err(|_| HookError::Outside {
            project: canonical.display().to_string(),
            workdir: loc.workdir.display().to_string(),
        })
}

/// Replaces `path` with `bytes` through [`atomic_write`]: a reader (git starting a
/// commit) sees the old hook or the new one, never a torn one, and the rename replaces
/// a link swapped in meanwhile instead of writing through it.
fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> Result<(), HookError> {
    atomic_write::write(path, bytes, mode, Publish::Replace)
        .map(|_| ())
        .map_err(|e| HookError::io(path, e))
}

fn sync_dir(dir: &Path) -> Result<(), HookError> {
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| HookError::io(dir, e))
}
