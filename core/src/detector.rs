//! Detectors: what `contextos scan --staged` looks for, declared in the policy language.
//!
//! ```text
//! @id("aws-access-key-id")
//! @severity(error)
//! detector secret """\b((?:AKIA|ASIA)[A-Z2-7]{16})\b""" {
//!     keywords: ["akia", "asia"],
//!     entropy: "3.0",
//!     allow: ["AKIAIOSFODNN7EXAMPLE"],
//! } because "An AWS access key id.";
//! ```
//!
//! A detector only *finds*; whether a finding blocks is the commit verdict, decided by
//! `commit` rules on the finding's id, kind and severity. The compiler checks every
//! detector (regexes compile, keys fit the kind, globs are valid) and hands the scanner
//! this plain, serialisable form; the scanner compiles the regexes it needs.

use crate::ir::Origin;
use serde::{Deserialize, Serialize};

/// What a detector looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DetectorKind {
    /// Credentials in the lines a change adds (regexes over text).
    Secret,
    /// Files that must not be committed at all (globs over paths, optionally gated by a
    /// regex over the file's content).
    File,
    /// Unfinished code in the lines a change adds (regexes over text).
    Stub,
}

impl DetectorKind {
    /// The kinds as written after `detector` in policy text.
    pub const NAMES: [&'static str; 3] = ["secret", "file", "stub"];

    /// The kind named in policy text; `None` for anything else.
    pub fn parse(s: &str) -> Option<DetectorKind> {
        match s {
            "secret" => Some(DetectorKind::Secret),
            "file" => Some(DetectorKind::File),
            "stub" => Some(DetectorKind::Stub),
            _ => None,
        }
    }

    /// The kind as written in policy text.
    pub fn as_str(self) -> &'static str {
        match self {
            DetectorKind::Secret => "secret",
            DetectorKind::File => "file",
            DetectorKind::Stub => "stub",
        }
    }

    /// The finding kind reported for this detector (`commit.kind` in commit rules).
    pub fn finding_kind(self) -> &'static str {
        match self {
            DetectorKind::Secret => "secret",
            DetectorKind::File => "blocked-file",
            DetectorKind::Stub => "stub",
        }
    }

    /// Keys a detector of this kind accepts in its `{ … }` body.
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            DetectorKind::Secret => &[
                "keywords",
                "group",
                "entropy",
                "stopwords",
                "allow",
                "skip",
                "paths",
                "exclude",
                "multiline",
                "checksum",
                "ignore",
                "defer",
                "case_sensitive",
            ],
            DetectorKind::File => &["exclude", "content", "case_sensitive"],
            DetectorKind::Stub => &[
                "keywords",
                "paths",
                "exclude",
                "code_only",
                "unless_before",
                "lookback",
            ],
        }
    }
}

/// A checksum a provider builds into its tokens, checked by the scanner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Checksum {
    /// GitHub's current tokens (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`) and npm's `npm_`
    /// tokens: after the prefix, 30 base62 characters and 6 base62 characters holding the
    /// CRC-32 (IEEE) of those 30, left-padded with `0`.
    GithubCrc32,
    /// Grafana service account tokens (`glsa_`): `glsa_`, 32 random letters and digits,
    /// `_`, and the CRC-32 (IEEE) of everything before that last `_`, its four bytes
    /// little-endian in lower-case hex.
    GrafanaCrc32,
}

impl Checksum {
    /// The names accepted by the `checksum` key.
    pub const NAMES: [&'static str; 2] = ["github-crc32", "grafana-crc32"];

    /// The checksum named in policy text; `None` for anything else.
    pub fn parse(s: &str) -> Option<Checksum> {
        match s {
            "github-crc32" => Some(Checksum::GithubCrc32),
            "grafana-crc32" => Some(Checksum::GrafanaCrc32),
            _ => None,
        }
    }
}

/// How serious a finding is; commit rules see it as `commit.severity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Likely but uncertain; the stdlib's commit rules ask a person to confirm.
    Warning,
    /// The default: a real problem; the stdlib's commit rules deny the commit.
    Error,
}

