//! `contextos compile`: the policies as every agent's native configuration.
//!
//! compile: emit (pure) → plan against what is on disk and the ownership record
//! `.contextos/ownership.json` (managed blocks, owned JSON entries, whole files) → write all
//! of it, or nothing, through one journaled transaction under the project lock.

use crate::output;
use crate::support::outputs::{prepare, project_targets, read_text};
use crate::support::{CliError, Context, Exit, Format};
use contextos_engine::effects::journal::{self, Change, Precondition, Step};
use contextos_engine::effects::safe_fs::SafeRoot;
use contextos_engine::emit::merge::{self, Drift, Plan};
use contextos_engine::emit::Agent;
use contextos_engine::emit::Lossy;
use contextos_engine::{Layer, PolicySet};
use std::collections::BTreeMap;
use std::time::Duration;

use contextos_engine::emit::merge::RECORD_PATH as OWNERSHIP_RECORD;

#[derive(Debug, clap::Args)]
pub struct CompileArgs {
    /// Targets to compile for (comma-separated): agents, claude, cursor, copilot, codex, gemini, windsurf, cline, zed, junie, kiro, continue, aider, opencode, amp, amazonq.
    /// Default: all of them.
    #[arg(long, value_delimiter = ',', value_name = "T,…")]
    target: Vec<String>,
    /// Also list each lossy translation of the standard library's and plugins' rules (by
    /// default only the project's own are listed, the rest summed up).
    #[arg(long, short)]
    verbose: bool,
    /// Report drift and exit 1 when any output is out of sync; write nothing.
    #[arg(long)]
    check: bool,
    /// Show what would change as a unified diff; write nothing.
    #[arg(long)]
    diff: bool,
    /// List what would be written; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Seconds to wait for the project lock.
    #[arg(long, default_value_t = 30)]
    lock_timeout: u64,
    /// Print nothing on success (`contextos init --format json` reports on its own).
    #[arg(skip)]
    quiet: bool,
}

/// Compiles for `targets` as a plain `contextos compile --target …` would, for `contextos
/// init`; returns what happened in a few words.
pub fn compile_targets(ctx: &Context, targets: &[Agent], quiet: bool) -> Result<String, CliError> {
    let args = CompileArgs {
        target: targets.iter().map(|t| t.as_str().to_string()).collect(),
        verbose: false,
        check: false,
        diff: false,
        dry_run: false,
        lock_timeout: 30,
        quiet,
    };
    let mut written = Vec::new();
    compile_run(ctx, &args, &mut written)?;
    Ok(if written.is_empty() {
        "in sync: nothing to write".into()
    } else {
        format!("wrote {} file(s): {}", written.len(), written.join(", "))
    })
}

fn drift_json(d: &Drift) -> serde_json::Value {
    serde_json::json!({"path": d.path, "class": d.class.as_str(), "detail": d.detail})
}

/// Drift that forbids writing at all: a file someone else owns, or two outputs for one path.
fn blocking(plan: &Plan) -> Vec<&Drift> {
    plan.drift.iter().filter(|d| d.class.refuses()).collect()
}

pub fn compile_cmd(ctx: &Context, args: &CompileArgs) -> Result<Exit, CliError> {
    compile_run(ctx, args, &mut Vec::new())
}

