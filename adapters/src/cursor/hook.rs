//! The Cursor hook dialect (`ide-targets.md` §1.2.2): `beforeShellExecution`,
//! `beforeReadFile`, `beforeMCPExecution` and `preToolUse` are judged, the `after…` and
//! session events only observed; answers are `permission` documents, and a failure is a
//! deny document with exit 2.

use crate::protocol::answer::{non_empty, to_line, Decision};
use crate::protocol::dialect::{Dialect, Failure};
use crate::protocol::event::{Action, Edit, HookEvent, McpEndpoint, ProtocolError};
use crate::protocol::fields::{
    args_object, edit, glob_reads, loose_str, observed, opt_owned, path, paths_from, perr, req_str,
    shell, text_of, Obj,
};
use crate::Agent;
use contextos_core::PathOp;
use serde::Serialize;
use serde_json::Value;

pub(crate) const DIALECT: Dialect = Dialect {
    parse,
    answer,
    // Exit 2 plus a JSON deny on stdout: safe on every event, since events without a
    // `permission` field ignore it.
    failure: Failure::DenyAnswer { exit: 2 },
    by_exit: false,
};

/// Where Cursor's file tools put their path; all distinct ones are judged.
const CURSOR_PATH_KEYS: [&str; 3] = ["file_path", "path", "target_file"];
/// Where Cursor's search tools put the directory they search.
const CURSOR_SEARCH_DIR_KEYS: [&str; 4] = ["file_path", "path", "target_file", "target_directory"];

fn parse(obj: &Obj) -> Result<HookEvent, ProtocolError> {
    let event = req_str(obj, "hook_event_name", "cursor hook")?.to_owned();
    let label = format!("cursor {event}");
    let mut edits = Vec::new();
    let (tool, actions, can_ask, observe_only) = match event.as_str() {
        "beforeShellExecution" => (
            event.clone(),
            vec![shell(req_str(obj, "command", &label)?)],
            true,
            false,
        ),
        // Answers only allow|deny. `beforeTabFileRead` (Tab completion reading a file) has
        // the same input and is judged the same way.
        "beforeReadFile" | "beforeTabFileRead" => (
            event.clone(),
            vec![path(PathOp::Read, req_str(obj, "file_path", &label)?)],
            false,
            false,
        ),
        "beforeMCPExecution" => {
            let tool = req_str(obj, "tool_name", &label)?;
            (
                tool.to_owned(),
                vec![cursor_mcp(obj, tool, &label)?],
                true,
                false,
            )
        }
        // The result of an MCP call: observed for the session's taint, by the same server
        // identification as the call.
        "afterMCPExecution" => match loose_str(obj, "tool_name") {
            Some(tool) => {
                let actions = cursor_mcp(obj, &tool, &label)
                    .map(|a| vec![a])
                    .unwrap_or_default();
                (tool, actions, false, true)
            }
            None => (event.clone(), Vec::new(), false, true),
        },
        // `ask` is reportedly not honoured on preToolUse: deny instead.
        "preToolUse" => {
            let tool = req_str(obj, "tool_name", &label)?;
            let label = format!("{label} {tool}");
            let input = args_object(obj.get("tool_input"), "tool_input", &label)?;
            let actions = cursor_tool_actions(tool, &input, &label)?;
            edits = cursor_edits(tool, &input);
            (tool.to_owned(), actions, false, false)
        }
        "afterFileEdit" | "afterTabFileEdit" => {
            let actions = loose_str(obj, "file_path")
                .map(|p| vec![path(PathOp::Write, &p)])
                .unwrap_or_default();
            (event.clone(), actions, false, true)
        }
        "afterShellExecution" => {
            let actions = loose_str(obj, "command")
                .map(|c| vec![shell(&c)])
                .unwrap_or_default();
            (event.clone(), actions, false, true)
        }
        "postToolUse" | "postToolUseFailure" => {
            let (tool, actions) =
                observed(obj, "tool_name", "tool_input", &event, cursor_tool_actions);
            (tool, actions, false, true)
        }
        // sessionStart, stop, beforeSubmitPrompt, afterAgentResponse…: nothing to veto.
        _ => (event.clone(), Vec::new(), false, true),
    };
    Ok(HookEvent {
        agent: Agent::Cursor,
        tool,
        actions,
        cwd: opt_owned(obj, "cwd", &label)?,
        roots: str_array(obj, "workspace_roots", &label)?,
        session: loose_str(obj, "conversation_id"),
        tool_input: None,
        can_ask,
        observe_only,
        // Cursor's hook input carries no permission mode.
        permission_mode: None,
        edits,
        event,
    })
}

