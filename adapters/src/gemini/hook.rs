//! The Gemini CLI hook dialect (`ide-targets.md` §1.6, Gemini CLI hooks reference):
//! `BeforeTool` is judged, `AfterTool` and the other events only observed. The input
//! carries `hook_event_name`, `tool_name`, `tool_input`, `cwd`, `session_id` (and
//! `mcp_context` for MCP tools); the answer is `{"decision": "deny"|"allow", "reason": …}`
//! on stdout with exit 0. Gemini CLI cannot be asked through a hook, so an ask is a deny
//! that says so. Exit 2 with the reason on stderr blocks without parsing: the failure
//! form.

use crate::protocol::answer::{non_empty, to_line, Decision};
use crate::protocol::dialect::{Dialect, Failure};
use crate::protocol::event::{Action, Edit, HookEvent, McpEndpoint, ProtocolError};
use crate::protocol::fields::{
    args_object, edit, glob_reads, loose_str, observed, opt_owned, opt_str, path, paths_from, perr,
    req_str, shell, text_of, Obj,
};
use crate::Agent;
use contextos_core::PathOp;
use serde::Serialize;
use serde_json::Value;

pub(crate) const DIALECT: Dialect = Dialect {
    parse,
    answer,
    failure: Failure::ExitTwo,
    by_exit: false,
};

/// Where Gemini's file tools put their path (`file_path`; `absolute_path` and `path` in
/// older releases): every distinct one is judged.
const FILE_KEYS: [&str; 3] = ["file_path", "absolute_path", "path"];
/// Where its directory tools put the directory (`dir_path`; `path` in older releases).
const DIR_KEYS: [&str; 2] = ["dir_path", "path"];

fn parse(obj: &Obj) -> Result<HookEvent, ProtocolError> {
    let event = req_str(obj, "hook_event_name", "gemini hook")?.to_owned();
    let label = format!("gemini {event}");
    let (tool, actions, tool_input, edits, observe_only) = if event == "BeforeTool" {
        let tool = req_str(obj, "tool_name", &label)?;
        let label = format!("{label} {tool}");
        let input = args_object(obj.get("tool_input"), "tool_input", &label)?;
        let actions = gemini_actions_in(obj, tool, &input, &label)?;
        let edits = gemini_edits(tool, &input);
        (tool.to_owned(), actions, Some(input), edits, false)
    } else if event == "AfterTool" {
        let (tool, actions) = observed(obj, "tool_name", "tool_input", &event, gemini_actions);
        (tool, actions, None, Vec::new(), true)
    } else {
        // SessionStart, BeforeAgent, BeforeModel, Notification…: nothing to veto.
        (event.clone(), Vec::new(), None, Vec::new(), true)
    };
    Ok(HookEvent {
        agent: Agent::Gemini,
        tool,
        actions,
        cwd: opt_owned(obj, "cwd", &label)?,
        roots: Vec::new(),
        session: loose_str(obj, "session_id"),
        tool_input,
        can_ask: false,
        observe_only,
        // Gemini CLI's hook input carries no approval mode.
        permission_mode: None,
        edits,
        event,
    })
}

/// [`gemini_actions`], with the MCP server named by `mcp_context` where the tool name
/// does not carry it.
fn gemini_actions_in(
    obj: &Obj,
    tool: &str,
    input: &Obj,
    label: &str,
) -> Result<Vec<Action>, ProtocolError> {
    let mut actions = gemini_actions(tool, input, label)?;
    if actions.is_empty() {
        if let Some(Value::Object(ctx)) = obj.get("mcp_context") {
            let server = ["server_name", "serverName", "server"]
                .iter()
                .find_map(|k| loose_str(ctx, k));
            actions.push(Action::Mcp {
                server,
                tool: tool.to_owned(),
                args: Some(Value::Object(input.clone())),
                endpoint: McpEndpoint::Named,
            });
        }
    }
    Ok(actions)
}

