//! `JournaledTransaction`: all-or-nothing multi-file writes that survive `kill -9`.
//!
//! Protocol, per transaction `T` under the project lock (generation `G`):
//! 1. check every path (lexical + physical) and every precondition, and record each
//!    pre-image (exists, sha256, mode);
//! 2. copy every existing pre-image into `.contextos/state/journal/T/backup-N` (fsynced);
//! 3. write `.contextos/state/journal/T/intent.json` atomically (temp, fsync, rename,
//!    directory fsync): paths, pre- and post-images, temp names, `G`;
//! 4. stage each new content as a temp file in the target's own directory (`O_EXCL |
//!    O_NOFOLLOW`, fsynced);
//! 5. re-check the fence (`G` still ours) and the preconditions, then rename each temp
//!    over its target / unlink deleted targets, relative to the checked directory handles;
//! 6. write `T/committed` (fsynced) — the commit point;
//! 7. clean up: remove backups and `T`.
//!
//! Recovery (start of every mutating command, and `contextos journal recover`): a
//! transaction without `intent.json` never touched a target and is removed; one with
//! `intent.json` but no `committed` is **rolled back** (temp files removed, every target
//! that holds its post-image restored from its backup or removed); a committed
//! one is cleaned up. Every recovery step is idempotent, so a crash during recovery is
//! just another crash. After recovery, every file of a transaction is old or every file
//! is new, and no temp or backup file remains.

use super::atomic_write::temp_name;
use super::faults::Recovery;
use super::project_lock::ProjectLockGuard;
use super::safe_fs::{sha256_hex, SafeFsError, SafeRoot};
use serde::{Deserialize, Serialize};

pub const JOURNAL_DIR: &str = ".contextos/state/journal";

/// One change of a transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum Change {
    Write {
        path: String,
        #[serde(with = "bytes_as_text")]
        content: Vec<u8>,
        /// Mode of a new file; an existing file keeps its mode unless `exact_mode`.
        #[serde(default = "default_mode")]
        mode: u32,
        /// `mode` applies to an existing file too (a sandbox's `chmod`, an explicit mode
        /// in a changeset).
        #[serde(default)]
        exact_mode: bool,
    },
    Delete {
        path: String,
    },
}

fn default_mode() -> u32 {
    0o644
}

mod bytes_as_text {
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(b) {
            Ok(t) => s.serialize_str(t),
            Err(_) => Err(serde::ser::Error::custom("file content must be UTF-8 text")),
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        String::deserialize(d).map(String::into_bytes)
    }
}

impl Change {
    pub fn path(&self) -> &str {
        match self {
            Change::Write { path, .. } | Change::Delete { path } => path,
        }
    }
}

/// What the target must look like when the transaction applies.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Precondition {
    #[default]
    Any,
    MustNotExist,
    /// The current content's sha256 (hex).
    Sha256(String),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    pub change: Change,
    #[serde(default)]
    pub precondition: Precondition,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Image {
    exists: bool,
    sha256: Option<String>,
    mode: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    path: String,
    pre: Image,
    post: Image,
    temp: Option<String>,
    backup: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Intent {
    txid: String,
    generation: u64,
    entries: Vec<Entry>,
}

/// Points at which a test may stop the process (every durable step of the protocol).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failpoint {
    BackupWritten(usize),
    IntentWritten,
    Staged(usize),
    Applied(usize),
    Committed,
    CleanedUp,
}

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error(transparent)]
    Path(#[from] SafeFsError),
    #[error("{path}: precondition failed: {why}")]
    Precondition { path: String, why: String },
    #[error("{path} appears twice in one transaction")]
    Duplicate { path: String },
    #[error(transparent)]
    ProjectLock(#[from] super::project_lock::ProjectLockError),
    #[error("journal {txid}: {why}")]
    Corrupt { txid: String, why: String },
    /// Past the commit point: the change is applied, only its journal files remain.
    #[error("journal {txid}: committed (every file has its new content), but cleaning up the journal failed ({why}); the next `contextos journal recover` removes what is left")]
    CommittedNotCleaned { txid: String, why: String },
}

/// What a commit did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Committed {
    pub txid: String,
    pub generation: u64,
    pub files: usize,
}

