//! The Claude Code hook dialect (`ide-targets.md` §1.1.3): `PreToolUse` and
//! `PermissionRequest` events in, `hookSpecificOutput` out, exit 2 to block on failure.
//! Codex speaks the same envelope ([`parse_envelope`], [`pre_tool_use`]).

use crate::protocol::answer::{to_line, Decision, PermissionDecision};
use crate::protocol::dialect::{Dialect, Failure};
use crate::protocol::event::{Action, HookEvent, ProtocolError};
use crate::protocol::fields::{
    args_object, loose_str, observed, opt_owned, path, paths_from, req_str, shell, Obj, ToolActions,
};
use crate::Agent;
use contextos_core::PathOp;
use serde::Serialize;

pub(crate) const DIALECT: Dialect = Dialect {
    parse: |obj| parse_envelope(obj, Agent::Claude, judged, claude_actions),
    answer,
    failure: Failure::ExitTwo,
};

/// Whether ContextOS judges `event`, and then whether it may ask there.
fn judged(event: &str) -> Option<bool> {
    match event {
        "PreToolUse" => Some(true),
        // The permission dialog's own hook answers only allow|deny.
        "PermissionRequest" => Some(false),
        _ => None,
    }
}

/// Claude's envelope (`hook_event_name`, `tool_name`, `tool_input`, `cwd`, `session_id`),
/// sent by Claude Code and Codex. `judged` says which events ContextOS decides and whether
/// they can ask; every other event is observed only.
pub(crate) fn parse_envelope(
    obj: &Obj,
    agent: Agent,
    judged: fn(&str) -> Option<bool>,
    actions: ToolActions,
) -> Result<HookEvent, ProtocolError> {
    let name = agent.as_str();
    let event = req_str(obj, "hook_event_name", &format!("{name} hook"))?.to_owned();
    let can_ask = judged(&event);
    let label = format!("{name} {event}");
    let (tool, actions, tool_input) = if can_ask.is_some() {
        let tool = req_str(obj, "tool_name", &label)?;
        let label = format!("{label} {tool}");
        let input = args_object(obj.get("tool_input"), "tool_input", &label)?;
        let acts = actions(tool, &input, &label)?;
        (tool.to_owned(), acts, Some(input))
    } else {
        let (tool, acts) = observed(obj, "tool_name", "tool_input", &event, actions);
        (tool, acts, None)
    };
    Ok(HookEvent {
        agent,
        tool,
        actions,
        cwd: opt_owned(obj, "cwd", &label)?,
        roots: Vec::new(),
        session: loose_str(obj, "session_id"),
        tool_input,
        can_ask: can_ask.unwrap_or(false),
        observe_only: can_ask.is_none(),
        event,
    })
}

pub(crate) fn claude_actions(
    tool: &str,
    input: &Obj,
    label: &str,
) -> Result<Vec<Action>, ProtocolError> {
    let label = &format!("{label} tool_input");
    Ok(match tool {
        "Bash" => vec![shell(req_str(input, "command", label)?)],
        "PowerShell" => vec![Action::PowerShell {
            line: req_str(input, "command", label)?.to_owned(),
        }],
        "Write" | "Edit" | "MultiEdit" => {
            vec![path(PathOp::Write, req_str(input, "file_path", label)?)]
        }
        "NotebookEdit" => vec![path(PathOp::Write, req_str(input, "notebook_path", label)?)],
        "Read" => vec![path(PathOp::Read, req_str(input, "file_path", label)?)],
        // Without `path` these search the working directory: nothing specific to judge.
        "Glob" | "Grep" => paths_from(input, &["path"], PathOp::Read, false, label)?,
        "WebFetch" => vec![Action::Fetch {
            url: req_str(input, "url", label)?.to_owned(),
        }],
        t if t.starts_with("mcp__") => vec![claude_mcp(t)],
        _ => Vec::new(),
    })
}

/// `mcp__<server>__<tool>`; the server is the part up to the first `__` after the prefix.
fn claude_mcp(name: &str) -> Action {
    let rest = name.strip_prefix("mcp__").unwrap_or(name);
    match rest.split_once("__") {
        Some((server, tool)) if !server.is_empty() && !tool.is_empty() => Action::Mcp {
            server: Some(server.to_owned()),
            tool: tool.to_owned(),
        },
        _ => Action::Mcp {
            server: None,
            tool: rest.to_owned(),
        },
    }
}

fn answer(event: &str, decision: Decision, reason: &str) -> String {
    if event != "PermissionRequest" {
        return pre_tool_use(event, decision, reason);
    }
    to_line(&ClaudeOut {
        hook_specific_output: ClaudeSpecific::PermissionRequest {
            decision: ClaudeBehavior {
                behavior: match decision {
                    Decision::Allow => "allow",
                    // `Ask` never reaches here: PermissionRequest has `can_ask == false`.
                    Decision::Ask | Decision::Deny => "deny",
                },
                // `message` tells Claude why it was refused; an allow has nothing to say.
                message: (decision != Decision::Allow).then_some(reason),
            },
        },
    })
}

