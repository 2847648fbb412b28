//! The write path every mutating tool ends in: whole-file changes become a changeset of
//! `contextos apply` (support/changeset.rs), are decided once more path by path there,
//! and are committed in ONE journaled transaction under the project lock, through the
//! physical safe-path stage (SafeRoot: symlink escapes, `..`, hard links and devices are
//! refused exactly as `apply` refuses them).
//!
//! Reading goes through SafeRoot as well, so what a tool reads is what the journal's
//! preconditions will compare against.

use super::limits::{check_size, text_of, ToolError};
use super::patch::{Base, FileChange};
use super::state::State;
use crate::support::changeset::{commit_steps, plan, Entry, Op};
use contextos_engine::effects::safe_fs::{SafeFsError, SafeRoot};
use contextos_engine::{Effect, PolicySet};
use serde_json::{json, Value};

/// The current text of a project file: `None` when it does not exist; binary, oversize
/// and unsafe (symlinked, hard-linked, special) files are errors.
pub fn read_text(state: &State, rel: &str) -> Result<Option<String>, ToolError> {
    let root = SafeRoot::open(&state.project.root).map_err(|e| ToolError::new(e.to_string()))?;
    let (dir, name) = match root.parent(rel, false) {
        Ok(x) => x,
        Err(e) if missing(&e) => return Ok(None),
        Err(e) => return Err(ToolError::new(format!("{rel}: {e}"))),
    };
    match root.inspect(&dir, &name, rel) {
        Ok(None) => return Ok(None),
        Ok(Some(info)) => check_size(rel, info.size, &state.limits)?,
        Err(e) => return Err(ToolError::new(format!("{rel}: {e}"))),
    }
    let bytes = root
        .read(rel)
        .map_err(|e| ToolError::new(format!("{rel}: {e}")))?;
    check_size(rel, bytes.len() as u64, &state.limits)?;
    text_of(rel, bytes).map(Some)
}

/// A missing parent directory means a missing file, not an unsafe path.
fn missing(e: &SafeFsError) -> bool {
    e.code == "path.not-found"
}

/// Commits `changes` as one transaction; the summary is the tool's structured result.
pub fn commit(
    state: &State,
    set: &PolicySet,
    tool: &str,
    changes: &[FileChange],
    confirmed: bool,
) -> Result<Value, ToolError> {
    let entries: Vec<Entry> = changes
        .iter()
        .map(|c| match c {
            FileChange::Write {
                path,
                content,
                base,
            } => Entry {
                op: Op::Write,
                path: path.clone(),
                content: Some(content.clone()),
                mode: None,
                expect_sha256: match base {
                    Base::Sha256(h) => Some(h.clone()),
                    Base::Absent | Base::Any => None,
                },
                must_not_exist: *base == Base::Absent,
            },
            FileChange::Delete { path, sha256 } => Entry {
                op: Op::Delete,
                path: path.clone(),
                content: None,
                mode: None,
                expect_sha256: Some(sha256.clone()),
                must_not_exist: false,
            },
        })
        .collect();
    for e in &entries {
        if let Some(c) = &e.content {
            check_size(&e.path, c.len() as u64, &state.limits)?;
        }
    }
    let (decisions, verdict, steps) =
        plan(set, &state.project.root, &entries, state.role.as_deref())?;
    // The gate decided the same paths; this second reading can only narrow: never widen.
    if verdict == Effect::Deny || (verdict == Effect::Ask && !confirmed) {
        let why: Vec<String> = decisions
            .iter()
            .filter(|d| d.verdict == verdict)
            .flat_map(|d| d.decided_by.iter().map(|h| h.id.clone()))
            .collect();
        return Err(ToolError::new(format!(
            "{} by the policies (rules: {}); nothing was written",
            if verdict == Effect::Deny {
                "denied"
            } else {
                "needs confirmation"
            },
            why.join(", ")
        )));
    }
    let committed = commit_steps(
        &state.project.root,
        &steps,
        state.limits.lock_timeout,
        &format!("contextos mcp {tool}"),
    )?;
    Ok(json!({
        "transaction": committed,
        "changes": changes
            .iter()
            .map(|c| match c {
                FileChange::Write { path, base, .. } => json!({
                    "op": if *base == Base::Absent { "create" } else { "write" },
                    "path": path,
                }),
                FileChange::Delete { path, .. } => json!({"op": "delete", "path": path}),
            })
            .collect::<Vec<_>>(),
    }))
}
