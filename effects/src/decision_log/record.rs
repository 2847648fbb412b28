//! One line of the log: the record as the hook hands it over, as it is stored, and the
//! hash rule that ties a line to its bytes (see the module docs of [`super`]).

use super::report::ProblemKind;
use crate::safe_fs::sha256_hex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `prev` of the first record.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";
/// `,"hash":"` + 64 hex + `"}`.
pub(super) const HASH_SUFFIX_LEN: usize = 9 + 64 + 2;

/// One verdict, as the hook hands it over. `request` is masked before it is written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionRecord {
    pub agent: String,
    pub event: String,
    pub tool: String,
    pub request: Value,
    pub verdict: String,
    pub rules: Vec<String>,
    pub duration_us: u64,
}

/// One line of the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LoggedRecord {
    pub seq: u64,
    pub time: String,
    pub agent: String,
    pub event: String,
    pub tool: String,
    pub request: Value,
    pub verdict: String,
    pub rules: Vec<String>,
    pub duration_us: u64,
    pub prev: String,
    pub hash: String,
}

/// The hashed part of a line; the field order here *is* the canonical order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Body<'a> {
    pub(super) seq: u64,
    pub(super) time: &'a str,
    pub(super) agent: &'a str,
    pub(super) event: &'a str,
    pub(super) tool: &'a str,
    pub(super) request: &'a Value,
    pub(super) verdict: &'a str,
    pub(super) rules: &'a [String],
    pub(super) duration_us: u64,
    pub(super) prev: &'a str,
}

pub(super) fn parse_line(line: &[u8]) -> Result<LoggedRecord, String> {
    let rec: LoggedRecord =
        serde_json::from_slice(line).map_err(|e| format!("not a decision record: {e}"))?;
    if !is_hex64(&rec.hash) || !is_hex64(&rec.prev) {
        return Err("`hash` and `prev` must be 64 lowercase hex digits".to_string());
    }
    Ok(rec)
}

/// The hash rule of the module docs, on the bytes as stored.
pub(super) fn check_hash(line: &[u8], rec: &LoggedRecord) -> Result<(), (ProblemKind, String)> {
    let suffix = format!(",\"hash\":\"{}\"}}", rec.hash);
    let Some(prefix) = line.strip_suffix(suffix.as_bytes()) else {
        return Err((
            ProblemKind::Malformed,
            "the record is not in canonical form (`hash` must be the last member, written verbatim)"
                .to_string(),
        ));
    };
    debug_assert_eq!(line.len() - prefix.len(), HASH_SUFFIX_LEN);
    let mut body = Vec::with_capacity(prefix.len() + 1);
    body.extend_from_slice(prefix);
    body.push(b'}');
    let actual = sha256_hex(&body);
    if actual == rec.hash {
        Ok(())
    } else {
        Err((
            ProblemKind::HashMismatch,
            format!(
                "record seq {} was edited: its content hashes to {actual}, not to its stored hash {}",
                rec.seq, rec.hash
            ),
        ))
    }
}

pub(super) fn is_hex64(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}
