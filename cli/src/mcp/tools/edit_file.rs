//! `edit_file {path, old_string, new_string, replace_all?}`: an exact-string edit of an
//! existing file (semantics in `mcp/edit.rs`), committed like `write_file` but only if
//! the file still holds what the edit was computed from: a concurrent change aborts the
//! edit instead of being overwritten.

use super::super::commit::{commit, read_text};
use super::super::edit::replace;
use super::super::gate::{self, blocking};
use super::super::limits::{Failure, ToolError};
use super::super::patch::{Base, FileChange};
use super::super::reply::done;
use super::super::state::State;
use contextos_engine::effects::safe_fs::sha256_hex;
use contextos_engine::emit::Action;
use contextos_engine::PathOp;
use rmcp::model::CallToolResult;
use rmcp::{Peer, RoleServer};
use std::sync::Arc;

pub const NAME: &str = "edit_file";
pub const DESCRIPTION: &str = "Replace `old_string` with `new_string` in an existing text file of the project. `old_string` must match exactly (whitespace included) and occur exactly once, unless `replace_all` is true (then every occurrence is replaced); otherwise the edit fails and says how many times it occurs. The ContextOS policies decide the write first; the edit is journaled and aborts if the file changed meanwhile.";

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The file, relative to the project root (or absolute inside the project).
    pub path: String,
    /// The exact text to replace.
    pub old_string: String,
    /// The text to put in its place (must differ from old_string).
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one (default false).
    #[serde(default)]
    pub replace_all: bool,
}

pub async fn call(
    state: &Arc<State>,
    peer: &Peer<RoleServer>,
    args: Args,
) -> Result<CallToolResult, Failure> {
    let rel = state.relative(&args.path)?;
    let actions = [Action::Path {
        op: PathOp::Write,
        path: rel.clone(),
    }];
    let passed = gate::decide(state, peer, NAME, &actions).await?;
    let confirmed = passed.confirmed();
    let result = {
        let state = Arc::clone(state);
        let set = Arc::clone(&passed.set);
        let rel = rel.clone();
        blocking(move || {
            let before = read_text(&state, &rel)?.ok_or_else(|| {
                ToolError::new(format!(
                    "{rel}: no such file; edit_file changes existing files (use write_file to create one)"
                ))
            })?;
            let after = replace(
                &rel,
                &before,
                &args.old_string,
                &args.new_string,
                args.replace_all,
            )?;
            let replaced = if args.replace_all {
                before.matches(args.old_string.as_str()).count()
            } else {
                1
            };
            let change = FileChange::Write {
                path: rel,
                content: after,
                base: Base::Sha256(sha256_hex(before.as_bytes())),
            };
            let mut summary = commit(&state, &set, NAME, &[change], confirmed)?;
            summary["replaced"] = replaced.into();
            Ok(summary)
        })
        .await
    };
    passed.finish(state, NAME, &actions, result).map(|s| {
        let n = s["replaced"].as_u64().unwrap_or(1);
        done(format!("edited {rel} ({n} replacement(s))"), s)
    })
}