/// A transaction found in the journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pending {
    pub txid: String,
    /// `incomplete` (no intent yet), `prepared` (would roll back) or `committed` (cleanup only).
    pub state: &'static str,
    pub generation: Option<u64>,
    pub paths: Vec<String>,
}

fn image_of(root: &SafeRoot, path: &str) -> Result<Image, JournalError> {
    Ok(match root.fingerprint(path)? {
        Some((sha, mode)) => Image {
            exists: true,
            sha256: Some(sha),
            mode: Some(mode),
        },
        None => Image {
            exists: false,
            sha256: None,
            mode: None,
        },
    })
}

fn check_precondition(path: &str, pre: &Image, cond: &Precondition) -> Result<(), JournalError> {
    let why = match cond {
        Precondition::Any => return Ok(()),
        Precondition::MustNotExist if pre.exists => {
            "the file must not exist, but it does".to_string()
        }
        Precondition::MustNotExist => return Ok(()),
        Precondition::Sha256(want) if pre.sha256.as_deref() == Some(want.as_str()) => return Ok(()),
        Precondition::Sha256(want) => format!(
            "expected sha256 {want}, found {}",
            pre.sha256.as_deref().unwrap_or("no file")
        ),
    };
    Err(JournalError::Precondition {
        path: path.to_string(),
        why,
    })
}

fn tx_path(txid: &str, name: &str) -> String {
    format!("{JOURNAL_DIR}/{txid}/{name}")
}

/// Applies `steps` as one transaction. The caller holds the project lock.
pub fn commit(
    root: &SafeRoot,
    lock: &ProjectLockGuard,
    steps: &[Step],
    failpoint: &mut dyn FnMut(Failpoint),
) -> Result<Committed, JournalError> {
    let mut seen = std::collections::HashSet::new();
    for s in steps {
        if !seen.insert(s.change.path()) {
            return Err(JournalError::Duplicate {
                path: s.change.path().to_string(),
            });
        }
    }
    lock.verify_fence()?;
    let txid = format!(
        "{:020}-{}",
        lock.generation(),
        uuid::Uuid::new_v4().simple()
    );
    // 1. Pre-images and preconditions.
    let mut entries = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let path = s.change.path();
        let pre = image_of(root, path)?;
        check_precondition(path, &pre, &s.precondition)?;
        let post = match &s.change {
            Change::Write {
                content,
                mode,
                exact_mode,
                ..
            } => Image {
                exists: true,
                sha256: Some(sha256_hex(content)),
                mode: Some(if *exact_mode {
                    *mode
                } else {
                    pre.mode.unwrap_or(*mode)
                }),
            },
            Change::Delete { .. } => Image {
                exists: false,
                sha256: None,
                mode: None,
            },
        };
        entries.push(Entry {
            path: path.to_string(),
            temp: matches!(s.change, Change::Write { .. })
                .then(|| temp_name(path, &format!("{txid}-{i}"))),
            backup: pre.exists.then(|| format!("backup-{i}")),
            pre,
            post,
        });
    }
    // 2. Backups of every existing pre-image, created directly under their final names
    //    (fsynced): until the intent exists, recovery discards the whole directory, so a
    //    torn backup is harmless. The intent's write fsyncs the directory.
    for (i, e) in entries.iter().enumerate() {
        if let Some(b) = &e.backup {
            let bytes = root.read(&e.path)?;
            root.stage(&tx_path(&txid, b), b, &bytes, 0o600)?;
            failpoint(Failpoint::BackupWritten(i));
        }
    }
    // 3. The intent record: from here on, recovery can undo everything.
    let intent = Intent {
        txid: txid.clone(),
        generation: lock.generation(),
        entries,
    };
    let json = serde_json::to_vec_pretty(&intent).map_err(|e| JournalError::Corrupt {
        txid: txid.clone(),
        why: e.to_string(),
    })?;
    root.write_atomic(&tx_path(&txid, "intent.json"), &json, 0o600)?;
    failpoint(Failpoint::IntentWritten);
    // 4–6 may fail half-way (a target swapped for a link, a stale fence): undo at once,
    // so an error always means nothing was applied. If even that fails, the journal
    // keeps the transaction for the next recovery.
    if let Err(e) = stage_apply_commit(root, lock, steps, &intent, failpoint) {
        if crate::faults::disabled(Recovery::CommitUndo) {
            return Err(e);
        }
        return match undo(root, &intent) {
            Ok(()) => Err(e),
            Err(undo) => Err(JournalError::Corrupt {
                txid: txid.clone(),
                why: format!(
                    "{e}; rolling back failed too ({undo}); run `contextos journal recover`"
                ),
            }),
        };
    }
    // 7. Cleanup. Past the commit point an error must not read as "nothing applied".
    if let Err(e) = cleanup(root, &txid, &intent) {
        return Err(JournalError::CommittedNotCleaned {
            txid,
            why: e.to_string(),
        });
    }
    failpoint(Failpoint::CleanedUp);
    Ok(Committed {
        txid,
        generation: intent.generation,
        files: intent.entries.len(),
    })
}

