//! What [`super::verify`] finds: problems with the records and the head, in log order.

use serde::Serialize;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ProblemKind {
    /// Not a record (bad JSON, unknown fields, non-canonical `hash` member, torn line,
    /// misnamed or empty segment, unreadable head).
    Malformed,
    /// The record's content does not hash to its `hash`: it was edited.
    HashMismatch,
    /// `prev` does not name the previous record, or the log does not start at genesis:
    /// records (or a whole segment) were deleted, inserted or reordered.
    BrokenChain,
    SeqGap,
    /// The head names a later record than the log holds: records were cut off the end.
    Truncated,
    /// The head and the last record disagree in some other way.
    HeadMismatch,
    /// The head's MAC is missing or wrong: the head was forged (or the key changed).
    BadMac,
    /// Records exist but there is no head, so truncation cannot be detected.
    MissingHead,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub file: PathBuf,
    /// 1-based; `None` when the problem concerns the file as a whole.
    pub line: Option<u64>,
    pub kind: ProblemKind,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: ", self.file.display())?,
            None => write!(f, "{}: ", self.file.display())?,
        }
        write!(f, "{:?}: {}", self.kind, self.message)
    }
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifyReport {
    /// Records read (malformed lines excluded).
    pub records: u64,
    /// Files walked: sealed segments plus the active file.
    pub segments: usize,
    /// The head carries a MAC that verified with the key.
    pub head_signed: bool,
    /// In log order, first problem first.
    pub problems: Vec<Problem>,
    /// Weaknesses that are not evidence of tampering (e.g. no key to check the head).
    pub warnings: Vec<String>,
}

impl VerifyReport {
    pub fn is_valid(&self) -> bool {
        self.problems.is_empty()
    }
}
