//! The Cline hook dialect (docs.cline.bot, "Hook Reference"): an executable named after
//! the event in `.clinerules/hooks/` gets one JSON object on stdin — `clineVersion`,
//! `hookName`, `timestamp`, `taskId`, `workspaceRoots`, `userId`, and the event's own
//! object under its camelCase name (`preToolUse: {toolName, parameters}`) — and answers
//! with the last JSON object on stdout: `{"cancel": bool, "contextModification": …,
//! "errorMessage": …}`. `cancel: true` blocks the tool; no JSON at all lets it run, and a
//! non-zero exit, invalid JSON or a timeout blocks it.
//!
//! Cline cannot ask, so an ask is a cancel that says so. A deny also goes into
//! `contextModification`, so the model's next request knows why the call was refused.
//!
//! Tool names and parameters are those of Cline's tool set (`execute_command` with
//! `command`, `read_file`/`write_to_file`/`replace_in_file` with `path`, `use_mcp_tool`
//! with `server_name`/`tool_name`/`arguments`, …). A tool this table does not know is still
//! looked at: a `path` it carries is judged as both a read and a write.

use crate::protocol::answer::{to_line, Decision};
use crate::protocol::dialect::{Dialect, Failure};
use crate::protocol::event::{Action, Edit, HookEvent, McpEndpoint, ProtocolError};
use crate::protocol::fields::{
    args_object, edit, loose_str, opt_str, paths_from, perr, req_str, shell, text_of, Obj,
};
use crate::Agent;
use contextos_core::PathOp;
use serde::Serialize;
use serde_json::Value;

pub(crate) const DIALECT: Dialect = Dialect {
    parse,
    answer,
    // A cancel document and a non-zero exit: either one alone blocks in Cline.
    failure: Failure::DenyAnswer { exit: 2 },
    by_exit: false,
};