/// The `PreToolUse` answer (Claude Code and Codex); `event` is not looked at.
pub(crate) fn pre_tool_use(_event: &str, decision: Decision, reason: &str) -> String {
    to_line(&ClaudeOut {
        hook_specific_output: ClaudeSpecific::PreToolUse(PermissionDecision::new(decision, reason)),
    })
}

#[derive(Serialize)]
struct ClaudeOut<'a> {
    #[serde(rename = "hookSpecificOutput")]
    hook_specific_output: ClaudeSpecific<'a>,
}

#[derive(Serialize)]
#[serde(tag = "hookEventName")]
enum ClaudeSpecific<'a> {
    PreToolUse(PermissionDecision<'a>),
    PermissionRequest { decision: ClaudeBehavior<'a> },
}

#[derive(Serialize)]
struct ClaudeBehavior<'a> {
    behavior: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::hooks::*;
    use crate::{parse_event, render};
    use PathOp::Read;

    #[test]
    fn claude_fixtures() {
        check(Agent::Claude);
        assert!(fixture(Agent::Claude, "bash-rm-home.json").roots.is_empty());
    }

    #[test]
    fn claude_pre_tool_use() {
        let e = ev(Agent::Claude, "PreToolUse", true);
        assert_eq!(
            render(&e, &deny("[CTX-1] no")),
            out(
                r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"[CTX-1] no"}}"#
            )
        );
        assert_eq!(
            render(&e, &ask("sure?")),
            out(
                r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"sure?"}}"#
            )
        );
        assert_eq!(
            render(&e, &allow("rule r1 allows")),
            out(
                r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"rule r1 allows"}}"#
            )
        );
        assert_eq!(
            render(&e, &allow("")),
            out(
                r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}"#
            )
        );
        // Quotes and newlines are escaped.
        assert_eq!(
            render(&e, &deny("a \"b\"\nc")),
            out(
                r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"a \"b\"\nc"}}"#
            )
        );
    }

    #[test]
    fn claude_permission_request() {
        let e = fixture(Agent::Claude, "permission-request-git-push-force.json");
        assert_eq!(
            render(&e, &deny("no force push")),
            out(
                r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"no force push"}}}"#
            )
        );
        assert_eq!(
            render(&e, &allow("ok")),
            out(
                r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}"#
            )
        );
        assert_eq!(
            render(&e, &ask("sure?")),
            out(&format!(
                r#"{{"hookSpecificOutput":{{"hookEventName":"PermissionRequest","decision":{{"behavior":"deny","message":"{WOULD_ASK}sure?"}}}}}}"#
            ))
        );
    }

    #[test]
    fn claude_missing_or_mistyped_fields() {
        refuses(
            Agent::Claude,
            &[
                (r#"{"tool_name":"Bash"}"#, "`hook_event_name` is missing"),
                (
                    r#"{"hook_event_name":"PreToolUse","tool_name":"Bash"}"#,
                    "`tool_input` is missing",
                ),
                (
                    r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":null}"#,
                    "`tool_input` is missing",
                ),
                (
                    r#"{"hook_event_name":"PreToolUse","tool_input":{"command":"ls"}}"#,
                    "`tool_name` is missing",
                ),
                (
                    r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{}}"#,
                    "`command` is missing",
                ),
                (
                    r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":["rm","-rf","/"]}}"#,
                    "`command` is not a string",
                ),
                (
                    r#"{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":""}}"#,
                    "`file_path` is empty",
                ),
                (
                    r#"{"hook_event_name":"PreToolUse","tool_name":"Grep","tool_input":{"pattern":"x","path":7}}"#,
                    "`path` is not a string",
                ),
                (
                    r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":"ls"}"#,
                    "not JSON",
                ),
            ],
        );
    }

    #[test]
    fn claude_observe_only_tolerates_anything() {
        let e = parsed(
            Agent::Claude,
            br#"{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{}}"#,
        );
        assert!(e.observe_only && e.actions.is_empty());
        let e = parsed(
            Agent::Claude,
            br#"{"hook_event_name":"SessionStart","source":"startup"}"#,
        );
        assert_eq!(
            (e.event.as_str(), e.tool.as_str()),
            ("SessionStart", "SessionStart")
        );
        assert!(e.observe_only && !e.can_ask);
    }

    #[test]
    fn claude_mcp_names() {
        assert_eq!(
            claude_mcp("mcp__memory__create_entities"),
            mcp(Some("memory"), "create_entities")
        );
        assert_eq!(
            claude_mcp("mcp__plugin_x__tool__odd"),
            mcp(Some("plugin_x"), "tool__odd")
        );
        assert_eq!(claude_mcp("mcp__lonely"), mcp(None, "lonely"));
    }

    #[test]
    fn bom_is_tolerated() {
        let mut bytes = b"\xef\xbb\xbf".to_vec();
        bytes.extend_from_slice(br#"{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/repo/a"}}"#);
        let e = parse_event(Agent::Claude, &bytes).unwrap();
        assert_eq!(e.actions, vec![p(Read, "/repo/a")]);
    }
}
