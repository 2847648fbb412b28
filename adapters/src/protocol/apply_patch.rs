//! The arguments of an `apply_patch` tool call (Codex, Copilot) as the actions of the
//! patch they carry.

use super::event::{Action, Edit, ProtocolError};
use super::fields::{edit, path, perr};
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

/// What each file of the patch loses and gains: its `-` and `+` lines (an `Add File` is a
/// whole new file). Read liberally — the patch was already checked by
/// [`apply_patch_actions`], and a line given to the wrong file can only add to what is
/// looked at. Arguments that hold no readable patch give nothing.
pub(crate) fn apply_patch_edits(args: &Value) -> Vec<Edit> {
    let mut texts = Vec::new();
    if patch_texts(args, "", "", 0, &mut texts).is_err() {
        return Vec::new();
    }
    let mut out: Vec<Edit> = Vec::new();
    for text in texts {
        let lines: Vec<&str> = text
            .split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
            .collect();
        let envelope = lines
            .iter()
            .find(|l| !l.trim().is_empty())
            .is_some_and(|l| l.trim() == "*** Begin Patch");
        let mut current: Option<usize> = None;
        let mut i = 0;
        while let Some(line) = lines.get(i) {
            i += 1;
            let t = line.trim();
            // File headers: the envelope's `***` markers (a body line starts with ` `, `+`
            // or `-`, so it never reads as one), or a unified diff's `---`/`+++` pair (the
            // pair, so that an added line `++ x` does not switch files).
            let header = if envelope {
                [
                    ("*** Add File:", true),
                    ("*** Update File:", false),
                    ("*** Move to:", false),
                ]
                .into_iter()
                .find_map(|(h, whole)| t.strip_prefix(h).map(|p| (p.trim(), whole)))
            } else {
                match (
                    line.strip_prefix("--- "),
                    lines.get(i).and_then(|n| n.strip_prefix("+++ ")),
                ) {
                    (Some(old), Some(new)) => {
                        i += 1;
                        let new = new.trim();
                        Some((
                            new.strip_prefix("b/").unwrap_or(new),
                            old.trim() == "/dev/null",
                        ))
                    }
                    _ => None,
                }
            };
            if let Some((p, whole)) = header {
                if p == "/dev/null" {
                    current = None;
                } else {
                    current = Some(out.len());
                    out.push(edit(p, "", "", whole));
                }
                continue;
            }
            if envelope && line.starts_with("***") {
                current = None;
                continue;
            }
            let Some(e) = current.and_then(|k| out.get_mut(k)) else {
                continue;
            };
            let (side, body) = match line.split_at_checked(1) {
                Some(("+", b)) => (&mut e.added, b),
                Some(("-", b)) => (&mut e.removed, b),
                _ => continue,
            };
            side.push_str(body);
            side.push('\n');
        }
    }
    out
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
