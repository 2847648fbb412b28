//! `contextos gate`: the CI check. The policies and every pinned plugin load, the policy
//! tests pass, and every generated output is in sync — each failure reported with its
//! class, as GitHub annotations and a step summary where asked.

use crate::output::{self, escape_data, escape_property};
use crate::support::context::{EXIT_FINDINGS, EXIT_OK, EXIT_UNVERIFIED};
use crate::support::outputs::{prepare, remedy, targets};
use crate::support::{Context, Format};
use contextos_engine::testing::run_tests;
use std::path::Path;

#[derive(Debug, clap::Args)]
pub struct GateArgs {
    /// Targets whose outputs must be in sync (default: all).
    #[arg(long, value_delimiter = ',', value_name = "T,…")]
    target: Vec<String>,
}

/// One gate check and its outcome.
struct Check {
    name: &'static str,
    /// 0 passed, 1 failed, 2 could not verify.
    code: u8,
    lines: Vec<String>,
    annotations: Vec<String>,
}

pub fn run(ctx: &Context, args: &GateArgs) -> u8 {
    let targets = match targets(&args.target) {
        Ok(t) => t,
        Err(e) => return ctx.fail(&e),
    };
    let project = match ctx.project() {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mut checks = Vec::new();
    // 1. Plugins verify and policies compile (a refused plugin fails the load itself).
    let compiled = project.compile();
    let set = match compiled {
        Err(e) => {
            checks.push(Check {
                name: "policies and plugins load",
                code: EXIT_UNVERIFIED,
                lines: e.to_string().lines().map(str::to_string).collect(),
                annotations: vec![format!(
                    "::error title=contextos gate::{}",
                    escape_data(&e.to_string())
                )],
            });
            None
        }
        Ok(mut out) => match out.policy.take() {
            Some(set) => {
                checks.push(Check {
                    name: "policies and plugins load",
                    code: EXIT_OK,
                    lines: vec![format!("{} rule(s)", set.rules.len())],
                    annotations: Vec::new(),
                });
                Some(set)
            }
            None => {
                let errs: Vec<_> = out
                    .diagnostics
                    .iter()
                    .filter(|d| d.diagnostic.is_error())
                    .collect();
                checks.push(Check {
                    name: "policies and plugins load",
                    code: EXIT_UNVERIFIED,
                    lines: errs.iter().map(|d| out.render(d)).collect(),
                    annotations: errs
                        .iter()
                        .map(|d| output::github_annotation(&out, d))
                        .collect(),
                });
                None
            }
        },
    };
    if let Some(set) = &set {
        // 2. Policy tests.
        let report = run_tests(set, None);
        let failed: Vec<_> = report.cases.iter().filter(|c| !c.passed).collect();
        checks.push(Check {
            name: "policy tests",
            code: if failed.is_empty() { EXIT_OK } else { EXIT_FINDINGS },
            lines: std::iter::once(format!("{} passed, {} failed", report.passed, report.failed))
                .chain(failed.iter().map(|c| format!("FAIL {} {}", c.origin, c.case)))
                .collect(),
            annotations: failed
                .iter()
                .map(|c| {
                    format!(
                        "::error file={},line={},col={},title=contextos test::{} (expected {}, actual {})",
                        escape_property(&c.origin.file),
                        c.origin.line,
                        c.origin.col,
                        escape_data(&c.case),
                        c.expected,
                        c.actual
                    )
                })
                .collect(),
        });
        // 3. Generated outputs in sync.
        match prepare(&project, set, &targets) {
            Ok((_, plan, _)) => checks.push(Check {
                name: "generated outputs in sync",
                code: if plan.drift.is_empty() {
                    EXIT_OK
                } else {
                    EXIT_FINDINGS
                },
                lines: if plan.drift.is_empty() {
                    vec!["in sync".into()]
                } else {
                    plan.drift
                        .iter()
                        .map(|d| format!("{}: {} ({})", d.class.as_str(), d.path, d.detail))
                        .collect()
                },
                annotations: plan
                    .drift
                    .iter()
                    .map(|d| {
                        format!(
                            "::error file={},title=contextos drift: {}::{}",
                            escape_property(&d.path),
                            d.class.as_str(),
                            escape_data(&format!("{} — {}", d.detail, remedy(&d.class)))
                        )
                    })
                    .collect(),
            }),
            Err(e) => checks.push(Check {
                name: "generated outputs in sync",
                code: EXIT_UNVERIFIED,
                lines: vec![e.clone()],
                annotations: vec![format!("::error title=contextos gate::{}", escape_data(&e))],
            }),
        }
    }
    let code = checks
        .iter()
        .map(|c| c.code)
        .fold(EXIT_OK, |acc, c| match (acc, c) {
            (EXIT_UNVERIFIED, _) | (_, EXIT_UNVERIFIED) => EXIT_UNVERIFIED,
            (EXIT_FINDINGS, _) | (_, EXIT_FINDINGS) => EXIT_FINDINGS,
            _ => EXIT_OK,
        });
    match ctx.format {
        Format::Json => output::print_json(serde_json::json!({
            "passed": code == EXIT_OK,
            "exitCode": code,
            "checks": checks.iter().map(|c| serde_json::json!({
                "name": c.name, "exitCode": c.code, "details": c.lines,
            })).collect::<Vec<_>>(),
        })),
        Format::Text | Format::Github | Format::Sarif => {
            for c in &checks {
                outln!(
                    "{} {}",
                    match c.code {
                        EXIT_OK => "ok  ",
                        EXIT_FINDINGS => "FAIL",
                        _ => "ERR ",
                    },
                    c.name
                );
                for l in &c.lines {
                    outln!("     {l}");
                }
                if ctx.format == Format::Github {
                    for a in &c.annotations {
                        outln!("{a}");
                    }
                }
            }
        }
    }
    if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
        if let Err(e) = write_summary(Path::new(&path), &checks, code) {
            eprintln!("contextos: warning: cannot write the step summary: {e}");
        }
    }
    code
}

fn write_summary(path: &Path, checks: &[Check], code: u8) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)?;
    let mut s = format!(
        "## ContextOS gate: {}\n\n| check | result |\n|---|---|\n",
        if code == EXIT_OK { "passed" } else { "failed" }
    );
    for c in checks {
        let result = match c.code {
            EXIT_OK => "passed".to_string(),
            EXIT_FINDINGS => "**failed**".to_string(),
            _ => "**could not verify**".to_string(),
        };
        s.push_str(&format!("| {} | {result} |\n", c.name));
    }
    for c in checks.iter().filter(|c| c.code != EXIT_OK) {
        s.push_str(&format!(
            "\n### {}\n\n```text\n{}\n```\n",
            c.name,
            c.lines.join("\n")
        ));
    }
    f.write_all(s.as_bytes())
}
