//! Suppressions: an inline `contextos:allow RULE-ID` on the finding's line, and a baseline
//! file of fingerprints, each with a reason and an optional expiry.
//!
//! An inline marker must name the rule: a bare `contextos:allow` suppresses nothing, so a
//! marker written for one detector never hides another's finding on the same line. A
//! baseline entry matches on the fingerprint (rule, file and secret — not the line), so
//! it survives code moving around it. An expired entry is an error, not a silent
//! re-enable: someone promised to fix it by that date.

use crate::change::ChangedFile;
use crate::finding::Finding;
use serde::Deserialize;
use std::collections::HashMap;

pub const INLINE_MARKER: &str = "contextos:allow";

/// Rule ids named by `contextos:allow` markers on a line.
pub fn inline_ids(line: &str) -> Vec<&str> {
    let mut ids = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find(INLINE_MARKER) {
        rest = &rest[i + INLINE_MARKER.len()..];
        for token in rest.split([' ', '\t', ',']).filter(|t| !t.is_empty()) {
            let token = token.trim_end_matches(|c: char| "*/;)-->".contains(c));
            let valid = !token.is_empty()
                && token
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.:/".contains(c));
            if !valid {
                break;
            }
            ids.push(token);
        }
    }
    ids
}

/// How a finding was suppressed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase", tag = "by")]
pub enum SuppressedBy {
    Inline,
    Baseline { reason: String },
}

/// Splits findings into those that stand and those an inline marker suppresses.
pub fn apply_inline(
    findings: Vec<Finding>,
    files: &[ChangedFile],
) -> (Vec<Finding>, Vec<(Finding, SuppressedBy)>) {
    // Each file's line table is built once, however many findings it has, and only for
    // files with findings: most changed files have none.
    let with_findings: std::collections::HashSet<&str> =
        findings.iter().map(|f| f.file.as_str()).collect();
    let by_path: HashMap<&str, (&[u8], crate::text::Lines)> = files
        .iter()
        .filter(|f| with_findings.contains(f.path.as_str()))
        .filter_map(|f| {
            let content = f.content.as_deref()?;
            Some((f.path.as_str(), (content, crate::text::Lines::new(content))))
        })
        .collect();
    let mut kept = Vec::new();
    let mut suppressed = Vec::new();
    for f in findings {
        let line_text = f.line.and_then(|l| {
            let (content, lines) = by_path.get(f.file.as_str())?;
            content
                .get(lines.range(l - 1, content))
                .map(String::from_utf8_lossy)
        });
        let named = line_text
            .as_deref()
            .is_some_and(|t| inline_ids(t).contains(&f.rule.as_str()));
        if named {
            suppressed.push((f, SuppressedBy::Inline));
        } else {
            kept.push(f);
        }
    }
    (kept, suppressed)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BaselineFile {
    #[serde(default)]
    finding: Vec<toml::Spanned<RawEntry>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    fingerprint: String,
    #[serde(default)]
    rule: Option<String>,
    #[serde(default)]
    file: Option<String>,
    reason: String,
    #[serde(default)]
    expires: Option<toml::value::Datetime>,
}

/// One accepted finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaselineEntry {
    pub fingerprint: String,
    pub rule: Option<String>,
    pub reason: String,
    /// (year, month, day)
    pub expires: Option<(u16, u8, u8)>,
    pub line: usize,
}

/// A baseline file that cannot be used; the scan fails closed on it.
#[derive(Debug, thiserror::Error)]
#[error("{source_name}:{line}: {message}")]
pub struct BaselineError {
    pub source_name: String,
    pub line: usize,
    pub message: String,
}

/// The accepted findings of a project.
#[derive(Debug, Default)]
pub struct Baseline {
    entries: Vec<BaselineEntry>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .map_or(1, |p| p.matches('\n').count() + 1)
}

