//! The error every MCP tool answers with, apart from the server (`mcp::limits` turns it
//! into a tool result): the patch applier in [`super::patch`] returns it too, and that
//! applier is built without the `docker` feature, for `contextos::fuzzing`.

/// Why a tool call did nothing (or, for `run`, why it did not run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError(pub String);

impl ToolError {
    pub fn new(message: impl Into<String>) -> ToolError {
        ToolError(message.into())
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
