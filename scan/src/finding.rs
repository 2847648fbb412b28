//! What the scanner reports: a finding names its rule, file and place, and never holds
//! the clear text of a secret.

use contextos_core::detector::Severity;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    Secret,
    BlockedFile,
    Stub,
    Scope,
    Oversize,
}

impl FindingKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::Secret => "secret",
            FindingKind::BlockedFile => "blocked-file",
            FindingKind::Stub => "stub",
            FindingKind::Scope => "scope",
            FindingKind::Oversize => "oversize",
        }
    }
}

/// Something the scanner found. Never holds the clear text of a secret.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The detector's id (or `out-of-scope`, `oversize-blob`).
    pub rule: String,
    pub kind: FindingKind,
    pub severity: Severity,
    pub file: String,
    /// 1-based; `None` for findings about a whole file.
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub fingerprint: String,
    /// A redacted view of what matched (a secret's prefix and length; a stub's text).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redacted: Option<String>,
    pub message: String,
}

/// Rule id of the finding raised for a blob over the size limit.
pub const OVERSIZE_RULE: &str = "oversize-blob";
/// Rule id of the finding raised for a path outside the task's scope.
pub const SCOPE_RULE: &str = "out-of-scope";