/// The key of the event's own object: `PreToolUse` → `preToolUse`.
fn event_key(hook: &str) -> String {
    let mut chars = hook.chars();
    match chars.next() {
        Some(c) => c.to_ascii_lowercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

fn parse(obj: &Obj) -> Result<HookEvent, ProtocolError> {
    let event = req_str(obj, "hookName", "cline hook")?.to_owned();
    let label = format!("cline {event}");
    let judged = event == "PreToolUse";
    let body = obj.get(&event_key(&event)).and_then(Value::as_object);
    let (tool, actions, edits) = if judged {
        let Some(body) = body else {
            return Err(perr(format!("{label}: `preToolUse` is missing")));
        };
        let tool = req_str(body, "toolName", &label)?;
        let label = format!("{label} {tool}");
        let params = args_object(body.get("parameters"), "parameters", &label)?;
        let acts = actions(tool, &params, &label)?;
        (tool.to_owned(), acts, edits(tool, &params))
    } else {
        // Observed only (PostToolUse, task and prompt events): read for the log at best.
        let tool = body
            .and_then(|b| loose_str(b, "toolName"))
            .unwrap_or_else(|| event.clone());
        let acts = body
            .and_then(|b| args_object(b.get("parameters"), "parameters", &label).ok())
            .and_then(|p| actions(&tool, &p, &label).ok())
            .unwrap_or_default();
        (tool, acts, Vec::new())
    };
    let roots = match obj.get("workspaceRoots") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    Ok(HookEvent {
        agent: Agent::Cline,
        tool,
        actions,
        // Cline sends no working directory; its commands run in the first workspace root.
        cwd: roots.first().cloned(),
        roots,
        session: loose_str(obj, "taskId"),
        tool_input: None,
        can_ask: false,
        observe_only: !judged,
        // Cline's auto-approval settings are not sent to hooks.
        permission_mode: None,
        edits,
        event,
    })
}

fn actions(tool: &str, params: &Obj, label: &str) -> Result<Vec<Action>, ProtocolError> {
    let label = &format!("{label} parameters");
    Ok(match tool {
        "execute_command" => vec![shell(req_str(params, "command", label)?)],
        "read_file" | "list_files" | "list_code_definition_names" | "search_files" => {
            paths_from(params, &["path"], PathOp::Read, true, label)?
        }
        "write_to_file" | "replace_in_file" | "new_rule" => {
            paths_from(params, &["path"], PathOp::Write, true, label)?
        }
        "use_mcp_tool" => vec![Action::Mcp {
            server: Some(req_str(params, "server_name", label)?.to_owned()),
            tool: req_str(params, "tool_name", label)?.to_owned(),
            args: mcp_arguments(params, label)?,
            endpoint: McpEndpoint::Named,
        }],
        "web_fetch" => vec![Action::Fetch {
            url: req_str(params, "url", label)?.to_owned(),
        }],
        // Only `launch` names a page; the other browser actions act on the open one.
        "browser_action" => match opt_str(params, "url", label)? {
            Some(url) if !url.is_empty() => vec![Action::Fetch {
                url: url.to_owned(),
            }],
            _ => Vec::new(),
        },
        _ => {
            let mut out = paths_from(params, &["path"], PathOp::Read, false, label)?;
            out.extend(paths_from(params, &["path"], PathOp::Write, false, label)?);
            out
        }
    })
}

/// `use_mcp_tool`'s `arguments`: Cline passes them as a JSON string (its tool parameters
/// are strings); an object is taken as is. Text that is not JSON is refused, since the
/// call's arguments are judged too.
fn mcp_arguments(params: &Obj, label: &str) -> Result<Option<Value>, ProtocolError> {
    match params.get("arguments") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(v) => args_object(Some(v), "arguments", label).map(|m| Some(Value::Object(m))),
    }
}

/// What `write_to_file` (the whole new file) and `replace_in_file` (its SEARCH/REPLACE
/// blocks) put into the file.
fn edits(tool: &str, params: &Obj) -> Vec<Edit> {
    let Some(p) = text_of(params, &["path"]).filter(|p| !p.is_empty()) else {
        return Vec::new();
    };
    match tool {
        "write_to_file" => text_of(params, &["content"])
            .map(|c| vec![edit(p, "", c, true)])
            .unwrap_or_default(),
        "replace_in_file" => text_of(params, &["diff"])
            .map(|d| {
                replace_blocks(d)
                    .into_iter()
                    .map(|(old, new)| edit(p, &old, &new, false))
                    .collect()
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The (search, replace) pairs of a `replace_in_file` diff, in either marker spelling
/// (`------- SEARCH` / `=======` / `+++++++ REPLACE`, or `<<<<<<< SEARCH` / `>>>>>>>
/// REPLACE`).
fn replace_blocks(diff: &str) -> Vec<(String, String)> {
    enum At {
        Outside,
        Search,
        Replace,
    }
    let mut out = Vec::new();
    let (mut old, mut new) = (String::new(), String::new());
    let mut at = At::Outside;
    for line in diff.lines() {
        let t = line.trim_end();
        let search =
            t.ends_with("SEARCH") && (t.starts_with("-------") || t.starts_with("<<<<<<<"));
        let replace =
            t.ends_with("REPLACE") && (t.starts_with("+++++++") || t.starts_with(">>>>>>>"));
        match at {
            _ if search => {
                at = At::Search;
                old.clear();
                new.clear();
            }
            At::Search if t == "=======" => at = At::Replace,
            At::Replace if replace => {
                out.push((std::mem::take(&mut old), std::mem::take(&mut new)));
                at = At::Outside;
            }
            At::Search => {
                old.push_str(line);
                old.push('\n');
            }
            At::Replace => {
                new.push_str(line);
                new.push('\n');
            }
            At::Outside => {}
        }
    }
    out
}

#[derive(Serialize)]
struct Out<'a> {
    cancel: bool,
    #[serde(
        rename = "contextModification",
        skip_serializing_if = "Option::is_none"
    )]
    context_modification: Option<&'a str>,
    #[serde(rename = "errorMessage", skip_serializing_if = "Option::is_none")]
    error_message: Option<&'a str>,
}

fn answer(_event: &str, decision: Decision, reason: &str) -> String {
    let cancel = decision != Decision::Allow;
    let reason = Some(reason).filter(|r| cancel && !r.is_empty());
    to_line(&Out {
        cancel,
        context_modification: reason,
        error_message: reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::answer::Rendered;
    use crate::test_support::hooks::*;
    use crate::{parse_event, render, render_failure, Answer};

    #[test]
    fn cline_fixtures() {
        check(Agent::Cline);
    }

    #[test]
    fn answers_are_cancel_documents_and_an_ask_cancels() {
        let e = fixture(Agent::Cline, "pretooluse-execute-command-rm-home.json");
        assert_eq!(
            render(&e, &deny("no")),
            out(r#"{"cancel":true,"contextModification":"no","errorMessage":"no"}"#)
        );
        assert_eq!(render(&e, &allow("fine")), out(r#"{"cancel":false}"#));
        let asked = render(&e, &ask("sure?"));
        let v: Value = serde_json::from_str(&asked.stdout).unwrap();
        assert_eq!(v["cancel"], true);
        assert!(v["errorMessage"]
            .as_str()
            .unwrap()
            .contains("cannot ask, so the action is denied: sure?"));
        assert_eq!(render(&e, &Answer::Pass), Rendered::pass());
    }

    #[test]
    fn post_tool_use_is_observed_only() {
        let e = fixture(Agent::Cline, "posttooluse-write-to-file.json");
        assert!(e.observe_only);
        assert_eq!(render(&e, &deny("no")), Rendered::pass());
    }

    #[test]
    fn failures_cancel_and_exit_non_zero() {
        let r = render_failure(Agent::Cline, "policy invalid");
        assert_eq!(r.exit, 2);
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(v["cancel"], true);
        assert!(v["errorMessage"]
            .as_str()
            .unwrap()
            .contains("policy invalid"));
    }

    #[test]
    fn judged_events_need_their_fields() {
        refuses(
            Agent::Cline,
            &[
                (r#"{"clineVersion":"3.36.0"}"#, "`hookName` is missing"),
                (r#"{"hookName":"PreToolUse"}"#, "`preToolUse` is missing"),
                (
                    r#"{"hookName":"PreToolUse","preToolUse":{"parameters":{}}}"#,
                    "`toolName` is missing",
                ),
                (
                    r#"{"hookName":"PreToolUse","preToolUse":{"toolName":"execute_command","parameters":{}}}"#,
                    "`command` is missing",
                ),
                (
                    r#"{"hookName":"PreToolUse","preToolUse":{"toolName":"write_to_file","parameters":{"content":"x"}}}"#,
                    "no file path",
                ),
                (
                    r#"{"hookName":"PreToolUse","preToolUse":{"toolName":"use_mcp_tool","parameters":{"server_name":"db","tool_name":"q","arguments":"{not json"}}}"#,
                    "`arguments` is a string but not JSON",
                ),
            ],
        );
    }

    #[test]
    fn write_and_replace_carry_their_text() {
        let e = fixture(Agent::Cline, "pretooluse-write-to-file-env.json");
        assert_eq!(e.edits, vec![edit(".env", "", "AWS_SECRET=abc\n", true)]);
        let e = fixture(Agent::Cline, "pretooluse-replace-in-file.json");
        assert_eq!(
            e.edits,
            vec![edit(
                "src/lib.rs",
                "pub fn limit() -> u32 { 10 }\n",
                "pub fn limit() -> u32 { 20 }\n",
                false
            )]
        );
        let unknown = parse_event(
            Agent::Cline,
            br#"{"hookName":"PreToolUse","preToolUse":{"toolName":"some_new_tool","parameters":{"path":".env"}}}"#,
        )
        .unwrap();
        assert_eq!(
            unknown.actions,
            vec![p(PathOp::Read, ".env"), p(PathOp::Write, ".env")]
        );
    }
}
