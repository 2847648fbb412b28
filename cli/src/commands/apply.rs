//! `contextos apply CHANGESET`: writes and deletes through one journaled transaction.
//!
//! Every path is decided by the evaluator first: any `deny` means nothing is applied;
//! any `ask` means nothing is applied without `--yes`. Then, under the project lock,
//! interrupted transactions are recovered and the changeset is committed atomically.

use super::{Context, EXIT_ASK, EXIT_FINDINGS, EXIT_OK};
use crate::{output, Format};
use contextos_engine::effects::journal::{self, Change, Precondition, Step};
use contextos_engine::effects::lock::{self, AcquireOptions};
use contextos_engine::effects::safe_fs::SafeRoot;
use contextos_engine::{Decision, Effect, EvalOptions, PathOp, Request, RequestKind};
use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The changeset: a JSON file, or `-` for standard input.
    changeset: PathBuf,
    /// Confirm changes whose verdict is `ask`.
    #[arg(long)]
    yes: bool,
    /// Show the verdicts and a diff, change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Role the request carries.
    #[arg(long)]
    role: Option<String>,
    /// Seconds to wait for the project lock.
    #[arg(long, default_value_t = 30)]
    lock_timeout: u64,
}

/// The changeset format (documented in the book's CLI reference).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Changeset {
    changes: Vec<Entry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Entry {
    op: Op,
    path: String,
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    mode: Option<u32>,
    #[serde(default)]
    expect_sha256: Option<String>,
    #[serde(default)]
    must_not_exist: bool,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Op {
    Write,
    Delete,
}

fn read_changeset(path: &PathBuf) -> Result<Changeset, String> {
    let text = if path.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin())
            .map_err(|e| format!("cannot read standard input: {e}"))?
    } else {
        std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?
    };
    serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}:{}:{}: invalid changeset: {e}",
            path.display(),
            e.line(),
            e.column()
        )
    })
}

pub fn run(ctx: &Context, args: &Args) -> u8 {
    let (_out, set) = match ctx.load() {
        Ok(x) => x,
        Err(code) => return code,
    };
    let project = match ctx.project() {
        Ok(p) => p,
        Err(code) => return code,
    };
    let changeset = match read_changeset(&args.changeset) {
        Ok(c) => c,
        Err(e) => return ctx.fail(&e),
    };
    if changeset.changes.is_empty() {
        return ctx.fail("the changeset has no changes");
    }
    // 1. Every path through the evaluator.
    let decisions: Vec<Decision> = changeset
        .changes
        .iter()
        .map(|e| {
            let op = match e.op {
                Op::Write => PathOp::Write,
                Op::Delete => PathOp::Delete,
            };
            set.decide(
                &Request::path(op, e.path.clone()).with_role(args.role.clone()),
                EvalOptions::default(),
            )
        })
        .collect();
    let verdict = decisions
        .iter()
        .map(|d| d.verdict)
        .max()
        .unwrap_or(Effect::Allow);
    let mut steps = Vec::new();
    for (e, d) in changeset.changes.iter().zip(&decisions) {
        let RequestKind::Path(p) = &d.request.kind else {
            return ctx.fail("internal: a path decision without a path request");
        };
        let change = match (e.op, &e.content) {
            (Op::Write, Some(c)) => Change::Write {
                path: p.path.clone(),
                content: c.clone().into_bytes(),
                mode: e.mode.unwrap_or(0o644),
            },
            (Op::Write, None) => return ctx.fail(&format!("{}: a write needs `content`", e.path)),
            (Op::Delete, _) => Change::Delete {
                path: p.path.clone(),
            },
        };
        let precondition = match (&e.expect_sha256, e.must_not_exist) {
            (Some(_), true) => {
                return ctx.fail(&format!(
                    "{}: expectSha256 and mustNotExist exclude each other",
                    e.path
                ))
            }
            (Some(h), false) => Precondition::Sha256(h.clone()),
            (None, true) => Precondition::MustNotExist,
            (None, false) => Precondition::Any,
        };
        steps.push(Step {
            change,
            precondition,
        });
    }
    let blocked = verdict == Effect::Deny || (verdict == Effect::Ask && !args.yes);
    if args.dry_run || blocked {
        report(
            ctx,
            &decisions,
            verdict,
            None,
            args.dry_run.then(|| diffs(&project.root, &steps)),
        );
        return match verdict {
            Effect::Deny => EXIT_FINDINGS,
            Effect::Ask if !args.yes => EXIT_ASK,
            _ => EXIT_OK,
        };
    }
    // 2. Under the lock: recover, then commit.
    let opts = AcquireOptions {
        timeout: Duration::from_secs(args.lock_timeout),
        command: "contextos apply".into(),
    };
    let guard = match lock::acquire(&project.root, &opts, &mut |h| {
        if let Some(h) = h {
            eprintln!("waiting for the project lock held by {h}");
        }
    }) {
        Ok(g) => g,
        Err(e) => return ctx.fail(&e.to_string()),
    };
    let root = match SafeRoot::open(&project.root) {
        Ok(r) => r,
        Err(e) => return ctx.fail(&e.to_string()),
    };
    if let Err(e) = journal::recover(&root, &guard) {
        return ctx.fail(&format!("recovering the journal: {e}"));
    }
    match journal::commit(&root, &guard, &steps, &mut |_| {}) {
        Ok(c) => {
            report(ctx, &decisions, verdict, Some(&c), None);
            EXIT_OK
        }
        Err(e) => ctx.fail(&format!("nothing was applied: {e}")),
    }
}

fn diffs(root: &std::path::Path, steps: &[Step]) -> Vec<String> {
    steps
        .iter()
        .map(|s| {
            let path = s.change.path();
            let old = std::fs::read_to_string(root.join(path)).unwrap_or_default();
            let new = match &s.change {
                Change::Write { content, .. } => String::from_utf8_lossy(content).into_owned(),
                Change::Delete { .. } => String::new(),
            };
            similar::TextDiff::from_lines(&old, &new)
                .unified_diff()
                .header(&format!("a/{path}"), &format!("b/{path}"))
                .to_string()
        })
        .collect()
}

fn report(
    ctx: &Context,
    decisions: &[Decision],
    verdict: Effect,
    committed: Option<&journal::Committed>,
    diffs: Option<Vec<String>>,
) {
    match ctx.format {
        Format::Json => output::print_json(serde_json::json!({
            "verdict": verdict,
            "applied": committed.is_some(),
            "transaction": committed,
            "decisions": decisions,
            "diffs": diffs,
        })),
        Format::Text | Format::Github => {
            for d in decisions {
                if let RequestKind::Path(p) = &d.request.kind {
                    let why = d
                        .rejection
                        .as_ref()
                        .map(|r| format!(" [{}] {}", r.code, r.message))
                        .or_else(|| d.decided_by.first().map(|h| format!(" ({})", h.id)))
                        .unwrap_or_default();
                    outln!(
                        "{:<5} {} {}{why}",
                        d.verdict.as_str(),
                        p.op.as_str(),
                        p.path
                    );
                }
            }
            for d in diffs.unwrap_or_default() {
                outln!("{d}");
            }
            match (committed, verdict) {
                (Some(c), _) => outln!(
                    "applied {} change(s) in transaction {} (lock generation {})",
                    c.files,
                    c.txid,
                    c.generation
                ),
                (None, Effect::Deny) => outln!("nothing applied: a change is denied"),
                (None, Effect::Ask) => {
                    outln!("nothing applied: a change needs confirmation (--yes)")
                }
                (None, Effect::Allow) => outln!("dry run: nothing applied"),
            }
        }
    }
}
