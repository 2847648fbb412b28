//! The Amazon Q Developer CLI hook dialect (`docs/hooks.md` of the CLI): the event on
//! stdin is `hook_event_name` (`agentSpawn`, `userPromptSubmit`, `preToolUse`,
//! `postToolUse`, `stop`), `cwd` and, for tool events, `tool_name` and `tool_input` (and
//! `tool_response` after the tool ran). No session id is sent. There is no output
//! document: on `preToolUse` exit 0 lets the tool run, exit 2 blocks it and returns stderr
//! to the model; any other code only warns (the tool runs), so failures exit 2 too. The
//! hook cannot ask: an ask blocks, saying so.
//!
//! Tools (the CLI's `tool_index.json`): `execute_bash` (`command`, `working_dir`),
//! `fs_read` (`operations[]` of `mode` and `path` / `image_paths`; older releases send one
//! operation flat), `fs_write` (`command`, `path`, `file_text`, `old_str`, `new_str`),
//! `glob` (`pattern`, `path`), `grep` (`pattern`, `path`, `include`), `web_fetch`
//! (`url`), `web_search` (`query`), and MCP tools as `@server/tool`.

use crate::protocol::dialect::{Dialect, Failure};
use crate::protocol::event::{Action, Edit, HookEvent, McpEndpoint, ProtocolError};
use crate::protocol::fields::{
    args_object, edit, glob_reads, observed, opt_owned, opt_str, path, paths_from, perr, req_str,
    shell, text_of, Obj,
};
use crate::Agent;
use contextos_core::PathOp;
use serde_json::Value;

pub(crate) const DIALECT: Dialect = Dialect {
    parse,
    answer: crate::protocol::dialect::no_document,
    failure: Failure::ExitTwo,
    by_exit: true,
};

fn parse(obj: &Obj) -> Result<HookEvent, ProtocolError> {
    let event = req_str(obj, "hook_event_name", "amazonq hook")?.to_owned();
    let label = format!("amazonq {event}");
    let (tool, actions, edits, observe_only) = if event == "preToolUse" {
        let tool = req_str(obj, "tool_name", &label)?;
        let label = format!("{label} {tool}");
        let input = args_object(obj.get("tool_input"), "tool_input", &label)?;
        let actions = q_actions(tool, &input, &label)?;
        (tool.to_owned(), actions, q_edits(tool, &input), false)
    } else if event == "postToolUse" {
        let (tool, actions) = observed(obj, "tool_name", "tool_input", &event, q_actions);
        (tool, actions, Vec::new(), true)
    } else {
        // agentSpawn, userPromptSubmit, stop: nothing to veto.
        (event.clone(), Vec::new(), Vec::new(), true)
    };
    Ok(HookEvent {
        agent: Agent::AmazonQ,
        tool,
        actions,
        cwd: opt_owned(obj, "cwd", &label)?,
        roots: Vec::new(),
        // The CLI's hook event carries no session or conversation id.
        session: None,
        tool_input: None,
        can_ask: false,
        observe_only,
        permission_mode: None,
        edits,
        event,
    })
}

fn q_actions(tool: &str, input: &Obj, label: &str) -> Result<Vec<Action>, ProtocolError> {
    let label = &format!("{label} tool_input");
    Ok(match tool {
        "execute_bash" => {
            let command = req_str(input, "command", label)?;
            // Run in `working_dir`: judged as if it changed there first.
            let dir = opt_str(input, "working_dir", label)?.filter(|d| !d.is_empty() && *d != ".");
            match dir {
                Some(d) => vec![shell(&format!(
                    "cd {} && {command}",
                    contextos_shell::quote(&[d.to_owned()])
                ))],
                None => vec![shell(command)],
            }
        }
        "fs_read" => reads(input, label)?,
        "fs_write" => paths_from(input, &["path"], PathOp::Write, true, label)?,
        "glob" => glob_reads(input, &["path"], "pattern", false, label)?,
        "grep" => glob_reads(input, &["path"], "include", true, label)?,
        "web_fetch" => vec![Action::Fetch {
            url: req_str(input, "url", label)?.to_owned(),
        }],
        "web_search" => vec![Action::Search {
            query: req_str(input, "query", label)?.to_owned(),
        }],
        t if t.starts_with('@') => vec![q_mcp(t, input)],
        // use_aws, knowledge, todo_list, thinking, introspect…: no rule reaches them.
        _ => Vec::new(),
    })
}

