//! Finding the repository and where git runs its hooks, for `contextos hook install`.
//!
//! This crate is the workspace's only git reader: the staged scan ([`crate::staged`]) and
//! this lookup both go through gix, so no other crate links it.
//!
//! Where git looks for the `pre-commit` hook is found the way git finds it.
//!
//! Git runs `$(core.hooksPath)/pre-commit` when `core.hooksPath` is set anywhere in the
//! configuration stack (system, global, `includeIf`, local, worktree, environment), and
//! `$GIT_COMMON_DIR/hooks/pre-commit` otherwise. A relative `core.hooksPath` is relative
//! to the directory hooks run in, which is the root of the working tree doing the commit
//! (githooks(5)). Linked worktrees share the common directory's hooks. gix reads the same
//! stack; git itself is never run here, so nothing a repository configures (aliases,
//! `core.fsmonitor`, …) runs while installing.

use std::path::{Path, PathBuf};

const KEY: &str = "core.hooksPath";

#[derive(Debug, thiserror::Error)]
pub enum LocateError {
    #[error("{path} is not inside a git repository: {message}")]
    NotARepository { path: String, message: String },
    #[error(
        "{git_dir} is a bare repository: nothing is committed there, so it runs no pre-commit hook"
    )]
    Bare { git_dir: String },
    #[error("cannot read core.hooksPath: {0}")]
    Config(String),
    #[error("core.hooksPath is set in a configuration file that is not trusted (not owned by you), so where git runs hooks cannot be established")]
    Untrusted,
    #[error("core.hooksPath is set but empty; set it to a directory or unset it")]
    Empty,
}

/// The hooks directory of one working tree.
#[derive(Debug, Clone)]
pub struct HookLocation {
    /// Root of the working tree (canonical).
    pub workdir: PathBuf,
    /// The directory git runs hooks from.
    pub hooks_dir: PathBuf,
    /// `hooks_dir/pre-commit`.
    pub hook: PathBuf,
    /// The configured `core.hooksPath`, as interpolated (`~` expanded), if set.
    pub hooks_path: Option<PathBuf>,
    /// The directory shared by all worktrees (`.git` of the main one).
    pub common_dir: PathBuf,
    /// The repository has linked worktrees, or this is one.
    pub worktrees: bool,
}

impl HookLocation {
    /// A relative `core.hooksPath` names a different directory in every worktree.
    pub fn per_worktree(&self) -> bool {
        self.hooks_path.as_ref().is_some_and(|p| p.is_relative())
    }

    /// The hook is a file of the working tree (core.hooksPath pointing into it), where it
    /// can be committed, rather than private repository state.
    pub fn in_working_tree(&self) -> bool {
        let dir = self
            .hooks_dir
            .canonicalize()
            .unwrap_or_else(|_| self.hooks_dir.clone());
        dir.starts_with(&self.workdir) && !dir.starts_with(&self.common_dir)
    }
}

/// Finds the repository containing `start` (a directory) and the hook git would run for
/// a commit made in its working tree.
pub fn locate(start: &Path) -> Result<HookLocation, LocateError> {
    let repo = gix::discover_with_environment_overrides(start).map_err(|e| {
        LocateError::NotARepository {
            path: start.display().to_string(),
            message: e.to_string(),
        }
    })?;
    let Some(workdir) = repo.workdir() else {
        return Err(LocateError::Bare {
            git_dir: repo.git_dir().display().to_string(),
        });
    };
    let workdir = absolute(workdir, repo.current_dir());
    let workdir = workdir.canonicalize().unwrap_or(workdir);
    let config = repo.config_snapshot();
    let configured = config
        .trusted_path(KEY)
        .map_err(|e| LocateError::Config(e.to_string()))?;
    // gix reports an empty value as no path at all, so look at the raw value first.
    if config.string(KEY).is_some_and(|v| v.is_empty())
        || configured
            .as_ref()
            .is_some_and(|p| p.as_os_str().is_empty())
    {
        return Err(LocateError::Empty);
    }
    // gix hides values from files it does not trust; git (past its safe.directory check)
    // would use them, so a hidden value means we do not know where the hook is.
    if configured.is_none() && config.string(KEY).is_some() {
        return Err(LocateError::Untrusted);
    }
    let common_dir = absolute(repo.common_dir(), repo.current_dir());
    let common_dir = common_dir.canonicalize().unwrap_or(common_dir);
    let hooks_dir = match &configured {
        Some(p) if p.is_absolute() => p.clone(),
        Some(p) => workdir.join(p),
        None => common_dir.join("hooks"),
    };
    let worktrees = repo.git_dir() != repo.common_dir()
        || std::fs::read_dir(common_dir.join("worktrees"))
            .map(|mut d| d.next().is_some())
            .unwrap_or(false);
    Ok(HookLocation {
        hook: hooks_dir.join("pre-commit"),
        workdir,
        hooks_dir,
        hooks_path: configured,
        common_dir,
        worktrees,
    })
}

fn absolute(p: &Path, cwd: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use std::process::Command;

    /// `git` with no user or system configuration, so only the repository's own counts.
    fn git(dir: &Path, args: &[&str]) {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    fn repo() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap().join("work");
        std::fs::create_dir(&root).unwrap();
        git(&root, &["init", "-q"]);
        (tmp, root)
    }

    #[test]
    fn a_relative_hooks_path_is_in_the_working_tree() {
        let (_tmp, root) = repo();
        git(&root, &["config", "core.hooksPath", "tools/hooks"]);
        std::fs::create_dir_all(root.join("sub")).unwrap();
        let loc = locate(&root.join("sub")).unwrap();
        assert_eq!(loc.workdir, root);
        assert_eq!(loc.hooks_dir, root.join("tools/hooks"));
        assert_eq!(loc.hook, root.join("tools/hooks/pre-commit"));
        assert!(loc.per_worktree() && loc.in_working_tree() && !loc.worktrees);
    }

    #[test]
    fn an_empty_hooks_path_is_refused() {
        let (_tmp, root) = repo();
        git(&root, &["config", "core.hooksPath", ""]);
        let r = locate(&root);
        assert!(matches!(r, Err(LocateError::Empty)), "{r:?}");
    }

    #[test]
    fn a_bare_repository_runs_no_pre_commit_hook() {
        let tmp = tempfile::tempdir().unwrap();
        git(tmp.path(), &["init", "-q", "--bare", "b.git"]);
        let e = locate(&tmp.path().join("b.git")).unwrap_err();
        assert!(matches!(e, LocateError::Bare { .. }), "{e}");
    }
}
