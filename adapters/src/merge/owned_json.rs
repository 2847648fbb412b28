//! Owned JSON: ContextOS's keys, array items and hook registrations in a JSON file people
//! also edit. User keys keep their order; hand-written items are never removed, so a
//! user's own `deny` survives every run. What ContextOS owns is recorded in [`OwnedJson`]
//! so entries of removed rules are retracted later.

use super::error::{MergeError, MergeErrorKind};
use super::strict_json::{parse_json_object, type_name};
use super::text::{detect_eol, with_eol};
use crate::JsonPart;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// What ContextOS owns in one JSON file, by RFC 6901 pointer; recorded in the ownership record so that
/// entries of removed rules can be retracted without touching anything hand-written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OwnedJson {
    /// [`JsonPart::Key`]s: the value ContextOS set. Retracted only while it still holds
    /// that value (a value the user changed is theirs).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub keys: BTreeMap<String, Value>,
    /// [`JsonPart::Items`]: the items ContextOS added. An identical item the user wrote
    /// first is theirs and is not listed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub items: BTreeMap<String, Vec<Value>>,
    /// [`JsonPart::Hooks`]: the marker that identifies ContextOS's registrations.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub hooks: BTreeMap<String, String>,
    /// Objects and arrays ContextOS created (`""` is the file itself); they are removed
    /// again when they end up empty.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub created: BTreeSet<String>,
}

impl OwnedJson {
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
            && self.items.is_empty()
            && self.hooks.is_empty()
            && self.created.is_empty()
    }
}

pub(crate) fn parse_pointer(pointer: &str) -> Result<Vec<String>, MergeError> {
    let bad = |message: &str| {
        MergeError::from(MergeErrorKind::JsonPointer {
            pointer: pointer.to_string(),
            message: message.to_string(),
        })
    };
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(bad(if pointer.is_empty() {
            "the whole document cannot be an owned part"
        } else {
            "a pointer starts with `/`"
        }));
    };
    rest.split('/')
        .map(|seg| {
            let mut out = String::with_capacity(seg.len());
            let mut chars = seg.chars();
            while let Some(c) = chars.next() {
                match c {
                    '~' => match chars.next() {
                        Some('0') => out.push('~'),
                        Some('1') => out.push('/'),
                        _ => return Err(bad("`~` must be followed by 0 or 1")),
                    },
                    c => out.push(c),
                }
            }
            Ok(out)
        })
        .collect()
}

pub(crate) fn pointer_string(segs: &[String]) -> String {
    segs.iter()
        .map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1")))
        .collect()
}

type Obj = Map<String, Value>;
/// A container found on the way down a pointer, if it is there.
type Found<'v, T> = Result<Option<&'v mut T>, MergeError>;

/// The way down one pointer: `pointer` names it in errors; with `create`, missing
/// containers are added (appended to their parent) and recorded there.
struct Walk<'w> {
    pointer: &'w str,
    create: Option<&'w mut BTreeSet<String>>,
}

impl<'w> Walk<'w> {
    /// Finds what is there; nothing is added.
    fn find(pointer: &'w str) -> Walk<'w> {
        Walk {
            pointer,
            create: None,
        }
    }

    /// Adds missing containers when `create`, recording them in `created`.
    fn make(pointer: &'w str, create: bool, created: &'w mut BTreeSet<String>) -> Walk<'w> {
        Walk {
            pointer,
            create: create.then_some(created),
        }
    }

    /// Adds `empty` at `key` of `parent` when it is missing and the walk creates; `false`
    /// when it is missing and stays so.
    fn ensure(&mut self, parent: &mut Obj, key: &str, empty: Value, at: &[String]) -> bool {
        if parent.contains_key(key) {
            return true;
        }
        let Some(created) = self.create.as_deref_mut() else {
            return false;
        };
        parent.insert(key.to_string(), empty);
        created.insert(pointer_string(at));
        true
    }
}

