//! Every tool call in the hash-chained decision log, in the record shape the agent hooks
//! write (`contextos hook`), so `contextos log` shows MCP calls beside hook decisions:
//! agent `mcp`, event `tools/call`, the tool's name, the judged actions and the session.

use crate::hook::judge::Judgement;
use contextos_engine::effects::decision_log::{self, DecisionRecord, LogOptions};
use contextos_engine::effects::user_key;
use contextos_engine::emit::Action;
use std::path::Path;
use std::time::{Duration, Instant};

/// The active log is sealed into a segment beyond this size (as the hooks do).
const ROTATE_BYTES: u64 = 8 << 20;
/// A stuck log lock costs a record (with a warning on stderr), never the tool call.
const LOG_LOCK_WAIT: Duration = Duration::from_millis(500);

/// One call as it is logged.
#[derive(Debug)]
pub struct Entry<'a> {
    pub tool: &'a str,
    pub session: &'a str,
    pub actions: &'a [Action],
    pub judgement: &'a Judgement,
    /// What the agent was told, in the hooks' words: `pass`, `allow`, `ask`, `deny`.
    pub verdict: &'a str,
    /// What came of it: `done`, `denied`, `refused: …`, `confirmed`, `failed: …`.
    pub outcome: &'a str,
    pub started: Instant,
}

/// Appends the record; a log that cannot be written is reported on stderr, not fatal
/// (blocking every call would let anyone who can break the log stop all work — the
/// hooks make the same choice).
pub fn record(root: &Path, e: &Entry<'_>) {
    let actions: Vec<serde_json::Value> = e
        .actions
        .iter()
        .map(|a| match a {
            Action::Shell { line } => serde_json::json!({"shell": line}),
            Action::PowerShell { line } => serde_json::json!({"powershell": line}),
            Action::Path { op, path } => serde_json::json!({"path": path, "op": op.as_str()}),
            Action::Fetch { url } => serde_json::json!({"fetch": url}),
            Action::Mcp { server, tool } => serde_json::json!({"mcp": tool, "server": server}),
        })
        .collect();
    let rec = DecisionRecord {
        agent: "mcp".into(),
        event: "tools/call".into(),
        tool: e.tool.to_string(),
        request: serde_json::json!({
            "actions": actions,
            "session": e.session,
            "outcome": e.outcome,
        }),
        verdict: e.verdict.to_string(),
        rules: e.judgement.rules(),
        duration_us: u64::try_from(e.started.elapsed().as_micros()).unwrap_or(u64::MAX),
    };
    let opts = LogOptions {
        key_path: user_key::default_path(),
        rotate_bytes: ROTATE_BYTES,
        now: None,
        guard_timeout: LOG_LOCK_WAIT,
    };
    if let Err(err) = decision_log::append(&root.join(".contextos/state"), &rec, &opts) {
        eprintln!("contextos mcp: warning: the decision was not logged: {err}");
    }
}
