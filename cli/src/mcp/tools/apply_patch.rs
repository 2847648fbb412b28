//! `apply_patch {patch}`: a unified diff or a `*** Begin Patch` envelope applied to the
//! current files (`support/patch.rs`), every touched path decided, and every file committed
//! in ONE journaled transaction: all or nothing.

use super::super::commit::{commit, read_text};
use super::super::gate::{self, blocking};
use super::super::limits::{check_size, Failure, ToolError};
use super::super::patch::{self, FileChange};
use super::super::reply::done;
use super::super::state::State;
use contextos_engine::emit::protocol::patch::patch_paths;
use contextos_engine::emit::Action;
use contextos_engine::PathOp;
use rmcp::model::CallToolResult;
use rmcp::{Peer, RoleServer};
use std::sync::Arc;

pub const NAME: &str = "apply_patch";
pub const DESCRIPTION: &str = "Apply a patch to the project's files, all or nothing. Accepts a unified diff (`--- a/path` / `+++ b/path` headers as `git diff` prints them; `/dev/null` for new and deleted files) or the `*** Begin Patch` format (`*** Add File:`, `*** Update File:` with optional `*** Move to:`, `*** Delete File:`, ending with `*** End Patch`). Every touched path is decided by the ContextOS policies first; if any hunk does not apply or any path is denied, nothing is written.";

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The patch text (unified diff or *** Begin Patch envelope).
    pub patch: String,
}

pub async fn call(
    state: &Arc<State>,
    peer: &Peer<RoleServer>,
    args: Args,
) -> Result<CallToolResult, Failure> {
    check_size("the patch", args.patch.len() as u64, &state.limits)?;
    // The changes are computed first (reading the current files) so that every path the
    // applier touches is decided, together with every path the hooks' liberal extractor
    // sees in the same text.
    let (changes, actions) = {
        let state = Arc::clone(state);
        let body = args.patch.clone();
        blocking(move || plan(&state, &body)).await?
    };
    let passed = gate::decide(state, peer, NAME, &actions).await?;
    let confirmed = passed.confirmed();
    let result = {
        let state = Arc::clone(state);
        let set = Arc::clone(&passed.set);
        blocking(move || commit(&state, &set, NAME, &changes, confirmed)).await
    };
    passed.finish(state, NAME, &actions, result).map(|s| {
        let n = s["changes"].as_array().map_or(0, Vec::len);
        done(
            format!("applied the patch: {n} file change(s) in one transaction"),
            s,
        )
    })
}

/// The whole-file changes (paths made project-relative) and the actions to decide.
fn plan(state: &State, body: &str) -> Result<(Vec<FileChange>, Vec<Action>), ToolError> {
    let mut read = |p: &str| -> Result<Option<String>, ToolError> {
        let rel = state.relative(p)?;
        read_text(state, &rel)
    };
    let raw = patch::apply(body, &mut read)?;
    let mut changes = Vec::with_capacity(raw.len());
    let mut actions: Vec<Action> = Vec::new();
    let push = |actions: &mut Vec<Action>, op: PathOp, path: String| {
        let a = Action::Path { op, path };
        if !actions.contains(&a) {
            actions.push(a);
        }
    };
    for c in raw {
        let c = match c {
            FileChange::Write {
                path,
                content,
                base,
            } => FileChange::Write {
                path: state.relative(&path)?,
                content,
                base,
            },
            FileChange::Delete { path, sha256 } => FileChange::Delete {
                path: state.relative(&path)?,
                sha256,
            },
        };
        let op = match &c {
            FileChange::Write { .. } => PathOp::Write,
            FileChange::Delete { .. } => PathOp::Delete,
        };
        push(&mut actions, op, c.path().to_string());
        changes.push(c);
    }
    // The hooks' extractor is liberal where this applier is strict; any path it sees
    // is decided too (an unreadable patch has already failed above, or fails here).
    let extra = patch_paths(body).map_err(|e| ToolError::new(e.0))?;
    for (op, p) in extra {
        push(&mut actions, op, state.relative(&p)?);
    }
    Ok((changes, actions))
}
