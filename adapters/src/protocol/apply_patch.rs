//! The arguments of an `apply_patch` tool call (Codex, Copilot) as the actions of the
//! patch they carry.

use super::event::{Action, ProtocolError};
use super::fields::{path, perr};
use super::patch::patch_paths;
use serde_json::Value;

/// `apply_patch` arguments: the raw patch text, a JSON string wrapping it, or an object whose
/// `input`, `patch` or `command` (Codex's spelling) field holds it. Every such field present
/// must parse, and all their paths are judged.
pub(crate) fn apply_patch_actions(
    args: &Value,
    args_key: &str,
    label: &str,
) -> Result<Vec<Action>, ProtocolError> {
    let mut texts = Vec::new();
    patch_texts(args, args_key, label, 0, &mut texts)?;
    let mut out = Vec::new();
    for text in texts {
        let paths = patch_paths(&text).map_err(|e| perr(format!("{label}: {e}")))?;
        for (op, p) in paths {
            let a = path(op, &p);
            if !out.contains(&a) {
                out.push(a);
            }
        }
    }
    Ok(out)
}

fn patch_texts(
    value: &Value,
    args_key: &str,
    label: &str,
    depth: u8,
    out: &mut Vec<String>,
) -> Result<(), ProtocolError> {
    const PATCH_KEYS: [&str; 3] = ["input", "patch", "command"];
    match value {
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(inner @ (Value::Object(_) | Value::String(_))) if depth < 2 => {
                patch_texts(&inner, args_key, label, depth + 1, out)
            }
            _ => {
                out.push(s.clone());
                Ok(())
            }
        },
        Value::Object(m) => {
            let before = out.len();
            for key in PATCH_KEYS {
                match m.get(key) {
                    None | Some(Value::Null) => {}
                    Some(Value::String(s)) => out.push(s.clone()),
                    Some(_) => {
                        return Err(perr(format!("{label}: `{args_key}.{key}` is not a string")))
                    }
                }
            }
            if out.len() == before {
                return Err(perr(format!(
                    "{label}: `{args_key}` has no patch (expected `input`, `patch` or `command`)"
                )));
            }
            Ok(())
        }
        _ => Err(perr(format!(
            "{label}: `{args_key}` is neither a patch string nor an object"
        ))),
    }
}
