//! Inspects changed files: the task scope, blocked files, the size limit, then the
//! detectors over the lines the change adds.

use crate::change::{Added, ChangeStatus, ChangedFile};
use crate::detect::Detectors;
use crate::finding::{Finding, FindingKind, OVERSIZE_RULE, SCOPE_RULE};
use crate::scope::Scope;
use crate::text;
use contextos_core::detector::Severity;
use std::ops::Range;

/// Runs every detector over the change. Findings come back in path order, then by line.
pub fn find(
    detectors: &Detectors,
    files: &[ChangedFile],
    scope: Option<&Scope>,
) -> Result<Vec<Finding>, String> {
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
        let all;
        let added: &[Range<usize>] = match &f.added {
            Added::All => {
                all = [Range {
                    start: 0,
                    end: text::Lines::new(content).count(),
                }];
                &all
            }
            Added::Lines(r) => r,
        };
        if added.is_empty() {
            continue;
        }
        detectors.added_text(f, content, added, &mut out)?;
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
