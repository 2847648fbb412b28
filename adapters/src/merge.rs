//! Writing emitter [`Output`]s into files people also edit — pure functions, no file system.
//!
//! - **Managed blocks** ([`apply_block`], [`read_block`], [`remove_block`]): ContextOS's
//!   text between [`BLOCK_BEGIN`] and [`BLOCK_END`], each on its own line, inside a
//!   Markdown file; everything outside the markers is kept byte for byte, line endings
//!   included. Malformed markers (duplicated, reversed, unclosed, unopened, inline) are
//!   refused with their line numbers: nothing is written.
//! - **Owned JSON** ([`apply_json`]): ContextOS's keys, array items and hook registrations
//!   in a JSON file (strictly parsed: syntax errors, duplicate keys and a non-object root
//!   are refused). User keys keep their order; hand-written items are never removed, so a
//!   user's own `deny` survives every run. What ContextOS owns is recorded in
//!   [`OwnedJson`] so entries of removed rules are retracted later.
//! - **Ownership lock** ([`OwnershipLock`], [`render_lock`], [`parse_lock`]),
//!   `.contextos/lock.json`: which files (or parts) ContextOS owns and the hashes of the
//!   bytes it wrote. Deterministic: byte-wise ordering, no timestamps or counters.
//! - **Planning and drift** ([`plan`], [`plan_targets`]): the full new text of every file
//!   to write, the files to delete, the next lock, and the [`Drift`] between disk and
//!   what would be written. The plan is all-or-nothing: when [`Plan::refused`] is true
//!   (a file ContextOS does not own is in the way, or two outputs claim one path) the
//!   caller must write nothing at all.
//!
//! Ownership comes from the lock only, never from sniffing marker strings — except the
//! hook registrations of [`JsonPart::Hooks`], which are recognised by their marker by
//! design.

use super::{Content, JsonPart, Output, Target};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// Opens ContextOS's managed block; must be alone on its line.
pub const BLOCK_BEGIN: &str = "<!-- contextos:begin -->";
/// Closes ContextOS's managed block; must be alone on its line.
pub const BLOCK_END: &str = "<!-- contextos:end -->";
/// Where the caller keeps the [`OwnershipLock`]; [`DriftClass::StaleInput`] names it.
pub const LOCK_PATH: &str = ".contextos/lock.json";
/// The only lock format this version reads and writes.
pub const LOCK_VERSION: u32 = 1;

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

/// Why a file cannot be merged: nothing may be written. `path` is empty when the error
/// comes from a pure function that was not told the file's name ([`plan`] fills it in).
/// Line and column numbers are 1-based.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    #[error("{}:{line}: `{marker}` appears again (first on line {first}); refusing to write", at(.path))]
    DuplicateMarker {
        path: String,
        line: usize,
        first: usize,
        marker: &'static str,
    },
    #[error("{}:{line}: `{BLOCK_END}` comes before `{BLOCK_BEGIN}` (line {begin}); refusing to write", at(.path))]
    ReversedMarkers {
        path: String,
        line: usize,
        begin: usize,
    },
    #[error("{}:{line}: `{BLOCK_BEGIN}` has no matching `{BLOCK_END}`; refusing to write", at(.path))]
    UnclosedBlock { path: String, line: usize },
    #[error("{}:{line}: `{BLOCK_END}` has no `{BLOCK_BEGIN}` before it; refusing to write", at(.path))]
    UnopenedBlock { path: String, line: usize },
    #[error("{}:{line}: `{marker}` must be alone on its line; refusing to write", at(.path))]
    InlineMarker {
        path: String,
        line: usize,
        marker: &'static str,
    },
    #[error("{}: line {line} of the generated block contains a block marker (emitter bug)", at(.path))]
    MarkerInBlockText { path: String, line: usize },
    #[error("{}:{line}:{column}: invalid JSON: {message}; refusing to overwrite", at(.path))]
    JsonSyntax {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{}:{line}:{column}: duplicate key {key:?}; refusing to overwrite", at(.path))]
    JsonDuplicateKey {
        path: String,
        line: usize,
        column: usize,
        key: String,
    },
    #[error("{}: the JSON root is {found}, not an object; refusing to overwrite", at(.path))]
    JsonRoot { path: String, found: &'static str },
    #[error("{}: invalid JSON pointer {pointer:?}: {message}", at(.path))]
    JsonPointer {
        path: String,
        pointer: String,
        message: String,
    },
    #[error("{}: {pointer}: {step} is {found}, not an object; refusing to overwrite", at(.path))]
    JsonNotObject {
        path: String,
        pointer: String,
        step: String,
        found: &'static str,
    },
    #[error("{}: {pointer} is {found}, not an array; refusing to overwrite", at(.path))]
    JsonNotArray {
        path: String,
        pointer: String,
        found: &'static str,
    },
    #[error("{}: the owned JSON parts {first} and {second} overlap (emitter bug)", at(.path))]
    JsonPartsOverlap {
        path: String,
        first: String,
        second: String,
    },
    #[error("{}: {pointer}: {message} (emitter bug)", at(.path))]
    HookMarker {
        path: String,
        pointer: String,
        message: String,
    },
    #[error("{}: cannot serialise JSON: {message}", at(.path))]
    Serialize { path: String, message: String },
    #[error("{}:{line}:{column}: invalid ownership lock: {message}", at(.path))]
    LockSyntax {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{}: unsupported ownership lock version {found} (this ContextOS reads version {LOCK_VERSION})", at(.path))]
    LockVersion { path: String, found: String },
    #[error("{}: invalid ownership lock: {message}", at(.path))]
    LockField { path: String, message: String },
    #[error("{}: the caller did not read this file before planning", at(.path))]
    NotRead { path: String },
}

fn at(path: &str) -> &str {
    if path.is_empty() {
        "<text>"
    } else {
        path
    }
}

impl MergeError {
    /// Stable, documented reason code.
    pub fn code(&self) -> &'static str {
        match self {
            MergeError::DuplicateMarker { .. } => "emit.block.duplicate-marker",
            MergeError::ReversedMarkers { .. } => "emit.block.reversed-markers",
            MergeError::UnclosedBlock { .. } => "emit.block.unclosed",
            MergeError::UnopenedBlock { .. } => "emit.block.unopened",
            MergeError::InlineMarker { .. } => "emit.block.inline-marker",
            MergeError::MarkerInBlockText { .. } => "emit.block.marker-in-text",
            MergeError::JsonSyntax { .. } => "emit.json.syntax",
            MergeError::JsonDuplicateKey { .. } => "emit.json.duplicate-key",
            MergeError::JsonRoot { .. } => "emit.json.root-not-object",
            MergeError::JsonPointer { .. } => "emit.json.pointer",
            MergeError::JsonNotObject { .. } => "emit.json.not-object",
            MergeError::JsonNotArray { .. } => "emit.json.not-array",
            MergeError::JsonPartsOverlap { .. } => "emit.json.parts-overlap",
            MergeError::HookMarker { .. } => "emit.json.hook-marker",
            MergeError::Serialize { .. } => "emit.json.serialize",
            MergeError::LockSyntax { .. } => "emit.lock.syntax",
            MergeError::LockVersion { .. } => "emit.lock.version",
            MergeError::LockField { .. } => "emit.lock.field",
            MergeError::NotRead { .. } => "emit.plan.not-read",
        }
    }

    /// The file the error is about (empty when not known).
    pub fn path(&self) -> &str {
        match self {
            MergeError::DuplicateMarker { path, .. }
            | MergeError::ReversedMarkers { path, .. }
            | MergeError::UnclosedBlock { path, .. }
            | MergeError::UnopenedBlock { path, .. }
            | MergeError::InlineMarker { path, .. }
            | MergeError::MarkerInBlockText { path, .. }
            | MergeError::JsonSyntax { path, .. }
            | MergeError::JsonDuplicateKey { path, .. }
            | MergeError::JsonRoot { path, .. }
            | MergeError::JsonPointer { path, .. }
            | MergeError::JsonNotObject { path, .. }
            | MergeError::JsonNotArray { path, .. }
            | MergeError::JsonPartsOverlap { path, .. }
            | MergeError::HookMarker { path, .. }
            | MergeError::Serialize { path, .. }
            | MergeError::LockSyntax { path, .. }
            | MergeError::LockVersion { path, .. }
            | MergeError::LockField { path, .. }
            | MergeError::NotRead { path } => path,
        }
    }

    /// The same error, located in `file`.
    pub fn with_path(mut self, file: &str) -> MergeError {
        match &mut self {
            MergeError::DuplicateMarker { path, .. }
            | MergeError::ReversedMarkers { path, .. }
            | MergeError::UnclosedBlock { path, .. }
            | MergeError::UnopenedBlock { path, .. }
            | MergeError::InlineMarker { path, .. }
            | MergeError::MarkerInBlockText { path, .. }
            | MergeError::JsonSyntax { path, .. }
            | MergeError::JsonDuplicateKey { path, .. }
            | MergeError::JsonRoot { path, .. }
            | MergeError::JsonPointer { path, .. }
            | MergeError::JsonNotObject { path, .. }
            | MergeError::JsonNotArray { path, .. }
            | MergeError::JsonPartsOverlap { path, .. }
            | MergeError::HookMarker { path, .. }
            | MergeError::Serialize { path, .. }
            | MergeError::LockSyntax { path, .. }
            | MergeError::LockVersion { path, .. }
            | MergeError::LockField { path, .. }
            | MergeError::NotRead { path } => *path = file.to_string(),
        }
        self
    }
}

// ---------------------------------------------------------------------------------------
// Text helpers
// ---------------------------------------------------------------------------------------

/// One line of a text: `start..end` is its content (without `\n`, but with a `\r` before
/// it, if any); `next` is where the following line starts.
#[derive(Debug, Clone, Copy)]
struct Line {
    number: usize,
    start: usize,
    end: usize,
    next: usize,
}

fn lines(text: &str) -> Vec<Line> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut number = 1;
    while start < text.len() {
        let (end, next) = match text[start..].find('\n') {
            Some(i) => (start + i, start + i + 1),
            None => (text.len(), text.len()),
        };
        out.push(Line {
            number,
            start,
            end,
            next,
        });
        start = next;
        number += 1;
    }
    out
}

