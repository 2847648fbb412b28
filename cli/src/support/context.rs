//! The invocation: the project and the output format every command gets.

use crate::policy_cache::{self, Loaded};
use crate::project::Project;
use crate::support::error::CliError;
use crate::support::Format;
use contextos_engine::effects::project_lock::{acquire, AcquireOptions, ProjectLockGuard};
use contextos_engine::effects::user_key::UserKey;
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

    /// The project's policy set for deciding, through the hook's cache ([`load_cached`]).
    pub fn load_set(&self) -> Result<PolicySet, CliError> {
        load_cached(&self.project()?)
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

/// The policy set through the hook's authenticated cache (`.contextos/state/policy.cache`):
/// a snapshot load when the cache is valid, a compile from source (which refreshes the
/// cache) otherwise. Plugin packs are verified as the hook verifies them.
pub fn load_cached(project: &Project) -> Result<PolicySet, CliError> {
    let user_key = UserKey::load_or_create_default();
    match policy_cache::load(project, user_key.as_ref())? {
        Loaded::Ready { set, .. } => Ok(set),
        Loaded::Invalid(out) => {
            // A tampered pack may be what does not compile: verifying the packs against
            // the project's own policies first names the refusal instead.
            if project.has_plugins()? {
                project.sources()?;
            }
            Err(CliError::policy_invalid(&out, "nothing can be decided"))
        }
    }
}

/// A role the policies do not know (no `role` block, no condition comparing with it) would
/// silently skip the role's own rules: refused, as the hook refuses it.
pub fn check_role(set: &PolicySet, role: Option<&str>) -> Result<(), CliError> {
    let Some(role) = role else {
        return Ok(());
    };
    let known = set.known_roles();
    if known.contains(role) {
        return Ok(());
    }
    let hint = contextos_engine::grammar::did_you_mean(role, known.iter().map(String::as_str))
        .map(|s| format!("; did you mean `{s}`?"))
        .unwrap_or_default();
    Err(CliError::Input(format!(
        "unknown role `{role}`: no policy declares it, so its rules could not apply (known roles: {}){hint}",
        if known.is_empty() {
            "none".to_string()
        } else {
            known.iter().cloned().collect::<Vec<_>>().join(", ")
        }
    )))
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
