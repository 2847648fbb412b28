//! `contextos check`: parse and type-check every policy, with located diagnostics and the
//! lints (`W03xx`); `--strict` makes every warning an error.

use crate::output;
use crate::support::Format;
use crate::support::{CliError, Context, Exit};
use contextos_engine::grammar::ast::Span;
use contextos_engine::grammar::{Diagnostic, Severity};
use contextos_engine::{BuildOutput, FileDiagnostic, Layer};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Treat warnings as errors.
    #[arg(long)]
    strict: bool,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Exit, CliError> {
    let project = ctx.project()?;
    project.check_config()?;
    let mut out = project.build_policies()?;
    obligation_lints(&mut out);
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
        Format::Text | Format::Sarif | Format::Junit => {
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

/// W0304: `with sandbox { … }` values the sandbox would refuse when the rule applies
/// (`memory: "lots"`, `network: "internet"`, a limit above the floor). They compile — the
/// compiler checks keys and types — but the command would then fail closed at run time, so
/// `check` asks the sandbox's own resolver now.
fn obligation_lints(out: &mut BuildOutput) {
    let Some(set) = &out.policy else {
        return;
    };
    let mut found = Vec::new();
    for r in set.rules.iter().filter(|r| r.layer != Layer::Stdlib) {
        if !r.obligations.iter().any(|o| o.name == "sandbox") {
            continue;
        }
        if let Err(e) = contextos_engine::effects::sandbox::profile::resolve(&r.obligations, None) {
            let Some(file) = out.files.iter().position(|f| f.name == r.origin.file) else {
                continue;
            };
            found.push(FileDiagnostic {
                file,
                diagnostic: Diagnostic::warning(
                    "W0304",
                    Span::new(r.origin.start, r.origin.end),
                    format!("rule `{}`: the sandbox would refuse its obligation: {}", r.id, e.0),
                )
                .with_help("use a value the sandbox accepts (see the sandbox chapter); a refused obligation fails the command closed"),
            });
        }
    }
    out.diagnostics.extend(found);
}