/// The line ending of the first line break (`\n` when there is none).
fn detect_eol(text: &str) -> &'static str {
    match text.find('\n') {
        Some(i) if text[..i].ends_with('\r') => "\r\n",
        _ => "\n",
    }
}

fn with_eol(lf_text: &str, eol: &str) -> String {
    if eol == "\n" {
        lf_text.to_string()
    } else {
        lf_text.replace('\n', eol)
    }
}

/// The text [`LockedFile::normalized_sha256`] hashes: CRLF → LF, trailing whitespace of
/// every line removed. Nothing else (a BOM, for instance, is a change).
pub fn normalize(text: &str) -> String {
    text.replace("\r\n", "\n")
        .split('\n')
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Lowercase hex SHA-256 of `text`'s bytes.
pub fn sha256_hex(text: &str) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

// ---------------------------------------------------------------------------------------
// Managed blocks
// ---------------------------------------------------------------------------------------

/// The well-formed marker pair of `text`, if any.
fn find_markers(text: &str) -> Result<Option<(Line, Line)>, MergeError> {
    let mut begin: Option<Line> = None;
    let mut end: Option<Line> = None;
    for l in lines(text) {
        let content = &text[l.start..l.end];
        let has_begin = content.contains(BLOCK_BEGIN);
        let has_end = content.contains(BLOCK_END);
        if !has_begin && !has_end {
            continue;
        }
        let (marker, slot) = match content.trim() {
            t if t == BLOCK_BEGIN => (BLOCK_BEGIN, &mut begin),
            t if t == BLOCK_END => (BLOCK_END, &mut end),
            _ => {
                return Err(MergeError::InlineMarker {
                    path: String::new(),
                    line: l.number,
                    marker: if has_begin { BLOCK_BEGIN } else { BLOCK_END },
                })
            }
        };
        if let Some(first) = slot {
            return Err(MergeError::DuplicateMarker {
                path: String::new(),
                line: l.number,
                first: first.number,
                marker,
            });
        }
        *slot = Some(l);
    }
    match (begin, end) {
        (None, None) => Ok(None),
        (Some(b), None) => Err(MergeError::UnclosedBlock {
            path: String::new(),
            line: b.number,
        }),
        (None, Some(e)) => Err(MergeError::UnopenedBlock {
            path: String::new(),
            line: e.number,
        }),
        (Some(b), Some(e)) if e.number < b.number => Err(MergeError::ReversedMarkers {
            path: String::new(),
            line: e.number,
            begin: b.number,
        }),
        (Some(b), Some(e)) => Ok(Some((b, e))),
    }
}

/// The inside of a block as ContextOS writes it: LF, no trailing blank lines, every line
/// terminated. The text must not contain a marker, or the next read would refuse the file.
fn block_inner(block: &str) -> Result<String, MergeError> {
    let lf = block.replace("\r\n", "\n");
    let trimmed = lf.trim_end_matches('\n');
    for (i, l) in trimmed.split('\n').enumerate() {
        if l.contains(BLOCK_BEGIN) || l.contains(BLOCK_END) {
            return Err(MergeError::MarkerInBlockText {
                path: String::new(),
                line: i + 1,
            });
        }
    }
    Ok(if trimmed.is_empty() {
        String::new()
    } else {
        format!("{trimmed}\n")
    })
}

fn render_block(inner_lf: &str, eol: &str) -> String {
    format!(
        "{BLOCK_BEGIN}{eol}{}{BLOCK_END}{eol}",
        with_eol(inner_lf, eol)
    )
}

/// Puts `block` into `existing` (a Markdown file people also edit):
/// - no file (or an empty one) ⇒ the block alone: `BEGIN\n{block}\nEND\n`;
/// - no markers ⇒ the user's text (ended by a line break), one blank line, the block;
/// - one well-formed `BEGIN … END` ⇒ only the lines between the markers are replaced.
///
/// Everything outside the block is kept byte for byte; the block takes the file's line
/// ending (that of the `BEGIN` line, or of the first line when appending). Malformed
/// markers are an error: nothing may be written.
pub fn apply_block(existing: Option<&str>, block: &str) -> Result<String, MergeError> {
    let inner = block_inner(block)?;
    let text = match existing {
        None => return Ok(render_block(&inner, "\n")),
        Some(t) => t,
    };
    match find_markers(text)? {
        None if text.is_empty() => Ok(render_block(&inner, "\n")),
        None => {
            let eol = detect_eol(text);
            let mut out = text.to_string();
            if !out.ends_with('\n') {
                out.push_str(eol);
            }
            // One blank line of ContextOS's; [`remove_block`] takes it away again.
            out.push_str(eol);
            out.push_str(&render_block(&inner, eol));
            Ok(out)
        }
        Some((b, e)) => {
            let eol = if text[b.start..b.end].ends_with('\r') {
                "\r\n"
            } else {
                "\n"
            };
            Ok(format!(
                "{}{}{}",
                &text[..b.next],
                with_eol(&inner, eol),
                &text[e.start..]
            ))
        }
    }
}

/// The text between the markers, exactly as in the file (line endings included), or
/// `None` when the file has no block. Malformed markers are an error.
pub fn read_block(text: &str) -> Result<Option<String>, MergeError> {
    Ok(find_markers(text)?.map(|(b, e)| text[b.next..e.start].to_string()))
}

/// `text` without its managed block (markers included); the user's text is kept. When the
/// block ended the file, the blank line [`apply_block`] put before it goes too, so a block
/// appended to a text ending with a line break is removed without a trace. An empty
/// result means nothing but the block was in the file.
pub fn remove_block(text: &str) -> Result<String, MergeError> {
    let Some((b, e)) = find_markers(text)? else {
        return Ok(text.to_string());
    };
    let mut before = &text[..b.start];
    let after = &text[e.next..];
    if after.is_empty() {
        let shorter = before
            .strip_suffix("\r\n")
            .or_else(|| before.strip_suffix('\n'));
        if let Some(shorter) = shorter.filter(|s| s.ends_with('\n')) {
            before = shorter;
        }
    }
    Ok(format!("{before}{after}"))
}

// ---------------------------------------------------------------------------------------
// Strict JSON parsing (duplicate keys refused)
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy)]
struct Strict<'a> {
    duplicate: &'a RefCell<Option<String>>,
}

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("a number out of range"))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(self)? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            if out.contains_key(&k) {
                let msg = format!("duplicate key {k:?}");
                *self.duplicate.borrow_mut() = Some(k);
                return Err(de::Error::custom(msg));
            }
            let v = map.next_value_seed(self)?;
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }
}

/// Why strict parsing failed: (line, column, message, duplicated key).
type ParseFailure = (usize, usize, String, Option<String>);

fn parse_strict(text: &str) -> Result<Value, ParseFailure> {
    let duplicate = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_str(text);
    let result = Strict {
        duplicate: &duplicate,
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v));
    result.map_err(|e| {
        let full = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let message = full.strip_suffix(&suffix).unwrap_or(&full).to_string();
        (e.line(), e.column(), message, duplicate.into_inner())
    })
}

