//! The persisted session record: one JSON file per session id under a caller-given
//! state directory. It carries everything a later process needs to pick the session up
//! again — the mode, the container, the scratch directory, the synced baseline (what the
//! container was last shown of the host) and the host fingerprint it was taken from.

use super::fingerprint::Fingerprint;
use super::mode::CaptureMode;
use crate::sandbox::runner::SandboxError;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One synced project entry as the container sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Entry {
    /// A regular file; `mode` is 0o755 or 0o644 (only the executable bit is carried,
    /// as git does).
    File { sha256: String, mode: u32 },
    /// A symbolic link, by its target: links are shown, never carried back.
    Link { target: String },
}

/// The session record (format version 1).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRecord {
    pub version: u32,
    pub id: String,
    pub mode: CaptureMode,
    pub container: String,
    /// The overlay volume (overlay mode only).
    pub volume: Option<String>,
    pub scratch: PathBuf,
    pub project: PathBuf,
    pub image_id: String,
    /// `uid:gid` the commands run as.
    pub user: (u32, u32),
    pub idle_secs: u64,
    /// Unix seconds after which an idle sweep may remove the session.
    pub deadline: u64,
    pub created: u64,
    /// What the container was last shown of the host, by project-relative path.
    pub baseline: BTreeMap<String, Entry>,
    /// The host as it was when the baseline was last brought up to date.
    pub fingerprint: Fingerprint,
    /// Project files the container must not see (their read verdict is not allow).
    pub withheld: BTreeSet<String>,
    /// `.git` and `.contextos/state` entries covered in the container (overlay mode).
    pub hidden: BTreeSet<String>,
    /// Why overlay mode was not used although the automatic rule chose it.
    #[serde(default)]
    pub fallback: Option<String>,
}

/// `[A-Za-z0-9_-]{1,128}`: an id is a file name and part of a container name, so it can
/// never be a path or carry anything the engine would read differently.
pub fn validate_id(id: &str) -> Result<(), SandboxError> {
    let ok = (1..=128).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(SandboxError {
            code: "sandbox.session-id",
            message: format!(
                "invalid session id {id:?}: expected 1 to 128 of A-Z, a-z, 0-9, `_` and `-`"
            ),
        })
    }
}

pub(crate) fn state_error(path: &Path, e: impl std::fmt::Display) -> SandboxError {
    SandboxError {
        code: "sandbox.session-state",
        message: format!("session state {}: {e}", path.display()),
    }
}

pub fn record_path(state_dir: &Path, id: &str) -> PathBuf {
    state_dir.join(format!("{id}.json"))
}

/// The record of `id`, or `None` when there is none.
pub fn load(state_dir: &Path, id: &str) -> Result<Option<SessionRecord>, SandboxError> {
    validate_id(id)?;
    let path = record_path(state_dir, id);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(state_error(&path, e)),
    };
    let rec: SessionRecord = serde_json::from_slice(&bytes).map_err(|e| state_error(&path, e))?;
    if rec.version != 1 || rec.id != id {
        return Err(state_error(
            &path,
            "not a version 1 record of this session id",
        ));
    }
    Ok(Some(rec))
}

/// Writes the record atomically (temp file, fsync, rename): a crash leaves the old
/// record or the new one, never half of one.
pub fn save(state_dir: &Path, rec: &SessionRecord) -> Result<(), SandboxError> {
    validate_id(&rec.id)?;
    let path = record_path(state_dir, &rec.id);
    let bytes = serde_json::to_vec(rec).map_err(|e| state_error(&path, e))?;
    crate::atomic_write::write(&path, &bytes, 0o600, crate::atomic_write::Publish::Replace)
        .map(|_| ())
        .map_err(|e| state_error(&path, e))
}

pub fn remove(state_dir: &Path, id: &str) -> Result<(), SandboxError> {
    let path = record_path(state_dir, id);
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(state_error(&path, e)),
    }
}

/// Ids of every record in `state_dir`.
pub fn list(state_dir: &Path) -> Result<Vec<String>, SandboxError> {
    let rd = match std::fs::read_dir(state_dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(state_error(state_dir, e)),
    };
    let mut ids = Vec::new();
    for entry in rd {
        let entry = entry.map_err(|e| state_error(state_dir, e))?;
        let name = entry.file_name();
        if let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".json")) {
            if validate_id(id).is_ok() {
                ids.push(id.to_string());
            }
        }
    }
    ids.sort();
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_cannot_be_path_tricks() {
        for ok in ["a", "s-1_B", &"x".repeat(128)] {
            assert!(validate_id(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "..",
            "a/b",
            "a\\b",
            ".hidden",
            "a b",
            "é",
            "a\0",
            &"x".repeat(129),
        ] {
            assert!(validate_id(bad).is_err(), "{bad:?}");
        }
    }
}