fn gemini_actions(tool: &str, input: &Obj, label: &str) -> Result<Vec<Action>, ProtocolError> {
    let label = &format!("{label} tool_input");
    Ok(match tool {
        "run_shell_command" => {
            let command = req_str(input, "command", label)?;
            // The command runs in `dir_path` (`directory` in older releases): judged as
            // if it changed there first, so relative paths land where they will.
            let here = |d: &&str| !d.is_empty() && *d != ".";
            let dir = match opt_str(input, "dir_path", label)?.filter(here) {
                Some(d) => Some(d),
                None => opt_str(input, "directory", label)?.filter(here),
            };
            match dir {
                Some(d) => vec![shell(&format!(
                    "cd {} && {command}",
                    contextos_shell::quote(&[d.to_owned()])
                ))],
                None => vec![shell(command)],
            }
        }
        "write_file" | "replace" => paths_from(input, &FILE_KEYS, PathOp::Write, true, label)?,
        "read_file" => paths_from(input, &FILE_KEYS, PathOp::Read, true, label)?,
        "read_many_files" => many_reads(input, label)?,
        "list_directory" => paths_from(input, &DIR_KEYS, PathOp::Read, true, label)?,
        "glob" => glob_reads(input, &DIR_KEYS, "pattern", false, label)?,
        // ripgrep-style include filters: a glob without `/` matches file names at any depth.
        "search_file_content" | "grep_search" => {
            glob_reads(input, &DIR_KEYS, "include", true, label)?
        }
        "web_fetch" => fetches(input, label)?,
        "google_web_search" => vec![Action::Search {
            query: req_str(input, "query", label)?.to_owned(),
        }],
        t if t.starts_with("mcp__") => vec![crate::claude::hook::claude_mcp(t, input)],
        _ => Vec::new(),
    })
}

/// `read_many_files`: every entry of `include` (`paths` in older releases), each a path or
/// a glob, read relative to the working directory. At least one must be given.
fn many_reads(input: &Obj, label: &str) -> Result<Vec<Action>, ProtocolError> {
    let mut out = Vec::new();
    for key in ["include", "paths"] {
        match input.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for v in items {
                    let Value::String(p) = v else {
                        return Err(perr(format!("{label}: `{key}` holds a non-string")));
                    };
                    let a = path(PathOp::Read, p.trim());
                    if !p.trim().is_empty() && !out.contains(&a) {
                        out.push(a);
                    }
                }
            }
            Some(Value::String(p)) if !p.trim().is_empty() => {
                out.push(path(PathOp::Read, p.trim()))
            }
            Some(_) => return Err(perr(format!("{label}: `{key}` is not a list of paths"))),
        }
    }
    if out.is_empty() {
        return Err(perr(format!(
            "{label}: no file path (expected `include` or `paths`)"
        )));
    }
    Ok(out)
}

/// `web_fetch`: the URLs its `prompt` names (the tool fetches every `http://` and
/// `https://` URL in it), and a `url` field where one is sent.
fn fetches(input: &Obj, label: &str) -> Result<Vec<Action>, ProtocolError> {
    let mut out = Vec::new();
    if let Some(u) = opt_str(input, "url", label)?.filter(|u| !u.is_empty()) {
        out.push(Action::Fetch { url: u.to_owned() });
    }
    let prompt = opt_str(input, "prompt", label)?.unwrap_or_default();
    for word in
        prompt.split(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | '"' | '\'' | '`'))
    {
        let Some(start) = word.find("http://").or_else(|| word.find("https://")) else {
            continue;
        };
        let url = word[start..].trim_end_matches(['.', ',', ';', ':', ')', ']', '}', '!', '?']);
        let a = Action::Fetch {
            url: url.to_owned(),
        };
        if !out.contains(&a) {
            out.push(a);
        }
    }
    if out.is_empty() && prompt.trim().is_empty() {
        return Err(perr(format!("{label}: `prompt` is missing")));
    }
    Ok(out)
}

/// What `write_file` (the whole file) and `replace` (`old_string` → `new_string`) put in.
fn gemini_edits(tool: &str, input: &Obj) -> Vec<Edit> {
    let Some(file) = FILE_KEYS
        .iter()
        .find_map(|k| text_of(input, &[k]).filter(|p| !p.is_empty()))
    else {
        return Vec::new();
    };
    match tool {
        "write_file" => text_of(input, &["content"])
            .map(|c| vec![edit(file, "", c, true)])
            .unwrap_or_default(),
        "replace" => match text_of(input, &["new_string"]) {
            Some(new) => vec![edit(
                file,
                text_of(input, &["old_string"]).unwrap_or_default(),
                new,
                false,
            )],
            None => Vec::new(),
        },
        _ => Vec::new(),
    }
}

fn answer(_event: &str, decision: Decision, reason: &str) -> String {
    to_line(&GeminiOut {
        // `Ask` never reaches here: no Gemini event can ask.
        decision: match decision {
            Decision::Allow => "allow",
            Decision::Ask | Decision::Deny => "deny",
        },
        reason: non_empty(reason),
    })
}