/// Steps 4–6 of the protocol: stage, fenced and re-checked apply, commit record.
fn stage_apply_commit(
    root: &SafeRoot,
    lock: &ProjectLockGuard,
    steps: &[Step],
    intent: &Intent,
    failpoint: &mut dyn FnMut(Failpoint),
) -> Result<(), JournalError> {
    // 4. Stage new contents beside their targets.
    for (i, (s, e)) in steps.iter().zip(&intent.entries).enumerate() {
        if let (Change::Write { content, .. }, Some(t)) = (&s.change, &e.temp) {
            // The post-image's mode: the existing file's, or the one asked for.
            let mode = e.post.mode.unwrap_or(0o644);
            root.stage_with_mode(&e.path, t, content, mode)?;
            failpoint(Failpoint::Staged(i));
        }
    }
    // 5. Fence and preconditions again, then apply.
    lock.verify_fence()?;
    for (s, e) in steps.iter().zip(&intent.entries) {
        let now = image_of(root, &e.path)?;
        if now != e.pre {
            return Err(JournalError::Precondition {
                path: e.path.clone(),
                why: "the file changed while the transaction was prepared".into(),
            });
        }
        check_precondition(&e.path, &now, &s.precondition)?;
    }
    for (i, e) in intent.entries.iter().enumerate() {
        match &e.temp {
            Some(t) => root.rename_into_place(&e.path, t)?,
            None => root.remove(&e.path)?,
        }
        failpoint(Failpoint::Applied(i));
    }
    // 6. Commit point.
    root.write_atomic(&tx_path(&intent.txid, "committed"), b"", 0o600)?;
    failpoint(Failpoint::Committed);
    Ok(())
}

/// Undoes a transaction whose steps 4–6 failed. A commit record that may exist (its
/// rename done, the directory fsync failed) goes first: while it is there recovery rolls
/// forward, so a crash half-way through this undo would leave the transaction torn.
fn undo(root: &SafeRoot, intent: &Intent) -> Result<(), JournalError> {
    if !crate::faults::disabled(Recovery::CommitRetract) {
        root.remove(&tx_path(&intent.txid, "committed"))?;
    }
    roll_back(root, intent)?;
    cleanup(root, &intent.txid, intent)
}

fn cleanup(root: &SafeRoot, txid: &str, intent: &Intent) -> Result<(), JournalError> {
    for e in &intent.entries {
        if let Some(t) = &e.temp {
            root.remove_temp(&e.path, t)?;
        }
    }
    // Backups go with the directory; unlinks need no fsync each: a crash here leaves a
    // committed (or rolled-back) transaction that the next recovery cleans up again.
    remove_tx_dir(root, txid)
}

fn remove_tx_dir(root: &SafeRoot, txid: &str) -> Result<(), JournalError> {
    // `committed` last: until it is gone, a crash here still reads as committed.
    for name in list(root, txid)? {
        if name != "committed" {
            root.remove_temp(&tx_path(txid, &name), &name)?;
        }
    }
    root.remove(&tx_path(txid, "committed"))?;
    let dir = root.path().join(JOURNAL_DIR).join(txid);
    match std::fs::remove_dir(&dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(JournalError::Corrupt {
            txid: txid.to_string(),
            why: format!("cannot remove {}: {e}", dir.display()),
        }),
    }
}

