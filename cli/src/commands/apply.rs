//! `contextos apply CHANGESET`: writes and deletes through one journaled transaction.
//!
//! Every path is decided by the evaluator first: any `deny` means nothing is applied;
//! any `ask` means nothing is applied without `--yes`. Then, under the project lock,
//! interrupted transactions are recovered and the changeset is committed atomically.

use crate::output;
use crate::support::changeset::{commit_steps, plan, Entry, Op};
use crate::support::{CliError, Context, Exit, Format};
use contextos_engine::effects::journal::{self, Change, Step};
use contextos_engine::effects::safe_fs::SafeRoot;
use contextos_engine::{Decision, Effect, RequestKind};
use serde::Deserialize;
use std::path::PathBuf;

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
pub(crate) struct Changeset {
    pub(crate) changes: Vec<Entry>,
}

/// Why a unified diff cannot become a changeset.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DiffError {
    #[error("line {0}: renames and mode changes are not supported in diffs")]
    RenameOrMode(usize),
    #[error("neither JSON nor a unified diff with `---`/`+++` headers")]
    NoHeaders,
    #[error("line {line}: {error}")]
    Parse {
        line: usize,
        error: diffy::ParsePatchError,
    },
    #[error("line {0}: both sides are /dev/null")]
    BothNull(usize),
    #[error("line {line}: renames are not supported ({from} -> {to})")]
    Rename {
        line: usize,
        from: String,
        to: String,
    },
    #[error("{path}: {error}")]
    Apply {
        path: String,
        error: diffy::ApplyError,
    },
    #[error("line {line}: cannot read {path} to apply the patch to")]
    Unreadable { line: usize, path: String },
    #[error("{0}")]
    SafePath(contextos_engine::effects::safe_fs::SafeFsError),
}

fn read_changeset(path: &PathBuf, root: &std::path::Path) -> Result<Changeset, CliError> {
    let text = if path.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin())
            .map_err(|e| CliError::io("cannot read standard input", e))?
    } else {
        std::fs::read_to_string(path)
            .map_err(|e| CliError::io(format!("cannot read {}", path.display()), e))?
    };
    if text.trim_start().starts_with('{') {
        serde_json::from_str(&text).map_err(|e| {
            CliError::Input(format!(
                "{}:{}:{}: invalid changeset: {e}",
                path.display(),
                e.line(),
                e.column()
            ))
        })
    } else {
        from_unified_diff(&text, root)
            .map_err(|e| CliError::Input(format!("{}: {e}", path.display())))
    }
}

