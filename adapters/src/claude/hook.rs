//! The Claude Code hook dialect (`ide-targets.md` §1.1.3): `PreToolUse` and
//! `PermissionRequest` events in, `hookSpecificOutput` out, exit 2 to block on failure.
//! Codex speaks the same envelope ([`parse_envelope`], [`pre_tool_use`]).

use crate::protocol::answer::{to_line, Decision, PermissionDecision};
use crate::protocol::dialect::{Dialect, Failure};
use crate::protocol::event::{Action, Edit, HookEvent, McpEndpoint, ProtocolError};
use crate::protocol::fields::{
    args_object, edit, glob_reads, loose_str, observed, opt_owned, path, req_str, shell, text_of,
    Obj, ToolActions,
};
use crate::Agent;
use contextos_core::PathOp;
use serde::Serialize;

pub(crate) const DIALECT: Dialect = Dialect {
    parse,
    answer,
    // Exit 2 blocks in Claude Code, in VS Code's agent hooks and in the Copilot CLI (whose
    // `preToolUse` command hooks fail closed on non-zero exits), so a failure blocks
    // whichever of them started `contextos hook claude`.
    failure: Failure::ExitTwo,
    by_exit: false,
};

/// Who sent an event to `contextos hook claude`. `.claude/settings.json` is read by more
/// than Claude Code, and each caller has its own payload: told apart by the payload alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Caller {
    /// Claude Code: `hook_event_name`, Claude's tool and argument names.
    ClaudeCode,
    /// VS Code's agent hooks: `hookEventName` (camelCase key), VS Code's tool names.
    VsCode,
    /// The Copilot CLI: Claude's envelope and (renamed) tool names, but Copilot's own
    /// argument names (`Read` with `path`) or its own tool names, and an ISO `timestamp`
    /// Claude Code does not send.
    CopilotCli,
}

/// The caller, from the payload's keys. Only positive evidence moves an event off Claude
/// Code's reading, and every reading fails closed on fields it needs and cannot find.
pub(crate) fn caller(obj: &Obj) -> Caller {
    if crate::claude::vscode::is_payload(obj) {
        return Caller::VsCode;
    }
    let tool = obj.get("tool_name").and_then(serde_json::Value::as_str);
    let input = obj.get("tool_input").and_then(serde_json::Value::as_object);
    // Claude's file tools name their file `file_path`; the Copilot CLI keeps `path`.
    let copilot_args = matches!(tool, Some("Read" | "Write" | "Edit" | "MultiEdit"))
        && input.is_some_and(|i| i.contains_key("path") && !i.contains_key("file_path"));
    // Claude Code's tools are PascalCase (or `mcp__…`); Copilot's own are lowercase.
    let copilot_tool = tool.is_some_and(|t| {
        matches!(
            t,
            "bash"
                | "powershell"
                | "view"
                | "create"
                | "edit"
                | "str_replace_editor"
                | "apply_patch"
                | "glob"
                | "grep"
                | "web_fetch"
        )
    });
    // Claude Code always sends `transcript_path` and never a `timestamp`.
    let copilot_common = obj.contains_key("timestamp") && !obj.contains_key("transcript_path");
    if copilot_args || copilot_tool || copilot_common {
        Caller::CopilotCli
    } else {
        Caller::ClaudeCode
    }
}

