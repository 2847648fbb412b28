//! Every tool call in the hash-chained decision log, in the record shape the agent hooks
//! write (`contextos hook`), so `contextos log` shows MCP calls beside hook decisions:
//! agent `mcp`, event `tools/call`, the tool's name, the judged actions and the session.

use crate::hook::judge::Judgement;
use crate::hook::record;
use contextos_engine::effects::decision_log::DecisionRecord;
use contextos_engine::emit::Action;
use std::path::Path;
use std::time::Instant;

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
    let actions = record::actions(e.actions);
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
    if let Err(err) = record::append(root, &rec) {
        eprintln!("contextos mcp: warning: the decision was not logged: {err}");
    }
}