fn parse_json_object(text: &str) -> Result<Map<String, Value>, MergeError> {
    match parse_strict(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(other) => Err(MergeError::JsonRoot {
            path: String::new(),
            found: type_name(&other),
        }),
        Err((line, column, _, Some(key))) => Err(MergeError::JsonDuplicateKey {
            path: String::new(),
            line,
            column,
            key,
        }),
        Err((line, column, message, None)) => Err(MergeError::JsonSyntax {
            path: String::new(),
            line,
            column,
            message,
        }),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

// ---------------------------------------------------------------------------------------
// Owned JSON
// ---------------------------------------------------------------------------------------

/// What ContextOS owns in one JSON file, by RFC 6901 pointer; recorded in the lock so that
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

fn parse_pointer(pointer: &str) -> Result<Vec<String>, MergeError> {
    let bad = |message: &str| MergeError::JsonPointer {
        path: String::new(),
        pointer: pointer.to_string(),
        message: message.to_string(),
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

fn pointer_string(segs: &[String]) -> String {
    segs.iter()
        .map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// The object at `segs`. With `create`, missing objects are added (appended to their
/// parent, and recorded in `created`) and crossing a non-object is an error; without it,
/// a missing or non-object step gives `None`.
fn object_at<'v>(
    root: &'v mut Map<String, Value>,
    segs: &[String],
    pointer: &str,
    create: bool,
    created: &mut BTreeSet<String>,
) -> Result<Option<&'v mut Map<String, Value>>, MergeError> {
    let mut cur = root;
    for (i, seg) in segs.iter().enumerate() {
        if !cur.contains_key(seg) {
            if !create {
                return Ok(None);
            }
            cur.insert(seg.clone(), Value::Object(Map::new()));
            created.insert(pointer_string(&segs[..=i]));
        }
        match cur.get_mut(seg) {
            Some(Value::Object(m)) => cur = m,
            Some(other) if create => {
                return Err(MergeError::JsonNotObject {
                    path: String::new(),
                    pointer: pointer.to_string(),
                    step: pointer_string(&segs[..=i]),
                    found: type_name(other),
                })
            }
            _ => return Ok(None),
        }
    }
    Ok(Some(cur))
}

/// The array at `segs` (see [`object_at`]); with `create` a missing one is added.
fn array_at<'v>(
    root: &'v mut Map<String, Value>,
    segs: &[String],
    pointer: &str,
    create: bool,
    created: &mut BTreeSet<String>,
) -> Result<Option<&'v mut Vec<Value>>, MergeError> {
    let Some((last, parents)) = segs.split_last() else {
        return Ok(None);
    };
    let Some(parent) = object_at(root, parents, pointer, create, created)? else {
        return Ok(None);
    };
    if !parent.contains_key(last) {
        if !create {
            return Ok(None);
        }
        parent.insert(last.clone(), Value::Array(Vec::new()));
        created.insert(pointer_string(segs));
    }
    match parent.get_mut(last) {
        Some(Value::Array(a)) => Ok(Some(a)),
        Some(other) if create => Err(MergeError::JsonNotArray {
            path: String::new(),
            pointer: pointer.to_string(),
            found: type_name(other),
        }),
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
struct JsonMerge {
    /// 2-space pretty JSON and a trailing newline (CRLF when the file used CRLF).
    text: String,
    owned: OwnedJson,
    /// The document differs from the one on disk (formatting aside).
    changed: bool,
    /// The file is ContextOS's own and nothing is left in it: delete it.
    delete: bool,
    /// Owned pointers whose content changed.
    touched: Vec<String>,
}

fn merge_json(
    existing: Option<&str>,
    parts: &[JsonPart],
    prev: &OwnedJson,
) -> Result<JsonMerge, MergeError> {
    // Validate everything before touching anything.
    let mut parsed: Vec<(Vec<String>, &JsonPart)> = Vec::new();
    for part in parts {
        let pointer = match part {
            JsonPart::Key { pointer, .. }
            | JsonPart::Items { pointer, .. }
            | JsonPart::Hooks { pointer, .. } => pointer,
        };
        let segs = parse_pointer(pointer)?;
        if let JsonPart::Hooks { marker, items, .. } = part {
            if marker.is_empty() {
                return Err(MergeError::HookMarker {
                    path: String::new(),
                    pointer: pointer.clone(),
                    message: "the hook marker is empty".into(),
                });
            }
            if let Some(i) = items.iter().position(|v| !is_marked(v, marker)) {
                return Err(MergeError::HookMarker {
                    path: String::new(),
                    pointer: pointer.clone(),
                    message: format!("hook item {i} does not contain its marker {marker:?}"),
                });
            }
        }
        if let Some((_, other)) = parsed.iter().find(|(s, _)| {
            let n = s.len().min(segs.len());
            s[..n] == segs[..n]
        }) {
            return Err(MergeError::JsonPartsOverlap {
                path: String::new(),
                first: part_pointer(other).to_string(),
                second: pointer.clone(),
            });
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
        if same_part(ptr, |p| matches!(p, JsonPart::Key { .. })) {
            continue;
        }
        let segs = parse_pointer(ptr)?;
        if let Some((last, parents)) = segs.split_last() {
            if let Some(obj) = object_at(&mut root, parents, ptr, false, &mut created)? {
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
        if let Some(arr) = array_at(&mut root, &segs, ptr, false, &mut created)? {
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
        if let Some(arr) = array_at(&mut root, &segs, ptr, false, &mut created)? {
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
                let obj = object_at(&mut root, parents, pointer, true, &mut created)?;
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
            JsonPart::Items { pointer, items } => {
                let prev_items = prev.items.get(pointer).map_or(&[][..], Vec::as_slice);
                let create = !items.is_empty();
                if let Some(arr) = array_at(&mut root, segs, pointer, create, &mut created)? {
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
                let create = !items.is_empty();
                if let Some(arr) = array_at(&mut root, segs, pointer, create, &mut created)? {
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
        let mut scratch = BTreeSet::new();
        let Some(parent) = object_at(&mut root, parents, &ptr, false, &mut scratch)? else {
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
    let pretty = serde_json::to_string_pretty(&doc).map_err(|e| MergeError::Serialize {
        path: String::new(),
        message: e.to_string(),
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

// ---------------------------------------------------------------------------------------
// Ownership lock
// ---------------------------------------------------------------------------------------

/// How ContextOS owns a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    /// The whole file ([`Content::Whole`]).
    Whole,
    /// A managed block ([`Content::Block`]).
    Block,
    /// Owned entries of a JSON file ([`Content::Json`]).
    Json,
}

impl FileKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FileKind::Whole => "whole",
            FileKind::Block => "block",
            FileKind::Json => "json",
        }
    }
}

/// One file ContextOS wrote (all of it, or its part of it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedFile {
    /// The [`Target`] whose emitter produced it.
    pub generator: String,
    pub kind: FileKind,
    /// For `json`: the entries ContextOS owns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owned: Option<OwnedJson>,
    /// Lowercase hex SHA-256 of the file's exact bytes after the write.
    pub sha256: String,
    /// SHA-256 of [`normalize`]d text (CRLF → LF, trailing whitespace per line removed).
    pub normalized_sha256: String,
}

/// `.contextos/lock.json`: what ContextOS owns. Deterministic bytes: files sorted
/// byte-wise, fixed field order, no timestamps, revisions or machine data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OwnershipLock {
    /// Always [`LOCK_VERSION`].
    pub version: u32,
    /// Hash of the policy inputs, as given by the caller.
    pub inputs: String,
    /// Project-relative path → what ContextOS owns there.
    pub files: BTreeMap<String, LockedFile>,
}

impl OwnershipLock {
    pub fn new(inputs: &str) -> OwnershipLock {
        OwnershipLock {
            version: LOCK_VERSION,
            inputs: inputs.to_string(),
            files: BTreeMap::new(),
        }
    }
}

/// The lock as 2-space pretty JSON with a trailing newline.
pub fn render_lock(lock: &OwnershipLock) -> String {
    // Only strings, maps and JSON values: serialising cannot fail. Were it to, the empty
    // text is refused by `parse_lock` rather than read as an empty lock.
    serde_json::to_string_pretty(lock)
        .map(|s| s + "\n")
        .unwrap_or_default()
}

fn is_hex_sha256(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Parses `.contextos/lock.json` strictly: syntax errors, duplicate keys, unknown fields,
/// another version, unknown generators and malformed hashes are errors.
pub fn parse_lock(text: &str) -> Result<OwnershipLock, MergeError> {
    let syntax = |line, column, message| MergeError::LockSyntax {
        path: String::new(),
        line,
        column,
        message,
    };
    let value = match parse_strict(text) {
        Ok(v) => v,
        Err((line, column, message, _)) => return Err(syntax(line, column, message)),
    };
    match value.get("version") {
        Some(v) if v.as_u64() == Some(u64::from(LOCK_VERSION)) => {}
        Some(v) => {
            return Err(MergeError::LockVersion {
                path: String::new(),
                found: v.to_string(),
            })
        }
        None if value.is_object() => {
            return Err(MergeError::LockField {
                path: String::new(),
                message: "`version` is missing".into(),
            })
        }
        None => {}
    }
    let lock: OwnershipLock = serde_json::from_str(text).map_err(|e| {
        let full = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let message = full.strip_suffix(&suffix).unwrap_or(&full).to_string();
        syntax(e.line(), e.column(), message)
    })?;
    let field = |message: String| MergeError::LockField {
        path: String::new(),
        message,
    };
    for (path, f) in &lock.files {
        if path.is_empty() {
            return Err(field("an empty file path".into()));
        }
        if Target::parse(&f.generator).is_none() {
            return Err(field(format!(
                "{path}: unknown generator {:?}",
                f.generator
            )));
        }
        if !is_hex_sha256(&f.sha256) || !is_hex_sha256(&f.normalized_sha256) {
            return Err(field(format!(
                "{path}: hashes must be 64 lowercase hex digits"
            )));
        }
        if f.owned.is_some() && f.kind != FileKind::Json {
            return Err(field(format!("{path}: only a json file has owned entries")));
        }
    }
    Ok(lock)
}

// ---------------------------------------------------------------------------------------
// Planning and drift
// ---------------------------------------------------------------------------------------

/// What is on disk now: path → text (`None`: missing), for every output path and every
/// path of the old lock.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Current {
    pub files: BTreeMap<String, Option<String>>,
}

/// What a `compile` would do. All or nothing: when [`Plan::refused`] is true the caller
/// must write nothing (no file, no lock).
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Path and new full text, sorted by path; only files whose bytes change.
    pub writes: Vec<(String, String)>,
    /// Files to delete, sorted.
    pub deletes: Vec<String>,
    /// The lock to write after `writes` and `deletes` (when its bytes differ).
    pub lock: OwnershipLock,
    /// Differences between disk and what would be written, sorted by path then class;
    /// empty when everything is in sync.
    pub drift: Vec<Drift>,
}

impl Plan {
    /// True when a file ContextOS does not own is in the way ([`DriftClass::Unmanaged`])
    /// or two outputs claim one path ([`DriftClass::Collision`]): write nothing.
    pub fn refused(&self) -> bool {
        self.drift.iter().any(|d| d.class.refuses())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Drift {
    pub path: String,
    pub class: DriftClass,
    pub detail: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DriftClass {
    /// A generated file is absent.
    Missing,
    /// ContextOS's content on disk (the whole file, the block, the owned JSON entries)
    /// differs from what would be written; user-owned content never counts.
    Modified,
    /// The lock lists a file no output produces any more; the next compile deletes it
    /// (whole, unmodified), removes its block, or retracts its JSON entries.
    Orphaned,
    /// Two outputs claim the same path. Refuses the plan.
    Collision,
    /// The lock was written from other policy inputs (reported at [`LOCK_PATH`]), even
    /// when every file already matches.
    StaleInput,
    /// A whole file ContextOS would write exists and is not ContextOS's: not in the lock,
    /// or edited by hand since ContextOS wrote it. Refuses the plan.
    Unmanaged,
}

impl DriftClass {
    pub fn as_str(self) -> &'static str {
        match self {
            DriftClass::Missing => "missing",
            DriftClass::Modified => "modified",
            DriftClass::Orphaned => "orphaned",
            DriftClass::Collision => "collision",
            DriftClass::StaleInput => "stale-input",
            DriftClass::Unmanaged => "unmanaged",
        }
    }

    /// Whether this drift forbids writing anything.
    pub fn refuses(self) -> bool {
        matches!(self, DriftClass::Collision | DriftClass::Unmanaged)
    }
}

fn matches_lock(text: &str, locked: &LockedFile) -> bool {
    sha256_hex(text) == locked.sha256 || sha256_hex(&normalize(text)) == locked.normalized_sha256
}

fn locked(target: &str, kind: FileKind, owned: Option<OwnedJson>, text: &str) -> LockedFile {
    LockedFile {
        generator: target.to_string(),
        kind,
        owned,
        sha256: sha256_hex(text),
        normalized_sha256: sha256_hex(&normalize(text)),
    }
}

struct Planner<'a> {
    writes: Vec<(String, String)>,
    deletes: Vec<String>,
    files: BTreeMap<String, LockedFile>,
    drift: Vec<Drift>,
    current: &'a Current,
}

impl Planner<'_> {
    fn current(&self, path: &str) -> Result<Option<&str>, MergeError> {
        match self.current.files.get(path) {
            Some(t) => Ok(t.as_deref()),
            None => Err(MergeError::NotRead {
                path: path.to_string(),
            }),
        }
    }

    fn drift(&mut self, path: &str, class: DriftClass, detail: impl Into<String>) {
        self.drift.push(Drift {
            path: path.to_string(),
            class,
            detail: detail.into(),
        });
    }

    fn write(&mut self, path: &str, text: String) {
        self.writes.push((path.to_string(), text));
    }

    fn whole(
        &mut self,
        path: &str,
        gen: &str,
        text: &str,
        old: Option<&LockedFile>,
    ) -> Result<(), MergeError> {
        let Some(cur) = self.current(path)? else {
            self.drift(path, DriftClass::Missing, "generated file is absent");
            self.write(path, text.to_string());
            self.files
                .insert(path.into(), locked(gen, FileKind::Whole, None, text));
            return Ok(());
        };
        if cur == text || normalize(cur) == normalize(text) {
            // In sync (line endings or trailing spaces aside): keep the bytes on disk.
            self.files
                .insert(path.into(), locked(gen, FileKind::Whole, None, cur));
            return Ok(());
        }
        match old {
            Some(o) if o.kind == FileKind::Whole && matches_lock(cur, o) => {
                self.drift(path, DriftClass::Modified, "out of date with the policies");
                self.write(path, text.to_string());
                self.files
                    .insert(path.into(), locked(gen, FileKind::Whole, None, text));
            }
            Some(o) => {
                let detail = if o.kind == FileKind::Whole {
                    "edited by hand since ContextOS wrote it; refusing to overwrite (move the \
                     change into a policy, or delete the file)"
                        .to_string()
                } else {
                    format!(
                        "ContextOS owns only a {} part of this file, not all of it; refusing to \
                         overwrite",
                        o.kind.as_str()
                    )
                };
                self.drift(path, DriftClass::Unmanaged, detail);
                self.files.insert(path.into(), o.clone());
            }
            None => self.drift(
                path,
                DriftClass::Unmanaged,
                "exists and is not ContextOS's (not in the ownership lock); refusing to \
                 overwrite (move it away, or delete it to let ContextOS own it)",
            ),
        }
        Ok(())
    }

    /// The file to merge into: `None` when the lock says the whole file was ContextOS's
    /// and it is unmodified (it is replaced rather than merged into).
    fn merge_base<'c>(cur: Option<&'c str>, old: Option<&LockedFile>) -> Option<&'c str> {
        match (cur, old) {
            (Some(c), Some(o)) if o.kind == FileKind::Whole && matches_lock(c, o) => None,
            _ => cur,
        }
    }

    fn block(
        &mut self,
        path: &str,
        gen: &str,
        block: &str,
        old: Option<&LockedFile>,
    ) -> Result<(), MergeError> {
        let cur = self.current(path)?;
        let base = Self::merge_base(cur, old);
        let new = apply_block(base, block).map_err(|e| e.with_path(path))?;
        match cur {
            None => {
                self.drift(path, DriftClass::Missing, "generated file is absent");
                self.write(path, new.clone());
            }
            Some(c) if c == new => {}
            Some(c) => {
                let detail = if base.is_none() {
                    "the file ContextOS generated whole becomes a managed block"
                } else if read_block(c).map_err(|e| e.with_path(path))?.is_none() {
                    "the managed block is absent"
                } else {
                    "the managed block differs from the policies"
                };
                self.drift(path, DriftClass::Modified, detail);
                self.write(path, new.clone());
            }
        }
        self.files
            .insert(path.into(), locked(gen, FileKind::Block, None, &new));
        Ok(())
    }

    fn json(
        &mut self,
        path: &str,
        gen: &str,
        parts: &[JsonPart],
        old: Option<&LockedFile>,
    ) -> Result<(), MergeError> {
        let cur = self.current(path)?;
        let prev = old
            .filter(|o| o.kind == FileKind::Json)
            .and_then(|o| o.owned.clone())
            .unwrap_or_default();
        let base = Self::merge_base(cur, old);
        let m = merge_json(base, parts, &prev).map_err(|e| e.with_path(path))?;
        if m.delete {
            // Nothing of ContextOS's is wanted, and the file was its own.
            if cur.is_some() {
                self.drift(
                    path,
                    DriftClass::Modified,
                    "ContextOS's entries are retracted and the file it created is empty",
                );
                self.deletes.push(path.to_string());
            }
            return Ok(());
        }
        let text = match cur {
            None => {
                self.drift(path, DriftClass::Missing, "generated file is absent");
                self.write(path, m.text.clone());
                m.text
            }
            Some(c) if base.is_some() && !m.changed => c.to_string(),
            Some(_) => {
                let detail = if base.is_none() {
                    "the file ContextOS generated whole becomes owned entries".to_string()
                } else {
                    format!("ContextOS's entries differ at {}", m.touched.join(", "))
                };
                self.drift(path, DriftClass::Modified, detail);
                self.write(path, m.text.clone());
                m.text
            }
        };
        self.files.insert(
            path.into(),
            locked(gen, FileKind::Json, Some(m.owned), &text),
        );
        Ok(())
    }

    fn orphan(&mut self, path: &str, old: &LockedFile) -> Result<(), MergeError> {
        let Some(cur) = self.current(path)? else {
            return Ok(());
        };
        match old.kind {
            FileKind::Whole if matches_lock(cur, old) => {
                self.drift(
                    path,
                    DriftClass::Orphaned,
                    "no longer generated; it will be deleted",
                );
                self.deletes.push(path.to_string());
            }
            FileKind::Whole => self.drift(
                path,
                DriftClass::Orphaned,
                "no longer generated, but edited by hand: it is kept and released from the lock",
            ),
            FileKind::Block => {
                let rest = remove_block(cur).map_err(|e| e.with_path(path))?;
                if rest == cur {
                    return Ok(());
                }
                if rest.is_empty() {
                    self.drift(
                        path,
                        DriftClass::Orphaned,
                        "no longer generated; the file held only the managed block and will be deleted",
                    );
                    self.deletes.push(path.to_string());
                } else {
                    self.drift(
                        path,
                        DriftClass::Orphaned,
                        "no longer generated; the managed block will be removed, the rest kept",
                    );
                    self.write(path, rest);
                }
            }
            FileKind::Json => {
                let prev = old.owned.clone().unwrap_or_default();
                let m = merge_json(Some(cur), &[], &prev).map_err(|e| e.with_path(path))?;
                if m.delete {
                    self.drift(
                        path,
                        DriftClass::Orphaned,
                        "no longer generated; the file ContextOS created will be deleted",
                    );
                    self.deletes.push(path.to_string());
                } else if m.changed {
                    self.drift(
                        path,
                        DriftClass::Orphaned,
                        format!(
                            "no longer generated; ContextOS's entries will be retracted at {}",
                            m.touched.join(", ")
                        ),
                    );
                    self.write(path, m.text);
                }
            }
        }
        Ok(())
    }
}

/// [`plan_targets`] for every [`Target`].
pub fn plan(
    outputs: &[Output],
    current: &Current,
    old_lock: Option<&OwnershipLock>,
    inputs_sha: &str,
) -> Result<Plan, MergeError> {
    plan_targets(outputs, current, old_lock, inputs_sha, &Target::ALL)
}

/// Plans writing `outputs` (the emitters' result for `scope`) over `current`.
///
/// - **Whole**: written when absent ([`DriftClass::Missing`]) or when the file on disk is
///   the one ContextOS wrote (its locked sha256, or its normalised form) and is out of
///   date ([`DriftClass::Modified`]). A file that differs and is not in the lock, or that
///   was edited by hand since, is [`DriftClass::Unmanaged`]: nothing is written for it
///   and [`Plan::refused`] tells the caller to write nothing at all. A file that already
///   holds exactly (or, CRLF and trailing spaces aside, normally) the generated text is in
///   sync, and is adopted into the lock.
/// - **Block**: [`apply_block`]; only the block counts for drift.
/// - **Json**: [`apply_json`] with the entries the old lock says ContextOS owns; only those
///   count for drift (formatting neither).
/// - A lock entry of a `scope` generator that no output produces any more is
///   [`DriftClass::Orphaned`]: a whole file is deleted if unmodified (else kept and
///   released), a block removed (the file deleted if nothing else is left), JSON entries
///   retracted. Entries of generators outside `scope` are carried over untouched.
/// - Two outputs for one path: [`DriftClass::Collision`], neither is written.
/// - The old lock's `inputs` differs from `inputs_sha`: [`DriftClass::StaleInput`].
///
/// Files ContextOS creates get the emitters' LF text; existing files keep their line
/// endings in blocks and JSON. In sync ⇒ no drift and no writes; planning again over the
/// result of a plan gives no writes.
pub fn plan_targets(
    outputs: &[Output],
    current: &Current,
    old_lock: Option<&OwnershipLock>,
    inputs_sha: &str,
    scope: &[Target],
) -> Result<Plan, MergeError> {
    let mut by_path: BTreeMap<&str, Vec<&Output>> = BTreeMap::new();
    for o in outputs {
        by_path.entry(o.path.as_str()).or_default().push(o);
    }
    let old_files = old_lock.map(|l| &l.files);
    let mut p = Planner {
        writes: Vec::new(),
        deletes: Vec::new(),
        files: BTreeMap::new(),
        drift: Vec::new(),
        current,
    };
    for (&path, outs) in &by_path {
        let old = old_files.and_then(|f| f.get(path));
        if path == LOCK_PATH {
            p.drift(
                path,
                DriftClass::Collision,
                "an output claims the ownership lock's own path; nothing is written",
            );
        } else if let [out] = outs.as_slice() {
            let gen = out.target.as_str();
            match &out.content {
                Content::Whole { text } => p.whole(path, gen, text, old)?,
                Content::Block { text } => p.block(path, gen, text, old)?,
                Content::Json { parts } => p.json(path, gen, parts, old)?,
            }
        } else {
            let names: Vec<&str> = outs.iter().map(|o| o.target.as_str()).collect();
            p.drift(
                path,
                DriftClass::Collision,
                format!(
                    "{} outputs claim this path ({}); nothing is written",
                    outs.len(),
                    names.join(", ")
                ),
            );
            if let Some(o) = old {
                p.files.insert(path.to_string(), o.clone());
            }
        }
    }
    for (path, old) in old_files.into_iter().flatten() {
        if by_path.contains_key(path.as_str()) {
            continue;
        }
        let in_scope = Target::parse(&old.generator).is_some_and(|t| scope.contains(&t));
        if in_scope {
            p.orphan(path, old)?;
        } else {
            p.files.insert(path.clone(), old.clone());
        }
    }
    if let Some(l) = old_lock {
        if l.inputs != inputs_sha {
            p.drift(
                LOCK_PATH,
                DriftClass::StaleInput,
                format!(
                    "the lock was written from other policy inputs (was {}, now {inputs_sha})",
                    l.inputs
                ),
            );
        }
    }
    p.writes.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    p.deletes.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    p.drift
        .sort_by(|a, b| (a.path.as_bytes(), a.class).cmp(&(b.path.as_bytes(), b.class)));
    Ok(Plan {
        writes: p.writes,
        deletes: p.deletes,
        lock: OwnershipLock {
            version: LOCK_VERSION,
            inputs: inputs_sha.to_string(),
            files: p.files,
        },
        drift: p.drift,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::json;

    const B: &str = BLOCK_BEGIN;
    const E: &str = BLOCK_END;

    // ----- blocks -------------------------------------------------------------------

    #[test]
    fn block_into_missing_and_empty_file() {
        let want = format!("{B}\nhello\nworld\n{E}\n");
        assert_eq!(apply_block(None, "hello\nworld").unwrap(), want);
        assert_eq!(apply_block(None, "hello\nworld\n\n").unwrap(), want);
        assert_eq!(apply_block(Some(""), "hello\nworld\n").unwrap(), want);
        assert_eq!(apply_block(None, "").unwrap(), format!("{B}\n{E}\n"));
    }

    #[test]
    fn block_appended_to_marker_less_file_after_a_blank_line() {
        let want = format!("# Mine\nuser text\n\n{B}\nhello\n{E}\n");
        assert_eq!(
            apply_block(Some("# Mine\nuser text"), "hello").unwrap(),
            want
        );
        assert_eq!(
            apply_block(Some("# Mine\nuser text\n"), "hello").unwrap(),
            want
        );
        // Exactly one blank line of ContextOS's, whatever the user's text ends with.
        assert_eq!(
            apply_block(Some("# Mine\nuser text\n\n"), "hello").unwrap(),
            format!("# Mine\nuser text\n\n\n{B}\nhello\n{E}\n")
        );
    }

    #[test]
    fn block_in_crlf_file_stays_crlf() {
        let user = "# Mine\r\nuser text\r\n";
        let out = apply_block(Some(user), "a\nb\n").unwrap();
        assert_eq!(out, format!("{user}\r\n{B}\r\na\r\nb\r\n{E}\r\n"));
        // Replacing keeps CRLF, and a CRLF block text is not doubled.
        let again = apply_block(Some(&out), "c\r\n").unwrap();
        assert_eq!(again, format!("{user}\r\n{B}\r\nc\r\n{E}\r\n"));
        assert!(!again.replace("\r\n", "").contains('\n'));
    }

    #[test]
    fn block_replace_keeps_user_text_byte_for_byte() {
        let before = "Intro with trailing spaces   \r\n\tTabbed line\nno-final-eol-mix\n\n";
        let after = "\n## After\r\n  kept exactly  \nlast line without newline";
        let text = format!("{before}{B}\nold\nstuff\n{E}\n{after}");
        let out = apply_block(Some(&text), "new").unwrap();
        assert_eq!(out, format!("{before}{B}\nnew\n{E}\n{after}"));
        assert!(out.starts_with(before) && out.ends_with(after));
        assert_eq!(read_block(&out).unwrap().as_deref(), Some("new\n"));
        // Idempotent.
        assert_eq!(apply_block(Some(&out), "new").unwrap(), out);
    }

    #[test]
    fn block_markers_with_surrounding_spaces_and_eof_end() {
        let text = format!("x\n  {B}  \nold\n{E}");
        let out = apply_block(Some(&text), "new").unwrap();
        assert_eq!(out, format!("x\n  {B}  \nnew\n{E}"));
    }

    #[test]
    fn malformed_markers_are_refused_with_line_numbers() {
        let dup = format!("a\n{B}\nx\n{E}\n{B}\ny\n{E}\n");
        let e = apply_block(Some(&dup), "z").unwrap_err();
        assert_eq!(
            e,
            MergeError::DuplicateMarker {
                path: String::new(),
                line: 5,
                first: 2,
                marker: BLOCK_BEGIN
            }
        );
        assert_eq!(e.code(), "emit.block.duplicate-marker");

        let dup_end = format!("{B}\nx\n{E}\n{E}\n");
        assert!(matches!(
            apply_block(Some(&dup_end), "z").unwrap_err(),
            MergeError::DuplicateMarker { line: 4, first: 3, marker, .. } if marker == BLOCK_END
        ));

        let reversed = format!("a\n{E}\nx\n{B}\n");
        assert_eq!(
            apply_block(Some(&reversed), "z").unwrap_err(),
            MergeError::ReversedMarkers {
                path: String::new(),
                line: 2,
                begin: 4
            }
        );

        let unclosed = format!("a\nb\n{B}\nx\n");
        let e = apply_block(Some(&unclosed), "z").unwrap_err();
        assert_eq!(
            e,
            MergeError::UnclosedBlock {
                path: String::new(),
                line: 3
            }
        );
        assert_eq!(e.code(), "emit.block.unclosed");

        let unopened = format!("a\n{E}\n");
        assert_eq!(
            apply_block(Some(&unopened), "z").unwrap_err().code(),
            "emit.block.unopened"
        );

        let inline = format!("a\nsee {B} here\n{E}\n");
        let e = apply_block(Some(&inline), "z").unwrap_err();
        assert_eq!(
            e,
            MergeError::InlineMarker {
                path: String::new(),
                line: 2,
                marker: BLOCK_BEGIN
            }
        );
        assert!(read_block(&inline).is_err());
        assert!(remove_block(&inline).is_err());
        let msg = e.with_path("AGENTS.md").to_string();
        assert!(msg.starts_with("AGENTS.md:2:"), "{msg}");
    }

    #[test]
    fn block_text_with_a_marker_is_refused() {
        let e = apply_block(None, &format!("ok\n{E}\n")).unwrap_err();
        assert_eq!(
            e,
            MergeError::MarkerInBlockText {
                path: String::new(),
                line: 2
            }
        );
    }

    #[test]
    fn read_and_remove_block() {
        assert_eq!(read_block("no block\n").unwrap(), None);
        for user in ["# Mine\nuser text\n", "# Mine\r\nuser text\r\n", ""] {
            let with = apply_block(Some(user), "hello").unwrap();
            assert_eq!(
                read_block(&with).unwrap().as_deref().map(normalize),
                Some("hello\n".into())
            );
            assert_eq!(remove_block(&with).unwrap(), user);
        }
        let middle = format!("top\n{B}\nx\n{E}\nbottom\n");
        assert_eq!(remove_block(&middle).unwrap(), "top\nbottom\n");
    }

    proptest::proptest! {
        #[test]
        fn block_round_trips_any_user_text(
            user in "[ a#\t\r\n]{0,40}",
            b1 in "[a-z \n]{0,20}",
            b2 in "[a-z \r\n]{0,20}",
        ) {
            let user = if user.is_empty() || user.ends_with('\n') { user } else { format!("{user}\n") };
            let once = apply_block(Some(&user), &b1).unwrap();
            proptest::prop_assert!(once.starts_with(user.as_str()));
            proptest::prop_assert_eq!(&apply_block(Some(&once), &b1).unwrap(), &once);
            let twice = apply_block(Some(&once), &b2).unwrap();
            proptest::prop_assert!(twice.starts_with(user.as_str()));
            proptest::prop_assert_eq!(remove_block(&twice).unwrap(), user.clone());
            let after = format!("{once}tail\r\n more");
            let replaced = apply_block(Some(&after), &b2).unwrap();
            proptest::prop_assert!(replaced.starts_with(user.as_str()));
            proptest::prop_assert!(replaced.ends_with("tail\r\n more"));
        }
    }

    // ----- JSON ---------------------------------------------------------------------

    fn items(pointer: &str, items: &[Value]) -> JsonPart {
        JsonPart::Items {
            pointer: pointer.into(),
            items: items.to_vec(),
        }
    }

    fn key(pointer: &str, value: Value) -> JsonPart {
        JsonPart::Key {
            pointer: pointer.into(),
            value,
        }
    }

    const MARK: &str = "contextos hook";

    fn hooks(pointer: &str, items: &[Value]) -> JsonPart {
        JsonPart::Hooks {
            pointer: pointer.into(),
            marker: MARK.into(),
            items: items.to_vec(),
        }
    }

    fn ours_hook(arg: &str) -> Value {
        json!({"matcher": "*", "hooks": [{"type": "command", "command": format!("contextos hook {arg}")}]})
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
        assert!(matches!(e, MergeError::JsonSyntax { line: 3, .. }), "{e:?}");
        assert_eq!(e.code(), "emit.json.syntax");
        assert!(matches!(
            apply_json(Some(""), &p, &none).unwrap_err(),
            MergeError::JsonSyntax { .. }
        ));
        assert_eq!(
            apply_json(Some("[1, 2]"), &p, &none).unwrap_err(),
            MergeError::JsonRoot {
                path: String::new(),
                found: "an array"
            }
        );
        let e = apply_json(Some("{\"a\": {\"x\": 1,\n \"x\": 2}}"), &p, &none).unwrap_err();
        assert!(
            matches!(&e, MergeError::JsonDuplicateKey { line: 2, key, .. } if key == "x"),
            "{e:?}"
        );
        let e = apply_json(Some(r#"{"a": 5}"#), &[key("/a/b", json!(1))], &none).unwrap_err();
        assert!(
            matches!(&e, MergeError::JsonNotObject { step, found: "a number", .. } if step == "/a"),
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

    // ----- lock ---------------------------------------------------------------------

    fn sample_lock() -> OwnershipLock {
        let mut lock = OwnershipLock::new("sha256:abc");
        lock.files.insert(
            "b.md".into(),
            locked("agents", FileKind::Block, None, "x\n"),
        );
        lock.files.insert(
            ".claude/settings.json".into(),
            locked(
                "claude",
                FileKind::Json,
                Some(OwnedJson {
                    items: BTreeMap::from([(
                        "/permissions/deny".into(),
                        vec![json!({"z": 1, "a": 2})],
                    )]),
                    ..OwnedJson::default()
                }),
                "{}\n",
            ),
        );
        lock.files.insert(
            "A.mdc".into(),
            locked("cursor", FileKind::Whole, None, "y\n"),
        );
        lock
    }

    #[test]
    fn lock_render_is_deterministic_and_round_trips() {
        let a = sample_lock();
        let mut b = OwnershipLock::new("sha256:abc");
        for (k, v) in a.files.iter().rev() {
            b.files.insert(k.clone(), v.clone());
        }
        let text = render_lock(&a);
        assert_eq!(text, render_lock(&b));
        assert!(text.ends_with("}\n"));
        // Byte-wise order ('.' < 'A' < 'b'), fixed field order, user key order inside values.
        let i = |s: &str| text.find(s).unwrap();
        assert!(i("\".claude/settings.json\"") < i("\"A.mdc\"") && i("\"A.mdc\"") < i("\"b.md\""));
        assert!(i("\"version\": 1") < i("\"inputs\"") && i("\"inputs\"") < i("\"files\""));
        assert!(i("\"z\": 1") < i("\"a\": 2"));
        assert!(text.contains(&format!("\"sha256\": \"{}\"", sha256_hex("y\n"))));
        assert_eq!(parse_lock(&text).unwrap(), a);
    }

    #[test]
    fn lock_parse_is_strict() {
        let good = render_lock(&sample_lock());
        let e = parse_lock(&good.replace("\"version\": 1", "\"version\": 2")).unwrap_err();
        assert_eq!(e.code(), "emit.lock.version");
        let e = parse_lock(&good.replace("\"inputs\"", "\"extra\": 1,\n  \"inputs\"")).unwrap_err();
        assert_eq!(e.code(), "emit.lock.syntax");
        let e = parse_lock(&good.replace(
            "\"inputs\": \"sha256:abc\"",
            "\"inputs\": \"a\", \"inputs\": \"b\"",
        ))
        .unwrap_err();
        assert_eq!(e.code(), "emit.lock.syntax");
        let e = parse_lock(&good.replace("\"cursor\"", "\"vim\"")).unwrap_err();
        assert_eq!(e.code(), "emit.lock.field");
        let e = parse_lock(&good.replacen(&sha256_hex("y\n"), "ABC", 1)).unwrap_err();
        assert_eq!(e.code(), "emit.lock.field");
        assert!(parse_lock("").is_err());
        assert!(parse_lock("[]").is_err());
    }

    // ----- plan ---------------------------------------------------------------------

    type Disk = BTreeMap<String, String>;

    fn whole(path: &str, text: &str) -> Output {
        Output {
            path: path.into(),
            target: Target::Cursor,
            content: Content::Whole { text: text.into() },
        }
    }

    fn block(path: &str, text: &str) -> Output {
        Output {
            path: path.into(),
            target: Target::Agents,
            content: Content::Block { text: text.into() },
        }
    }

    fn json_out(path: &str, parts: Vec<JsonPart>) -> Output {
        Output {
            path: path.into(),
            target: Target::Claude,
            content: Content::Json { parts },
        }
    }

    fn current(disk: &Disk, outputs: &[Output], lock: Option<&OwnershipLock>) -> Current {
        let mut files = BTreeMap::new();
        let paths = outputs
            .iter()
            .map(|o| o.path.clone())
            .chain(lock.iter().flat_map(|l| l.files.keys().cloned()));
        for p in paths {
            files.insert(p.clone(), disk.get(&p).cloned());
        }
        Current { files }
    }

    fn run(disk: &Disk, outputs: &[Output], lock: Option<&OwnershipLock>, inputs: &str) -> Plan {
        plan(outputs, &current(disk, outputs, lock), lock, inputs).unwrap()
    }

    fn apply(disk: &mut Disk, plan: &Plan) {
        assert!(!plan.refused());
        for (p, t) in &plan.writes {
            disk.insert(p.clone(), t.clone());
        }
        for p in &plan.deletes {
            disk.remove(p);
        }
    }

    fn classes(plan: &Plan) -> Vec<(&str, DriftClass)> {
        plan.drift
            .iter()
            .map(|d| (d.path.as_str(), d.class))
            .collect()
    }

    fn outputs_v1() -> Vec<Output> {
        vec![
            block("AGENTS.md", "# Rules\n- no secrets\n"),
            whole(
                ".cursor/rules/contextos.mdc",
                "---\nalwaysApply: true\n---\nrules\n",
            ),
            json_out(
                ".claude/settings.json",
                vec![
                    items(
                        "/permissions/deny",
                        &[json!("Read(.env)"), json!("Edit(db/**)")],
                    ),
                    hooks("/hooks/PreToolUse", &[ours_hook("claude")]),
                ],
            ),
        ]
    }

    /// A project where the user already has AGENTS.md and .claude/settings.json.
    fn user_disk() -> Disk {
        Disk::from([
            (
                "AGENTS.md".into(),
                "# My project\r\nHand-written.\r\n".into(),
            ),
            (
                ".claude/settings.json".into(),
                "{\n    \"model\": \"opus\",\n    \"permissions\": {\"deny\": [\"Mine\"]}\n}\n"
                    .into(),
            ),
        ])
    }

    /// Runs the first compile and returns the disk and lock after it.
    fn compiled(outputs: &[Output]) -> (Disk, OwnershipLock) {
        let mut disk = user_disk();
        let p = run(&disk, outputs, None, "in1");
        apply(&mut disk, &p);
        (disk, p.lock)
    }

    #[test]
    fn first_run_writes_second_run_is_in_sync() {
        let outs = outputs_v1();
        let mut disk = user_disk();
        let p1 = run(&disk, &outs, None, "in1");
        assert_eq!(
            classes(&p1),
            vec![
                (".claude/settings.json", DriftClass::Modified),
                (".cursor/rules/contextos.mdc", DriftClass::Missing),
                ("AGENTS.md", DriftClass::Modified),
            ]
        );
        assert_eq!(p1.writes.len(), 3);
        assert!(p1.deletes.is_empty());
        apply(&mut disk, &p1);
        assert!(disk["AGENTS.md"].starts_with("# My project\r\nHand-written.\r\n\r\n"));
        assert!(disk["AGENTS.md"].ends_with(&format!("{E}\r\n")));
        let settings: Value = serde_json::from_str(&disk[".claude/settings.json"]).unwrap();
        assert_eq!(settings["model"], json!("opus"));
        assert_eq!(
            settings["permissions"]["deny"],
            json!(["Mine", "Read(.env)", "Edit(db/**)"])
        );
        let lock_text = render_lock(&p1.lock);
        let lock = parse_lock(&lock_text).unwrap();
        assert_eq!(
            lock.files[".cursor/rules/contextos.mdc"].kind,
            FileKind::Whole
        );

        let p2 = run(&disk, &outs, Some(&lock), "in1");
        assert!(p2.writes.is_empty() && p2.deletes.is_empty(), "{p2:?}");
        assert!(p2.drift.is_empty(), "{:?}", p2.drift);
        assert_eq!(render_lock(&p2.lock), lock_text);
    }

    #[test]
    fn fresh_project_first_run_reports_missing_and_creates_lf_files() {
        let outs = outputs_v1();
        let mut disk = Disk::new();
        let p = run(&disk, &outs, None, "in1");
        assert!(p.drift.iter().all(|d| d.class == DriftClass::Missing));
        apply(&mut disk, &p);
        assert!(disk.values().all(|t| !t.contains('\r')));
        assert_eq!(
            disk["AGENTS.md"],
            format!("{B}\n# Rules\n- no secrets\n{E}\n")
        );
        let p2 = run(&disk, &outs, Some(&p.lock), "in1");
        assert!(p2.writes.is_empty() && p2.drift.is_empty());
    }

    #[test]
    fn missing_generated_file() {
        let outs = outputs_v1();
        let (mut disk, lock) = compiled(&outs);
        disk.remove(".cursor/rules/contextos.mdc");
        let p = run(&disk, &outs, Some(&lock), "in1");
        assert_eq!(
            classes(&p),
            vec![(".cursor/rules/contextos.mdc", DriftClass::Missing)]
        );
        assert_eq!(p.writes.len(), 1);
    }

    #[test]
    fn edited_block_is_modified_user_text_is_not() {
        let outs = outputs_v1();
        let (mut disk, lock) = compiled(&outs);
        // Edits outside the block and user JSON keys are the user's business.
        let agents = disk["AGENTS.md"].replace("Hand-written.", "Hand-written, edited.");
        disk.insert("AGENTS.md".into(), agents.clone());
        let s =
            disk[".claude/settings.json"].replace("\"model\": \"opus\"", "\"model\": \"sonnet\"");
        disk.insert(".claude/settings.json".into(), s);
        let p = run(&disk, &outs, Some(&lock), "in1");
        assert!(p.drift.is_empty() && p.writes.is_empty(), "{:?}", p.drift);

        // Editing inside the block is drift, and the write restores only the block.
        let tampered = agents.replace("- no secrets", "- secrets are fine");
        disk.insert("AGENTS.md".into(), tampered);
        let p = run(&disk, &outs, Some(&lock), "in1");
        assert_eq!(classes(&p), vec![("AGENTS.md", DriftClass::Modified)]);
        assert_eq!(p.writes, vec![("AGENTS.md".to_string(), agents)]);
    }

    #[test]
    fn removed_owned_json_entry_is_modified() {
        let outs = outputs_v1();
        let (mut disk, lock) = compiled(&outs);
        let s = disk[".claude/settings.json"].replace("\"Edit(db/**)\"", "\"Edit(other)\"");
        disk.insert(".claude/settings.json".into(), s);
        let p = run(&disk, &outs, Some(&lock), "in1");
        assert_eq!(
            classes(&p),
            vec![(".claude/settings.json", DriftClass::Modified)]
        );
        assert!(p.drift[0].detail.contains("/permissions/deny"));
        let v: Value = serde_json::from_str(&p.writes[0].1).unwrap();
        // The user's new item stays (it is not ContextOS's), ours comes back.
        assert_eq!(
            v["permissions"]["deny"],
            json!(["Mine", "Read(.env)", "Edit(other)", "Edit(db/**)"])
        );
    }

    #[test]
    fn edited_whole_file_is_unmanaged_and_refuses() {
        let outs = outputs_v1();
        let (mut disk, lock) = compiled(&outs);
        disk.insert(".cursor/rules/contextos.mdc".into(), "mine now\n".into());
        let p = run(&disk, &outs, Some(&lock), "in1");
        assert_eq!(
            classes(&p),
            vec![(".cursor/rules/contextos.mdc", DriftClass::Unmanaged)]
        );
        assert!(p.refused());
        assert!(p.writes.is_empty());
        // The lock keeps the old record, so nothing is silently released.
        assert_eq!(
            p.lock.files[".cursor/rules/contextos.mdc"],
            lock.files[".cursor/rules/contextos.mdc"]
        );
    }

    #[test]
    fn crlf_checkout_of_a_whole_file_is_in_sync() {
        let outs = outputs_v1();
        let (mut disk, lock) = compiled(&outs);
        let crlf = disk[".cursor/rules/contextos.mdc"].replace('\n', "  \r\n");
        disk.insert(".cursor/rules/contextos.mdc".into(), crlf);
        let p = run(&disk, &outs, Some(&lock), "in1");
        assert!(p.drift.is_empty() && p.writes.is_empty(), "{:?}", p.drift);
    }

    #[test]
    fn unmanaged_preexisting_whole_file_refuses_identical_one_is_adopted() {
        let outs = outputs_v1();
        let mut disk = user_disk();
        disk.insert(
            ".cursor/rules/contextos.mdc".into(),
            "user's own rules\n".into(),
        );
        let p = run(&disk, &outs, None, "in1");
        assert!(p.refused());
        assert!(classes(&p).contains(&(".cursor/rules/contextos.mdc", DriftClass::Unmanaged)));
        assert!(!p
            .writes
            .iter()
            .any(|(path, _)| path == ".cursor/rules/contextos.mdc"));
        assert!(!p.lock.files.contains_key(".cursor/rules/contextos.mdc"));

        disk.insert(
            ".cursor/rules/contextos.mdc".into(),
            "---\nalwaysApply: true\n---\nrules\n".into(),
        );
        let p = run(&disk, &outs, None, "in1");
        assert!(!p.refused());
        assert!(p.lock.files.contains_key(".cursor/rules/contextos.mdc"));
        assert!(!p
            .writes
            .iter()
            .any(|(path, _)| path == ".cursor/rules/contextos.mdc"));
    }

    #[test]
    fn out_of_date_whole_file_is_modified_and_inputs_stale() {
        let outs = outputs_v1();
        let (disk, lock) = compiled(&outs);
        let mut outs2 = outs.clone();
        outs2[1] = whole(".cursor/rules/contextos.mdc", "new rules\n");
        let p = run(&disk, &outs2, Some(&lock), "in2");
        assert_eq!(
            classes(&p),
            vec![
                (".contextos/lock.json", DriftClass::StaleInput),
                (".cursor/rules/contextos.mdc", DriftClass::Modified),
            ]
        );
        assert!(!p.refused());
        assert_eq!(
            p.writes,
            vec![(".cursor/rules/contextos.mdc".into(), "new rules\n".into())]
        );
    }

    #[test]
    fn stale_inputs_alone() {
        let outs = outputs_v1();
        let (mut disk, lock) = compiled(&outs);
        let p = run(&disk, &outs, Some(&lock), "in2");
        assert_eq!(classes(&p), vec![(LOCK_PATH, DriftClass::StaleInput)]);
        assert!(p.writes.is_empty() && p.deletes.is_empty());
        assert_eq!(p.lock.inputs, "in2");
        apply(&mut disk, &p);
        let p2 = run(&disk, &outs, Some(&p.lock), "in2");
        assert!(p2.drift.is_empty());
    }

    #[test]
    fn collision_refuses() {
        let mut outs = outputs_v1();
        outs.push(Output {
            path: "AGENTS.md".into(),
            target: Target::Copilot,
            content: Content::Block { text: "x".into() },
        });
        let disk = user_disk();
        let p = run(&disk, &outs, None, "in1");
        assert!(p.refused());
        let d = p.drift.iter().find(|d| d.path == "AGENTS.md").unwrap();
        assert_eq!(d.class, DriftClass::Collision);
        assert!(d.detail.contains("agents, copilot"), "{}", d.detail);
        assert!(!p.writes.iter().any(|(path, _)| path == "AGENTS.md"));

        let outs = vec![whole(LOCK_PATH, "{}\n")];
        let p = run(&Disk::new(), &outs, None, "in1");
        assert_eq!(classes(&p), vec![(LOCK_PATH, DriftClass::Collision)]);
        assert!(p.refused() && p.writes.is_empty());
    }

    #[test]
    fn orphans_are_retracted_for_all_three_kinds() {
        let outs = outputs_v1();
        let (mut disk, lock) = compiled(&outs);
        let before_agents = user_disk()["AGENTS.md"].clone();
        // Every rule removed: no output at all.
        let p = run(&disk, &[], Some(&lock), "in2");
        assert_eq!(
            classes(&p),
            vec![
                (".claude/settings.json", DriftClass::Orphaned),
                (LOCK_PATH, DriftClass::StaleInput),
                (".cursor/rules/contextos.mdc", DriftClass::Orphaned),
                ("AGENTS.md", DriftClass::Orphaned),
            ]
        );
        assert_eq!(p.deletes, vec![".cursor/rules/contextos.mdc".to_string()]);
        apply(&mut disk, &p);
        assert_eq!(disk["AGENTS.md"], before_agents);
        let v: Value = serde_json::from_str(&disk[".claude/settings.json"]).unwrap();
        // The user's deny survives; ContextOS's hooks object (created by it) is gone.
        assert_eq!(
            v,
            json!({"model": "opus", "permissions": {"deny": ["Mine"]}})
        );
        assert!(p.lock.files.is_empty());
        let p2 = run(&disk, &[], Some(&p.lock), "in2");
        assert!(p2.drift.is_empty() && p2.writes.is_empty() && p2.deletes.is_empty());
    }

    #[test]
    fn orphans_of_files_contextos_created_are_deleted() {
        let outs = outputs_v1();
        let mut disk = Disk::new();
        let p = run(&disk, &outs, None, "in1");
        apply(&mut disk, &p);
        let p = run(&disk, &[], Some(&p.lock), "in1");
        assert_eq!(
            p.deletes,
            vec![
                ".claude/settings.json".to_string(),
                ".cursor/rules/contextos.mdc".into(),
                "AGENTS.md".into()
            ]
        );
        apply(&mut disk, &p);
        assert!(disk.is_empty());
    }

    #[test]
    fn orphan_after_a_rule_removal_and_edited_orphan_kept() {
        let mut outs = outputs_v1();
        outs.push(whole(".cursor/rules/db.mdc", "db rule\n"));
        let (mut disk, lock) = compiled(&outs);
        // The db rule is removed from the policies.
        outs.pop();
        let p = run(&disk, &outs, Some(&lock), "in2");
        assert!(classes(&p).contains(&(".cursor/rules/db.mdc", DriftClass::Orphaned)));
        assert_eq!(p.deletes, vec![".cursor/rules/db.mdc".to_string()]);
        // Edited by hand: kept, released from the lock, not deleted.
        disk.insert(".cursor/rules/db.mdc".into(), "db rule, my notes\n".into());
        let p = run(&disk, &outs, Some(&lock), "in2");
        assert!(classes(&p).contains(&(".cursor/rules/db.mdc", DriftClass::Orphaned)));
        assert!(p.deletes.is_empty());
        assert!(!p.lock.files.contains_key(".cursor/rules/db.mdc"));
    }

    #[test]
    fn removed_json_item_is_retracted_on_recompile() {
        let outs = outputs_v1();
        let (mut disk, lock) = compiled(&outs);
        let outs2 = vec![
            outs[0].clone(),
            outs[1].clone(),
            json_out(
                ".claude/settings.json",
                vec![
                    items("/permissions/deny", &[json!("Read(.env)")]),
                    hooks("/hooks/PreToolUse", &[ours_hook("claude")]),
                ],
            ),
        ];
        let p = run(&disk, &outs2, Some(&lock), "in2");
        apply(&mut disk, &p);
        let v: Value = serde_json::from_str(&disk[".claude/settings.json"]).unwrap();
        assert_eq!(v["permissions"]["deny"], json!(["Mine", "Read(.env)"]));
        let p2 = run(&disk, &outs2, Some(&p.lock), "in2");
        assert!(p2.drift.is_empty() && p2.writes.is_empty());
    }

    #[test]
    fn out_of_scope_lock_entries_are_carried_over() {
        let outs = outputs_v1();
        let (disk, lock) = compiled(&outs);
        let claude_only: Vec<Output> = outs
            .iter()
            .filter(|o| o.target == Target::Claude)
            .cloned()
            .collect();
        let cur = current(&disk, &claude_only, Some(&lock));
        let p = plan_targets(&claude_only, &cur, Some(&lock), "in1", &[Target::Claude]).unwrap();
        assert!(p.drift.is_empty() && p.writes.is_empty() && p.deletes.is_empty());
        assert_eq!(p.lock, lock);
    }

    #[test]
    fn whole_file_becoming_a_block_is_replaced_not_appended() {
        let outs = vec![whole("AGENTS.md", "old generated\n")];
        let mut disk = Disk::new();
        let p = run(&disk, &outs, None, "in1");
        apply(&mut disk, &p);
        let outs2 = vec![block("AGENTS.md", "rules")];
        let p = run(&disk, &outs2, Some(&p.lock), "in1");
        assert_eq!(
            p.writes,
            vec![("AGENTS.md".into(), format!("{B}\nrules\n{E}\n"))]
        );
    }

    #[test]
    fn plan_errors_name_the_file() {
        let outs = vec![block("AGENTS.md", "x")];
        let disk = Disk::from([("AGENTS.md".to_string(), format!("a\n{B}\n"))]);
        let e = plan(&outs, &current(&disk, &outs, None), None, "in").unwrap_err();
        assert_eq!(e.path(), "AGENTS.md");
        assert_eq!(
            e.to_string().split(':').take(2).collect::<Vec<_>>(),
            ["AGENTS.md", "2"]
        );
        let outs = vec![json_out("s.json", vec![key("/a", json!(1))])];
        let disk = Disk::from([("s.json".to_string(), "{oops".to_string())]);
        let e = plan(&outs, &current(&disk, &outs, None), None, "in").unwrap_err();
        assert_eq!((e.code(), e.path()), ("emit.json.syntax", "s.json"));
        let e = plan(&outs, &Current::default(), None, "in").unwrap_err();
        assert_eq!(e.code(), "emit.plan.not-read");
    }
}
