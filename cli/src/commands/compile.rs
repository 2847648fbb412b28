//! `contextos compile`: the policies as every agent's native configuration.
//!
//! compile: emit (pure) → plan against what is on disk and the ownership lock
//! `.contextos/lock.json` (managed blocks, owned JSON entries, whole files) → write all
//! of it, or nothing, through one journaled transaction under the project lock.

use crate::output;
use crate::support::context::{EXIT_FINDINGS, EXIT_OK};
use crate::support::outputs::{prepare, read_text, targets};
use crate::support::{Context, Format};
use contextos_engine::effects::journal::{self, Change, Precondition, Step};
use contextos_engine::effects::safe_fs::SafeRoot;
use contextos_engine::emit::merge::{self, Drift, Plan};
use std::time::Duration;

use contextos_engine::emit::merge::LOCK_PATH as OWNERSHIP_LOCK;

#[derive(Debug, clap::Args)]
pub struct CompileArgs {
    /// Targets to compile for (comma-separated): agents, claude, cursor, copilot.
    #[arg(long, value_delimiter = ',', value_name = "T,…")]
    target: Vec<String>,
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
}

fn drift_json(d: &Drift) -> serde_json::Value {
    serde_json::json!({"path": d.path, "class": d.class.as_str(), "detail": d.detail})
}

/// Drift that forbids writing at all: a file someone else owns, or two outputs for one path.
fn blocking(plan: &Plan) -> Vec<&Drift> {
    plan.drift.iter().filter(|d| d.class.refuses()).collect()
}

pub fn compile_cmd(ctx: &Context, args: &CompileArgs) -> u8 {
    let targets = match targets(&args.target) {
        Ok(t) => t,
        Err(e) => return ctx.fail(&e),
    };
    let project = match ctx.project() {
        Ok(p) => p,
        Err(code) => return code,
    };
    let (_out, set) = match ctx.load() {
        Ok(x) => x,
        Err(code) => return code,
    };
    let (emitted, plan, seen) = match prepare(&project, &set, &targets) {
        Ok(x) => x,
        Err(e) => return ctx.fail(&e),
    };
    // Lossy translations are reported when outputs are (re)written or previewed; a
    // `--check` reports drift only.
    if !args.check {
        for l in &emitted.lossy {
            eprintln!(
                "warning[lossy]: {} ({}): rule `{}`: {}",
                l.target.as_str(),
                l.origin,
                l.rule,
                l.message
            );
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
        return ctx.fail("nothing was written: resolve the files above (move the hand-written file away, or delete it to let ContextOS own it)");
    }
    if args.diff || args.dry_run {
        let lock_changes = read_text(&project.root, OWNERSHIP_LOCK)
            .ok()
            .flatten()
            .is_none_or(|t| t != merge::render_lock(&plan.lock));
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
            Format::Text | Format::Github | Format::Sarif => {
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
                    outln!("would update {OWNERSHIP_LOCK}");
                } else if plan.writes.is_empty() && plan.deletes.is_empty() {
                    outln!("in sync: nothing to write");
                }
            }
        }
        return EXIT_OK;
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
                mode: 0o644,
            },
            precondition: expect(path),
        })
        .chain(plan.deletes.iter().map(|path| Step {
            change: Change::Delete { path: path.clone() },
            precondition: expect(path),
        }))
        .collect();
    let lock_text = merge::render_lock(&plan.lock);
    let lock_changed = read_text(&project.root, OWNERSHIP_LOCK)
        .ok()
        .flatten()
        .is_none_or(|t| t != lock_text);
    if steps.is_empty() && !lock_changed {
        match ctx.format {
            Format::Json => output::print_json(
                serde_json::json!({"written": [], "deleted": [], "inSync": true}),
            ),
            Format::Text | Format::Github | Format::Sarif => outln!("in sync: nothing to write"),
        }
        return EXIT_OK;
    }
    if lock_changed {
        steps.push(Step {
            change: Change::Write {
                path: OWNERSHIP_LOCK.into(),
                content: lock_text.into_bytes(),
                mode: 0o644,
            },
            precondition: Precondition::Any,
        });
    }
    let guard = match ctx.take_lock(
        &project.root,
        "contextos compile",
        Duration::from_secs(args.lock_timeout),
    ) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let root = match SafeRoot::open(&project.root) {
        Ok(r) => r,
        Err(e) => return ctx.fail(&e.to_string()),
    };
    if let Err(e) = journal::recover(&root, &guard) {
        return ctx.fail(&format!("recovering the journal: {e}"));
    }
    if let Err(e) = journal::commit(&root, &guard, &steps, &mut |_| {}) {
        return ctx.fail(&format!("nothing was written: {e}"));
    }
    match ctx.format {
        Format::Json => output::print_json(serde_json::json!({
            "written": plan.writes.iter().map(|(p, _)| p).collect::<Vec<_>>(),
            "deleted": plan.deletes,
            "lossy": emitted.lossy,
        })),
        Format::Text | Format::Github | Format::Sarif => {
            for (p, _) in &plan.writes {
                outln!("wrote {p}");
            }
            for p in &plan.deletes {
                outln!("deleted {p}");
            }
            if lock_changed {
                outln!("updated {OWNERSHIP_LOCK}");
            }
        }
    }
    EXIT_OK
}

fn report_drift(ctx: &Context, drift: &[Drift], what: &str) -> u8 {
    match ctx.format {
        Format::Json => output::print_json(serde_json::json!({
            "inSync": drift.is_empty(),
            "drift": drift.iter().map(drift_json).collect::<Vec<_>>(),
        })),
        Format::Text | Format::Sarif => {
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
        EXIT_OK
    } else {
        EXIT_FINDINGS
    }
}
