//! The shape of a successful tool result, shared by the tools that write.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

/// A successful result: a line for the model, and the machine-readable summary.
pub fn done(text: impl Into<String>, structured: Value) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(structured);
    r
}
