//! Requests given as JSON — `decide --request`, `diff --corpus` — and the requests the
//! decision log recorded (`diff --log`).
//!
//! A request is the JSON a decision reports under `request`: `{"domain": "path", "op":
//! "write", "path": "src/a.rs", "role": "dev"}`, `{"domain": "exec", "argv": ["git",
//! "push"]}`, … An exec request may give `"shell": "LINE"` instead of `argv`, decided as
//! `decide exec --shell` decides it. One JSON document, or one request per line (JSONL).

use crate::support::CliError;
use contextos_engine::core::diff::Probe;
use contextos_engine::effects::decision_log::LoggedRecord;
use contextos_engine::{McpRequest, NetOp, NetRequest, PathOp, Request, RequestKind};
use serde_json::Value;

/// Reads the requests of `text` (named `name` in errors): one JSON document, or JSONL.
pub fn parse(name: &str, text: &str) -> Result<Vec<Probe>, CliError> {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return Ok(vec![
            probe(&v).map_err(|e| CliError::Input(format!("{name}: {e}")))?
        ]);
    }
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line)
            .map_err(|e| CliError::Input(format!("{name}:{}: not JSON: {e}", i + 1)))?;
        out.push(probe(&v).map_err(|e| CliError::Input(format!("{name}:{}: {e}", i + 1)))?);
    }
    Ok(out)
}

/// One request from its JSON.
pub fn probe(v: &Value) -> Result<Probe, String> {
    if v.get("domain").and_then(Value::as_str) == Some("exec") {
        if let Some(line) = v.get("shell").and_then(Value::as_str) {
            let role = match v.get("role") {
                None | Some(Value::Null) => None,
                Some(Value::String(r)) => Some(r.clone()),
                Some(other) => return Err(format!("`role` must be a string, not {other}")),
            };
            return Ok(Probe::Shell {
                line: line.to_string(),
                role,
            });
        }
    }
    serde_json::from_value::<Request>(v.clone())
        .map(|r| Probe::Request(Box::new(r)))
        .map_err(|e| format!("not a request: {e}"))
}

/// The role a probe carries.
pub fn role_of(p: &Probe) -> Option<&str> {
    match p {
        Probe::Shell { role, .. } => role.as_deref(),
        Probe::Request(r) => r.role.as_deref(),
    }
}

/// The requests the decision log recorded, as far as the record keeps them: shell lines
/// and paths in full, fetched URLs without their query, MCP calls without their
/// arguments; searches are not requests to a policy and are skipped. Roles and session
/// taint are not recorded, so every request is replayed without a role, untainted.
pub fn from_log(records: &[LoggedRecord]) -> Vec<Probe> {
    let mut out = Vec::new();
    for r in records {
        let Some(actions) = r.request.get("actions").and_then(Value::as_array) else {
            continue;
        };
        for a in actions {
            let s = |k: &str| a.get(k).and_then(Value::as_str);
            if let Some(line) = s("shell") {
                out.push(Probe::Shell {
                    line: line.to_string(),
                    role: None,
                });
            } else if let (Some(path), Some(op)) = (s("path"), s("op").and_then(PathOp::parse)) {
                out.push(Probe::Request(Box::new(Request::path(op, path))));
            } else if let Some(url) = s("fetch") {
                out.push(Probe::Request(Box::new(Request::new(RequestKind::Net(
                    NetRequest {
                        op: NetOp::Fetch,
                        target: url.trim_end_matches("?…").to_string(),
                        tool: r.tool.clone(),
                        ..NetRequest::default()
                    },
                )))));
            } else if let (Some(tool), Some(server)) = (s("mcp"), s("server")) {
                out.push(Probe::Request(Box::new(Request::new(RequestKind::Mcp(
                    McpRequest {
                        server: server.to_string(),
                        tool: tool.to_string(),
                        ..McpRequest::default()
                    },
                )))));
            }
        }
    }
    out
}
