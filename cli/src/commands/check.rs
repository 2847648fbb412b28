//! `contextos check`: parse and type-check every policy, with located diagnostics.

use crate::output;
use crate::support::Format;
use crate::support::{CliError, Context, Exit};
use contextos_engine::grammar::Severity;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Treat warnings as errors.
    #[arg(long)]
    strict: bool,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Exit, CliError> {
    let project = ctx.project()?;
    project.check_config()?;
    let out = project.build_policies()?;
    let errors = out
        .diagnostics
        .iter()
        .filter(|d| d.diagnostic.severity == Severity::Error)
        .count();
    let warnings = out.diagnostics.len() - errors;
    let rules = out.policy.as_ref().map_or(0, |p| p.rules.len());
    let failed = errors > 0 || (args.strict && warnings > 0);
    match ctx.format {
        Format::Json => output::print_json(serde_json::json!({
            "ok": !failed,
            "files": out.files.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
            "rules": rules,
            "errors": errors,
            "warnings": warnings,
            "diagnostics": out.diagnostics.iter().map(|d| output::diagnostic_json(&out, d)).collect::<Vec<_>>(),
        })),
        Format::Github => {
            for d in &out.diagnostics {
                outln!("{}", output::github_annotation(&out, d));
            }
            outln!(
                "checked {} file(s), {rules} rule(s): {errors} error(s), {warnings} warning(s)",
                out.files.len()
            );
        }
        Format::Text | Format::Sarif => {
            output::eprint_diagnostics(&out, true);
            outln!(
                "checked {} file(s), {rules} rule(s): {errors} error(s), {warnings} warning(s)",
                out.files.len()
            );
        }
    }
    if failed {
        Ok(Exit::Findings)
    } else {
        Ok(Exit::Ok)
    }
}
