//! VS Code's agent hooks (the "Local" harness), as they arrive at `contextos hook claude`.
//!
//! VS Code loads the hooks of `.claude/settings.json` by default, ignores their matchers
//! (so the hook sees every tool), and sends its own payload: `hookEventName` (camelCase
//! key; values `PreToolUse`, `PostToolUse`, …), `sessionId`, `timestamp`, `cwd`, and
//! `tool_name` / `tool_input` with VS Code's tool names and argument names
//! (`run_in_terminal` with `command`, `create_file` with `filePath`, `editFiles` with
//! `files`…). It reads the answer in Claude's envelope
//! (`hookSpecificOutput.permissionDecision`, `allow` / `ask` / `deny`) and blocks on exit
//! 2 — so the answer is Claude's own, and only the reading differs.
//!
//! A tool this table does not know is still looked at: any file argument it carries
//! (`filePath`, `path`, `dirPath`, `files`) is judged as both a read and a write, the
//! strictest reading, since VS Code's tool set grows faster than this table.

use crate::protocol::apply_patch::{apply_patch_actions, apply_patch_edits};
use crate::protocol::event::{Action, Edit, HookEvent, McpEndpoint, ProtocolError};
use crate::protocol::fields::{
    args_object, edit, glob_reads, loose_str, opt_owned, opt_str, path, paths_from, perr, req_str,
    shell, text_of, Obj,
};
use crate::Agent;
use contextos_core::PathOp;
use serde_json::Value;

/// The file arguments VS Code's tools use.
const FILE_KEYS: [&str; 2] = ["filePath", "file_path"];

/// The payload as a [`HookEvent`] of agent `claude` (the answer is Claude's envelope).
pub(crate) fn parse(obj: &Obj) -> Result<HookEvent, ProtocolError> {
    parse_as(obj, Agent::Claude)
}

/// The payload as a [`HookEvent`] of `agent`, the hook command VS Code started: VS Code
/// also loads Copilot's `.github/hooks/*.json`, so `contextos hook copilot` gets this
/// payload too (and answers it with Claude's envelope beside its own fields).
pub(crate) fn parse_as(obj: &Obj, agent: Agent) -> Result<HookEvent, ProtocolError> {
    let name = agent.as_str();
    let event = req_str(obj, "hookEventName", &format!("{name} hook (VS Code)"))?.to_owned();
    let judged = event == "PreToolUse";
    let label = format!("{name} {event} (VS Code)");
    let (tool, actions, edits) = if judged {
        let tool = req_str(obj, "tool_name", &label)?;
        let label = format!("{label} {tool}");
        let input = args_object(obj.get("tool_input"), "tool_input", &label)?;
        let acts = actions(tool, &input, &label)?;
        (tool.to_owned(), acts, edits(tool, &input))
    } else {
        let tool = loose_str(obj, "tool_name").unwrap_or_else(|| event.clone());
        let acts = args_object(obj.get("tool_input"), "tool_input", &label)
            .and_then(|input| actions(&tool, &input, &label))
            .unwrap_or_default();
        (tool, acts, Vec::new())
    };
    Ok(HookEvent {
        agent,
        tool,
        actions,
        cwd: opt_owned(obj, "cwd", &label)?,
        roots: Vec::new(),
        session: loose_str(obj, "sessionId").or_else(|| loose_str(obj, "session_id")),
        // The input is VS Code's, not Claude's: no command rewrite is offered for it.
        tool_input: None,
        // VS Code honours `ask` on PreToolUse (its confirmation dialog).
        can_ask: judged,
        observe_only: !judged,
        // VS Code sends no permission mode; its auto-approval is not visible to hooks.
        permission_mode: None,
        edits,
        event,
    })
}

/// VS Code's tool names; the older camelCase spellings are read too.
fn actions(tool: &str, input: &Obj, label: &str) -> Result<Vec<Action>, ProtocolError> {
    let label = &format!("{label} tool_input");
    Ok(match tool {
        "run_in_terminal" | "runInTerminal" | "runCommands" => {
            vec![shell(req_str(input, "command", label)?)]
        }
        "read_file" | "readFile" => paths_from(input, &FILE_KEYS, PathOp::Read, true, label)?,
        "create_file"
        | "createFile"
        | "replace_string_in_file"
        | "insert_edit_into_file"
        | "editFile"
        | "edit_notebook_file"
        | "create_new_jupyter_notebook" => {
            paths_from(input, &FILE_KEYS, PathOp::Write, true, label)?
        }
        "create_directory" => paths_from(input, &["dirPath"], PathOp::Write, true, label)?,
        "multi_replace_string_in_file" => replacement_paths(input, label)?,
        "editFiles" => file_list(input, "files", PathOp::Write, label)?,
        "list_dir" | "listDirectory" => paths_from(input, &["path"], PathOp::Read, false, label)?,
        // `query` is a glob over the workspace; `includePattern` narrows a text search.
        "file_search" => glob_reads(input, &[], "query", false, label)?,
        "grep_search" => glob_reads(input, &[], "includePattern", false, label)?,
        "apply_patch" => apply_patch_actions(&Value::Object(input.clone()), "tool_input", label)?,
        "fetch_webpage" => fetch_urls(input, label)?,
        t if t.starts_with("mcp_") => vec![Action::Mcp {
            server: None,
            tool: t.to_owned(),
            args: Some(Value::Object(input.clone())),
            endpoint: McpEndpoint::Named,
        }],
        _ => unknown_tool_paths(input, label)?,
    })
}