/// What Cursor's write and edit tools put into their file, where the input carries it.
fn cursor_edits(tool: &str, input: &Obj) -> Vec<Edit> {
    let whole = match tool {
        "Write" | "TabWrite" => true,
        "Edit" | "StrReplace" | "MultiEdit" => false,
        _ => return Vec::new(),
    };
    let Some(new) = text_of(
        input,
        &["contents", "content", "new_string", "streamingContent"],
    ) else {
        return Vec::new();
    };
    let old = text_of(input, &["old_string"]).unwrap_or_default();
    CURSOR_PATH_KEYS
        .iter()
        .filter_map(|k| text_of(input, &[k]).filter(|p| !p.is_empty()))
        .map(|p| edit(p, old, new, whole && old.is_empty()))
        .collect()
}

fn cursor_tool_actions(tool: &str, input: &Obj, label: &str) -> Result<Vec<Action>, ProtocolError> {
    let label = &format!("{label} tool_input");
    Ok(match tool {
        "Shell" => vec![shell(req_str(input, "command", label)?)],
        "Read" => paths_from(input, &CURSOR_PATH_KEYS, PathOp::Read, true, label)?,
        "Write" | "Edit" | "StrReplace" | "MultiEdit" | "TabWrite" => {
            paths_from(input, &CURSOR_PATH_KEYS, PathOp::Write, true, label)?
        }
        "Delete" => paths_from(input, &CURSOR_PATH_KEYS, PathOp::Delete, true, label)?,
        "Grep" | "Glob" => {
            let mut v = paths_from(input, &CURSOR_SEARCH_DIR_KEYS, PathOp::Read, false, label)?;
            // The glob a search narrows to, joined to its directory.
            let keys: &[&str] = if tool == "Glob" {
                &["glob_pattern", "pattern"]
            } else {
                &["glob"]
            };
            for key in keys {
                for a in glob_reads(input, &CURSOR_SEARCH_DIR_KEYS, key, tool == "Grep", label)? {
                    if !v.contains(&a) {
                        v.push(a);
                    }
                }
            }
            v
        }
        // The name carries no server: its arguments are judged here, the server in the
        // call's `beforeMCPExecution`, which says how the server is started.
        t => match t.strip_prefix("MCP:") {
            Some(name) if !name.is_empty() => vec![Action::Mcp {
                server: None,
                tool: name.to_owned(),
                args: Some(serde_json::Value::Object(input.clone())),
                endpoint: McpEndpoint::JudgedElsewhere,
            }],
            _ => Vec::new(),
        },
    })
}

/// The MCP call of a `beforeMCPExecution` / `afterMCPExecution` payload. Cursor documents
/// the server only by how it runs — `command` for a stdio server, `url` for a remote one —
/// so that is kept for the hook to find the project's definition it belongs to; a
/// `mcp_server_name`, where a version sends one, is kept too.
fn cursor_mcp(obj: &Obj, tool: &str, label: &str) -> Result<Action, ProtocolError> {
    let server = opt_owned(obj, "mcp_server_name", label)?;
    let args = match obj.get("tool_input") {
        // Cursor sends the arguments as a JSON string.
        Some(Value::String(t)) => serde_json::from_str(t).ok(),
        Some(v) => Some(v.clone()),
        None => None,
    };
    let endpoint = match (
        opt_owned(obj, "command", label)?,
        opt_owned(obj, "url", label)?,
    ) {
        (Some(c), _) => McpEndpoint::Command(c),
        (None, Some(u)) => McpEndpoint::Url(u),
        (None, None) => McpEndpoint::Named,
    };
    Ok(Action::Mcp {
        server,
        tool: tool.to_owned(),
        args,
        endpoint,
    })
}

