//! `write_file {path, content}`: creates or replaces a file after the `write` path
//! verdict, in one journaled transaction.

use super::super::commit::commit;
use super::super::gate::{self, blocking};
use super::super::limits::{check_size, Failure, ToolError};
use super::super::patch::{Base, FileChange};
use super::super::reply::done;
use super::super::state::State;
use contextos_engine::emit::Action;
use contextos_engine::PathOp;
use rmcp::model::CallToolResult;
use rmcp::{Peer, RoleServer};
use std::sync::Arc;

pub const NAME: &str = "write_file";
pub const DESCRIPTION: &str = "Create or overwrite a UTF-8 text file of the project with `content` (path relative to the project root, or absolute inside it; parent directories are created). The ContextOS policies decide the write first; a denied write changes nothing and the error names the rule. The write is atomic and journaled under the project lock.";

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The file, relative to the project root (or absolute inside the project).
    pub path: String,
    /// The whole new content of the file.
    pub content: String,
}

pub async fn call(
    state: &Arc<State>,
    peer: &Peer<RoleServer>,
    args: Args,
) -> Result<CallToolResult, Failure> {
    let rel = state.relative(&args.path)?;
    check_size(&rel, args.content.len() as u64, &state.limits)?;
    if args.content.contains('\0') {
        return Err(ToolError::new(format!(
            "{rel}: content contains NUL bytes; write_file writes text only"
        ))
        .into());
    }
    let actions = [Action::Path {
        op: PathOp::Write,
        path: rel.clone(),
    }];
    let passed = gate::decide(state, peer, NAME, &actions).await?;
    let confirmed = passed.confirmed();
    let result = {
        let state = Arc::clone(state);
        let set = Arc::clone(&passed.set);
        let bytes = args.content.len();
        let change = FileChange::Write {
            path: rel.clone(),
            content: args.content,
            base: Base::Any,
        };
        blocking(move || {
            let mut summary = commit(&state, &set, NAME, &[change], confirmed)?;
            summary["bytes"] = bytes.into();
            Ok(summary)
        })
        .await
    };
    passed
        .finish(state, NAME, &actions, result)
        .map(|s| done(format!("wrote {rel}"), s))
}
