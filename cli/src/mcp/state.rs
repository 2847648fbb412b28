//! What every tool call of one server process shares: the project, the role and the
//! session it decides for, its limits, and where the sandbox runner is.

use super::limits::{Limits, ToolError};
use crate::hook::judge::Place;
use crate::policy_cache::{self, Loaded};
use crate::project::Project;
use contextos_engine::effects::user_key::UserKey;
use contextos_engine::PolicySet;
use std::path::PathBuf;

#[derive(Debug)]
pub struct State {
    pub project: Project,
    pub role: Option<String>,
    pub session: String,
    pub limits: Limits,
    /// Authenticates the policy cache; without it every call compiles from source (the
    /// hooks make the same choice: an unauthenticated cache is never trusted).
    pub user_key: Option<UserKey>,
    /// `contextos-full`, which `run` executes commands through.
    pub runner: PathBuf,
}

impl State {
    /// The project in every spelling an agent may use for it (absolute or relative).
    pub fn place(&self) -> Place {
        Place::new(&self.project.root, None)
    }

    /// A tool's `path` as the project-relative path the verdict and the journal use;
    /// an absolute path inside the project is accepted, anything that leaves it is not.
    pub fn relative(&self, path: &str) -> Result<String, ToolError> {
        if path.is_empty() {
            return Err(ToolError::new("`path` is empty"));
        }
        let rel = self.place().base.resolve(&path.replace('\\', "/"));
        if rel.starts_with('/') || rel.starts_with("..") || rel.starts_with('~') {
            return Err(ToolError::new(format!(
                "{path} is outside the project root {} [path.outside-project]; nothing was done",
                self.project.root.display()
            )));
        }
        let canonical = contextos_engine::canon::canonical_path(&rel)
            .map_err(|e| ToolError::new(format!("{path}: {e}")))?;
        if canonical.is_empty() || canonical == "." {
            return Err(ToolError::new(format!(
                "{path} names the project root, not a file"
            )));
        }
        Ok(canonical)
    }

    /// The policies as the hooks load them (through the same authenticated cache); ones
    /// that do not compile block every call (fail closed).
    pub fn policies(&self) -> Result<PolicySet, ToolError> {
        match policy_cache::load(&self.project, self.user_key.as_ref()) {
            Ok(Loaded::Ready { set, .. }) => {
                if let Some(role) = self.role.as_deref().filter(|r| !set.roles.contains(*r)) {
                    return Err(ToolError::new(format!(
                        "ContextOS: the MCP server runs as role `{role}`, which no policy declares (known roles: {}); every call is refused",
                        set.roles.iter().cloned().collect::<Vec<_>>().join(", ")
                    )));
                }
                Ok(set)
            }
            Ok(Loaded::Invalid(out)) => {
                let first = out
                    .diagnostics
                    .iter()
                    .find(|d| d.diagnostic.is_error())
                    .map(|d| out.render(d))
                    .unwrap_or_default();
                Err(ToolError::new(format!(
                    "ContextOS: the policies do not compile, so every call is refused until they do (run `contextos check`).\n{first}"
                )))
            }
            Err(e) => Err(ToolError::new(format!("ContextOS: {e}"))),
        }
    }
}
