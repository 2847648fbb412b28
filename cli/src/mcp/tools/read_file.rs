//! `read_file {path, offset?, limit?}`: a text file of the project, after the `read`
//! path verdict.

use super::super::commit::read_text;
use super::super::gate::{self, blocking};
use super::super::limits::{Failure, ToolError};
use super::super::state::State;
use contextos_engine::emit::Action;
use contextos_engine::PathOp;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{Peer, RoleServer};
use std::sync::Arc;

pub const NAME: &str = "read_file";
pub const DESCRIPTION: &str = "Read a UTF-8 text file of the project (path relative to the project root, or absolute inside it). Optional `offset` (1-based first line) and `limit` (number of lines) read part of a large file. The ContextOS policies decide the read first; binary files and files over the size limit are refused with an error.";

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The file, relative to the project root (or absolute inside the project).
    pub path: String,
    /// First line to return, 1-based (default: 1).
    #[serde(default)]
    pub offset: Option<u64>,
    /// Number of lines to return (default: all).
    #[serde(default)]
    pub limit: Option<u64>,
}

pub async fn call(
    state: &Arc<State>,
    peer: &Peer<RoleServer>,
    args: Args,
) -> Result<CallToolResult, Failure> {
    let rel = state.relative(&args.path)?;
    let actions = [Action::Path {
        op: PathOp::Read,
        path: rel.clone(),
    }];
    let passed = gate::decide(state, peer, NAME, &actions).await?;
    let result = {
        let state = Arc::clone(state);
        let rel = rel.clone();
        blocking(move || {
            let text = read_text(&state, &rel)?
                .ok_or_else(|| ToolError::new(format!("{rel}: no such file")))?;
            Ok(window(&text, args.offset, args.limit))
        })
        .await
    };
    passed
        .finish(state, NAME, &actions, result)
        .map(|t| CallToolResult::success(vec![ContentBlock::text(t)]))
}

/// Lines `offset..offset+limit` (1-based), each with its line ending.
fn window(text: &str, offset: Option<u64>, limit: Option<u64>) -> String {
    if offset.is_none() && limit.is_none() {
        return text.to_string();
    }
    let skip = usize::try_from(offset.unwrap_or(1).saturating_sub(1)).unwrap_or(usize::MAX);
    let take = limit.map_or(usize::MAX, |l| usize::try_from(l).unwrap_or(usize::MAX));
    text.split_inclusive('\n').skip(skip).take(take).collect()
}

#[cfg(test)]
mod tests {
    use super::window;

    #[test]
    fn offset_and_limit_count_lines_from_one() {
        assert_eq!(window("a\nb\nc\n", Some(2), Some(1)), "b\n");
        assert_eq!(window("a\nb\nc", Some(3), None), "c");
        assert_eq!(window("a\n", Some(9), None), "");
        assert_eq!(window("a\nb\n", None, None), "a\nb\n");
    }
}
