//! The staged scanner behind `contextos scan --staged`.
//!
//! [`staged`] reads what a commit would record (the git index against HEAD, through gix)
//! into [`ChangedFile`]s; [`detect`] runs the policy set's detectors over them (secrets
//! and stubs only in the lines the change adds); [`scope`] checks every touched path
//! against a task's scope file; [`suppress`] applies inline `contextos:allow` markers and
//! the baseline; [`verdict`] asks the policy set's `commit` rules what each finding means.
//! Only `staged` and the baseline loader touch the host.

pub mod detect;
pub mod scope;
pub mod staged;
pub mod suppress;
pub mod text;
pub mod verdict;

use contextos_core::detector::Severity;
use serde::Serialize;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// What kind of change a staged entry is relative to HEAD.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase", tag = "status")]
pub enum ChangeStatus {
    Added,
    Modified,
    Deleted,
    /// Same content under a new path (`from` is the old path).
    Renamed {
        from: String,
    },
}

/// How git records the entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    File,
    Executable,
    /// The blob holds the link's target text.
    Symlink,
    /// A submodule gitlink: a commit id, no content.
    Submodule,
}

/// Which lines of the new content the change adds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Added {
    /// Every line (a new file, or content that was binary before).
    All,
    /// 0-based, half-open line ranges of the new content.
    Lines(Vec<Range<usize>>),
}

/// One path the change touches, with the content a commit would record.
#[derive(Debug, Clone)]
pub struct ChangedFile {
    /// Repository-relative, `/`-separated; bytes that are not UTF-8 are shown as U+FFFD.
    pub path: String,
    pub status: ChangeStatus,
    pub kind: EntryKind,
    /// Size of the staged blob in bytes (0 for deletions and submodules).
    pub size: u64,
    /// The staged blob; `None` for deletions, submodules and blobs over the size limit.
    pub content: Option<Vec<u8>>,
    pub added: Added,
    /// The blob exceeds the configured limit and was not read.
    pub oversize: bool,
}

impl ChangedFile {
    /// Every path this change touches under this entry (both ends of a rename).
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        let from = match &self.status {
            ChangeStatus::Renamed { from } => Some(from.as_str()),
            _ => None,
        };
        std::iter::once(self.path.as_str()).chain(from)
    }
}

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

/// Runs every detector over the change. Findings come back in path order, then by line.
pub fn find(
    detectors: &detect::Detectors,
    files: &[ChangedFile],
    scope: Option<&scope::Scope>,
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

/// What a staged scan produced, before the commit rules decide.
#[derive(Debug, Default)]
pub struct Scanned {
    /// Findings that stand, in path order, then by line.
    pub findings: Vec<Finding>,
    /// Findings an inline `contextos:allow` marker suppressed.
    pub suppressed: Vec<(Finding, suppress::SuppressedBy)>,
    /// Staged paths (index entries that differ from `HEAD`).
    pub files: usize,
    /// Bytes of staged content looked at or sized.
    pub bytes: u64,
}

/// Why a staged scan stopped; the scan fails closed on every one.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error(transparent)]
    Staged(#[from] staged::StagedError),
    #[error("a detector could not run: {0}")]
    Detector(String),
}

fn scan_one(
    change: &staged::StagedChange,
    repo: &gix::Repository,
    entry: &staged::StagedEntry,
    detectors: &detect::Detectors,
    scope: Option<&scope::Scope>,
    opts: staged::ReadOptions,
) -> Result<Scanned, ScanError> {
    let file = change.load(repo, entry, opts)?;
    let found = find(detectors, std::slice::from_ref(&file), scope).map_err(ScanError::Detector)?;
    let (kept, suppressed) = suppress::apply_inline(found, std::slice::from_ref(&file));
    Ok(Scanned {
        findings: kept,
        suppressed,
        files: 1,
        bytes: file.size,
    })
}

/// Scans every staged entry, on `threads` workers (each with its own repository handle),
/// holding one file per worker in memory. The first error stops every worker.
pub fn scan_staged(
    change: &staged::StagedChange,
    detectors: &detect::Detectors,
    scope: Option<&scope::Scope>,
    opts: staged::ReadOptions,
    threads: usize,
) -> Result<Scanned, ScanError> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<(usize, ScanError)>> = Mutex::new(None);
    let results: Mutex<Vec<Scanned>> = Mutex::new(Vec::new());
    let threads = threads.clamp(1, change.entries.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let repo = change.repo();
                let mut mine = Scanned::default();
                while !failed.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(entry) = change.entries.get(i) else {
                        break;
                    };
                    match scan_one(change, &repo, entry, detectors, scope, opts) {
                        Ok(one) => {
                            mine.findings.extend(one.findings);
                            mine.suppressed.extend(one.suppressed);
                            mine.bytes += one.bytes;
                        }
                        Err(e) => {
                            failed.store(true, Ordering::Relaxed);
                            if let Ok(mut slot) = first_error.lock() {
                                // Report the error of the earliest path, as a serial scan would.
                                if slot.as_ref().is_none_or(|(j, _)| i < *j) {
                                    *slot = Some((i, e));
                                }
                            }
                            break;
                        }
                    }
                }
                match results.lock() {
                    Ok(mut r) => r.push(mine),
                    // A worker's findings must never go missing silently.
                    Err(_) => failed.store(true, Ordering::Relaxed),
                }
            });
        }
    });
    let lost = || ScanError::Detector("a scan worker failed; its results are lost".into());
    match first_error.into_inner() {
        Ok(Some((_, e))) => return Err(e),
        Ok(None) if failed.load(Ordering::Relaxed) => return Err(lost()),
        Ok(None) => {}
        Err(_) => return Err(lost()),
    }
    let mut out = Scanned {
        files: change.entries.len(),
        ..Scanned::default()
    };
    for r in results
        .into_inner()
        .map_err(|_| ScanError::Detector("a scan worker panicked".into()))?
    {
        out.findings.extend(r.findings);
        out.suppressed.extend(r.suppressed);
        out.bytes += r.bytes;
    }
    let key = |f: &Finding| (f.file.clone(), f.line, f.column, f.rule.clone());
    out.findings.sort_by_key(key);
    out.suppressed.sort_by_key(|(f, _)| key(f));
    Ok(out)
}