/// The object at `segs`. A walk that creates adds missing objects, and crossing a
/// non-object is an error; a walk that finds gives `None` for a missing or non-object step.
fn object_at<'v>(root: &'v mut Obj, segs: &[String], walk: &mut Walk<'_>) -> Found<'v, Obj> {
    let mut cur = root;
    for (i, seg) in segs.iter().enumerate() {
        if !walk.ensure(cur, seg, Value::Object(Map::new()), &segs[..=i]) {
            return Ok(None);
        }
        match cur.get_mut(seg) {
            Some(Value::Object(m)) => cur = m,
            Some(other) if walk.create.is_some() => {
                return Err(MergeError::from(MergeErrorKind::JsonNotObject {
                    pointer: walk.pointer.to_string(),
                    step: pointer_string(&segs[..=i]),
                    found: type_name(other),
                }))
            }
            _ => return Ok(None),
        }
    }
    Ok(Some(cur))
}

/// The array at `segs` (see [`object_at`]); a walk that creates adds a missing one.
fn array_at<'v>(root: &'v mut Obj, segs: &[String], walk: &mut Walk<'_>) -> Found<'v, Vec<Value>> {
    let Some((last, parents)) = segs.split_last() else {
        return Ok(None);
    };
    let Some(parent) = object_at(root, parents, walk)? else {
        return Ok(None);
    };
    if !walk.ensure(parent, last, Value::Array(Vec::new()), segs) {
        return Ok(None);
    }
    match parent.get_mut(last) {
        Some(Value::Array(a)) => Ok(Some(a)),
        Some(other) if walk.create.is_some() => {
            Err(MergeError::from(MergeErrorKind::JsonNotArray {
                pointer: walk.pointer.to_string(),
                found: type_name(other),
            }))
        }
        _ => Ok(None),
    }
}

