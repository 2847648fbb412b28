//! `contextos hook install|uninstall`: the git pre-commit hook (see `crate::githook`).

use std::path::PathBuf;

#[derive(Debug, Clone, clap::Args)]
pub struct InstallArgs {
    /// The contextos binary the hook runs (default: this one, canonicalised). Give a
    /// stable path such as /usr/local/bin/contextos to survive upgrades that move the
    /// versioned binary.
    #[arg(long, value_name = "PATH")]
    pub binary: Option<PathBuf>,
}

#[derive(Debug, Clone, clap::Args)]
pub struct UninstallArgs {}

#[cfg(feature = "scan")]
pub use imp::{install, uninstall};

/// Installing reads git (the hooks directory): only in a build with the git reader.
#[cfg(feature = "scan")]
mod imp {
    use super::{InstallArgs, UninstallArgs};
    use crate::githook::{self, Outcome};
    use crate::output;
    use crate::project::Project;
    use crate::support::Format;
    use crate::support::{CliError, Context, Exit};

    pub fn install(ctx: &Context, args: &InstallArgs) -> Result<Exit, CliError> {
        let result = githook::resolve_binary(args.binary.as_deref())
            .and_then(|bin| githook::install(&Project::find_root(ctx.project.as_deref())?, &bin));
        report(ctx, result)
    }

    pub fn uninstall(ctx: &Context, _args: &UninstallArgs) -> Result<Exit, CliError> {
        let result = Project::find_root(ctx.project.as_deref())
            .map_err(githook::HookError::from)
            .and_then(|root| githook::uninstall(&root));
        report(ctx, result)
    }

    fn report(
        ctx: &Context,
        result: Result<Outcome, githook::HookError>,
    ) -> Result<Exit, CliError> {
        let out = result?;
        let hook = out.location.hook.display().to_string();
        match ctx.format {
            Format::Json => output::print_json(serde_json::json!({
                "action": out.action.as_str(),
                "hook": hook,
                "hooksDir": out.location.hooks_dir.display().to_string(),
                "hooksPath": out.location.hooks_path.as_ref().map(|p| p.display().to_string()),
                "worktree": out.location.workdir.display().to_string(),
                "project": out.project,
                "binary": out.binary.as_ref().map(|b| b.display().to_string()),
                "warnings": out.warnings,
            })),
            Format::Text | Format::Github | Format::Sarif | Format::Junit => {
                use githook::Action::*;
                let line = match out.action {
                Created => format!("created {hook} running `contextos scan --staged --enforce`"),
                Inserted => format!(
                    "added the contextos block to {hook} after line 1; your hook's own lines run after it"
                ),
                Updated => format!("updated the contextos block in {hook}"),
                Unchanged => format!("the contextos block in {hook} is already up to date"),
                Removed => format!(
                    "removed the contextos block from {hook}; the rest of the hook is unchanged"
                ),
                Deleted => format!("deleted {hook}, which held only the contextos block"),
                Absent => format!("no contextos block in {hook}; nothing to remove"),
            };
                outln!("{line}");
                if let Some(b) = &out.binary {
                    outln!("the hook runs {}", b.display());
                }
                for w in &out.warnings {
                    eprintln!("warning: {w}");
                }
            }
        }
        Ok(Exit::Ok)
    }
}