impl Baseline {
    /// Parses a baseline; `today` (year, month, day) decides which entries have expired.
    pub fn parse(
        text: &str,
        source: &str,
        today: (u16, u8, u8),
    ) -> Result<Baseline, BaselineError> {
        let err = |line: usize, message: String| BaselineError {
            source_name: source.to_string(),
            line,
            message,
        };
        let file: BaselineFile = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(1, |s| line_of(text, s.start));
            err(line, e.message().to_string())
        })?;
        let mut entries = Vec::new();
        for spanned in file.finding {
            let line = line_of(text, spanned.span().start);
            let raw = spanned.into_inner();
            let fp = raw.fingerprint.trim().to_ascii_lowercase();
            if fp.len() != 32 || !fp.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(err(
                    line,
                    format!("fingerprint `{}` is not 32 hex digits (copy it from `contextos scan --format json`)", raw.fingerprint),
                ));
            }
            if raw.reason.trim().is_empty() {
                return Err(err(line, "every accepted finding needs a reason".into()));
            }
            let expires = match raw.expires {
                None => None,
                Some(dt) => {
                    let Some(d) = dt.date.filter(|_| dt.time.is_none()) else {
                        return Err(err(
                            line,
                            format!("expires = {dt} must be a date such as 2027-01-31"),
                        ));
                    };
                    Some((d.year, d.month, d.day))
                }
            };
            if let Some(exp) = expires {
                if exp < today {
                    return Err(err(
                        line,
                        format!(
                            "the accepted finding {fp} expired on {:04}-{:02}-{:02}: fix it, or renew the entry with a reason",
                            exp.0, exp.1, exp.2
                        ),
                    ));
                }
            }
            let _ = raw.file;
            entries.push(BaselineEntry {
                fingerprint: fp,
                rule: raw.rule,
                reason: raw.reason,
                expires,
                line,
            });
        }
        Ok(Baseline { entries })
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry accepting `f`, if any.
    pub fn accepts(&self, f: &Finding) -> Option<&BaselineEntry> {
        self.entries.iter().find(|e| {
            e.fingerprint == f.fingerprint && e.rule.as_deref().is_none_or(|r| r == f.rule)
        })
    }

    /// Splits findings into those that stand and those the baseline accepts.
    pub fn apply(&self, findings: Vec<Finding>) -> (Vec<Finding>, Vec<(Finding, SuppressedBy)>) {
        let mut kept = Vec::new();
        let mut suppressed = Vec::new();
        for f in findings {
            match self.accepts(&f) {
                Some(e) => {
                    let by = SuppressedBy::Baseline {
                        reason: e.reason.clone(),
                    };
                    suppressed.push((f, by));
                }
                None => kept.push(f),
            }
        }
        (kept, suppressed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_markers_name_rules() {
        assert_eq!(
            inline_ids("x = 1 # contextos:allow aws-access-key-id"),
            vec!["aws-access-key-id"]
        );
        assert_eq!(
            inline_ids("// contextos:allow a, b-c  because tests"),
            vec!["a", "b-c", "because", "tests"]
        );
        assert!(inline_ids("contextos:allow").is_empty());
        assert_eq!(inline_ids("/* contextos:allow jwt */"), vec!["jwt"]);
        assert!(inline_ids("nothing here").is_empty());
    }

    const FP: &str = "00112233445566778899aabbccddeeff";

    #[test]
    fn baseline_parses_and_expires() {
        let text = format!(
            "[[finding]]\nfingerprint = \"{FP}\"\nrule = \"jwt\"\nreason = \"fixture\"\nexpires = 2027-01-31\n"
        );
        let b = Baseline::parse(&text, "b.toml", (2026, 11, 29)).unwrap();
        assert_eq!(b.len(), 1);
        let e = Baseline::parse(&text, "b.toml", (2027, 2, 1)).unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains("expired on 2027-01-31"), "{e}");
        // The expiry day itself is still valid.
        assert!(Baseline::parse(&text, "b.toml", (2027, 1, 31)).is_ok());
    }

    #[test]
    fn baseline_refuses_bad_entries_with_lines() {
        let no_reason = format!("\n[[finding]]\nfingerprint = \"{FP}\"\nreason = \" \"\n");
        assert_eq!(
            Baseline::parse(&no_reason, "b", (2026, 1, 1))
                .unwrap_err()
                .line,
            2
        );
        let bad_fp = "[[finding]]\nfingerprint = \"abc\"\nreason = \"r\"\n";
        assert!(Baseline::parse(bad_fp, "b", (2026, 1, 1)).is_err());
        let unknown = format!("[[finding]]\nfingerprint = \"{FP}\"\nreason = \"r\"\ncolour = 1\n");
        assert!(Baseline::parse(&unknown, "b", (2026, 1, 1)).is_err());
        let datetime = format!(
            "[[finding]]\nfingerprint = \"{FP}\"\nreason = \"r\"\nexpires = 2027-01-01T00:00:00Z\n"
        );
        assert!(Baseline::parse(&datetime, "b", (2026, 1, 1)).is_err());
    }
}
