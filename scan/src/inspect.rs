//! Inspects changed files: the task scope, blocked files, the size limit, then the
//! detectors over the lines the change adds.

use crate::change::{Added, ChangeStatus, ChangedFile};
use crate::detect::{DetectorError, Detectors};
use crate::finding::{Finding, FindingKind, OVERSIZE_RULE, SCOPE_RULE};
use crate::scope::{Scope, ScopeMatchError};
use crate::text;
use contextos_core::detector::Severity;

/// Why a changed file could not be inspected; the scan fails closed on it.
#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    #[error("a detector could not run: {0}")]
    Detector(#[from] DetectorError),
    #[error(transparent)]
    Scope(#[from] ScopeMatchError),
}

/// Runs every detector over the change. Findings come back in path order, then by line.
pub fn find(
    detectors: &Detectors,
    files: &[ChangedFile],
    scope: Option<&Scope>,
) -> Result<Vec<Finding>, InspectError> {
    let mut out = Vec::new();
    for f in files {
        if let Some(scope) = scope {
            for p in f.paths() {
                if !scope.allows(p)? {
                    out.push(Finding {
                        rule: SCOPE_RULE.into(),
                        kind: FindingKind::Scope,
                        severity: Severity::Error,
                        file: p.to_string(),
                        line: None,
                        column: None,
                        fingerprint: text::fingerprint(SCOPE_RULE, p, b""),
                        redacted: None,
                        message: format!("{p} is outside the task's scope ({})", scope.source()),
                    });
                }
            }
        }
        if f.status == ChangeStatus::Deleted {
            continue;
        }
        detectors.blocked_files(f, &mut out)?;
        if f.oversize {
            out.push(Finding {
                rule: OVERSIZE_RULE.into(),
                kind: FindingKind::Oversize,
                severity: Severity::Error,
                file: f.path.clone(),
                line: None,
                column: None,
                fingerprint: text::fingerprint(OVERSIZE_RULE, &f.path, b""),
                redacted: None,
                message: format!(
                    "the staged blob is {} bytes, over the scan limit; it was not inspected",
                    f.size
                ),
            });
            continue;
        }
        let Some(content) = f.content.as_deref() else {
            continue;
        };
        if text::is_binary(content) {
            continue;
        }
        match &f.added {
            // Text has at least one line (an empty file one empty line).
            Added::All => detectors.all_text(f, content, &mut out)?,
            Added::Lines(added) if added.is_empty() => {}
            Added::Lines(added) => detectors.added_text(f, content, added, &mut out)?,
        }
    }
    out.sort_by(|a, b| {
        (a.file.as_str(), a.line, a.column, a.rule.as_str()).cmp(&(
            b.file.as_str(),
            b.line,
            b.column,
            b.rule.as_str(),
        ))
    });
    Ok(out)
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::change::EntryKind;

    fn file(path: &str, content: &[u8], oversize: bool) -> ChangedFile {
        ChangedFile {
            path: path.into(),
            status: ChangeStatus::Added,
            kind: EntryKind::File,
            size: content.len() as u64,
            content: (!oversize).then(|| content.to_vec()),
            added: Added::All,
            oversize,
        }
    }

    #[test]
    fn scope_and_size_findings_come_in_path_order() {
        let detectors = Detectors::new(&[]).unwrap();
        let scope = Scope::parse("src/**\n", "task.scope").unwrap();
        let files = [
            file("src/ok.rs", b"fn main() {}\n", false),
            file("src/big.bin", b"", true),
            file("docs/out.md", b"text\n", false),
        ];
        let found = find(&detectors, &files, Some(&scope)).unwrap();
        let got: Vec<(&str, FindingKind)> =
            found.iter().map(|f| (f.file.as_str(), f.kind)).collect();
        assert_eq!(
            got,
            [
                ("docs/out.md", FindingKind::Scope),
                ("src/big.bin", FindingKind::Oversize)
            ]
        );
        assert!(found[0].message.contains("task.scope"), "{:?}", found[0]);
        assert!(find(&detectors, &files[..1], None).unwrap().is_empty());
    }
}