fn list(root: &SafeRoot, txid: &str) -> Result<Vec<String>, JournalError> {
    let dir = root.path().join(JOURNAL_DIR).join(txid);
    let mut names = Vec::new();
    match std::fs::read_dir(&dir) {
        Ok(entries) => {
            for e in entries.flatten() {
                names.push(e.file_name().to_string_lossy().into_owned());
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(JournalError::Corrupt {
                txid: txid.to_string(),
                why: e.to_string(),
            })
        }
    }
    names.sort();
    Ok(names)
}

fn transactions(root: &SafeRoot) -> Result<Vec<String>, JournalError> {
    let dir = root.path().join(JOURNAL_DIR);
    let mut out = Vec::new();
    match std::fs::read_dir(&dir) {
        Ok(entries) => {
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    out.push(e.file_name().to_string_lossy().into_owned());
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(JournalError::Corrupt {
                txid: String::new(),
                why: format!("cannot list {}: {e}", dir.display()),
            })
        }
    }
    out.sort();
    Ok(out)
}

fn read_intent(root: &SafeRoot, txid: &str) -> Result<Option<Intent>, JournalError> {
    match root.read(&tx_path(txid, "intent.json")) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| JournalError::Corrupt {
                txid: txid.to_string(),
                why: format!("intent.json: {e}"),
            }),
        Err(e) if e.code == "path.not-found" => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Lists what is pending in the journal.
pub fn status(root: &SafeRoot) -> Result<Vec<Pending>, JournalError> {
    let mut out = Vec::new();
    for txid in transactions(root)? {
        let names = list(root, &txid)?;
        let intent = read_intent(root, &txid)?;
        out.push(Pending {
            state: match (&intent, names.iter().any(|n| n == "committed")) {
                (_, true) => "committed",
                (Some(_), false) => "prepared",
                (None, false) => "incomplete",
            },
            generation: intent.as_ref().map(|i| i.generation),
            paths: intent
                .map(|i| i.entries.into_iter().map(|e| e.path).collect())
                .unwrap_or_default(),
            txid,
        });
    }
    Ok(out)
}

/// Finishes or undoes every interrupted transaction. The caller holds the project lock.
pub fn recover(root: &SafeRoot, _lock: &ProjectLockGuard) -> Result<Vec<Pending>, JournalError> {
    let pending = status(root)?;
    for p in &pending {
        let intent = read_intent(root, &p.txid)?;
        match (p.state, intent) {
            ("committed", Some(intent)) => cleanup(root, &p.txid, &intent)?,
            ("prepared", Some(intent)) => {
                if !crate::faults::disabled(Recovery::RecoverUndo) {
                    roll_back(root, &intent)?;
                }
                cleanup(root, &p.txid, &intent)?;
            }
            // No intent: no target was touched (backups only); or a committed transaction
            // whose intent was already cleaned up.
            _ => remove_tx_dir(root, &p.txid)?,
        }
    }
    Ok(pending)
}

fn roll_back(root: &SafeRoot, intent: &Intent) -> Result<(), JournalError> {
    for (i, e) in intent.entries.iter().enumerate() {
        if let Some(t) = &e.temp {
            root.remove_temp(&e.path, t)?;
        }
        // Undo only what this transaction did: a target that holds its post-image. One
        // that holds neither image (or is no longer a regular file) was changed by
        // someone else and is left alone.
        let now = match image_of(root, &e.path) {
            Ok(now) => now,
            Err(JournalError::Path(p))
                if matches!(
                    p.code,
                    "path.symlink" | "path.is-directory" | "path.special-file" | "path.hardlink"
                ) =>
            {
                continue
            }
            Err(other) => return Err(other),
        };
        let holds = |img: &Image| now.exists == img.exists && now.sha256 == img.sha256;
        if holds(&e.pre) || !holds(&e.post) {
            continue;
        }
        match &e.backup {
            Some(b) => {
                let bytes = root.read(&tx_path(&intent.txid, b))?;
                if Some(sha256_hex(&bytes)) != e.pre.sha256 {
                    return Err(JournalError::Corrupt {
                        txid: intent.txid.clone(),
                        why: format!("backup of {} does not match its recorded pre-image", e.path),
                    });
                }
                // A deterministic temp name, so a crash during this restore is cleaned up
                // by the next recovery.
                let restore = temp_name(&e.path, &format!("{}-{i}-restore", intent.txid));
                root.remove_temp(&e.path, &restore)?;
                root.stage_with_mode(&e.path, &restore, &bytes, e.pre.mode.unwrap_or(0o644))?;
                root.rename_into_place(&e.path, &restore)?;
            }
            None => root.remove(&e.path)?,
        }
    }
    Ok(())
}