/// The command; the paths it wrote are added to `written`.
fn compile_run(
    ctx: &Context,
    args: &CompileArgs,
    written: &mut Vec<String>,
) -> Result<Exit, CliError> {
    let project = ctx.project()?;
    project.check_config()?;
    let targets = project_targets(&project, &args.target)?;
    let (_out, set) = ctx.load()?;
    let (emitted, plan, seen) = prepare(&project, &set, &targets)?;
    // Lossy translations are reported when outputs are (re)written or previewed; a
    // `--check` reports drift only.
    if !args.check && !args.quiet {
        for line in lossy_report(&set, &emitted.lossy, args.verbose) {
            eprintln!("{line}");
        }
    }
    if args.check {
        return report_drift(ctx, &plan.drift, "compile --check");
    }
    let refused = blocking(&plan);
    if !refused.is_empty() {
        for d in &refused {
            eprintln!("error[{}]: {}: {}", d.class.as_str(), d.path, d.detail);
        }
        return Err(CliError::Refused("nothing was written: resolve the files above (move the hand-written file away, or delete it to let ContextOS own it)".into()));
    }
    if args.diff || args.dry_run {
        let lock_changes = read_text(&project.root, OWNERSHIP_RECORD)
            .ok()
            .flatten()
            .is_none_or(|t| t != merge::render_record(&plan.record));
        let diffs: Vec<(String, String)> = plan
            .writes
            .iter()
            .map(|(path, new)| {
                let old = read_text(&project.root, path)
                    .ok()
                    .flatten()
                    .unwrap_or_default();
                let d = similar::TextDiff::from_lines(old.as_str(), new.as_str());
                (
                    path.clone(),
                    d.unified_diff()
                        .header(&format!("a/{path}"), &format!("b/{path}"))
                        .to_string(),
                )
            })
            .collect();
        match ctx.format {
            Format::Json => output::print_json(serde_json::json!({
                "wouldWrite": plan.writes.iter().map(|(p, _)| p).collect::<Vec<_>>(),
                "wouldDelete": plan.deletes,
                "lockChanges": lock_changes,
                "diffs": if args.diff {
                    Some(diffs.iter().map(|(p, d)| serde_json::json!({"path": p, "diff": d})).collect::<Vec<_>>())
                } else {
                    None
                },
            })),
            Format::Text | Format::Github | Format::Sarif | Format::Junit => {
                for (path, diff) in &diffs {
                    if args.diff {
                        outln!("{diff}");
                    } else {
                        outln!("would write {path}");
                    }
                }
                for path in &plan.deletes {
                    outln!("would delete {path}");
                }
                if lock_changes {
                    outln!("would update {OWNERSHIP_RECORD}");
                } else if plan.writes.is_empty() && plan.deletes.is_empty() {
                    outln!("in sync: nothing to write");
                }
            }
        }
        return Ok(Exit::Ok);
    }
    // Each step insists the file is still what the plan read: an edit made in between
    // fails the whole transaction instead of being overwritten.
    let expect = |path: &str| match seen.get(path) {
        Some(Some(text)) => Precondition::Sha256(merge::sha256_hex(text)),
        Some(None) => Precondition::MustNotExist,
        None => Precondition::Any,
    };
    let mut steps: Vec<Step> = plan
        .writes
        .iter()
        .map(|(path, text)| Step {
            change: Change::Write {
                path: path.clone(),
                content: text.clone().into_bytes(),
                mode: plan.mode(path),
                // A hook program must end up executable even where an older copy was not.
                exact_mode: plan.executable.contains(path),
            },
            precondition: expect(path),
        })
        .chain(plan.deletes.iter().map(|path| Step {
            change: Change::Delete { path: path.clone() },
            precondition: expect(path),
        }))
        .collect();
    let lock_text = merge::render_record(&plan.record);
    let lock_changed = read_text(&project.root, OWNERSHIP_RECORD)
        .ok()
        .flatten()
        .is_none_or(|t| t != lock_text);
    if steps.is_empty() && !lock_changed {
        if args.quiet {
            return Ok(Exit::Ok);
        }
        match ctx.format {
            Format::Json => output::print_json(
                serde_json::json!({"written": [], "deleted": [], "inSync": true}),
            ),
            Format::Text | Format::Github | Format::Sarif | Format::Junit => {
                outln!("in sync: nothing to write")
            }
        }
        return Ok(Exit::Ok);
    }
    if lock_changed {
        steps.push(Step {
            change: Change::Write {
                path: OWNERSHIP_RECORD.into(),
                content: lock_text.into_bytes(),
                mode: 0o644,
                exact_mode: false,
            },
            precondition: Precondition::Any,
        });
    }
    let guard = ctx.take_lock(
        &project.root,
        "contextos compile",
        Duration::from_secs(args.lock_timeout),
    )?;
    let root = SafeRoot::open(&project.root)?;
    journal::recover(&root, &guard).map_err(|error| CliError::Journal {
        doing: "recovering the journal",
        error,
    })?;
    journal::commit(&root, &guard, &steps, &mut |_| {}).map_err(|error| CliError::Journal {
        doing: "nothing was written",
        error,
    })?;
    written.extend(plan.writes.iter().map(|(p, _)| p.clone()));
    if args.quiet {
        return Ok(Exit::Ok);
    }
    match ctx.format {
        Format::Json => output::print_json(serde_json::json!({
            "written": plan.writes.iter().map(|(p, _)| p).collect::<Vec<_>>(),
            "deleted": plan.deletes,
            "lossy": emitted.lossy,
        })),
        Format::Text | Format::Github | Format::Sarif | Format::Junit => {
            for (p, _) in &plan.writes {
                outln!("wrote {p}");
            }
            for p in &plan.deletes {
                outln!("deleted {p}");
            }
            if lock_changed {
                outln!("updated {OWNERSHIP_RECORD}");
            }
        }
    }
    Ok(Exit::Ok)
}