/// `multi_replace_string_in_file`: every `replacements[].filePath`.
fn replacement_paths(input: &Obj, label: &str) -> Result<Vec<Action>, ProtocolError> {
    let Some(items) = input.get("replacements").and_then(Value::as_array) else {
        return Err(perr(format!("{label}: `replacements` is not an array")));
    };
    let mut out = Vec::new();
    for item in items {
        let Some(obj) = item.as_object() else {
            return Err(perr(format!("{label}: a replacement is not an object")));
        };
        for a in paths_from(obj, &FILE_KEYS, PathOp::Write, true, label)? {
            if !out.contains(&a) {
                out.push(a);
            }
        }
    }
    if out.is_empty() {
        return Err(perr(format!("{label}: `replacements` is empty")));
    }
    Ok(out)
}

/// A list of file paths (`editFiles`' `files`), each one an action.
fn file_list(
    input: &Obj,
    key: &str,
    op: PathOp,
    label: &str,
) -> Result<Vec<Action>, ProtocolError> {
    let Some(items) = input.get(key).and_then(Value::as_array) else {
        return Err(perr(format!("{label}: `{key}` is not an array")));
    };
    let mut out = Vec::new();
    for item in items {
        match item.as_str() {
            Some(p) if !p.is_empty() => {
                let a = path(op, p);
                if !out.contains(&a) {
                    out.push(a);
                }
            }
            _ => return Err(perr(format!("{label}: `{key}` holds a non-path"))),
        }
    }
    Ok(out)
}

fn fetch_urls(input: &Obj, label: &str) -> Result<Vec<Action>, ProtocolError> {
    let Some(urls) = input.get("urls").and_then(Value::as_array) else {
        return Err(perr(format!("{label}: `urls` is not an array")));
    };
    urls.iter()
        .map(|u| match u.as_str() {
            Some(url) if !url.is_empty() => Ok(Action::Fetch {
                url: url.to_owned(),
            }),
            _ => Err(perr(format!("{label}: `urls` holds a non-URL"))),
        })
        .collect()
}

/// A tool this table does not know: each file argument it carries, as a read and a write.
fn unknown_tool_paths(input: &Obj, label: &str) -> Result<Vec<Action>, ProtocolError> {
    let mut files = Vec::new();
    for key in ["filePath", "file_path", "path", "dirPath"] {
        if let Some(p) = opt_str(input, key, label)?.filter(|p| !p.is_empty()) {
            files.push(p.to_owned());
        }
    }
    if let Some(list) = input.get("files").and_then(Value::as_array) {
        files.extend(list.iter().filter_map(Value::as_str).map(str::to_owned));
    }
    let mut out = Vec::new();
    for f in files {
        for op in [PathOp::Read, PathOp::Write] {
            let a = path(op, &f);
            if !out.contains(&a) {
                out.push(a);
            }
        }
    }
    Ok(out)
}

/// What VS Code's file tools write.
fn edits(tool: &str, input: &Obj) -> Vec<Edit> {
    match tool {
        "apply_patch" => apply_patch_edits(&Value::Object(input.clone())),
        "create_file" | "createFile" => {
            match (text_of(input, &FILE_KEYS), text_of(input, &["content"])) {
                (Some(f), Some(c)) => vec![edit(f, "", c, true)],
                _ => Vec::new(),
            }
        }
        "replace_string_in_file" => replacement(input).into_iter().collect(),
        "multi_replace_string_in_file" => input
            .get("replacements")
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(Value::as_object)
                    .filter_map(replacement)
                    .collect()
            })
            .unwrap_or_default(),
        "insert_edit_into_file" | "editFile" => {
            match (text_of(input, &FILE_KEYS), text_of(input, &["code"])) {
                (Some(f), Some(c)) => vec![edit(f, "", c, false)],
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

fn replacement(obj: &Obj) -> Option<Edit> {
    let file = text_of(obj, &FILE_KEYS)?;
    let new = text_of(obj, &["newString", "new_string"])?;
    let old = text_of(obj, &["oldString", "old_string"]).unwrap_or_default();
    Some(edit(file, old, new, false))
}

/// Whether a payload is VS Code's: the camelCase `hookEventName` key without Claude's
/// `hook_event_name`. Shared by `hook claude` and `hook copilot`, whose files VS Code's
/// agent hooks both load.
pub(crate) fn is_payload(obj: &crate::protocol::fields::Obj) -> bool {
    !obj.contains_key("hook_event_name") && obj.contains_key("hookEventName")
}