/// A multi-file unified diff (as `git diff` prints it) turned into changes against the
/// current files. Each modified file carries the sha256 of the content the patch was
/// applied to, so a file that changes before the transaction applies aborts it.
pub(crate) fn from_unified_diff(
    text: &str,
    root: &std::path::Path,
) -> Result<Changeset, DiffError> {
    const GIT_META: [&str; 9] = [
        "diff --git ",
        "index ",
        "new file mode ",
        "deleted file mode ",
        "similarity index ",
        "rename from ",
        "rename to ",
        "old mode ",
        "new mode ",
    ];
    let mut chunks: Vec<(usize, String)> = Vec::new();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for (i, line) in lines.iter().enumerate() {
        if line.starts_with("rename from ") || line.starts_with("old mode ") {
            return Err(DiffError::RenameOrMode(i + 1));
        }
        if line.starts_with("--- ") && lines.get(i + 1).is_some_and(|n| n.starts_with("+++ ")) {
            chunks.push((i + 1, String::new()));
        }
        if let Some((_, chunk)) = chunks.last_mut() {
            if !GIT_META.iter().any(|p| line.starts_with(p)) {
                chunk.push_str(line);
            }
        }
    }
    if chunks.is_empty() {
        return Err(DiffError::NoHeaders);
    }
    let safe = SafeRoot::open(root).map_err(DiffError::SafePath)?;
    let mut changes = Vec::new();
    for (line, chunk) in &chunks {
        let patch = diffy::Patch::from_str(chunk)
            .map_err(|error| DiffError::Parse { line: *line, error })?;
        let original = patch.original().and_then(|p| header_path(p, "a/"));
        let modified = patch.modified().and_then(|p| header_path(p, "b/"));
        match (original, modified) {
            (None, None) => return Err(DiffError::BothNull(*line)),
            (Some(o), Some(m)) if o != m => {
                return Err(DiffError::Rename {
                    line: *line,
                    from: o,
                    to: m,
                })
            }
            (None, Some(m)) => {
                let content = diffy::apply("", &patch).map_err(|error| DiffError::Apply {
                    path: m.clone(),
                    error,
                })?;
                changes.push(Entry {
                    op: Op::Write,
                    path: m,
                    content: Some(content),
                    mode: None,
                    expect_sha256: None,
                    must_not_exist: true,
                });
            }
            (Some(o), modified) => {
                let canonical =
                    contextos_engine::canon::canonical_path(&o).unwrap_or_else(|_| o.clone());
                let base = safe
                    .read(&canonical)
                    .ok()
                    .and_then(|b| String::from_utf8(b).ok())
                    .ok_or_else(|| DiffError::Unreadable {
                        line: *line,
                        path: o.clone(),
                    })?;
                let sha = contextos_engine::effects::safe_fs::sha256_hex(base.as_bytes());
                let (op, content) = match modified {
                    Some(_) => (
                        Op::Write,
                        Some(
                            diffy::apply(&base, &patch).map_err(|error| DiffError::Apply {
                                path: o.clone(),
                                error,
                            })?,
                        ),
                    ),
                    None => (Op::Delete, None),
                };
                changes.push(Entry {
                    op,
                    path: o,
                    content,
                    mode: None,
                    expect_sha256: Some(sha),
                    must_not_exist: false,
                });
            }
        }
    }
    Ok(Changeset { changes })
}

/// `a/src/x.rs<TAB>timestamp` -> `src/x.rs`; `/dev/null` has no path.
fn header_path(raw: &str, prefix: &str) -> Option<String> {
    let p = raw.split('\t').next().unwrap_or(raw).trim_end();
    if p == "/dev/null" {
        return None;
    }
    Some(p.strip_prefix(prefix).unwrap_or(p).to_string())
}

pub fn run(ctx: &Context, args: &Args) -> Result<Exit, CliError> {
    let project = ctx.project()?;
    let set = crate::support::context::load_cached(&project)?;
    crate::support::context::check_role(&set, args.role.as_deref())?;
    let changeset = read_changeset(&args.changeset, &project.root)?;
    if changeset.changes.is_empty() {
        return Err(CliError::Input("the changeset has no changes".into()));
    }
    let (decisions, verdict, steps) = plan(
        &set,
        &project.root,
        &changeset.changes,
        args.role.as_deref(),
    )?;
    let blocked = verdict == Effect::Deny || (verdict == Effect::Ask && !args.yes);
    if args.dry_run || blocked {
        report(
            ctx,
            &decisions,
            verdict,
            None,
            args.dry_run.then(|| diffs(&project.root, &steps)),
        );
        return Ok(match verdict {
            Effect::Deny => Exit::Findings,
            Effect::Ask if !args.yes => Exit::Ask,
            _ => Exit::Ok,
        });
    }
    let c = commit_steps(&project.root, &steps, args.lock_timeout, "contextos apply")?;
    report(ctx, &decisions, verdict, Some(&c), None);
    Ok(Exit::Ok)
}

fn diffs(root: &std::path::Path, steps: &[Step]) -> Vec<String> {
    steps
        .iter()
        .map(|s| {
            let path = s.change.path();
            // Only a regular file is read: opening a FIFO would block the dry run.
            let old = regular(&root.join(path))
                .then(|| std::fs::read_to_string(root.join(path)).ok())
                .flatten()
                .unwrap_or_default();
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

fn regular(p: &std::path::Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file())
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
        Format::Text | Format::Github | Format::Sarif | Format::Junit => {
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