/// An optional array of strings (Cursor's `workspace_roots`). The roots decide how paths are
/// relativised, so a malformed list is an error rather than an empty one.
fn str_array(obj: &Obj, key: &str, label: &str) -> Result<Vec<String>, ProtocolError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                _ => Err(perr(format!("{label}: `{key}` holds a non-string"))),
            })
            .collect(),
        Some(_) => Err(perr(format!("{label}: `{key}` is not an array"))),
    }
}

fn answer(_event: &str, decision: Decision, reason: &str) -> String {
    to_line(&CursorOut {
        permission: decision.as_str(),
        user_message: non_empty(reason),
        agent_message: non_empty(reason),
    })
}

/// Cursor 2.0+ field names (snake_case; 1.7 used camelCase).
#[derive(Serialize)]
struct CursorOut<'a> {
    permission: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    user_message: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent_message: Option<&'a str>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::fields::edit;
    use crate::render;
    use crate::test_support::hooks::*;
    use PathOp::{Read, Write};

    #[test]
    fn cursor_fixtures() {
        check(Agent::Cursor);
        assert_eq!(
            fixture(Agent::Cursor, "before-shell-rm-home.json").roots,
            vec!["/repo".to_owned()]
        );
    }

    #[test]
    fn cursor_answers() {
        let shell_ev = ev(Agent::Cursor, "beforeShellExecution", true);
        assert_eq!(
            render(&shell_ev, &deny("no")),
            out(r#"{"permission":"deny","user_message":"no","agent_message":"no"}"#)
        );
        assert_eq!(
            render(&shell_ev, &ask("sure?")),
            out(r#"{"permission":"ask","user_message":"sure?","agent_message":"sure?"}"#)
        );
        assert_eq!(
            render(&shell_ev, &allow("")),
            out(r#"{"permission":"allow"}"#)
        );
        assert_eq!(
            render(&shell_ev, &allow("ok")),
            out(r#"{"permission":"allow","user_message":"ok","agent_message":"ok"}"#)
        );
        // preToolUse and beforeReadFile cannot ask.
        for file in [
            "pretooluse-write-cursor-hooks.json",
            "before-read-ssh-key.json",
        ] {
            let e = fixture(Agent::Cursor, file);
            let m = format!("{WOULD_ASK}sure?");
            assert_eq!(
                render(&e, &ask("sure?")),
                out(&format!(
                    r#"{{"permission":"deny","user_message":"{m}","agent_message":"{m}"}}"#
                )),
                "{file}"
            );
        }
    }

    #[test]
    fn cursor_missing_or_mistyped_fields() {
        refuses(
            Agent::Cursor,
            &[
                (r#"{"command":"ls"}"#, "`hook_event_name` is missing"),
                (
                    r#"{"hook_event_name":"beforeShellExecution","cwd":"/repo"}"#,
                    "`command` is missing",
                ),
                (
                    r#"{"hook_event_name":"beforeReadFile"}"#,
                    "`file_path` is missing",
                ),
                (
                    r#"{"hook_event_name":"beforeMCPExecution"}"#,
                    "`tool_name` is missing",
                ),
                (
                    r#"{"hook_event_name":"preToolUse","tool_name":"Write"}"#,
                    "`tool_input` is missing",
                ),
                (
                    r#"{"hook_event_name":"preToolUse","tool_name":"Write","tool_input":{"contents":"x"}}"#,
                    "no file path",
                ),
                (
                    r#"{"hook_event_name":"beforeShellExecution","command":"ls","workspace_roots":"/repo"}"#,
                    "`workspace_roots` is not an array",
                ),
                (
                    r#"{"hook_event_name":"beforeShellExecution","command":"ls","workspace_roots":[1]}"#,
                    "non-string",
                ),
            ],
        );
    }

    #[test]
    fn cursor_judges_every_path_field() {
        let e = parsed(Agent::Cursor, br#"{"hook_event_name":"preToolUse","tool_name":"Edit","tool_input":{"path":"/repo/ok.txt","target_file":"/repo/.cursor/hooks.json"}}"#);
        assert_eq!(
            e.actions,
            vec![
                p(Write, "/repo/ok.txt"),
                p(Write, "/repo/.cursor/hooks.json")
            ]
        );
        // tool_input may arrive as a JSON string.
        let e = parsed(Agent::Cursor, br#"{"hook_event_name":"preToolUse","tool_name":"StrReplace","tool_input":"{\"file_path\":\"/repo/a.rs\"}"}"#);
        assert_eq!(e.actions, vec![p(Write, "/repo/a.rs")]);
        // Grep without a path judges nothing; with one, a read.
        let e = parsed(
            Agent::Cursor,
            br#"{"hook_event_name":"preToolUse","tool_name":"Grep","tool_input":{"pattern":"x"}}"#,
        );
        assert!(e.actions.is_empty() && !e.observe_only);
    }

    #[test]
    fn cursor_mcp_servers_are_known_by_how_they_run() {
        let e = parsed(Agent::Cursor, br#"{"hook_event_name":"beforeMCPExecution","tool_name":"search","tool_input":"{\"q\":\"x\"}","url":"https://mcp.example.com/sse"}"#);
        assert_eq!(
            e.actions,
            vec![Action::Mcp {
                server: None,
                tool: "search".into(),
                args: Some(serde_json::json!({"q": "x"})),
                endpoint: McpEndpoint::Url("https://mcp.example.com/sse".into()),
            }]
        );
        assert!(e.can_ask && !e.observe_only);
        // The result event is observed, with the same identification.
        let e = parsed(Agent::Cursor, br#"{"hook_event_name":"afterMCPExecution","tool_name":"get_logs","tool_input":"{}","command":"npx -y build-mcp","result_json":"{}","duration":3}"#);
        assert!(e.observe_only);
        assert!(matches!(
            e.actions.as_slice(),
            [Action::Mcp { endpoint: McpEndpoint::Command(c), .. }] if c == "npx -y build-mcp"
        ));
    }

    #[test]
    fn cursor_searches_globs_and_edit_text() {
        let e = parsed(Agent::Cursor, br#"{"hook_event_name":"preToolUse","tool_name":"Glob","tool_input":{"glob_pattern":"secrets/**","target_directory":"/repo"}}"#);
        assert_eq!(
            e.actions,
            vec![p(Read, "/repo"), p(Read, "/repo/secrets/**")]
        );
        let e = parsed(Agent::Cursor, br#"{"hook_event_name":"preToolUse","tool_name":"Grep","tool_input":{"pattern":"k","glob":"*.pem"}}"#);
        assert_eq!(e.actions, vec![p(Read, "**/*.pem")]);
        assert_eq!(e.permission_mode, None);
        let e = parsed(Agent::Cursor, br#"{"hook_event_name":"preToolUse","tool_name":"Write","tool_input":{"file_path":"/repo/build.rs","contents":"fn main() {}"}}"#);
        assert_eq!(
            e.edits,
            vec![edit("/repo/build.rs", "", "fn main() {}", true)]
        );
        let e = parsed(Agent::Cursor, br#"{"hook_event_name":"preToolUse","tool_name":"StrReplace","tool_input":{"path":"package.json","old_string":"a","new_string":"b"}}"#);
        assert_eq!(e.edits, vec![edit("package.json", "a", "b", false)]);
    }
}
