//! Owned TOML: ContextOS's keys in a TOML file people also edit (`.codex/config.toml`).
//! The file is edited in place, so the user's tables, keys, order and comments stay as
//! written; only the owned keys (and the tables ContextOS had to create for them) change.
//! What ContextOS owns is recorded in an [`OwnedJson`] (its `keys` and `created`), exactly
//! like owned JSON, so a key no emitter claims any more is retracted while it still holds
//! the value ContextOS set.

use super::error::{MergeError, MergeErrorKind};
use super::owned_json::{parse_pointer, pointer_string, JsonMerge, OwnedJson};
use super::text::{detect_eol, normalize, with_eol};
use crate::TomlKey;
use serde_json::Value;
use std::collections::BTreeSet;
use toml_edit::{Array, DocumentMut, InlineTable, Item, Table};

/// A TOML value as JSON data, for comparing with what ContextOS set; `None` for nothing.
fn item_json(item: &Item) -> Option<Value> {
    match item {
        Item::None => None,
        Item::Value(v) => Some(value_json(v)),
        Item::Table(t) => Some(Value::Object(
            t.iter()
                .filter_map(|(k, i)| item_json(i).map(|v| (k.to_string(), v)))
                .collect(),
        )),
        Item::ArrayOfTables(a) => Some(Value::Array(
            a.iter()
                .map(|t| item_json(&Item::Table(t.clone())).unwrap_or(Value::Null))
                .collect(),
        )),
    }
}

fn value_json(v: &toml_edit::Value) -> Value {
    use toml_edit::Value as T;
    match v {
        T::String(s) => Value::String(s.value().clone()),
        T::Integer(i) => Value::from(*i.value()),
        T::Float(f) => serde_json::Number::from_f64(*f.value()).map_or(Value::Null, Value::Number),
        T::Boolean(b) => Value::Bool(*b.value()),
        T::Datetime(d) => Value::String(d.value().to_string()),
        T::Array(a) => Value::Array(a.iter().map(value_json).collect()),
        T::InlineTable(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), value_json(v)))
                .collect(),
        ),
    }
}

fn unencodable(pointer: &str) -> MergeError {
    MergeError::from(MergeErrorKind::Serialize {
        message: format!("{pointer}: TOML has no null (emitter bug)"),
    })
}

/// JSON data as an inline TOML value (inside arrays and inline tables).
fn to_value(v: &Value, pointer: &str) -> Result<toml_edit::Value, MergeError> {
    Ok(match v {
        Value::Null => return Err(unencodable(pointer)),
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => n.as_f64().unwrap_or_default().into(),
        },
        Value::String(s) => s.as_str().into(),
        Value::Array(items) => {
            let mut a = Array::new();
            for i in items {
                a.push(to_value(i, pointer)?);
            }
            toml_edit::Value::Array(a)
        }
        Value::Object(m) => {
            let mut t = InlineTable::new();
            for (k, v) in m {
                t.insert(k, to_value(v, pointer)?);
            }
            toml_edit::Value::InlineTable(t)
        }
    })
}

/// JSON data as a TOML item: an object becomes a `[table]`, anything else a value.
fn to_item(v: &Value, pointer: &str) -> Result<Item, MergeError> {
    match v {
        Value::Object(m) => {
            let mut t = Table::new();
            for (k, v) in m {
                t.insert(k, to_item(v, pointer)?);
            }
            Ok(Item::Table(t))
        }
        other => Ok(Item::Value(to_value(other, pointer)?)),
    }
}

