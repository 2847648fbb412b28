//! `contextos test [--coverage] [--filter S]`: run the `test` blocks, each layer's against
//! that layer (the stdlib's against the stdlib alone, each plugin pack's against the stdlib
//! and the pack, the project's against the merged set).

use crate::output;
use crate::project::Project;
use crate::support::Format;
use crate::support::{CliError, Exit};
use contextos_engine::testing::{clause_coverage, run_layered, CaseResult, LayerRun};
use contextos_engine::{build, BuildOptions, PolicySet};
use std::collections::BTreeSet;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// List rules that no test case exercised.
    #[arg(long)]
    coverage: bool,
    /// Run only tests whose name contains this text.
    #[arg(long)]
    filter: Option<String>,
    /// With --coverage: fail (exit 1) when fewer than PCT percent of the project's own
    /// rules are exercised, or of their `when`/`unless` clauses are seen both holding and
    /// not holding.
    #[arg(long, value_name = "PCT", requires = "coverage", value_parser = clap::value_parser!(u8).range(0..=100))]
    threshold: Option<u8>,
    /// Run again whenever a policy file or contextos.toml changes (until interrupted).
    #[arg(long)]
    watch: bool,
}

/// What `--watch` looks at: every policy file with its modification time and size, and
/// the configuration; a file added or removed changes the list itself.
fn fingerprint(ctx: &crate::support::Context) -> Vec<(String, Option<std::time::SystemTime>, u64)> {
    let mut out = Vec::new();
    let Ok(project) = ctx.project() else {
        return out;
    };
    let mut files: Vec<(String, std::path::PathBuf)> = project.policy_files().unwrap_or_default();
    files.push(("contextos.toml".into(), project.root.join("contextos.toml")));
    for (name, path) in files {
        let meta = std::fs::metadata(&path).ok();
        out.push((
            name,
            meta.as_ref().and_then(|m| m.modified().ok()),
            meta.map_or(0, |m| m.len()),
        ));
    }
    out
}

/// `--watch`: runs, then re-runs on every change, until the process is interrupted.
fn watch(ctx: &crate::support::Context, args: &Args) -> Result<Exit, CliError> {
    let mut seen = fingerprint(ctx);
    loop {
        if let Err(e) = once(ctx, args) {
            e.report(ctx.format);
        }
        outln!("watching the policies for changes (Ctrl-C to stop)");
        loop {
            std::thread::sleep(std::time::Duration::from_millis(250));
            let now = fingerprint(ctx);
            if now != seen {
                seen = now;
                break;
            }
        }
        outln!("policies changed: running the tests again");
    }
}

/// Percent of `part` in `whole`; 100 for nothing to cover.
fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        100.0
    } else {
        #[allow(
            clippy::cast_precision_loss,
            reason = "rule and clause counts are far below 2^52"
        )]
        let p = part as f64 * 100.0 / whole as f64;
        p
    }
}

fn verdict(effect: impl std::fmt::Display, rules: &[String]) -> String {
    if rules.is_empty() {
        effect.to_string()
    } else {
        format!("{effect}({})", rules.join(", "))
    }
}

/// The project's policies compiled, and every layer's tests run against its layer.
pub struct Layered {
    pub set: PolicySet,
    pub runs: Vec<LayerRun>,
}

impl Layered {
    pub fn cases(&self) -> impl Iterator<Item = (&LayerRun, &CaseResult)> {
        self.runs
            .iter()
            .flat_map(|r| r.report.cases.iter().map(move |c| (r, c)))
    }

    pub fn passed(&self) -> usize {
        self.runs.iter().map(|r| r.report.passed).sum()
    }

    pub fn failed(&self) -> usize {
        self.runs
            .iter()
            .map(|r| r.report.failed + usize::from(r.error.is_some()))
            .sum()
    }

    /// Rules of the merged set no case of any layer exercised.
    fn uncovered(&self) -> Vec<&contextos_engine::ir::CompiledRule> {
        let exercised: BTreeSet<&String> = self
            .runs
            .iter()
            .flat_map(|r| r.report.exercised.iter())
            .collect();
        self.set
            .rules
            .iter()
            .filter(|r| !exercised.contains(&r.id))
            .collect()
    }
}