fn dedup(items: &[Value]) -> Vec<&Value> {
    let mut out: Vec<&Value> = Vec::new();
    for v in items {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// Retracts `prev` items no longer `desired` (one occurrence each, the last: an identical
/// user item survives), then appends the desired items not present. Returns the items
/// ContextOS owns now and whether the array changed.
fn merge_items(arr: &mut Vec<Value>, desired: &[Value], prev: &[Value]) -> (Vec<Value>, bool) {
    let wanted = dedup(desired);
    let mut changed = false;
    for p in dedup(prev) {
        if !wanted.contains(&p) {
            if let Some(i) = arr.iter().rposition(|v| v == p) {
                arr.remove(i);
                changed = true;
            }
        }
    }
    let mut owned = Vec::new();
    for d in wanted {
        if arr.contains(d) {
            if prev.contains(d) {
                owned.push(d.clone());
            }
        } else {
            arr.push(d.clone());
            owned.push(d.clone());
            changed = true;
        }
    }
    (owned, changed)
}

fn is_marked(v: &Value, marker: &str) -> bool {
    // Serialising a `Value` cannot fail; if it did, the element is kept as the user's.
    serde_json::to_string(v).is_ok_and(|s| s.contains(marker))
}

/// Replaces the elements containing `marker` by `items`, at the position of the first
/// one (appended when there is none), so a re-run leaves the array as it is.
fn merge_hooks(arr: &mut Vec<Value>, marker: &str, items: &[Value]) -> bool {
    let ours: Vec<&Value> = arr.iter().filter(|v| is_marked(v, marker)).collect();
    if ours.len() == items.len() && ours.iter().zip(items).all(|(a, b)| *a == b) {
        return false;
    }
    let first = arr
        .iter()
        .position(|v| is_marked(v, marker))
        .unwrap_or(arr.len());
    arr.retain(|v| !is_marked(v, marker));
    let first = first.min(arr.len());
    arr.splice(first..first, items.iter().cloned());
    true
}

/// The result of merging owned parts into a JSON file.
pub(crate) struct JsonMerge {
    /// 2-space pretty JSON and a trailing newline (CRLF when the file used CRLF).
    pub(crate) text: String,
    pub(crate) owned: OwnedJson,
    /// The document differs from the one on disk (formatting aside).
    pub(crate) changed: bool,
    /// The file is ContextOS's own and nothing is left in it: delete it.
    pub(crate) delete: bool,
    /// Owned pointers whose content changed.
    pub(crate) touched: Vec<String>,
}

pub(crate) fn merge_json(
    existing: Option<&str>,
    parts: &[JsonPart],
    prev: &OwnedJson,
) -> Result<JsonMerge, MergeError> {
    // Validate everything before touching anything.
    let mut parsed: Vec<(Vec<String>, &JsonPart)> = Vec::new();
    for part in parts {
        let pointer = part_pointer(part);
        let segs = parse_pointer(pointer)?;
        if let JsonPart::Hooks { marker, items, .. } = part {
            if marker.is_empty() {
                return Err(MergeError::from(MergeErrorKind::HookMarker {
                    pointer: pointer.to_string(),
                    message: "the hook marker is empty".into(),
                }));
            }
            if let Some(i) = items.iter().position(|v| !is_marked(v, marker)) {
                return Err(MergeError::from(MergeErrorKind::HookMarker {
                    pointer: pointer.to_string(),
                    message: format!("hook item {i} does not contain its marker {marker:?}"),
                }));
            }
        }
        if let Some((_, other)) = parsed.iter().find(|(s, _)| {
            let n = s.len().min(segs.len());
            s[..n] == segs[..n]
        }) {
            return Err(MergeError::from(MergeErrorKind::JsonPartsOverlap {
                first: part_pointer(other).to_string(),
                second: pointer.to_string(),
            }));
        }
        parsed.push((segs, part));
    }

    let eol = existing.map_or("\n", detect_eol);
    let (original, mut created) = match existing {
        Some(text) => (Some(parse_json_object(text)?), prev.created.clone()),
        None => (None, BTreeSet::from([String::new()])),
    };
    let mut root = original.clone().unwrap_or_default();
    let mut touched: Vec<String> = Vec::new();
    let mut owned = OwnedJson::default();
    let same_part = |ptr: &str, kind: fn(&JsonPart) -> bool| {
        parts.iter().any(|p| part_pointer(p) == ptr && kind(p))
    };

    // 1. Retract what ContextOS owned and no part claims any more.
    for (ptr, value) in &prev.keys {
        if same_part(ptr, |p| {
            matches!(p, JsonPart::Key { .. } | JsonPart::Strictest { .. })
        }) {
            continue;
        }
        let segs = parse_pointer(ptr)?;
        if let Some((last, parents)) = segs.split_last() {
            if let Some(obj) = object_at(&mut root, parents, &mut Walk::find(ptr))? {
                if obj.get(last) == Some(value) {
                    obj.shift_remove(last);
                    touched.push(ptr.clone());
                }
            }
        }
    }
    for (ptr, items) in &prev.items {
        if same_part(ptr, |p| matches!(p, JsonPart::Items { .. })) {
            continue;
        }
        let segs = parse_pointer(ptr)?;
        if let Some(arr) = array_at(&mut root, &segs, &mut Walk::find(ptr))? {
            if merge_items(arr, &[], items).1 {
                touched.push(ptr.clone());
            }
        }
    }
    for (ptr, marker) in &prev.hooks {
        let kept = parts.iter().any(|p| {
            matches!(p, JsonPart::Hooks { pointer, marker: m, .. } if pointer == ptr && m == marker)
        });
        if kept {
            continue;
        }
        let segs = parse_pointer(ptr)?;
        if let Some(arr) = array_at(&mut root, &segs, &mut Walk::find(ptr))? {
            if merge_hooks(arr, marker, &[]) {
                touched.push(ptr.clone());
            }
        }
    }

    // 2. Apply the parts, in order.
    for (segs, part) in &parsed {
        match part {
            JsonPart::Key { pointer, value } => {
                let Some((last, parents)) = segs.split_last() else {
                    continue;
                };
                let obj = object_at(
                    &mut root,
                    parents,
                    &mut Walk::make(pointer, true, &mut created),
                )?;
                let Some(obj) = obj else { continue };
                if obj.get(last) == Some(value) {
                    if prev.keys.get(pointer) == Some(value) {
                        owned.keys.insert(pointer.clone(), value.clone());
                    }
                } else {
                    obj.insert(last.clone(), value.clone());
                    owned.keys.insert(pointer.clone(), value.clone());
                    touched.push(pointer.clone());
                }
            }
            JsonPart::Strictest {
                pointer,
                value,
                ladder,
            } => {
                let Some((last, parents)) = segs.split_last() else {
                    continue;
                };
                let obj = object_at(
                    &mut root,
                    parents,
                    &mut Walk::make(pointer, true, &mut created),
                )?;
                let Some(obj) = obj else { continue };
                let rank = |v: &Value| ladder.iter().position(|l| l == v);
                // A stricter word ContextOS wrote itself follows the policies; only the
                // user's own is kept.
                let theirs = obj.get(last).filter(|v| prev.keys.get(pointer) != Some(*v));
                let stricter = match (theirs.and_then(rank), rank(value)) {
                    (Some(there), Some(ours)) => there > ours,
                    _ => false,
                };
                if obj.get(last) == Some(value) {
                    if prev.keys.get(pointer) == Some(value) {
                        owned.keys.insert(pointer.clone(), value.clone());
                    }
                } else if !stricter {
                    obj.insert(last.clone(), value.clone());
                    owned.keys.insert(pointer.clone(), value.clone());
                    touched.push(pointer.clone());
                }
            }
            JsonPart::Items { pointer, items } => {
                let prev_items = prev.items.get(pointer).map_or(&[][..], Vec::as_slice);
                // An empty list needs no array: none is created for it.
                let mut walk = Walk::make(pointer, !items.is_empty(), &mut created);
                if let Some(arr) = array_at(&mut root, segs, &mut walk)? {
                    let (mine, changed) = merge_items(arr, items, prev_items);
                    if changed {
                        touched.push(pointer.clone());
                    }
                    if !mine.is_empty() {
                        owned.items.insert(pointer.clone(), mine);
                    }
                }
            }
            JsonPart::Hooks {
                pointer,
                marker,
                items,
            } => {
                let mut walk = Walk::make(pointer, !items.is_empty(), &mut created);
                if let Some(arr) = array_at(&mut root, segs, &mut walk)? {
                    if merge_hooks(arr, marker, items) {
                        touched.push(pointer.clone());
                    }
                }
                if !items.is_empty() {
                    owned.hooks.insert(pointer.clone(), marker.clone());
                }
            }
        }
    }

    // 3. Containers ContextOS created and that are empty now go; the rest stay recorded.
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
        let Some(parent) = object_at(&mut root, parents, &mut Walk::find(&ptr))? else {
            continue;
        };
        let empty = match parent.get(last) {
            Some(Value::Object(m)) => m.is_empty(),
            Some(Value::Array(a)) => a.is_empty(),
            Some(_) => false,
            None => continue,
        };
        if empty {
            parent.shift_remove(last);
            touched.push(ptr);
        } else {
            owned.created.insert(ptr);
        }
    }
    let delete = created.contains("") && root.is_empty();
    if created.contains("") && !delete {
        owned.created.insert(String::new());
    }

    let doc = Value::Object(root);
    let changed = match &original {
        Some(o) => doc != Value::Object(o.clone()),
        None => !delete,
    };
    let pretty = serde_json::to_string_pretty(&doc).map_err(|e| {
        MergeError::from(MergeErrorKind::Serialize {
            message: e.to_string(),
        })
    })?;
    touched.sort();
    touched.dedup();
    Ok(JsonMerge {
        text: with_eol(&format!("{pretty}\n"), eol),
        owned,
        changed,
        delete,
        touched,
    })
}

fn part_pointer(p: &JsonPart) -> &str {
    match p {
        JsonPart::Key { pointer, .. }
        | JsonPart::Strictest { pointer, .. }
        | JsonPart::Items { pointer, .. }
        | JsonPart::Hooks { pointer, .. } => pointer,
    }
}

/// Merges ContextOS's `parts` into a JSON file people also edit, and returns the new text
/// with what ContextOS owns now.
///
/// `existing` is parsed strictly (syntax errors, duplicate keys and a non-object root are
/// refused: the file is never overwritten). User keys keep their order; new keys and
/// objects are appended.
/// - `Key` sets the value at the pointer (ContextOS's from then on).
/// - `Strictest` sets it likewise, unless a stricter word of its ladder is there already:
///   that one is the user's, kept and not owned.
/// - `Items`: the items ContextOS added before (`previously_owned`) and no longer wants
///   are removed; wanted items not present are appended. An identical item already in
///   the array stays the user's (not duplicated, never retracted).
/// - `Hooks`: every element whose compact serialisation contains `marker` is replaced by
///   `items`, in the place of the first of them (appended when there is none).
///
/// Parts of `previously_owned` that no part claims any more are retracted; a key is
/// removed only while it still holds the value ContextOS set. Containers ContextOS created
/// are removed again once empty. Hand-written items are never removed. Output: 2-space
/// pretty JSON with a trailing newline, CRLF if the file used CRLF.
pub fn apply_json(
    existing: Option<&str>,
    parts: &[JsonPart],
    previously_owned: &OwnedJson,
) -> Result<(String, OwnedJson), MergeError> {
    let m = merge_json(existing, parts, previously_owned)?;
    Ok((m.text, m.owned))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    // ----- JSON ---------------------------------------------------------------------

    pub(crate) fn items(pointer: &str, items: &[Value]) -> JsonPart {
        JsonPart::Items {
            pointer: pointer.into(),
            items: items.to_vec(),
        }
    }

    pub(crate) fn key(pointer: &str, value: Value) -> JsonPart {
        JsonPart::Key {
            pointer: pointer.into(),
            value,
        }
    }

    pub(crate) const MARK: &str = "contextos hook";

    pub(crate) fn hooks(pointer: &str, items: &[Value]) -> JsonPart {
        JsonPart::Hooks {
            pointer: pointer.into(),
            marker: MARK.into(),
            items: items.to_vec(),
        }
    }

    pub(crate) fn ours_hook(arg: &str) -> Value {
        json!({"matcher": "*", "hooks": [{"type": "command", "command": format!("contextos hook {arg}")}]})
    }

    fn strictest(pointer: &str, value: &str) -> JsonPart {
        JsonPart::Strictest {
            pointer: pointer.into(),
            value: json!(value),
            ladder: vec![json!("allow"), json!("ask"), json!("deny")],
        }
    }

    /// A stricter word the user wrote stays (and is not ContextOS's); a looser one, a
    /// missing one or another value is replaced; a stricter word ContextOS wrote itself
    /// follows the policies down again.
    #[test]
    fn strictest_never_loosens_the_users_value() {
        let user = r#"{"permission": {"edit": "deny", "webfetch": "allow", "bash": {"x": 1}}}"#;
        let parts = [
            strictest("/permission/edit", "ask"),
            strictest("/permission/webfetch", "ask"),
            strictest("/permission/bash", "deny"),
            strictest("/permission/read", "ask"),
        ];
        let (text, owned) = apply_json(Some(user), &parts, &OwnedJson::default()).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v["permission"],
            json!({"edit": "deny", "webfetch": "ask", "bash": "deny", "read": "ask"})
        );
        assert!(!owned.keys.contains_key("/permission/edit"), "{owned:?}");
        assert_eq!(owned.keys["/permission/webfetch"], json!("ask"));
        // Ours was `deny`; the policies now say `ask`: ours follows.
        let (text, owned) =
            apply_json(Some(&text), &[strictest("/permission/bash", "ask")], &owned).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["permission"]["bash"], "ask");
        // The user's `deny` at `edit` survives the retraction of every other part.
        assert_eq!(v["permission"]["edit"], "deny");
        assert_eq!(owned.keys["/permission/bash"], json!("ask"));
    }

    #[test]
    fn json_keeps_user_keys_in_order_and_appends_new_ones() {
        let user = r#"{"zeta": 1, "alpha": {"y": 2, "b": [3]}, "mid": "x"}"#;
        let parts = [
            key("/alpha/new", json!(true)),
            items("/permissions/deny", &[json!("Read(.env)")]),
        ];
        let (text, owned) = apply_json(Some(user), &parts, &OwnedJson::default()).unwrap();
        let want = r#"{
  "zeta": 1,
  "alpha": {
    "y": 2,
    "b": [
      3
    ],
    "new": true
  },
  "mid": "x",
  "permissions": {
    "deny": [
      "Read(.env)"
    ]
  }
}
"#;
        assert_eq!(text, want);
        assert_eq!(owned.keys.get("/alpha/new"), Some(&json!(true)));
        assert_eq!(
            owned.created,
            BTreeSet::from(["/permissions".to_string(), "/permissions/deny".to_string()])
        );
        // Idempotent: same text, same ownership.
        let (again, owned2) = apply_json(Some(&text), &parts, &owned).unwrap();
        assert_eq!(again, text);
        assert_eq!(owned2, owned);
    }

    #[test]
    fn json_items_replaced_user_items_kept_including_identical_ones() {
        let user = r#"{"permissions": {"deny": ["Read(.env)", "Mine(x)"]}}"#;
        let first = [items(
            "/permissions/deny",
            &[json!("Read(.env)"), json!("Bash(rm -rf /)")],
        )];
        let (t1, o1) = apply_json(Some(user), &first, &OwnedJson::default()).unwrap();
        let v: Value = serde_json::from_str(&t1).unwrap();
        assert_eq!(
            v["permissions"]["deny"],
            json!(["Read(.env)", "Mine(x)", "Bash(rm -rf /)"])
        );
        // The identical user item is not claimed.
        assert_eq!(o1.items["/permissions/deny"], vec![json!("Bash(rm -rf /)")]);

        // A rule is removed and another added: ours retracted, the user's stay.
        let second = [items("/permissions/deny", &[json!("Edit(migrations/**)")])];
        let (t2, o2) = apply_json(Some(&t1), &second, &o1).unwrap();
        let v: Value = serde_json::from_str(&t2).unwrap();
        assert_eq!(
            v["permissions"]["deny"],
            json!(["Read(.env)", "Mine(x)", "Edit(migrations/**)"])
        );
        assert_eq!(
            o2.items["/permissions/deny"],
            vec![json!("Edit(migrations/**)")]
        );

        // Every rule removed: only the user's items remain; their array was not ours.
        let (t3, o3) = apply_json(Some(&t2), &[], &o2).unwrap();
        let v: Value = serde_json::from_str(&t3).unwrap();
        assert_eq!(v["permissions"]["deny"], json!(["Read(.env)", "Mine(x)"]));
        assert!(o3.is_empty());
    }

    #[test]
    fn json_retraction_of_a_duplicated_item_keeps_the_users_copy() {
        let prev = OwnedJson {
            items: BTreeMap::from([("/deny".to_string(), vec![json!("X")])]),
            ..OwnedJson::default()
        };
        let (t, _) = apply_json(Some(r#"{"deny": ["X", "X"]}"#), &[], &prev).unwrap();
        let v: Value = serde_json::from_str(&t).unwrap();
        assert_eq!(v["deny"], json!(["X"]));
    }

    #[test]
    fn json_hooks_replaced_by_marker_users_hook_stays() {
        let user_hook =
            json!({"matcher": "Bash", "hooks": [{"type": "command", "command": "./my-check.sh"}]});
        let existing = json!({
            "hooks": {"PreToolUse": [ours_hook("--old"), user_hook.clone(), ours_hook("--older")]},
            "other": 1
        })
        .to_string();
        let parts = [hooks("/hooks/PreToolUse", &[ours_hook("--new")])];
        let (t, owned) = apply_json(Some(&existing), &parts, &OwnedJson::default()).unwrap();
        let v: Value = serde_json::from_str(&t).unwrap();
        assert_eq!(
            v["hooks"]["PreToolUse"],
            json!([ours_hook("--new"), user_hook.clone()])
        );
        assert_eq!(owned.hooks["/hooks/PreToolUse"], MARK);
        // Idempotent.
        let (t2, owned2) = apply_json(Some(&t), &parts, &owned).unwrap();
        assert_eq!((t2.as_str(), &owned2), (t.as_str(), &owned));
        // Retracted: only the user's hook is left.
        let (t3, _) = apply_json(Some(&t), &[], &owned).unwrap();
        let v: Value = serde_json::from_str(&t3).unwrap();
        assert_eq!(v["hooks"]["PreToolUse"], json!([user_hook]));
        assert_eq!(v["other"], json!(1));
    }

    #[test]
    fn json_previously_owned_keys_retracted_unless_changed_by_the_user() {
        let parts = [key("/$schema", json!("https://x/schema.json"))];
        let (t, owned) = apply_json(Some(r#"{"a": 1}"#), &parts, &OwnedJson::default()).unwrap();
        assert_eq!(owned.keys["/$schema"], json!("https://x/schema.json"));
        let (gone, o2) = apply_json(Some(&t), &[], &owned).unwrap();
        assert_eq!(gone, "{\n  \"a\": 1\n}\n");
        assert!(o2.is_empty());
        let changed = t.replace("https://x/schema.json", "https://mine");
        let (kept, _) = apply_json(Some(&changed), &[], &owned).unwrap();
        assert!(kept.contains("https://mine"));
    }

    #[test]
    fn json_created_containers_are_removed_when_empty() {
        let parts = [
            items("/permissions/deny", &[json!("A")]),
            hooks("/hooks/PreToolUse", &[ours_hook("")]),
        ];
        let (t, owned) = apply_json(None, &parts, &OwnedJson::default()).unwrap();
        assert!(owned.created.contains(""));
        let m = merge_json(Some(&t), &[], &owned).unwrap();
        assert!(m.delete);
        assert_eq!(m.text, "{}\n");
        // A user key in a container ContextOS created keeps it.
        let with_user = t.replace("\"deny\": [", "\"allow\": [\"Mine\"],\n    \"deny\": [");
        let m = merge_json(Some(&with_user), &[], &owned).unwrap();
        assert!(!m.delete);
        let v: Value = serde_json::from_str(&m.text).unwrap();
        assert_eq!(v, json!({"permissions": {"allow": ["Mine"]}}));
        assert_eq!(
            m.owned.created,
            BTreeSet::from([String::new(), "/permissions".into()])
        );
    }

    #[test]
    fn json_crlf_file_stays_crlf() {
        let (t, _) = apply_json(
            Some("{\r\n  \"a\": 1\r\n}\r\n"),
            &[key("/b", json!(2))],
            &OwnedJson::default(),
        )
        .unwrap();
        assert_eq!(t, "{\r\n  \"a\": 1,\r\n  \"b\": 2\r\n}\r\n");
    }

    #[test]
    fn json_refusals() {
        let none = OwnedJson::default();
        let p = [key("/a", json!(1))];
        let e = apply_json(Some("{\n  \"a\": 1,\n}"), &p, &none).unwrap_err();
        assert!(
            matches!(e.kind, MergeErrorKind::JsonSyntax { line: 3, .. }),
            "{e:?}"
        );
        assert_eq!(e.code(), "emit.json.syntax");
        assert!(matches!(
            apply_json(Some(""), &p, &none).unwrap_err().kind,
            MergeErrorKind::JsonSyntax { .. }
        ));
        assert_eq!(
            apply_json(Some("[1, 2]"), &p, &none).unwrap_err().kind,
            MergeErrorKind::JsonRoot { found: "an array" }
        );
        let e = apply_json(Some("{\"a\": {\"x\": 1,\n \"x\": 2}}"), &p, &none).unwrap_err();
        assert!(
            matches!(&e.kind, MergeErrorKind::JsonDuplicateKey { line: 2, key, .. } if key == "x"),
            "{e:?}"
        );
        let e = apply_json(Some(r#"{"a": 5}"#), &[key("/a/b", json!(1))], &none).unwrap_err();
        assert!(
            matches!(&e.kind, MergeErrorKind::JsonNotObject { step, found: "a number", .. } if step == "/a"),
            "{e:?}"
        );
        let e = apply_json(Some(r#"{"a": [1]}"#), &[key("/a/0", json!(1))], &none).unwrap_err();
        assert_eq!(e.code(), "emit.json.not-object");
        let e = apply_json(Some(r#"{"d": {}}"#), &[items("/d", &[json!(1)])], &none).unwrap_err();
        assert_eq!(e.code(), "emit.json.not-array");
        let e = apply_json(None, &[key("", json!(1))], &none).unwrap_err();
        assert_eq!(e.code(), "emit.json.pointer");
        let e = apply_json(None, &[key("/a~2", json!(1))], &none).unwrap_err();
        assert_eq!(e.code(), "emit.json.pointer");
        let e = apply_json(
            None,
            &[key("/p", json!({})), items("/p/deny", &[json!(1)])],
            &none,
        )
        .unwrap_err();
        assert_eq!(e.code(), "emit.json.parts-overlap");
        let e =
            apply_json(None, &[hooks("/h", &[json!({"command": "other"})])], &none).unwrap_err();
        assert_eq!(e.code(), "emit.json.hook-marker");
    }

    #[test]
    fn json_pointer_escapes() {
        let (t, owned) =
            apply_json(None, &[key("/a~1b/c~0d", json!(1))], &OwnedJson::default()).unwrap();
        let v: Value = serde_json::from_str(&t).unwrap();
        assert_eq!(v, json!({"a/b": {"c~d": 1}}));
        assert!(owned.created.contains("/a~1b"));
    }
}
