//! The invocation: the project and the output format every command gets.

use crate::output;
use crate::project::Project;
use crate::support::Format;
use contextos_engine::{CompileOutput, PolicySet};
use std::path::PathBuf;

pub const EXIT_OK: u8 = 0;
pub const EXIT_FINDINGS: u8 = 1;
pub const EXIT_UNVERIFIED: u8 = 2;
pub const EXIT_ASK: u8 = 3;

#[derive(Debug)]
pub struct Context {
    pub project: Option<PathBuf>,
    pub format: Format,
}

impl Context {
    /// Takes the project lock for a mutating command, telling the user whom it waits for.
    pub fn take_lock(
        &self,
        root: &std::path::Path,
        command: &str,
        timeout: std::time::Duration,
    ) -> Result<contextos_engine::effects::lock::LockGuard, u8> {
        use contextos_engine::effects::lock::{acquire, AcquireOptions};
        let opts = AcquireOptions {
            timeout,
            command: command.to_string(),
        };
        acquire(root, &opts, &mut |holder| {
            if let Some(h) = holder {
                eprintln!("waiting for the project lock held by {h}");
            }
        })
        .map_err(|e| self.fail(&e.to_string()))
    }

    pub fn project(&self) -> Result<Project, u8> {
        Project::discover(self.project.as_deref()).map_err(|e| self.fail(&e.to_string()))
    }

    /// Reports an error that prevents verification and returns exit code 2.
    pub fn fail(&self, message: &str) -> u8 {
        match self.format {
            Format::Json => output::print_json(serde_json::json!({ "error": message })),
            Format::Text | Format::Github | Format::Sarif => eprintln!("error: {message}"),
        }
        EXIT_UNVERIFIED
    }

    /// Compiles the project's policies; any error means nothing can be decided (exit 2).
    pub fn load(&self) -> Result<(CompileOutput, PolicySet), u8> {
        let project = self.project()?;
        let mut out = project.compile().map_err(|e| self.fail(&e.to_string()))?;
        match out.policy.take() {
            Some(p) => Ok((out, p)),
            None => {
                match self.format {
                    Format::Json => {
                        let diags: Vec<_> = out
                            .diagnostics
                            .iter()
                            .filter(|d| d.diagnostic.is_error())
                            .map(|d| output::diagnostic_json(&out, d))
                            .collect();
                        output::print_json(serde_json::json!({
                            "error": "the policies do not compile",
                            "diagnostics": diags,
                        }));
                    }
                    Format::Text | Format::Github | Format::Sarif => {
                        output::eprint_diagnostics(&out, false);
                        eprintln!("error: the policies do not compile; nothing can be decided (run `contextos check`)");
                    }
                }
                Err(EXIT_UNVERIFIED)
            }
        }
    }
}
