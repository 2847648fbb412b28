//! The Codex hook dialect: Claude's `PreToolUse` envelope and answer, with edits arriving
//! as `apply_patch` bodies. Codex honours only allow and deny (an ask is answered as a
//! deny that says so), and exit 2 with the reason on stderr is the block it honours
//! without parsing.

use crate::claude::hook::{claude_actions, parse_envelope, pre_tool_use};
use crate::protocol::answer::{blocked_by_exit, Decision};
use crate::protocol::apply_patch::apply_patch_actions;
use crate::protocol::dialect::Dialect;
use crate::protocol::event::{Action, HookEvent, ProtocolError};
use crate::protocol::fields::Obj;
use crate::Agent;
use serde_json::Value;

pub(crate) const DIALECT: Dialect = Dialect {
    parse,
    answer,
    failure: blocked_by_exit,
};

fn parse(obj: &Obj) -> Result<HookEvent, ProtocolError> {
    parse_envelope(obj, Agent::Codex, judged, codex_actions)
}

/// Only `PreToolUse` is judged, and it cannot ask.
fn judged(event: &str) -> Option<bool> {
    (event == "PreToolUse").then_some(false)
}

fn codex_actions(tool: &str, input: &Obj, label: &str) -> Result<Vec<Action>, ProtocolError> {
    if tool == "apply_patch" {
        apply_patch_actions(&Value::Object(input.clone()), "tool_input", label)
    } else {
        claude_actions(tool, input, label)
    }
}

fn answer(_: &HookEvent, decision: Decision, reason: &str) -> String {
    pre_tool_use(decision, reason)
}
