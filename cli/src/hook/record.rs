//! The decision-log record of a judged call, shared by the agent hooks (`contextos hook`)
//! and the MCP server (`contextos mcp`), so `contextos log` shows both in one shape.

use contextos_engine::effects::decision_log::{self, DecisionRecord, LogError, LogOptions};
use contextos_engine::effects::user_key;
use contextos_engine::emit::{Action, McpEndpoint};
use std::path::Path;
use std::time::Duration;

/// The active log is sealed into a segment beyond this size.
const ROTATE_BYTES: u64 = 8 << 20;
/// A stuck log lock costs a record (the caller warns), never the call it records.
const LOG_LOCK_WAIT: Duration = Duration::from_millis(500);

/// The judged actions as the log shows them.
pub fn actions(actions: &[Action]) -> Vec<serde_json::Value> {
    actions
        .iter()
        .map(|a| match a {
            Action::Shell { line } => serde_json::json!({"shell": line}),
            Action::PowerShell { line } => serde_json::json!({"powershell": line}),
            Action::Path { op, path } => serde_json::json!({"path": path, "op": op.as_str()}),
            Action::Fetch { url } => serde_json::json!({"fetch": mask_query(url)}),
            Action::Search { query } => {
                serde_json::json!({"search": query.chars().take(200).collect::<String>()})
            }
            Action::Mcp {
                server,
                tool,
                endpoint,
                ..
            } => match endpoint {
                // How the server runs names it where the agent does not.
                McpEndpoint::Command(c) => {
                    serde_json::json!({"mcp": tool, "server": server, "command": c})
                }
                McpEndpoint::Url(u) => {
                    serde_json::json!({"mcp": tool, "server": server, "url": mask_query(u)})
                }
                _ => serde_json::json!({"mcp": tool, "server": server}),
            },
        })
        .collect()
}

/// Appends `rec` to the project's hash-chained decision log.
pub fn append(root: &Path, rec: &DecisionRecord) -> Result<(), LogError> {
    let opts = LogOptions {
        key_path: user_key::default_path(),
        rotate_bytes: ROTATE_BYTES,
        now: None,
        guard_timeout: LOG_LOCK_WAIT,
    };
    decision_log::append(&root.join(".contextos/state"), rec, &opts).map(|_| ())
}

/// A URL without its query and fragment: where secrets and tokens travel, so the log
/// keeps only where the request went.
fn mask_query(url: &str) -> String {
    match url.find(['?', '#']) {
        Some(i) => format!("{}?…", &url[..i]),
        None => url.to_string(),
    }
}
