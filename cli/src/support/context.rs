//! The invocation: the project and the output format every command gets.

use crate::project::Project;
use crate::support::error::CliError;
use crate::support::Format;
use contextos_engine::effects::project_lock::{acquire, AcquireOptions, ProjectLockGuard};
use contextos_engine::{BuildOutput, PolicySet};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug)]
pub struct Context {
    pub project: Option<PathBuf>,
    pub format: Format,
}

impl Context {
    /// Takes the project lock for a mutating command, telling the user whom it waits for.
    pub fn take_lock(
        &self,
        root: &Path,
        command: &str,
        timeout: Duration,
    ) -> Result<ProjectLockGuard, CliError> {
        take_lock(root, command, timeout)
    }

    pub fn project(&self) -> Result<Project, CliError> {
        Ok(Project::discover(self.project.as_deref())?)
    }

    /// Compiles the project's policies; any error means nothing can be decided.
    pub fn load(&self) -> Result<(BuildOutput, PolicySet), CliError> {
        let mut out = self.project()?.build_policies()?;
        match out.policy.take() {
            Some(p) => Ok((out, p)),
            None => Err(CliError::policy_invalid(&out, "nothing can be decided")),
        }
    }
}

/// The project lock, waited for up to `timeout`; whom it waits for goes to stderr.
pub fn take_lock(
    root: &Path,
    command: &str,
    timeout: Duration,
) -> Result<ProjectLockGuard, CliError> {
    let opts = AcquireOptions {
        timeout,
        command: command.to_string(),
    };
    Ok(acquire(root, &opts, &mut |holder| {
        if let Some(h) = holder {
            eprintln!("waiting for the project lock held by {h}");
        }
    })?)
}