fn parse(obj: &Obj) -> Result<HookEvent, ProtocolError> {
    match caller(obj) {
        Caller::ClaudeCode => {
            parse_envelope(obj, Agent::Claude, judged, claude_actions, claude_edits)
        }
        Caller::VsCode => super::vscode::parse(obj),
        // Decoded and answered as Copilot: its PascalCase (Claude-compatible) events get
        // an answer both Copilot and Claude's envelope readers take.
        Caller::CopilotCli => crate::copilot::hook::parse_object(obj),
    }
}

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
    edits: fn(&str, &Obj) -> Vec<Edit>,
) -> Result<HookEvent, ProtocolError> {
    let name = agent.as_str();
    let event = req_str(obj, "hook_event_name", &format!("{name} hook"))?.to_owned();
    let can_ask = judged(&event);
    let label = format!("{name} {event}");
    let (tool, actions, tool_input, edits) = if can_ask.is_some() {
        let tool = req_str(obj, "tool_name", &label)?;
        let label = format!("{label} {tool}");
        let input = args_object(obj.get("tool_input"), "tool_input", &label)?;
        let acts = actions(tool, &input, &label)?;
        let e = edits(tool, &input);
        (tool.to_owned(), acts, Some(input), e)
    } else {
        let (tool, acts) = observed(obj, "tool_name", "tool_input", &event, actions);
        (tool, acts, None, Vec::new())
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
        // Sent by Claude Code and Codex on every event. Read strictly: a mode that cannot
        // be read must not pass for `default`, where silence stays silence.
        permission_mode: if can_ask.is_some() {
            opt_owned(obj, "permission_mode", &label)?
        } else {
            loose_str(obj, "permission_mode")
        },
        edits,
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
        // Monitor runs its command in the background under Bash's permission rules.
        "Bash" | "Monitor" => vec![shell(req_str(input, "command", label)?)],
        "PowerShell" => vec![Action::PowerShell {
            line: req_str(input, "command", label)?.to_owned(),
        }],
        "Write" | "Edit" | "MultiEdit" => {
            vec![path(PathOp::Write, req_str(input, "file_path", label)?)]
        }
        "NotebookEdit" => vec![path(PathOp::Write, req_str(input, "notebook_path", label)?)],
        "Read" => vec![path(PathOp::Read, req_str(input, "file_path", label)?)],
        // Judged by the directory searched and by the glob that picks its files: Glob's
        // `pattern` (relative to `path`), Grep's `glob` filter (ripgrep: a glob without a
        // `/` matches file names at any depth).
        "Glob" => glob_reads(input, &["path"], "pattern", false, label)?,
        "Grep" => glob_reads(input, &["path"], "glob", true, label)?,
        "WebFetch" => vec![Action::Fetch {
            url: req_str(input, "url", label)?.to_owned(),
        }],
        "WebSearch" => vec![Action::Search {
            query: req_str(input, "query", label)?.to_owned(),
        }],
        t if t.starts_with("mcp__") => vec![claude_mcp(t, input)],
        _ => Vec::new(),
    })
}

