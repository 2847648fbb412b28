//! The ownership record, `.contextos/ownership.json`: which files (or parts) ContextOS
//! owns and the hashes of the bytes it wrote. Deterministic: byte-wise ordering, no
//! timestamps or counters. Ownership comes from this record only, never from sniffing
//! marker strings — except the hook registrations of [`crate::JsonPart::Hooks`], which are
//! recognised by their marker by design.

use super::error::{MergeError, MergeErrorKind};
use super::owned_json::OwnedJson;
use super::strict_json::{parse_strict, serde_message};
use super::text::{normalize, sha256_hex};
use crate::Agent;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where the caller keeps the [`OwnershipRecord`]; [`super::DriftClass::StaleInput`]
/// names it.
pub const RECORD_PATH: &str = ".contextos/ownership.json";
/// Where versions before the rename kept the record. It is read when [`RECORD_PATH`] is
/// absent, and deleted by the next compile that writes the record.
pub const LEGACY_RECORD_PATH: &str = ".contextos/lock.json";
/// The only record format this version reads and writes.
pub const RECORD_VERSION: u32 = 1;

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
    /// Owned keys of a TOML file ([`Content::Toml`]).
    Toml,
}

impl FileKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FileKind::Whole => "whole",
            FileKind::Block => "block",
            FileKind::Json => "json",
            FileKind::Toml => "toml",
        }
    }
}

/// One file ContextOS wrote (all of it, or its part of it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedFile {
    /// The [`crate::Agent`] whose emitter produced it.
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

/// `.contextos/ownership.json`: what ContextOS owns. Deterministic bytes: files sorted
/// byte-wise, fixed field order, no timestamps, revisions or machine data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OwnershipRecord {
    /// Always [`RECORD_VERSION`].
    pub version: u32,
    /// Hash of the policy inputs, as given by the caller.
    pub inputs: String,
    /// Project-relative path → what ContextOS owns there.
    pub files: BTreeMap<String, RecordedFile>,
}

impl OwnershipRecord {
    pub fn new(inputs: &str) -> OwnershipRecord {
        OwnershipRecord {
            version: RECORD_VERSION,
            inputs: inputs.to_string(),
            files: BTreeMap::new(),
        }
    }
}

/// The record as 2-space pretty JSON with a trailing newline.
pub fn render_record(record: &OwnershipRecord) -> String {
    // Only strings, maps and JSON values: serialising cannot fail. Were it to, the empty
    // text is refused by `parse_record` rather than read as an empty record.
    serde_json::to_string_pretty(record)
        .map(|s| s + "\n")
        .unwrap_or_default()
}