#[derive(Serialize)]
struct GeminiOut<'a> {
    decision: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render;
    use crate::test_support::hooks::*;
    use PathOp::{Read, Write};

    #[test]
    fn gemini_fixtures() {
        check(Agent::Gemini);
    }

    #[test]
    fn gemini_answers() {
        let e = fixture(Agent::Gemini, "before-shell-rm-home.json");
        assert_eq!(
            render(&e, &deny("[CTX-1] no")),
            out(r#"{"decision":"deny","reason":"[CTX-1] no"}"#)
        );
        assert_eq!(render(&e, &allow("")), out(r#"{"decision":"allow"}"#));
        assert_eq!(
            render(&e, &ask("sure?")),
            out(&format!(
                r#"{{"decision":"deny","reason":"{WOULD_ASK}sure?"}}"#
            ))
        );
        let after = fixture(Agent::Gemini, "after-tool-shell.json");
        assert_eq!(render(&after, &deny("x")), crate::Rendered::pass());
        let f = crate::render_failure(Agent::Gemini, "boom");
        assert_eq!((f.exit, f.stdout.as_str()), (2, ""));
        assert!(f.stderr.contains("boom"));
    }

    #[test]
    fn gemini_tool_inputs() {
        let e = parsed(Agent::Gemini, br#"{"hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"rm -rf hooks","dir_path":".git"}}"#);
        assert_eq!(e.actions, vec![sh("cd .git && rm -rf hooks")]);
        let e = parsed(Agent::Gemini, br#"{"hook_event_name":"BeforeTool","tool_name":"replace","tool_input":{"file_path":"/repo/a.rs","old_string":"a","new_string":"b"}}"#);
        assert_eq!(e.actions, vec![p(Write, "/repo/a.rs")]);
        assert_eq!(
            e.edits,
            vec![crate::protocol::fields::edit("/repo/a.rs", "a", "b", false)]
        );
        let e = parsed(Agent::Gemini, br#"{"hook_event_name":"BeforeTool","tool_name":"read_file","tool_input":{"absolute_path":"/repo/x","file_path":"/repo/.env"}}"#);
        assert_eq!(e.actions, vec![p(Read, "/repo/.env"), p(Read, "/repo/x")]);
        let e = parsed(Agent::Gemini, br#"{"hook_event_name":"BeforeTool","tool_name":"web_fetch","tool_input":{"prompt":"Summarise https://a.example/x, and (http://b.example/y)."}}"#);
        assert_eq!(
            e.actions,
            vec![
                Action::Fetch {
                    url: "https://a.example/x".into()
                },
                Action::Fetch {
                    url: "http://b.example/y".into()
                }
            ]
        );
        let e = parsed(Agent::Gemini, br#"{"hook_event_name":"BeforeTool","tool_name":"create_issue","tool_input":{"title":"t"},"mcp_context":{"server_name":"github"}}"#);
        assert_eq!(
            e.actions.iter().map(without_args).collect::<Vec<_>>(),
            vec![mcp(Some("github"), "create_issue")]
        );
        // A tool ContextOS has no reading for is passed, not blocked.
        let e = parsed(Agent::Gemini, br#"{"hook_event_name":"BeforeTool","tool_name":"save_memory","tool_input":{"fact":"x"}}"#);
        assert!(e.actions.is_empty() && !e.observe_only);
    }

    #[test]
    fn gemini_missing_or_mistyped_fields() {
        refuses(
            Agent::Gemini,
            &[
                (
                    r#"{"tool_name":"read_file"}"#,
                    "`hook_event_name` is missing",
                ),
                (
                    r#"{"hook_event_name":"BeforeTool","tool_input":{}}"#,
                    "`tool_name` is missing",
                ),
                (
                    r#"{"hook_event_name":"BeforeTool","tool_name":"read_file"}"#,
                    "`tool_input` is missing",
                ),
                (
                    r#"{"hook_event_name":"BeforeTool","tool_name":"read_file","tool_input":{}}"#,
                    "no file path",
                ),
                (
                    r#"{"hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":7}}"#,
                    "`command` is not a string",
                ),
                (
                    r#"{"hook_event_name":"BeforeTool","tool_name":"read_many_files","tool_input":{"include":[1]}}"#,
                    "non-string",
                ),
                (
                    r#"{"hook_event_name":"BeforeTool","tool_name":"read_many_files","tool_input":{}}"#,
                    "no file path",
                ),
                (
                    r#"{"hook_event_name":"BeforeTool","tool_name":"web_fetch","tool_input":{}}"#,
                    "`prompt` is missing",
                ),
            ],
        );
    }
}