/// The table at `segs`, creating missing ones (implicit, so only the owned table gets a
/// header) when `created` is given. A step that is not a table is an error when creating
/// and `None` when only looking.
fn table_at<'t>(
    root: &'t mut Table,
    segs: &[String],
    pointer: &str,
    mut created: Option<&mut BTreeSet<String>>,
) -> Result<Option<&'t mut Table>, MergeError> {
    let mut cur = root;
    for (i, seg) in segs.iter().enumerate() {
        if !cur.contains_key(seg) {
            let Some(c) = created.as_deref_mut() else {
                return Ok(None);
            };
            let mut t = Table::new();
            t.set_implicit(true);
            cur.insert(seg, Item::Table(t));
            c.insert(pointer_string(&segs[..=i]));
        }
        match cur.get_mut(seg) {
            Some(Item::Table(t)) => cur = t,
            _ if created.is_none() => return Ok(None),
            _ => {
                return Err(MergeError::from(MergeErrorKind::TomlNotTable {
                    pointer: pointer.to_string(),
                    step: pointer_string(&segs[..=i]),
                }))
            }
        }
    }
    Ok(Some(cur))
}

/// Merges ContextOS's `keys` into a TOML file people also edit (see the module comment);
/// `prev` is what the ownership record says ContextOS owned there.
pub(crate) fn merge_toml(
    existing: Option<&str>,
    keys: &[TomlKey],
    prev: &OwnedJson,
) -> Result<JsonMerge, MergeError> {
    let mut parsed = Vec::new();
    for k in keys {
        let segs = parse_pointer(&k.pointer)?;
        let Some((last, parents)) = segs.split_last() else {
            continue;
        };
        parsed.push((parents.to_vec(), last.clone(), k));
    }
    let eol = existing.map_or("\n", detect_eol);
    let (mut doc, mut created) = match existing {
        Some(text) => (
            normalize_eol(text).parse::<DocumentMut>().map_err(|e| {
                MergeError::from(MergeErrorKind::TomlSyntax {
                    message: e.message().to_string(),
                })
            })?,
            prev.created.clone(),
        ),
        None => (DocumentMut::new(), BTreeSet::from([String::new()])),
    };
    let before = doc.to_string();
    let mut owned = OwnedJson::default();
    let mut touched = Vec::new();

    // 1. Retract what ContextOS owned and no key claims any more, unless the user changed it.
    for (ptr, value) in &prev.keys {
        if keys.iter().any(|k| &k.pointer == ptr) {
            continue;
        }
        let segs = parse_pointer(ptr)?;
        let Some((last, parents)) = segs.split_last() else {
            continue;
        };
        if let Some(t) = table_at(doc.as_table_mut(), parents, ptr, None)? {
            if t.get(last).and_then(item_json).as_ref() == Some(value) {
                t.remove(last);
                touched.push(ptr.clone());
            }
        }
    }

    // 2. Set the owned keys; an identical value already there is left as written.
    for (parents, last, k) in &parsed {
        let Some(t) = table_at(doc.as_table_mut(), parents, &k.pointer, Some(&mut created))? else {
            continue;
        };
        if t.get(last).and_then(item_json).as_ref() == Some(&k.value) {
            if prev.keys.get(&k.pointer) == Some(&k.value) {
                owned.keys.insert(k.pointer.clone(), k.value.clone());
            }
            continue;
        }
        t.insert(last, to_item(&k.value, &k.pointer)?);
        owned.keys.insert(k.pointer.clone(), k.value.clone());
        touched.push(k.pointer.clone());
    }

    // 3. Tables ContextOS created and that are empty now go, deepest first.
    let mut by_depth: Vec<(Vec<String>, String)> = Vec::new();
    for ptr in &created {
        if !ptr.is_empty() {
            by_depth.push((parse_pointer(ptr)?, ptr.clone()));
        }
    }
    by_depth.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.1.cmp(&b.1)));
    for (segs, ptr) in by_depth {
        let Some((last, parents)) = segs.split_last() else {
            continue;
        };
        let Some(parent) = table_at(doc.as_table_mut(), parents, &ptr, None)? else {
            continue;
        };
        match parent.get(last) {
            Some(Item::Table(t)) if t.is_empty() => {
                parent.remove(last);
                touched.push(ptr);
            }
            Some(_) => {
                owned.created.insert(ptr);
            }
            None => {}
        }
    }
    let delete = created.contains("") && doc.as_table().is_empty();
    if created.contains("") && !delete {
        owned.created.insert(String::new());
    }
    let text = doc.to_string();
    let changed = match existing {
        Some(_) => text != before,
        None => !delete,
    };
    touched.sort();
    touched.dedup();
    Ok(JsonMerge {
        text: with_eol(&text, eol),
        owned,
        changed,
        delete,
        touched,
    })
}