/// Compiles the project (an error fails closed, as `load` does) and runs the layered tests.
pub fn layered(project: &Project, filter: Option<&str>) -> Result<Layered, CliError> {
    let sources = project.sources()?;
    let options = BuildOptions {
        disabled_rules: project.config.policies.disable.clone(),
        ..Default::default()
    };
    let mut out = build(&sources, &options);
    let Some(set) = out.policy.take() else {
        return Err(CliError::policy_invalid(&out, "nothing can be decided"));
    };
    let runs = run_layered(&sources, &set, &options, filter);
    Ok(Layered { set, runs })
}

/// The layered tests for a set already compiled from the project's sources (`gate`).
pub fn runs_for(project: &Project, set: &PolicySet) -> Result<Vec<LayerRun>, CliError> {
    let sources = project.sources()?;
    let options = BuildOptions {
        disabled_rules: project.config.policies.disable.clone(),
        ..Default::default()
    };
    Ok(run_layered(&sources, set, &options, None))
}

/// The lines that explain a failing case.
pub fn failure_lines(c: &CaseResult) -> Vec<String> {
    let mut out = vec![
        format!("expected: {}", verdict(c.expected, &c.expected_rules)),
        format!("actual:   {}", verdict(c.actual, &c.actual_rules)),
    ];
    for o in &c.overruled {
        out.push(format!(
            "overruled: {} applied, but {} decided",
            o.rule,
            o.by.join(", ")
        ));
    }
    let not_applied: Vec<&String> = c
        .missing_rules
        .iter()
        .filter(|m| !c.overruled.iter().any(|o| &o.rule == *m))
        .collect();
    if !not_applied.is_empty() {
        out.push(format!(
            "missing rule(s): {} (did not apply; `contextos explain` shows why not)",
            not_applied
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    out
}

/// XML text and attribute escaping.
fn xml(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '&' => "&amp;".to_string(),
            '<' => "&lt;".to_string(),
            '>' => "&gt;".to_string(),
            '"' => "&quot;".to_string(),
            '\'' => "&apos;".to_string(),
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\t' | '\r') => " ".to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// The layered results as JUnit XML: one `testsuite` per layer, one `testcase` per case
/// (named by its test block and case text, classed by its location), a `failure` with
/// what was expected and decided; a layer that could not compile is an `error`.
fn junit(l: &Layered) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<testsuites name=\"contextos test\" tests=\"{}\" failures=\"{}\">\n",
        l.cases().count(),
        l.failed()
    ));
    for r in &l.runs {
        out.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\">\n",
            xml(&r.label),
            r.report.cases.len(),
            r.report.failed,
            usize::from(r.error.is_some())
        ));
        if let Some(e) = &r.error {
            out.push_str(&format!(
                "    <testcase name=\"{} layer\" classname=\"{}\"><error message=\"{}\"/></testcase>\n",
                xml(&r.label),
                xml(&r.label),
                xml(e)
            ));
        }
        for c in &r.report.cases {
            out.push_str(&format!(
                "    <testcase name=\"{}: {}\" classname=\"{}\" file=\"{}\" line=\"{}\"",
                xml(&c.test),
                xml(&c.case),
                xml(&c.origin.file),
                xml(&c.origin.file),
                c.origin.line
            ));
            if c.passed {
                out.push_str("/>\n");
            } else {
                let lines = failure_lines(c);
                out.push_str(&format!(
                    ">\n      <failure message=\"{}\">{}</failure>\n    </testcase>\n",
                    xml(lines.first().map_or("", String::as_str)),
                    xml(&format!("{}\n{}", c.origin, lines.join("\n")))
                ));
            }
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>");
    out
}

fn layer_header(r: &LayerRun) -> String {
    let against = match r.layer {
        contextos_engine::Layer::Stdlib => "the stdlib alone".to_string(),
        contextos_engine::Layer::Plugin => "the stdlib and this pack".to_string(),
        contextos_engine::Layer::User => "the merged set".to_string(),
    };
    format!(
        "{} tests (against {against}, {} rule(s)): {} passed, {} failed",
        r.label, r.rules, r.report.passed, r.report.failed
    )
}

pub fn run(ctx: &crate::support::Context, args: &Args) -> Result<Exit, CliError> {
    if args.watch {
        return watch(ctx, args);
    }
    once(ctx, args)
}

fn once(ctx: &crate::support::Context, args: &Args) -> Result<Exit, CliError> {
    let project = ctx.project()?;
    let l = layered(&project, args.filter.as_deref())?;
    let uncovered = l.uncovered();
    let ran = l.cases().count();
    // The project's own rules: what its tests are responsible for.
    let own = |r: &contextos_engine::ir::CompiledRule| r.layer == contextos_engine::Layer::User;
    let clauses = if args.coverage {
        clause_coverage(&l.set, own)
    } else {
        Vec::new()
    };
    let own_rules = l.set.rules.iter().filter(|r| own(r)).count();
    let own_uncovered = uncovered.iter().filter(|r| own(r)).count();
    let rule_pct = percent(own_rules - own_uncovered, own_rules);
    let clause_pct = percent(
        clauses.iter().filter(|c| c.covered()).count(),
        clauses.len(),
    );
    let below = args
        .threshold
        .is_some_and(|t| rule_pct < f64::from(t) || clause_pct < f64::from(t));
    match ctx.format {
        Format::Json => output::print_json(serde_json::json!({
            "passed": l.passed(),
            "failed": l.failed(),
            "layers": l.runs.iter().map(|r| serde_json::json!({
                "layer": r.label, "rules": r.rules, "passed": r.report.passed,
                "failed": r.report.failed, "error": r.error,
            })).collect::<Vec<_>>(),
            "cases": l.cases().map(|(r, c)| {
                let mut v = serde_json::to_value(c).unwrap_or_default();
                if let Some(o) = v.as_object_mut() {
                    o.insert("layer".into(), r.label.clone().into());
                }
                v
            }).collect::<Vec<_>>(),
            "uncovered": if args.coverage {
                Some(uncovered.iter().map(|r| serde_json::json!({"id": r.id, "origin": r.origin})).collect::<Vec<_>>())
            } else { None },
            "coverage": if args.coverage {
                Some(serde_json::json!({
                    "projectRules": own_rules,
                    "projectRulesExercised": own_rules - own_uncovered,
                    "rulePercent": rule_pct,
                    "clauses": clauses,
                    "clausePercent": clause_pct,
                    "threshold": args.threshold,
                    "belowThreshold": below,
                }))
            } else { None },
        })),
        Format::Junit => outln!("{}", junit(&l)),
        Format::Text | Format::Github | Format::Sarif => {
            for r in &l.runs {
                outln!("{}", layer_header(r));
                if let Some(e) = &r.error {
                    outln!("ERR  {e}");
                }
                for c in &r.report.cases {
                    if c.passed {
                        outln!("PASS {}  {}", c.origin, c.case);
                    } else {
                        outln!("FAIL {}  [{}] {}", c.origin, c.test, c.case);
                        for line in failure_lines(c) {
                            outln!("     {line}");
                        }
                        if ctx.format == Format::Github {
                            outln!(
                                "::error file={},line={},col={},title=contextos test::{}",
                                output::escape_property(&c.origin.file),
                                c.origin.line,
                                c.origin.col,
                                output::escape_data(&format!(
                                    "{} ({})",
                                    c.case,
                                    failure_lines(c).join("; ")
                                ))
                            );
                        }
                    }
                }
            }
            if args.coverage {
                let total = l.set.rules.len();
                outln!(
                    "coverage: {}/{} rule(s) exercised",
                    total - uncovered.len(),
                    total
                );
                for r in &uncovered {
                    outln!("  not exercised: {} ({})", r.id, r.origin);
                }
                outln!(
                    "project coverage: {}/{} rule(s) exercised ({rule_pct:.0}%), {}/{} clause(s) seen both ways ({clause_pct:.0}%)",
                    own_rules - own_uncovered,
                    own_rules,
                    clauses.iter().filter(|c| c.covered()).count(),
                    clauses.len()
                );
                for c in clauses.iter().filter(|c| !c.covered()) {
                    let missing = match (c.seen_true, c.seen_false) {
                        (false, false) => "never reached",
                        (true, false) => "never seen not holding",
                        _ => "never seen holding",
                    };
                    outln!(
                        "  clause {} of {} ({}): {missing}",
                        c.clause,
                        c.rule,
                        c.origin
                    );
                }
                if let Some(t) = args.threshold {
                    if below {
                        outln!("coverage below the threshold of {t}%");
                    }
                }
            }
            if ran == 0 {
                eprintln!(
                    "error: no test ran{}",
                    args.filter
                        .as_ref()
                        .map(|f| format!(" (filter {f:?})"))
                        .unwrap_or_default()
                );
            }
            outln!("{} passed, {} failed", l.passed(), l.failed());
        }
    }
    if l.failed() > 0 || ran == 0 || below {
        Ok(Exit::Findings)
    } else {
        Ok(Exit::Ok)
    }
}