/// What Claude's file tools write: Write's `content` (the whole file), Edit's
/// `old_string`/`new_string`, every `edits[]` entry of MultiEdit.
pub(crate) fn claude_edits(tool: &str, input: &Obj) -> Vec<Edit> {
    let Some(file) = text_of(input, &["file_path"]) else {
        return Vec::new();
    };
    match tool {
        "Write" => text_of(input, &["content"])
            .map(|c| vec![edit(file, "", c, true)])
            .unwrap_or_default(),
        "Edit" => match text_of(input, &["new_string"]) {
            Some(new) => vec![edit(
                file,
                text_of(input, &["old_string"]).unwrap_or_default(),
                new,
                false,
            )],
            None => Vec::new(),
        },
        "MultiEdit" => input
            .get("edits")
            .and_then(serde_json::Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(serde_json::Value::as_object)
                    .filter_map(|e| {
                        let new = text_of(e, &["new_string"])?;
                        let old = text_of(e, &["old_string"]).unwrap_or_default();
                        Some(edit(file, old, new, false))
                    })
                    .collect()
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// `mcp__<server>__<tool>`; the server is the part up to the first `__` after the prefix.
pub(crate) fn claude_mcp(name: &str, input: &Obj) -> Action {
    let rest = name.strip_prefix("mcp__").unwrap_or(name);
    let args = Some(serde_json::Value::Object(input.clone()));
    match rest.split_once("__") {
        Some((server, tool)) if !server.is_empty() && !tool.is_empty() => Action::Mcp {
            server: Some(server.to_owned()),
            tool: tool.to_owned(),
            args,
            endpoint: McpEndpoint::Named,
        },
        _ => Action::Mcp {
            server: None,
            tool: rest.to_owned(),
            args,
            endpoint: McpEndpoint::Named,
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
    use crate::protocol::fields::edit;
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
            without_args(&claude_mcp("mcp__memory__create_entities", &Obj::new())),
            mcp(Some("memory"), "create_entities")
        );
        assert_eq!(
            without_args(&claude_mcp("mcp__plugin_x__tool__odd", &Obj::new())),
            mcp(Some("plugin_x"), "tool__odd")
        );
        assert_eq!(
            without_args(&claude_mcp("mcp__lonely", &Obj::new())),
            mcp(None, "lonely")
        );
    }

    #[test]
    fn bom_is_tolerated() {
        let mut bytes = b"\xef\xbb\xbf".to_vec();
        bytes.extend_from_slice(br#"{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/repo/a"}}"#);
        let e = parse_event(Agent::Claude, &bytes).unwrap();
        assert_eq!(e.actions, vec![p(Read, "/repo/a")]);
    }

    #[test]
    fn the_caller_is_told_by_the_payload() {
        let c = |s: &str| caller(&serde_json::from_str(s).unwrap());
        assert_eq!(
            c(
                r#"{"hook_event_name":"PreToolUse","transcript_path":"/t","tool_name":"Read","tool_input":{"file_path":"a"}}"#
            ),
            Caller::ClaudeCode
        );
        // Without evidence, Claude Code's reading (which fails closed) stays.
        assert_eq!(c(r#"{"tool_name":"Read"}"#), Caller::ClaudeCode);
        assert_eq!(
            c(r#"{"hookEventName":"PreToolUse","tool_name":"read_file","tool_input":{}}"#),
            Caller::VsCode
        );
        for copilot in [
            r#"{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"path":"a"}}"#,
            r#"{"hook_event_name":"PreToolUse","tool_name":"view","tool_input":{"path":"a"}}"#,
            r#"{"hook_event_name":"PreToolUse","timestamp":"2026-01-01T00:00:00Z","tool_name":"Bash","tool_input":{"command":"ls"}}"#,
        ] {
            assert_eq!(c(copilot), Caller::CopilotCli, "{copilot}");
        }
    }

    /// VS Code's payloads through `contextos hook claude`: its tool names read, Claude's
    /// envelope answered.
    #[test]
    fn vscode_payloads_are_read_and_answered_in_claudes_envelope() {
        let e = fixture(Agent::Claude, "vscode-replace-string.json");
        assert_eq!(e.edits.len(), 1);
        assert!(e.edits[0].added.contains("postinstall") && !e.edits[0].whole);
        assert_eq!(
            render(&e, &deny("no")),
            out(
                r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}"#
            )
        );
        assert_eq!(
            render(&e, &ask("sure?")),
            out(
                r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"sure?"}}"#
            )
        );
        let multi = parsed(Agent::Claude, br#"{"hookEventName":"PreToolUse","tool_name":"multi_replace_string_in_file","tool_input":{"replacements":[{"filePath":"a.ts","oldString":"1","newString":"2"},{"filePath":"b.ts","oldString":"3","newString":"4"}]}}"#);
        assert_eq!(
            multi.actions,
            vec![p(PathOp::Write, "a.ts"), p(PathOp::Write, "b.ts")]
        );
        assert_eq!(multi.edits.len(), 2);
        let unknown = parsed(Agent::Claude, br#"{"hookEventName":"PreToolUse","tool_name":"some_new_tool","tool_input":{"filePath":"x"}}"#);
        assert_eq!(unknown.actions, vec![p(Read, "x"), p(PathOp::Write, "x")]);
        let fetch = parsed(Agent::Claude, br#"{"hookEventName":"PreToolUse","tool_name":"fetch_webpage","tool_input":{"urls":["https://a.example"],"query":"q"}}"#);
        assert_eq!(
            fetch.actions,
            vec![Action::Fetch {
                url: "https://a.example".into()
            }]
        );
        refuses(
            Agent::Claude,
            &[
                (
                    r#"{"hookEventName":"PreToolUse","tool_name":"run_in_terminal","tool_input":{}}"#,
                    "`command` is missing",
                ),
                (
                    r#"{"hookEventName":"PreToolUse","tool_name":"read_file","tool_input":{}}"#,
                    "no file path",
                ),
                (
                    r#"{"hookEventName":"PreToolUse","tool_input":{}}"#,
                    "`tool_name` is missing",
                ),
                (
                    r#"{"hookEventName":"PreToolUse","tool_name":"editFiles","tool_input":{"files":[1]}}"#,
                    "non-path",
                ),
            ],
        );
    }

    #[test]
    fn monitor_is_a_shell_command() {
        let e = parsed(Agent::Claude, br#"{"hook_event_name":"PreToolUse","tool_name":"Monitor","tool_input":{"command":"tail -f app.log | grep ERROR","description":"watch","timeout_ms":60000}}"#);
        assert_eq!(e.actions, vec![sh("tail -f app.log | grep ERROR")]);
        refuses(
            Agent::Claude,
            &[(
                r#"{"hook_event_name":"PreToolUse","tool_name":"Monitor","tool_input":{"description":"x"}}"#,
                "`command` is missing",
            )],
        );
    }

    #[test]
    fn searches_are_judged_by_their_globs() {
        let cases: [(&str, Vec<Action>); 7] = [
            (
                r#""Glob","tool_input":{"pattern":"secrets/**"}"#,
                vec![p(Read, "secrets/**")],
            ),
            (
                r#""Glob","tool_input":{"pattern":"*.yaml","path":"/repo/secrets/"}"#,
                vec![p(Read, "/repo/secrets/"), p(Read, "/repo/secrets/*.yaml")],
            ),
            // ripgrep's glob without a `/` matches names at any depth.
            (
                r#""Grep","tool_input":{"pattern":"key","glob":"*.pem"}"#,
                vec![p(Read, "**/*.pem")],
            ),
            (
                r#""Grep","tool_input":{"pattern":"key","glob":"secrets/*.yaml","path":"/repo"}"#,
                vec![p(Read, "/repo"), p(Read, "/repo/secrets/*.yaml")],
            ),
            (
                r#""Grep","tool_input":{"pattern":"key","glob":"**/*.pem","type":"js"}"#,
                vec![p(Read, "**/*.pem")],
            ),
            // An exclusion searches everything else.
            (
                r#""Grep","tool_input":{"pattern":"key","glob":"!*.md","path":"src"}"#,
                vec![p(Read, "src"), p(Read, "src/**")],
            ),
            (r#""Grep","tool_input":{"pattern":"key"}"#, vec![]),
        ];
        for (tail, want) in cases {
            let input = format!(r#"{{"hook_event_name":"PreToolUse","tool_name":{tail}}}"#);
            assert_eq!(
                parsed(Agent::Claude, input.as_bytes()).actions,
                want,
                "{input}"
            );
        }
        refuses(
            Agent::Claude,
            &[(
                r#"{"hook_event_name":"PreToolUse","tool_name":"Grep","tool_input":{"pattern":"x","glob":["*.pem"]}}"#,
                "`glob` is not a string",
            )],
        );
    }

    #[test]
    fn the_permission_mode_is_read_strictly_on_judged_events() {
        let e = fixture(Agent::Claude, "bash-uncovered-bypass.json");
        assert_eq!(e.permission_mode.as_deref(), Some("bypassPermissions"));
        let e = parsed(
            Agent::Claude,
            br#"{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"a"}}"#,
        );
        assert_eq!(e.permission_mode, None);
        refuses(
            Agent::Claude,
            &[(
                r#"{"hook_event_name":"PreToolUse","permission_mode":1,"tool_name":"Read","tool_input":{"file_path":"a"}}"#,
                "`permission_mode` is not a string",
            )],
        );
        let e = parsed(
            Agent::Claude,
            br#"{"hook_event_name":"Stop","permission_mode":["x"]}"#,
        );
        assert!(e.observe_only && e.permission_mode.is_none());
    }

    #[test]
    fn file_tools_carry_the_text_they_write() {
        let e = parsed(Agent::Claude, br#"{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/repo/build.rs","content":"fn main() {}"}}"#);
        assert_eq!(
            e.edits,
            vec![edit("/repo/build.rs", "", "fn main() {}", true)]
        );
        let e = fixture(Agent::Claude, "edit-package-json-postinstall.json");
        assert_eq!(e.edits.len(), 1);
        assert!(!e.edits[0].whole && e.edits[0].added.contains("postinstall"));
        assert!(!e.edits[0].removed.contains("postinstall"));
        let e = parsed(Agent::Claude, br#"{"hook_event_name":"PreToolUse","tool_name":"MultiEdit","tool_input":{"file_path":"p.json","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c","new_string":"d","replace_all":true}]}}"#);
        assert_eq!(
            e.edits,
            vec![
                edit("p.json", "a", "b", false),
                edit("p.json", "c", "d", false)
            ]
        );
        let e = fixture(Agent::Claude, "bash-cargo-test.json");
        assert!(e.edits.is_empty());
    }
}