/// `fs_read`: every operation's `path` and `image_paths`; the operations come as
/// `operations[]`, or (older releases) as one operation at the top level.
fn reads(input: &Obj, label: &str) -> Result<Vec<Action>, ProtocolError> {
    let mut ops: Vec<&Obj> = Vec::new();
    match input.get("operations") {
        Some(Value::Array(items)) => {
            for v in items {
                let Value::Object(op) = v else {
                    return Err(perr(format!("{label}: `operations` holds a non-object")));
                };
                ops.push(op);
            }
        }
        None | Some(Value::Null) => ops.push(input),
        Some(_) => return Err(perr(format!("{label}: `operations` is not a list"))),
    }
    let mut out = Vec::new();
    for op in ops {
        for a in paths_from(op, &["path"], PathOp::Read, false, label)? {
            if !out.contains(&a) {
                out.push(a);
            }
        }
        match op.get("image_paths") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for v in items {
                    let Value::String(p) = v else {
                        return Err(perr(format!("{label}: `image_paths` holds a non-string")));
                    };
                    let a = path(PathOp::Read, p);
                    if !p.is_empty() && !out.contains(&a) {
                        out.push(a);
                    }
                }
            }
            Some(_) => return Err(perr(format!("{label}: `image_paths` is not a list"))),
        }
    }
    if out.is_empty() {
        return Err(perr(format!(
            "{label}: no file path (expected `path` or `image_paths`)"
        )));
    }
    Ok(out)
}

/// `@server/tool`: the server before the first `/`, the tool after it. A bare
/// `@server` names no tool and is judged as the server's.
fn q_mcp(name: &str, input: &Obj) -> Action {
    let rest = &name[1..];
    let (server, tool) = rest.split_once('/').unwrap_or((rest, ""));
    Action::Mcp {
        server: Some(server.to_owned()).filter(|s| !s.is_empty()),
        tool: tool.to_owned(),
        args: Some(Value::Object(input.clone())),
        endpoint: McpEndpoint::Named,
    }
}

