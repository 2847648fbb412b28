//! Reading the agents' JSON: the event object and its fields, strictly where a judged
//! event needs them and loosely where they are only carried for the log.

use super::event::{Action, Edit, ProtocolError};
use crate::Agent;
use contextos_core::PathOp;
use serde_json::{Map, Value};

/// Signature of a dialect's tool mapping: tool name, arguments, label for errors.
pub(crate) type ToolActions = fn(&str, &Obj, &str) -> Result<Vec<Action>, ProtocolError>;

pub(crate) type Obj = Map<String, Value>;

pub(crate) fn perr(msg: impl Into<String>) -> ProtocolError {
    ProtocolError(msg.into())
}

pub(crate) fn parse_object(agent: Agent, input: &[u8]) -> Result<Obj, ProtocolError> {
    // Windows shells may prefix a BOM; serde_json rejects it.
    let input = input.strip_prefix(b"\xef\xbb\xbf").unwrap_or(input);
    if input.iter().all(u8::is_ascii_whitespace) {
        return Err(perr(format!("{} hook: empty input", agent.as_str())));
    }
    match serde_json::from_slice::<Value>(input) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(perr(format!(
            "{} hook: input is not a JSON object",
            agent.as_str()
        ))),
        Err(e) => Err(perr(format!(
            "{} hook: input is not JSON: {e}",
            agent.as_str()
        ))),
    }
}

/// An optional string field; present with another type (other than `null`) is an error,
/// because a field ContextOS reads but cannot understand must not be skipped.
pub(crate) fn opt_str<'a>(
    obj: &'a Obj,
    key: &str,
    label: &str,
) -> Result<Option<&'a str>, ProtocolError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(perr(format!("{label}: `{key}` is not a string"))),
    }
}

/// A required, non-empty string field.
pub(crate) fn req_str<'a>(obj: &'a Obj, key: &str, label: &str) -> Result<&'a str, ProtocolError> {
    match opt_str(obj, key, label)? {
        Some(s) if !s.is_empty() => Ok(s),
        Some(_) => Err(perr(format!("{label}: `{key}` is empty"))),
        None => Err(perr(format!("{label}: `{key}` is missing"))),
    }
}

/// A field only carried for the log (session ids): wrong types are dropped, not fatal.
pub(crate) fn loose_str(obj: &Obj, key: &str) -> Option<String> {
    obj.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

pub(crate) fn opt_owned(
    obj: &Obj,
    key: &str,
    label: &str,
) -> Result<Option<String>, ProtocolError> {
    Ok(opt_str(obj, key, label)?
        .filter(|s| !s.is_empty())
        .map(str::to_owned))
}

/// A tool's arguments: an object, or a string holding a JSON object (Copilot's `toolArgs`,
/// Cursor's MCP `tool_input`). Missing, `null`, or anything else is an error.
pub(crate) fn args_object(
    value: Option<&Value>,
    key: &str,
    label: &str,
) -> Result<Obj, ProtocolError> {
    match value {
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(m)) => Ok(m),
            Ok(_) => Err(perr(format!(
                "{label}: `{key}` is a string but not a JSON object"
            ))),
            Err(e) => Err(perr(format!(
                "{label}: `{key}` is a string but not JSON: {e}"
            ))),
        },
        None | Some(Value::Null) => Err(perr(format!("{label}: `{key}` is missing"))),
        Some(_) => Err(perr(format!("{label}: `{key}` is not an object"))),
    }
}

pub(crate) fn shell(line: &str) -> Action {
    Action::Shell {
        line: line.to_owned(),
    }
}

pub(crate) fn path(op: PathOp, p: &str) -> Action {
    Action::Path {
        op,
        path: p.to_owned(),
    }
}

/// The first of `keys` holding a string (content fields are carried, not required: the
/// path of the same call is what is judged strictly).
pub(crate) fn text_of<'a>(obj: &'a Obj, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| obj.get(*k).and_then(Value::as_str))
}

pub(crate) fn edit(path: &str, removed: &str, added: &str, whole: bool) -> Edit {
    Edit {
        path: path.to_owned(),
        removed: removed.to_owned(),
        added: added.to_owned(),
        whole,
    }
}

/// A search tool's reads: the directory in `path` (if any) and, when `glob_key` holds a
/// glob, the files it picks, as a path glob joined to that directory (or relative to the
/// working directory). `basename_glob`: a glob without `/` matches file names at any depth
/// below the directory (ripgrep's `--glob`), so it is judged as `dir/**/glob`. A rule over
/// a path (`deny path read "secrets/**"`) then meets the glob a search uses
/// (`secrets/**`, `secrets/*.yaml`).
pub(crate) fn glob_reads(
    input: &Obj,
    dir_keys: &[&str],
    glob_key: &str,
    basename_glob: bool,
    label: &str,
) -> Result<Vec<Action>, ProtocolError> {
    let mut out = paths_from(input, dir_keys, PathOp::Read, false, label)?;
    let Some(glob) = opt_str(input, glob_key, label)?.filter(|g| !g.trim().is_empty()) else {
        return Ok(out);
    };
    let mut dirs = Vec::new();
    for k in dir_keys {
        if let Some(d) = opt_str(input, k, label)?.filter(|p| !p.is_empty()) {
            dirs.push(d.trim_end_matches(['/', '\\']));
        }
    }
    // ripgrep reads `!glob` as an exclusion: the files searched are all the others.
    let glob = glob.strip_prefix('!').map_or(glob, |_| "**");
    let glob = glob.strip_prefix("./").unwrap_or(glob);
    let rel = if basename_glob && !glob.contains('/') && !glob.starts_with("**") {
        format!("**/{glob}")
    } else {
        glob.to_owned()
    };
    let joined: Vec<String> = if rel.starts_with('/') || dirs.is_empty() {
        // An absolute glob stands on its own; without a directory it is relative to the
        // working directory.
        vec![rel]
    } else {
        dirs.iter().map(|d| format!("{d}/{rel}")).collect()
    };
    for j in joined {
        let a = path(PathOp::Read, &j);
        if !out.contains(&a) {
            out.push(a);
        }
    }
    Ok(out)
}

/// Every distinct non-empty path among `keys`. With `required`, at least one must exist.
pub(crate) fn paths_from(
    input: &Obj,
    keys: &[&str],
    op: PathOp,
    required: bool,
    label: &str,
) -> Result<Vec<Action>, ProtocolError> {
    let mut out = Vec::new();
    for key in keys {
        if let Some(p) = opt_str(input, key, label)?.filter(|p| !p.is_empty()) {
            let a = path(op, p);
            if !out.contains(&a) {
                out.push(a);
            }
        }
    }
    if required && out.is_empty() {
        return Err(perr(format!(
            "{label}: no file path (expected {})",
            keys.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        )));
    }
    Ok(out)
}

/// For observe-only events: the tool and, if readable, its actions (for the log). Never an
/// error — nothing is decided here, and a fail-closed answer would only add noise.
pub(crate) fn observed(
    obj: &Obj,
    tool_key: &str,
    input_key: &str,
    event: &str,
    map: ToolActions,
) -> (String, Vec<Action>) {
    let Some(tool) = loose_str(obj, tool_key) else {
        return (event.to_owned(), Vec::new());
    };
    let actions = args_object(obj.get(input_key), input_key, event)
        .and_then(|input| map(&tool, &input, event))
        .unwrap_or_default();
    (tool, actions)
}