fn is_hex_sha256(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Parses `.contextos/ownership.json` strictly: syntax errors, duplicate keys, unknown fields,
/// another version, unknown generators and malformed hashes are errors.
pub fn parse_record(text: &str) -> Result<OwnershipRecord, MergeError> {
    let syntax = |line, column, message| {
        MergeError::from(MergeErrorKind::RecordSyntax {
            line,
            column,
            message,
        })
    };
    let value = match parse_strict(text) {
        Ok(v) => v,
        Err((line, column, message, _)) => return Err(syntax(line, column, message)),
    };
    match value.get("version") {
        Some(v) if v.as_u64() == Some(u64::from(RECORD_VERSION)) => {}
        Some(v) => {
            return Err(MergeError::from(MergeErrorKind::RecordVersion {
                found: v.to_string(),
                supported: RECORD_VERSION,
            }))
        }
        None if value.is_object() => {
            return Err(MergeError::from(MergeErrorKind::RecordField {
                message: "`version` is missing".into(),
            }))
        }
        None => {}
    }
    let record: OwnershipRecord =
        serde_json::from_str(text).map_err(|e| syntax(e.line(), e.column(), serde_message(&e)))?;
    let field = |message: String| MergeError::from(MergeErrorKind::RecordField { message });
    for (path, f) in &record.files {
        if path.is_empty() {
            return Err(field("an empty file path".into()));
        }
        if Agent::parse(&f.generator).is_none() {
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
        if f.owned.is_some() && !matches!(f.kind, FileKind::Json | FileKind::Toml) {
            return Err(field(format!(
                "{path}: only a json or toml file has owned entries"
            )));
        }
    }
    Ok(record)
}

/// Whether `text` is what ContextOS recorded writing (exactly, or once normalised).
pub(crate) fn matches_record(text: &str, recorded: &RecordedFile) -> bool {
    sha256_hex(text) == recorded.sha256
        || sha256_hex(&normalize(text)) == recorded.normalized_sha256
}

/// The record of ContextOS writing `text` for the `target` agent's emitter.
pub(crate) fn recorded(
    target: &str,
    kind: FileKind,
    owned: Option<OwnedJson>,
    text: &str,
) -> RecordedFile {
    RecordedFile {
        generator: target.to_string(),
        kind,
        owned,
        sha256: sha256_hex(text),
        normalized_sha256: sha256_hex(&normalize(text)),
    }
}

/// The record as stored on disk, and whether the file of versions before the rename is
/// still there.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoredRecord {
    /// The last record written, if the project has one.
    pub record: Option<OwnershipRecord>,
    /// [`LEGACY_RECORD_PATH`] exists: the next plan deletes it.
    pub legacy_file: bool,
}

impl StoredRecord {
    /// A record read from [`RECORD_PATH`] (or none), with no legacy file.
    pub fn new(record: Option<OwnershipRecord>) -> StoredRecord {
        StoredRecord {
            record,
            legacy_file: false,
        }
    }

    /// Reads the texts of [`RECORD_PATH`] (`current`) and [`LEGACY_RECORD_PATH`]
    /// (`legacy`), `None` where the file is absent. The current file wins; the legacy one
    /// is read only when it is the only record, so projects compiled before the rename
    /// keep their ownership. Errors name the file they come from.
    pub fn read(current: Option<&str>, legacy: Option<&str>) -> Result<StoredRecord, MergeError> {
        let record = match (current, legacy) {
            (Some(text), _) => Some(parse_record(text).map_err(|e| e.with_path(RECORD_PATH))?),
            (None, Some(text)) => {
                Some(parse_record(text).map_err(|e| e.with_path(LEGACY_RECORD_PATH))?)
            }
            (None, None) => None,
        };
        Ok(StoredRecord {
            record,
            legacy_file: legacy.is_some(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // ----- record ---------------------------------------------------------------------

    fn sample_record() -> OwnershipRecord {
        let mut record = OwnershipRecord::new("sha256:abc");
        record.files.insert(
            "b.md".into(),
            recorded("agents", FileKind::Block, None, "x\n"),
        );
        record.files.insert(
            ".claude/settings.json".into(),
            recorded(
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
        record.files.insert(
            "A.mdc".into(),
            recorded("cursor", FileKind::Whole, None, "y\n"),
        );
        record
    }

    #[test]
    fn lock_render_is_deterministic_and_round_trips() {
        let a = sample_record();
        let mut b = OwnershipRecord::new("sha256:abc");
        for (k, v) in a.files.iter().rev() {
            b.files.insert(k.clone(), v.clone());
        }
        let text = render_record(&a);
        assert_eq!(text, render_record(&b));
        assert!(text.ends_with("}\n"));
        // Byte-wise order ('.' < 'A' < 'b'), fixed field order, user key order inside values.
        let i = |s: &str| text.find(s).unwrap();
        assert!(i("\".claude/settings.json\"") < i("\"A.mdc\"") && i("\"A.mdc\"") < i("\"b.md\""));
        assert!(i("\"version\": 1") < i("\"inputs\"") && i("\"inputs\"") < i("\"files\""));
        assert!(i("\"z\": 1") < i("\"a\": 2"));
        assert!(text.contains(&format!("\"sha256\": \"{}\"", sha256_hex("y\n"))));
        assert_eq!(parse_record(&text).unwrap(), a);
    }

    #[test]
    fn lock_parse_is_strict() {
        let good = render_record(&sample_record());
        let e = parse_record(&good.replace("\"version\": 1", "\"version\": 2")).unwrap_err();
        assert_eq!(e.code(), "emit.ownership.version");
        let e =
            parse_record(&good.replace("\"inputs\"", "\"extra\": 1,\n  \"inputs\"")).unwrap_err();
        assert_eq!(e.code(), "emit.ownership.syntax");
        let e = parse_record(&good.replace(
            "\"inputs\": \"sha256:abc\"",
            "\"inputs\": \"a\", \"inputs\": \"b\"",
        ))
        .unwrap_err();
        assert_eq!(e.code(), "emit.ownership.syntax");
        let e = parse_record(&good.replace("\"cursor\"", "\"vim\"")).unwrap_err();
        assert_eq!(e.code(), "emit.ownership.field");
        let e = parse_record(&good.replacen(&sha256_hex("y\n"), "ABC", 1)).unwrap_err();
        assert_eq!(e.code(), "emit.ownership.field");
        assert!(parse_record("").is_err());
        assert!(parse_record("[]").is_err());
    }

    #[test]
    fn the_record_of_older_versions_is_read_when_the_new_one_is_absent() {
        let old = render_record(&sample_record());
        let s = StoredRecord::read(None, Some(&old)).unwrap();
        assert_eq!(s.record, Some(sample_record()));
        assert!(s.legacy_file);
        // Both present: the new file wins, and the legacy one is still marked for removal.
        let mut newer = sample_record();
        newer.inputs = "sha256:new".into();
        let s = StoredRecord::read(Some(&render_record(&newer)), Some(&old)).unwrap();
        assert_eq!(s.record.map(|r| r.inputs).as_deref(), Some("sha256:new"));
        assert!(s.legacy_file);
        let s = StoredRecord::read(Some(&old), None).unwrap();
        assert!(s.record.is_some() && !s.legacy_file);
        assert_eq!(
            StoredRecord::read(None, None).unwrap(),
            StoredRecord::default()
        );
        // Errors name the file they come from.
        let e = StoredRecord::read(None, Some("{")).unwrap_err();
        assert_eq!(
            (e.code(), e.path()),
            ("emit.ownership.syntax", LEGACY_RECORD_PATH)
        );
        let e = StoredRecord::read(Some("{"), Some(&old)).unwrap_err();
        assert_eq!(e.path(), RECORD_PATH);
    }
}
