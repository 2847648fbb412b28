//! `contextos test [--coverage] [--filter S]`: run the `test` blocks.

use crate::output;
use crate::support::Format;
use crate::support::{CliError, Context, Exit};
use contextos_engine::testing::run_tests;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// List rules that no test case exercised.
    #[arg(long)]
    coverage: bool,
    /// Run only tests whose name contains this text.
    #[arg(long)]
    filter: Option<String>,
}

fn verdict(effect: impl std::fmt::Display, rules: &[String]) -> String {
    if rules.is_empty() {
        effect.to_string()
    } else {
        format!("{effect}({})", rules.join(", "))
    }
}

pub fn run(ctx: &Context, args: &Args) -> Result<Exit, CliError> {
    let (_out, set) = ctx.load()?;
    let report = run_tests(&set, args.filter.as_deref());
    let uncovered = report.uncovered(&set);
    match ctx.format {
        Format::Json => output::print_json(serde_json::json!({
            "passed": report.passed,
            "failed": report.failed,
            "cases": report.cases,
            "uncovered": if args.coverage {
                Some(uncovered.iter().map(|r| serde_json::json!({"id": r.id, "origin": r.origin})).collect::<Vec<_>>())
            } else { None },
        })),
        Format::Text | Format::Github | Format::Sarif => {
            for c in &report.cases {
                if c.passed {
                    outln!("PASS {}  {}", c.origin, c.case);
                } else {
                    outln!("FAIL {}  [{}] {}", c.origin, c.test, c.case);
                    outln!("     expected: {}", verdict(c.expected, &c.expected_rules));
                    outln!("     actual:   {}", verdict(c.actual, &c.actual_rules));
                    if !c.missing_rules.is_empty() {
                        outln!("     missing rule(s): {}", c.missing_rules.join(", "));
                    }
                }
            }
            if args.coverage {
                let total = set.rules.len();
                outln!(
                    "coverage: {}/{} rule(s) exercised",
                    total - uncovered.len(),
                    total
                );
                for r in &uncovered {
                    outln!("  not exercised: {} ({})", r.id, r.origin);
                }
            }
            if report.cases.is_empty() {
                eprintln!(
                    "error: no test ran{}",
                    args.filter
                        .as_ref()
                        .map(|f| format!(" (filter {f:?})"))
                        .unwrap_or_default()
                );
            }
            outln!("{} passed, {} failed", report.passed, report.failed);
        }
    }
    if report.failed > 0 || report.cases.is_empty() {
        Ok(Exit::Findings)
    } else {
        Ok(Exit::Ok)
    }
}