/// What `fs_write` puts in: `create` the whole file, `str_replace` `old_str` →
/// `new_str`, `insert` and `append` a fragment.
fn q_edits(tool: &str, input: &Obj) -> Vec<Edit> {
    if tool != "fs_write" {
        return Vec::new();
    }
    let Some(file) = text_of(input, &["path"]).filter(|p| !p.is_empty()) else {
        return Vec::new();
    };
    match text_of(input, &["command"]) {
        Some("create") => text_of(input, &["file_text"])
            .map(|t| vec![edit(file, "", t, true)])
            .unwrap_or_default(),
        Some("str_replace") => text_of(input, &["new_str"])
            .map(|new| {
                vec![edit(
                    file,
                    text_of(input, &["old_str"]).unwrap_or_default(),
                    new,
                    false,
                )]
            })
            .unwrap_or_default(),
        Some("insert" | "append") => text_of(input, &["new_str"])
            .map(|new| vec![edit(file, "", new, false)])
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::hooks::*;
    use crate::{render, render_failure, Answer, Rendered};
    use PathOp::{Read, Write};

    #[test]
    fn amazonq_fixtures() {
        check(Agent::AmazonQ);
    }

    #[test]
    fn amazonq_answers_by_exit_code() {
        let e = fixture(Agent::AmazonQ, "pretooluse-bash-rm-home.json");
        let blocked = |reason: &str| Rendered {
            stdout: String::new(),
            stderr: format!("{reason}\n"),
            exit: 2,
        };
        assert_eq!(render(&e, &deny("[CTX-1] no")), blocked("[CTX-1] no"));
        assert_eq!(
            render(&e, &ask("sure?")),
            blocked(&format!("{WOULD_ASK}sure?"))
        );
        assert_eq!(render(&e, &allow("ok")), Rendered::pass());
        assert_eq!(render(&e, &Answer::Pass), Rendered::pass());
        let post = fixture(Agent::AmazonQ, "posttooluse-fs-read.json");
        assert_eq!(render(&post, &deny("x")), Rendered::pass());
        let f = render_failure(Agent::AmazonQ, "boom");
        assert_eq!((f.exit, f.stdout.as_str()), (2, ""));
        assert!(f.stderr.contains("boom"));
    }

    #[test]
    fn amazonq_tool_inputs() {
        let e = parsed(Agent::AmazonQ, br#"{"hook_event_name":"preToolUse","cwd":"/repo","tool_name":"execute_bash","tool_input":{"command":"rm -rf hooks","working_dir":".git"}}"#);
        assert_eq!(e.actions, vec![sh("cd .git && rm -rf hooks")]);
        let e = parsed(Agent::AmazonQ, br#"{"hook_event_name":"preToolUse","cwd":"/repo","tool_name":"fs_read","tool_input":{"mode":"Line","path":"/repo/.env"}}"#);
        assert_eq!(e.actions, vec![p(Read, "/repo/.env")]);
        let e = parsed(Agent::AmazonQ, br#"{"hook_event_name":"preToolUse","cwd":"/repo","tool_name":"fs_read","tool_input":{"operations":[{"mode":"Image","image_paths":["/repo/a.png","/repo/b.png"]},{"mode":"Directory","path":"/repo/secrets"}]}}"#);
        assert_eq!(
            e.actions,
            vec![
                p(Read, "/repo/a.png"),
                p(Read, "/repo/b.png"),
                p(Read, "/repo/secrets")
            ]
        );
        let e = parsed(Agent::AmazonQ, br#"{"hook_event_name":"preToolUse","cwd":"/repo","tool_name":"fs_write","tool_input":{"command":"str_replace","path":"/repo/src/lib.rs","old_str":"a","new_str":"b"}}"#);
        assert_eq!(e.actions, vec![p(Write, "/repo/src/lib.rs")]);
        assert_eq!(
            e.edits,
            vec![crate::protocol::fields::edit(
                "/repo/src/lib.rs",
                "a",
                "b",
                false
            )]
        );
        let e = parsed(Agent::AmazonQ, br#"{"hook_event_name":"preToolUse","cwd":"/repo","tool_name":"@git/git_status","tool_input":{}}"#);
        assert_eq!(
            e.actions.iter().map(without_args).collect::<Vec<_>>(),
            vec![mcp(Some("git"), "git_status")]
        );
        let e = parsed(Agent::AmazonQ, br#"{"hook_event_name":"preToolUse","cwd":"/repo","tool_name":"use_aws","tool_input":{"service_name":"s3","operation_name":"ls","region":"us-east-1","label":"x"}}"#);
        assert!(e.actions.is_empty() && !e.observe_only);
        let e = parsed(
            Agent::AmazonQ,
            br#"{"hook_event_name":"agentSpawn","cwd":"/repo"}"#,
        );
        assert!(e.observe_only && e.actions.is_empty());
    }

    #[test]
    fn amazonq_missing_or_mistyped_fields() {
        refuses(
            Agent::AmazonQ,
            &[
                (r#"{"cwd":"/repo"}"#, "`hook_event_name` is missing"),
                (
                    r#"{"hook_event_name":"preToolUse","tool_input":{}}"#,
                    "`tool_name` is missing",
                ),
                (
                    r#"{"hook_event_name":"preToolUse","tool_name":"execute_bash"}"#,
                    "`tool_input` is missing",
                ),
                (
                    r#"{"hook_event_name":"preToolUse","tool_name":"execute_bash","tool_input":{"summary":"x"}}"#,
                    "`command` is missing",
                ),
                (
                    r#"{"hook_event_name":"preToolUse","tool_name":"fs_read","tool_input":{"operations":[]}}"#,
                    "no file path",
                ),
                (
                    r#"{"hook_event_name":"preToolUse","tool_name":"fs_read","tool_input":{"operations":[1]}}"#,
                    "non-object",
                ),
                (
                    r#"{"hook_event_name":"preToolUse","tool_name":"fs_write","tool_input":{"command":"create"}}"#,
                    "no file path",
                ),
                (
                    r#"{"hook_event_name":"preToolUse","tool_name":"web_fetch","tool_input":{}}"#,
                    "`url` is missing",
                ),
            ],
        );
    }
}
