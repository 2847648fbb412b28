//! The Codex hook dialect: Claude's `PreToolUse` envelope and answer, with edits arriving
//! as `apply_patch` bodies. Codex honours only allow and deny (an ask is answered as a
//! deny that says so), and exit 2 with the reason on stderr is the block it honours
//! without parsing.

use crate::claude::hook::{claude_actions, claude_edits, parse_envelope, pre_tool_use};
use crate::protocol::apply_patch::{apply_patch_actions, apply_patch_edits};
use crate::protocol::dialect::{Dialect, Failure};
use crate::protocol::event::{Action, Edit, ProtocolError};
use crate::protocol::fields::Obj;
use crate::Agent;
use serde_json::Value;

pub(crate) const DIALECT: Dialect = Dialect {
    parse: |obj| parse_envelope(obj, Agent::Codex, judged, codex_actions, codex_edits),
    answer: pre_tool_use,
    failure: Failure::ExitTwo,
    by_exit: false,
};

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

fn codex_edits(tool: &str, input: &Obj) -> Vec<Edit> {
    if tool == "apply_patch" {
        apply_patch_edits(&Value::Object(input.clone()))
    } else {
        claude_edits(tool, input)
    }
}
