//! What a tool call may carry, and the one error type every tool answers with.
//!
//! A tool error is an MCP tool result with `isError: true` (the model reads it and can
//! correct itself), never a JSON-RPC error and never a crash of the server: one bad call
//! must not end the agent's whole session with the boundary.

use rmcp::model::{CallToolResult, ContentBlock};

/// The default cap on a file read or written through a tool (8 MiB): larger files are
/// refused with a clear error instead of being streamed into the model's context.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 8 << 20;

/// The default cap on the text a `run` call returns per stream; the rest is cut and the
/// cut is said, so a chatty command cannot flood the agent's context.
pub const MAX_RUN_OUTPUT_BYTES: usize = 1 << 20;

/// Limits that hold for the whole server process.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_file_bytes: u64,
    /// Seconds to wait for the project lock before a write gives up.
    pub lock_timeout: u64,
}

pub use crate::support::tool_error::ToolError;

impl ToolError {
    /// The MCP form: a tool result flagged as an error, its text the message.
    pub fn into_result(self) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(self.0)])
    }
}

/// How a tool call failed: after the gate logged it (a deny, a refusal, a failed
/// commit), or before it was decided at all (bad arguments, a patch that does not
/// apply) — which the dispatcher then logs, so every call lands in the decision log.
#[derive(Debug)]
pub enum Failure {
    Logged(ToolError),
    Unlogged(ToolError),
}

impl From<ToolError> for Failure {
    fn from(e: ToolError) -> Failure {
        Failure::Unlogged(e)
    }
}

impl From<crate::support::CliError> for ToolError {
    fn from(e: crate::support::CliError) -> ToolError {
        ToolError(e.to_string())
    }
}

/// Refuses content over the cap, naming both sizes.
pub fn check_size(what: &str, len: u64, limits: &Limits) -> Result<(), ToolError> {
    if len > limits.max_file_bytes {
        return Err(ToolError(format!(
            "{what} is {len} bytes, over the limit of {} bytes; nothing was done",
            limits.max_file_bytes
        )));
    }
    Ok(())
}

/// Text content, or a clear error for binary data: a NUL byte or invalid UTF-8.
pub fn text_of(path: &str, bytes: Vec<u8>) -> Result<String, ToolError> {
    if bytes.contains(&0) {
        return Err(ToolError(format!(
            "{path} is a binary file (it contains NUL bytes); these tools handle text only"
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        ToolError(format!(
            "{path} is not UTF-8 text (invalid byte at offset {}); these tools handle text only",
            e.utf8_error().valid_up_to()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_and_invalid_utf8_are_refused_with_the_reason() {
        assert!(text_of("a", b"x\0y".to_vec())
            .unwrap_err()
            .0
            .contains("NUL"));
        assert!(text_of("a", vec![b'o', 0xff])
            .unwrap_err()
            .0
            .contains("offset 1"));
        assert_eq!(text_of("a", b"ok".to_vec()).unwrap(), "ok");
    }

    #[test]
    fn the_cap_is_inclusive() {
        let l = Limits {
            max_file_bytes: 4,
            lock_timeout: 1,
        };
        assert!(check_size("x", 4, &l).is_ok());
        assert!(check_size("x", 5, &l)
            .unwrap_err()
            .0
            .contains("over the limit of 4"));
    }
}
