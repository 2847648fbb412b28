//! One staged scan, start to finish: every staged entry loaded, inspected and checked for
//! inline suppressions on worker threads, each with its own repository handle.

use crate::detect::Detectors;
use crate::finding::Finding;
use crate::inspect::{find, InspectError};
use crate::scope::Scope;
use crate::staged::{ReadOptions, StagedChange, StagedEntry, StagedError};
use crate::suppress::{self, SuppressedBy};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// What a staged scan produced, before the commit rules decide.
#[derive(Debug, Default)]
pub struct Scanned {
    /// Findings that stand, in path order, then by line.
    pub findings: Vec<Finding>,
    /// Findings an inline `contextos:allow` marker suppressed.
    pub suppressed: Vec<(Finding, SuppressedBy)>,
    /// Staged paths (index entries that differ from `HEAD`).
    pub files: usize,
    /// Bytes of staged content looked at or sized.
    pub bytes: u64,
}

/// Why a staged scan stopped; the scan fails closed on every one.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error(transparent)]
    Staged(#[from] StagedError),
    #[error(transparent)]
    Inspect(#[from] InspectError),
    /// A worker stopped without reporting (it panicked); its findings would be lost.
    #[error("a scan worker failed; its results are lost")]
    WorkerLost,
}

fn scan_one(
    change: &StagedChange,
    repo: &gix::Repository,
    entry: &StagedEntry,
    detectors: &Detectors,
    scope: Option<&Scope>,
    opts: ReadOptions,
) -> Result<Scanned, ScanError> {
    let file = change.load(repo, entry, opts)?;
    let found = find(detectors, std::slice::from_ref(&file), scope)?;
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
    change: &StagedChange,
    detectors: &Detectors,
    scope: Option<&Scope>,
    opts: ReadOptions,
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
    match first_error.into_inner() {
        Ok(Some((_, e))) => return Err(e),
        Ok(None) if failed.load(Ordering::Relaxed) => return Err(ScanError::WorkerLost),
        Ok(None) => {}
        Err(_) => return Err(ScanError::WorkerLost),
    }
    let mut out = Scanned {
        files: change.entries.len(),
        ..Scanned::default()
    };
    for r in results.into_inner().map_err(|_| ScanError::WorkerLost)? {
        out.findings.extend(r.findings);
        out.suppressed.extend(r.suppressed);
        out.bytes += r.bytes;
    }
    let key = |f: &Finding| (f.file.clone(), f.line, f.column, f.rule.clone());
    out.findings.sort_by_key(key);
    out.suppressed.sort_by_key(|(f, _)| key(f));
    Ok(out)
}
