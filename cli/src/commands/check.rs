//! `contextos check`: parse and type-check every policy, with located diagnostics.

use crate::output;
use crate::support::context::{EXIT_FINDINGS, EXIT_OK};
use crate::support::Context;
use crate::support::Format;
use contextos_grammar::Severity;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Treat warnings as errors.
    #[arg(long)]
    strict: bool,
}

pub fn run(ctx: &Context, args: &Args) -> u8 {
    let project = match ctx.project() {
        Ok(p) => p,
        Err(code) => return code,
    };
    let out = match project.compile() {
        Ok(o) => o,
        Err(e) => return ctx.fail(&e.to_string()),
    };
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
        EXIT_FINDINGS
    } else {
        EXIT_OK
    }
}