impl Severity {
    /// The severity named by `@severity(…)`; `None` for anything else.
    pub fn parse(s: &str) -> Option<Severity> {
        match s {
            "error" => Some(Severity::Error),
            "warning" => Some(Severity::Warning),
            _ => None,
        }
    }
    /// The severity as written in policy text and seen as `commit.severity`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// A checked detector. Regexes and globs are kept as text: they were validated at compile
/// time, and the scanner compiles only those whose keywords occur in the change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompiledDetector {
    /// `@id`, or `file:line` when omitted; findings carry it as their rule id.
    pub id: String,
    /// What the detector looks at, which fixes the keys it accepts.
    pub kind: DetectorKind,
    /// `@severity(error|warning)`; `error` when omitted.
    pub severity: Severity,
    /// The `because` text, shown with every finding.
    pub message: String,
    /// Regexes (`secret`, `stub`) or path globs (`file`), `$var`s expanded.
    pub patterns: Vec<String>,
    /// Literal prefilter, lower-cased: a regex runs only on lines holding one of these
    /// (ASCII case-insensitive). Required for `secret` and `stub`.
    pub keywords: Vec<String>,
    /// Capture group that holds the secret; `None`: group 1 when the regex has groups,
    /// else the whole match.
    pub group: Option<u32>,
    /// Minimum Shannon entropy (bits per character) of the secret.
    pub min_entropy: Option<f64>,
    /// A secret containing one of these (case-insensitive) is a placeholder, not a secret.
    pub stopwords: Vec<String>,
    /// Exact values that are public examples (documentation keys) and never reported.
    pub allow: Vec<String>,
    /// Path globs a file must match for the detector to run (empty: every file).
    pub paths: Vec<String>,
    /// Path globs that exempt a file.
    pub exclude: Vec<String>,
    /// `file` only: a regex the file's content must match for the file to be blocked.
    pub content: Option<String>,
    /// `secret` only: a secret this regex matches in full is a shape, not a secret
    /// (a UUID, a bare hash, a dotted name).
    #[serde(default)]
    pub skip: Option<String>,
    /// `secret` only: a match whose whole text (the name around the value too) this regex
    /// finds something in is not a secret (`csrf_token = …`, a Maven coordinate).
    #[serde(default)]
    pub ignore: Option<String>,
    /// `secret` only: the match may span lines (private key blocks).
    pub multiline: bool,
    /// `secret` only: a value that begins with a keyword of another secret detector (one
    /// that does not defer) is left to that detector, which knows the provider's length,
    /// alphabet and checksum (a generic rule does not report a truncated `glpat-` token).
    #[serde(default)]
    pub defer: bool,
    /// `secret` only: the checksum the provider builds into its tokens
    /// ([`Checksum::NAMES`]). A value that fails it is reported as a warning: it has the
    /// token's shape but was not issued (a test fixture, a hand-made sample).
    #[serde(default)]
    pub checksum: Option<Checksum>,
    /// `file`: match the path globs case-sensitively (default: ASCII case-insensitive, so
    /// `cert.P12` is blocked like `cert.p12`). `secret`: match the keywords as written
    /// (default: ASCII case-insensitive, stored lower-cased), for a keyword that is a
    /// token's own spelling and would otherwise hit ordinary words.
    #[serde(default)]
    pub case_sensitive: bool,
    /// `stub` only: ignore matches inside string literals and after a line comment.
    pub code_only: bool,
    /// `stub` only: no finding when one of the `lookback` lines before the match matches
    /// this regex (an `@abstractmethod` above a `raise NotImplementedError`).
    pub unless_before: Option<String>,
    /// `stub` only: how many lines before a match `unless_before` checks
    /// ([`DEFAULT_LOOKBACK`](crate::build::DEFAULT_LOOKBACK) when it is given without one,
    /// else 0).
    pub lookback: u32,
    /// Where the detector is declared.
    #[serde(with = "crate::ir::origin_full")]
    pub origin: Origin,
}
