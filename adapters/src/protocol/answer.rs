//! The verdict sent back, and what every dialect's answer shares: the decision words, the
//! ask that degrades to a deny where it cannot be honoured, capped reasons, and the exit-2
//! block.

use super::event::HookEvent;
use serde::Serialize;

/// The verdict to send back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// No decision: the agent's normal permission flow goes on.
    Pass,
    Allow {
        reason: String,
    },
    Ask {
        reason: String,
    },
    Deny {
        reason: String,
    },
}

/// The process output to produce: write `stdout` and `stderr` verbatim, exit with `exit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub stdout: String,
    pub stderr: String,
    pub exit: u8,
}

impl Rendered {
    /// No answer: empty output, exit 0.
    pub(crate) fn pass() -> Rendered {
        Rendered {
            stdout: String::new(),
            stderr: String::new(),
            exit: 0,
        }
    }
}

/// Reasons are cut here: Claude Code caps hook output strings at 10,000 characters and
/// drops the whole answer beyond that (fail-open), and the other agents show them in a UI.
pub(crate) const REASON_CAP: usize = 4000;

/// What a judged event is answered with (`None`: nothing at all). `Ask` where the event
/// cannot ask becomes a deny whose reason says it would have asked.
pub(crate) fn verdict(ev: &HookEvent, answer: &Answer) -> Option<(Decision, String)> {
    if ev.observe_only {
        return None;
    }
    Some(match answer {
        Answer::Pass => return None,
        Answer::Allow { reason } => (Decision::Allow, cap(reason)),
        Answer::Ask { reason } if ev.can_ask => (Decision::Ask, cap(reason)),
        Answer::Ask { reason } => (
            Decision::Deny,
            cap(&format!(
                "ContextOS would ask for confirmation here, but this hook cannot ask, so the \
                 action is denied: {reason}"
            )),
        ),
        Answer::Deny { reason } => (Decision::Deny, cap(reason)),
    })
}

/// The reason of a fail-closed answer.
pub(crate) fn failure_reason(message: &str) -> String {
    cap(&format!(
        "ContextOS could not verify this action, so it is blocked: {message}"
    ))
}

/// A fail-closed answer: `stdout` (possibly empty), the reason on stderr, and `exit`.
pub(crate) fn blocked(stdout: String, reason: &str, exit: u8) -> Rendered {
    Rendered {
        stdout,
        stderr: format!("{reason}\n"),
        exit,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    Allow,
    Ask,
    Deny,
}

impl Decision {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

/// `permissionDecision` and its reason: Claude's `PreToolUse` answer (inside its envelope)
/// and Copilot's (at the top level).
#[derive(Serialize)]
pub(crate) struct PermissionDecision<'a> {
    #[serde(rename = "permissionDecision")]
    permission_decision: &'a str,
    #[serde(
        rename = "permissionDecisionReason",
        skip_serializing_if = "Option::is_none"
    )]
    permission_decision_reason: Option<&'a str>,
}

impl<'a> PermissionDecision<'a> {
    pub(crate) fn new(decision: Decision, reason: &'a str) -> PermissionDecision<'a> {
        PermissionDecision {
            permission_decision: decision.as_str(),
            permission_decision_reason: non_empty(reason),
        }
    }
}

// Output documents are derived structs, not `json!` maps: serde_json sorts map keys, and the
// field order in each dialect is the documented one, which keeps the output byte-stable.

pub(crate) fn to_line<T: Serialize>(doc: &T) -> String {
    // Serialising these plain structs cannot fail; should it ever, an empty object still
    // parses and decides nothing, and the caller's exit code stays as chosen.
    let mut s = serde_json::to_string(doc).unwrap_or_else(|_| "{}".to_owned());
    s.push('\n');
    s
}

pub(crate) fn non_empty(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}

fn cap(reason: &str) -> String {
    if reason.chars().count() <= REASON_CAP {
        return reason.to_owned();
    }
    let mut s: String = reason.chars().take(REASON_CAP - 1).collect();
    s.push('…');
    s
}