/// LF line endings for editing; [`merge_toml`] restores the file's own afterwards.
fn normalize_eol(text: &str) -> String {
    if text.contains("\r\n") {
        normalize(text)
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn server() -> TomlKey {
        TomlKey {
            pointer: "/mcp_servers/contextos".into(),
            value: json!({"command": "contextos", "args": ["mcp"]}),
        }
    }

    #[test]
    fn new_file_gets_one_table() {
        let m = merge_toml(None, &[server()], &OwnedJson::default()).unwrap();
        assert_eq!(
            m.text,
            "[mcp_servers.contextos]\ncommand = \"contextos\"\nargs = [\"mcp\"]\n"
        );
        assert!(m.changed && !m.delete);
        assert_eq!(
            m.owned.created,
            BTreeSet::from(["".to_string(), "/mcp_servers".to_string()])
        );
        let v: DocumentMut = m.text.parse().unwrap();
        assert_eq!(
            item_json(v.as_item()).unwrap()["mcp_servers"]["contextos"]["args"],
            json!(["mcp"])
        );
    }

    #[test]
    fn user_content_and_comments_survive_and_runs_are_idempotent() {
        let user =
            "# my settings\nmodel = \"o3\" # pinned\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let first = merge_toml(Some(user), &[server()], &OwnedJson::default()).unwrap();
        assert!(first.text.starts_with(user), "{}", first.text);
        assert!(first.text.contains("[mcp_servers.contextos]"));
        let again = merge_toml(Some(&first.text), &[server()], &first.owned).unwrap();
        assert_eq!(again.text, first.text);
        assert!(!again.changed);
        assert_eq!(again.owned, first.owned);
        // Retracted again: the user's file comes back byte for byte.
        let gone = merge_toml(Some(&first.text), &[], &first.owned).unwrap();
        assert_eq!(gone.text, user);
        assert!(!gone.delete);
    }

    #[test]
    fn a_file_contextos_created_is_deleted_when_empty() {
        let first = merge_toml(None, &[server()], &OwnedJson::default()).unwrap();
        let gone = merge_toml(Some(&first.text), &[], &first.owned).unwrap();
        assert!(gone.delete);
    }

    #[test]
    fn a_value_the_user_changed_is_theirs() {
        let first = merge_toml(None, &[server()], &OwnedJson::default()).unwrap();
        let edited = first
            .text
            .replace("\"contextos\"\n", "\"/opt/contextos\"\n");
        let gone = merge_toml(Some(&edited), &[], &first.owned).unwrap();
        assert!(gone.text.contains("/opt/contextos"));
    }

    #[test]
    fn crlf_stays_crlf_and_bad_toml_is_refused() {
        let user = "model = \"o3\"\r\n";
        let m = merge_toml(Some(user), &[server()], &OwnedJson::default()).unwrap();
        assert!(
            m.text.contains("\r\n[mcp_servers.contextos]\r\n"),
            "{:?}",
            m.text
        );
        assert!(!m.text.replace("\r\n", "").contains('\n'));
        let e = merge_toml(Some("[a\n"), &[server()], &OwnedJson::default())
            .err()
            .unwrap();
        assert!(matches!(e.kind, MergeErrorKind::TomlSyntax { .. }), "{e:?}");
        let e = merge_toml(
            Some("mcp_servers = 1\n"),
            &[server()],
            &OwnedJson::default(),
        )
        .err()
        .unwrap();
        assert!(
            matches!(e.kind, MergeErrorKind::TomlNotTable { .. }),
            "{e:?}"
        );
    }
}
