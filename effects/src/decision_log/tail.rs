//! Reading the newest records back.

use super::append_guard::AppendGuard;
use super::error::LogError;
use super::record::LoggedRecord;
use super::segments::{list_segments, read_records, ACTIVE_FILE};
use std::path::{Path, PathBuf};

/// The last `n` records across segments, oldest first. Parses but does not verify (that
/// is [`verify`](super::verify())'s job); an unterminated final line is an uncommitted write and skipped.
pub fn tail(state_dir: &Path, n: usize) -> Result<Vec<LoggedRecord>, LogError> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let _guard = AppendGuard::shared(state_dir)?;
    let mut files: Vec<PathBuf> = list_segments(state_dir)?
        .into_iter()
        .map(|(_, p)| p)
        .collect();
    let active = state_dir.join(ACTIVE_FILE);
    if active.exists() {
        files.push(active);
    }
    let mut chunks: Vec<Vec<LoggedRecord>> = Vec::new();
    let mut have = 0usize;
    for path in files.iter().rev() {
        let mut recs = read_records(path)?;
        let take = (n - have).min(recs.len());
        let kept = recs.split_off(recs.len() - take);
        have += kept.len();
        chunks.push(kept);
        if have == n {
            break;
        }
    }
    Ok(chunks.into_iter().rev().flatten().collect())
}
