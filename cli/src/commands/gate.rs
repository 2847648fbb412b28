//! `contextos gate`: the CI check. The policies and every pinned plugin load, the policy
//! tests pass, and every generated output is in sync — each failure reported with its
//! class, as GitHub annotations and a step summary where asked.

use crate::output::{self, escape_data, escape_property};
use crate::support::outputs::{prepare, project_targets, remedy};
use crate::support::policy_diff::{self, Side};
use crate::support::{CliError, Context, Exit, Format};
use std::path::Path;

#[derive(Debug, clap::Args)]
pub struct GateArgs {
    /// Targets whose outputs must be in sync (default: all).
    #[arg(long, value_delimiter = ',', value_name = "T,…")]
    target: Vec<String>,
    /// Fail when the policy change widens a verdict (deny→ask/allow, ask→allow) that no
    /// `@accept("widening")` covers; also `[gate] no_widening = true`.
    #[arg(long)]
    no_widening: bool,
    /// The revision to compare with for --no-widening (default: the merge base with the
    /// upstream branch, else HEAD~1).
    #[arg(long, value_name = "REV")]
    from: Option<String>,
}

/// One gate check and its outcome.
struct Check {
    name: &'static str,
    /// Passed, failed (findings) or could not verify.
    code: Exit,
    lines: Vec<String>,
    annotations: Vec<String>,
}

pub fn run(ctx: &Context, args: &GateArgs) -> Result<Exit, CliError> {
    let project = ctx.project()?;
    let targets = project_targets(&project, &args.target)?;
    let mut checks = Vec::new();
    // 1. Plugins verify and policies compile (a refused plugin fails the load itself).
    let compiled = project.build_policies();
    let set = match compiled {
        Err(e) => {
            checks.push(Check {
                name: "policies and plugins load",
                code: Exit::Unverified,
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
                    code: Exit::Ok,
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
                    code: Exit::Unverified,
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
        // 2. Policy tests, each layer's against that layer.
        checks.push(policy_tests(&project, set));
        // 3. No widening against the base revision, when asked.
        if args.no_widening || project.config.gate.no_widening {
            checks.push(no_widening(&project, args.from.as_deref()));
        }
        // 4. Generated outputs in sync.
        match prepare(&project, set, &targets) {
            Ok((_, plan, _)) => checks.push(Check {
                name: "generated outputs in sync",
                code: if plan.drift.is_empty() {
                    Exit::Ok
                } else {
                    Exit::Findings
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
                code: Exit::Unverified,
                lines: vec![e.to_string()],
                annotations: vec![format!(
                    "::error title=contextos gate::{}",
                    escape_data(&e.to_string())
                )],
            }),
        }
    }
    let code = checks.iter().map(|c| c.code).fold(Exit::Ok, Exit::worst);
    match ctx.format {
        Format::Json => output::print_json(serde_json::json!({
            "passed": code == Exit::Ok,
            "exitCode": code.code(),
            "checks": checks.iter().map(|c| serde_json::json!({
                "name": c.name, "exitCode": c.code.code(), "details": c.lines,
            })).collect::<Vec<_>>(),
        })),
        Format::Text | Format::Github | Format::Sarif | Format::Junit => {
            for c in &checks {
                outln!(
                    "{} {}",
                    match c.code {
                        Exit::Ok => "ok  ",
                        Exit::Findings => "FAIL",
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
    Ok(code)
}

/// The layered policy tests as a gate check: one summary line per layer, then every
/// failing case with what overruled it.
fn policy_tests(project: &crate::project::Project, set: &contextos_engine::PolicySet) -> Check {
    let runs = match super::test::runs_for(project, set) {
        Ok(r) => r,
        Err(e) => {
            return Check {
                name: "policy tests",
                code: Exit::Unverified,
                lines: vec![e.to_string()],
                annotations: vec![format!(
                    "::error title=contextos gate::{}",
                    escape_data(&e.to_string())
                )],
            }
        }
    };
    let mut lines = Vec::new();
    let mut annotations = Vec::new();
    let mut failed = false;
    for r in &runs {
        lines.push(format!(
            "{}: {} passed, {} failed",
            r.label, r.report.passed, r.report.failed
        ));
        if let Some(e) = &r.error {
            failed = true;
            lines.push(format!("ERR {e}"));
            annotations.push(format!("::error title=contextos test::{}", escape_data(e)));
        }
        for c in r.report.cases.iter().filter(|c| !c.passed) {
            failed = true;
            lines.push(format!("FAIL {} {}", c.origin, c.case));
            let why = super::test::failure_lines(c);
            lines.extend(why.iter().map(|l| format!("  {l}")));
            annotations.push(format!(
                "::error file={},line={},col={},title=contextos test::{} ({})",
                escape_property(&c.origin.file),
                c.origin.line,
                c.origin.col,
                escape_data(&c.case),
                escape_data(&why.join("; "))
            ));
        }
    }
    Check {
        name: "policy tests",
        code: if failed { Exit::Findings } else { Exit::Ok },
        lines,
        annotations,
    }
}

/// The policy change against `from` widens no verdict, or every widening is accepted.
fn no_widening(project: &crate::project::Project, from: Option<&str>) -> Check {
    const NAME: &str = "no verdict widened";
    let run = || -> Result<(String, Vec<policy_diff::Section>), CliError> {
        let base = match from {
            Some(r) => r.to_string(),
            None => policy_diff::default_base(&project.root)?,
        };
        let old = policy_diff::set_of(project, &Side::Rev(base.clone()))?;
        let new = policy_diff::set_of(project, &Side::WorkTree)?;
        Ok((base, vec![policy_diff::symbolic(&old, &new)]))
    };
    match run() {
        Ok((base, sections)) => {
            let bad = policy_diff::unaccepted(&sections);
            let mut lines = vec![format!("compared with {base}")];
            lines.extend(policy_diff::lines(&sections, ""));
            Check {
                name: NAME,
                code: if bad == 0 { Exit::Ok } else { Exit::Findings },
                annotations: if bad == 0 {
                    Vec::new()
                } else {
                    vec![format!(
                        "::error title=contextos gate::{}",
                        escape_data(&format!(
                            "{bad} verdict change(s) widen against {base}; annotate the rule \
                             with @accept(\"widening\") if intended (see `contextos diff --from {base}`)"
                        ))
                    )]
                },
                lines,
            }
        }
        Err(e) => Check {
            name: NAME,
            code: Exit::Unverified,
            lines: vec![e.to_string()],
            annotations: vec![format!(
                "::error title=contextos gate::{}",
                escape_data(&e.to_string())
            )],
        },
    }
}

fn write_summary(path: &Path, checks: &[Check], code: Exit) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)?;
    let mut s = format!(
        "## ContextOS gate: {}\n\n| check | result |\n|---|---|\n",
        if code == Exit::Ok { "passed" } else { "failed" }
    );
    for c in checks {
        let result = match c.code {
            Exit::Ok => "passed".to_string(),
            Exit::Findings => "**failed**".to_string(),
            _ => "**could not verify**".to_string(),
        };
        s.push_str(&format!("| {} | {result} |\n", c.name));
    }
    for c in checks.iter().filter(|c| c.code != Exit::Ok) {
        s.push_str(&format!(
            "\n### {}\n\n```text\n{}\n```\n",
            c.name,
            c.lines.join("\n")
        ));
    }
    f.write_all(s.as_bytes())
}