/// The lossy translations as a person reads them: one warning per rule of the project's
/// own (every agent's note under it), and the standard library's and plugins' rules — the
/// same for every project, enforced exactly by the hook — summed up in one note unless
/// `verbose` lists them too.
fn lossy_report(set: &PolicySet, lossy: &[Lossy], verbose: bool) -> Vec<String> {
    let layer: BTreeMap<&str, Layer> = set.rules.iter().map(|r| (r.id.as_str(), r.layer)).collect();
    // Notes that are not about a rule (`[mcp] servers`) are the project's own.
    let own = |l: &Lossy| layer.get(l.rule.as_str()).is_none_or(|x| *x == Layer::User);
    let mut by_rule: BTreeMap<(bool, &str), Vec<&Lossy>> = BTreeMap::new();
    for l in lossy {
        by_rule
            .entry((!own(l), l.rule.as_str()))
            .or_default()
            .push(l);
    }
    let mut out = Vec::new();
    let mut hidden_rules = 0usize;
    let mut hidden_notes = 0usize;
    for ((shipped, rule), notes) in &by_rule {
        if *shipped && !verbose {
            hidden_rules += 1;
            hidden_notes += notes.len();
            continue;
        }
        let origin = notes
            .first()
            .map(|l| l.origin.to_string())
            .unwrap_or_default();
        let whose = if *shipped {
            " (standard library or plugin)"
        } else {
            ""
        };
        out.push(format!(
            "warning[lossy]: rule `{rule}`{whose} ({origin}) is not expressed exactly by every agent:"
        ));
        for l in notes {
            out.push(format!("  {}: {}", l.target.as_str(), l.message));
        }
    }
    if hidden_rules > 0 {
        out.push(format!(
            "note[lossy]: {hidden_notes} more lossy translation(s) of {hidden_rules} standard \
             library or plugin rule(s), the same in every project: the hook enforces them \
             exactly (`contextos compile --verbose` lists them)"
        ));
    }
    out
}

fn report_drift(ctx: &Context, drift: &[Drift], what: &str) -> Result<Exit, CliError> {
    match ctx.format {
        Format::Json => output::print_json(serde_json::json!({
            "inSync": drift.is_empty(),
            "drift": drift.iter().map(drift_json).collect::<Vec<_>>(),
        })),
        Format::Text | Format::Sarif | Format::Junit => {
            for d in drift {
                outln!("{}: {} ({})", d.class.as_str(), d.path, d.detail);
            }
            if drift.is_empty() {
                outln!("in sync");
            } else {
                outln!(
                    "{} output(s) out of sync; run `contextos compile`",
                    drift.len()
                );
            }
        }
        Format::Github => {
            for d in drift {
                outln!(
                    "::error file={},title=contextos {what}: {}::{}",
                    output::escape_property(&d.path),
                    d.class.as_str(),
                    output::escape_data(&d.detail)
                );
            }
        }
    }
    if drift.is_empty() {
        Ok(Exit::Ok)
    } else {
        Ok(Exit::Findings)
    }
}
