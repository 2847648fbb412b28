//! What a transaction is made of and the steps both of its paths share: the change set
//! and its checks (pre-images, preconditions), the journal's names and errors, and the
//! removal of a transaction's directory. Apart from `journal.rs` so that the one-file path
//! ([`super::one_file`]) and the full protocol both build on it without importing each
//! other.

use crate::safe_fs::{from_io, SafeFsError, SafeRoot};
use rustix::fd::OwnedFd;
use serde::{Deserialize, Serialize};

pub const JOURNAL_DIR: &str = ".contextos/state/journal";

pub(super) const INTENT: &str = "intent.json";
pub(super) const INTENT_TMP: &str = "intent.json.tmp";
pub(super) const COMMITTED: &str = "committed";

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

pub(super) fn default_mode() -> u32 {
    0o644
}

pub(super) mod bytes_as_text {
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
pub(super) struct Image {
    pub(super) exists: bool,
    pub(super) sha256: Option<String>,
    pub(super) mode: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Entry {
    pub(super) path: String,
    pub(super) pre: Image,
    pub(super) post: Image,
    pub(super) temp: Option<String>,
    pub(super) backup: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Intent {
    pub(super) txid: String,
    pub(super) generation: u64,
    /// Each entry's `temp` is a file in `T/` (this protocol); absent in the journals of
    /// the earlier one, whose temps sat beside their targets.
    #[serde(default)]
    pub(super) staged_in_journal: bool,
    pub(super) entries: Vec<Entry>,
}

/// Points at which a test may stop the process (every durable step of the protocol). A
/// one-file transaction reaches `Staged(0)` (its file staged and fsynced), `Applied(0)`
/// (renamed or unlinked), `Committed` (its directories fsynced) and `CleanedUp`.
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
    ProjectLock(#[from] crate::project_lock::ProjectLockError),
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
    /// `incomplete` (no intent: nothing to undo), `prepared` (would roll back) or
    /// `committed` (cleanup only).
    pub state: &'static str,
    pub generation: Option<u64>,
    pub paths: Vec<String>,
}

pub(super) fn image_of(root: &SafeRoot, path: &str) -> Result<Image, JournalError> {
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

pub(super) fn check_precondition(
    path: &str,
    pre: &Image,
    cond: &Precondition,
) -> Result<(), JournalError> {
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

pub(super) fn tx_path(txid: &str, name: &str) -> String {
    format!("{JOURNAL_DIR}/{txid}/{name}")
}

/// The directory that holds `rel` (`""`: the project root).
pub(super) fn parent_dir(rel: &str) -> &str {
    rel.rsplit_once('/').map_or("", |(dir, _)| dir)
}

pub(super) fn tx_dir(txid: &str) -> String {
    format!("{JOURNAL_DIR}/{txid}")
}

/// An I/O error on the file `name` of transaction `txid`.
pub(super) fn tx_io(txid: &str, name: &str) -> impl Fn(std::io::Error) -> JournalError {
    let path = if name.is_empty() {
        tx_dir(txid)
    } else {
        tx_path(txid, name)
    };
    move |e| JournalError::Path(from_io(&path, &e))
}

/// A staged file is renamed over its target from `T/`: both must be on one file system.
pub(super) fn same_file_system(
    target_dir: &OwnedFd,
    journal: &OwnedFd,
    rel: &str,
) -> Result<(), JournalError> {
    let dev = |fd: &OwnedFd| rustix::fs::fstat(fd).map(|st| st.st_dev);
    match (dev(target_dir), dev(journal)) {
        (Ok(a), Ok(b)) if a == b => Ok(()),
        (Ok(_), Ok(_)) => Err(JournalError::Path(SafeFsError {
            code: "path.cross-device",
            path: rel.to_string(),
            message: format!(
                "the file's directory is on another file system than the journal ({JOURNAL_DIR}); a journaled write cannot move a file between file systems"
            ),
        })),
        (Err(e), _) | (_, Err(e)) => Err(JournalError::Path(from_io(rel, &e.into()))),
    }
}

/// Removes `T/` and what it holds. One ordering matters: an intent must never survive
/// without the commit record next to it once targets may hold post-images, which would
/// read as prepared and roll a committed transaction back. The commit step removes the
/// intent itself; where both are still found (a crash before the commit's fsync returned,
/// or a journal of the earlier protocol), the intent goes first and `T/` is fsynced
/// before the record goes. Nothing else needs an fsync: whatever a crash leaves of the
/// rest (backups, staged files, the intent's temp file, the record alone), the next
/// recovery removes without using it.
pub(super) fn remove_tx_dir(root: &SafeRoot, txid: &str) -> Result<(), JournalError> {
    let names = list(root, txid)?;
    let has = |name: &str| names.iter().any(|n| n == name);
    if has(COMMITTED) && has(INTENT) {
        root.remove(&tx_path(txid, INTENT))?;
    }
    for name in names.iter().filter(|n| n.as_str() != COMMITTED) {
        root.remove_temp(&tx_path(txid, name), name)?;
    }
    if has(COMMITTED) {
        root.unlink_unsynced(&tx_path(txid, COMMITTED))?;
    }
    let dir = root.path().join(tx_dir(txid));
    match std::fs::remove_dir(&dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(JournalError::Corrupt {
            txid: txid.to_string(),
            why: format!("cannot remove {}: {e}", dir.display()),
        }),
    }
}

pub(super) fn list(root: &SafeRoot, txid: &str) -> Result<Vec<String>, JournalError> {
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

/// The end of a transaction past its commit point, on either path: the outcome of removing
/// its directory, reported so that an error there never reads as "nothing applied".
pub(super) fn finished(
    cleaned: Result<(), JournalError>,
    txid: String,
    generation: u64,
    files: usize,
    failpoint: &mut dyn FnMut(Failpoint),
) -> Result<Committed, JournalError> {
    if let Err(e) = cleaned {
        return Err(JournalError::CommittedNotCleaned {
            txid,
            why: e.to_string(),
        });
    }
    failpoint(Failpoint::CleanedUp);
    Ok(Committed {
        txid,
        generation,
        files,
    })
}

/// Whether `entry`'s target holds this transaction's post-image (and not its pre-image):
/// only then is it ours to undo. A target that holds neither image, or is no longer a
/// regular file, was changed by someone else and is left alone.
pub(super) fn holds_our_post_image(root: &SafeRoot, entry: &Entry) -> Result<bool, JournalError> {
    let now = match image_of(root, &entry.path) {
        Ok(now) => now,
        Err(JournalError::Path(p))
            if matches!(
                p.code,
                "path.symlink" | "path.is-directory" | "path.special-file" | "path.hardlink"
            ) =>
        {
            return Ok(false)
        }
        Err(other) => return Err(other),
    };
    let holds = |img: &Image| now.exists == img.exists && now.sha256 == img.sha256;
    Ok(!holds(&entry.pre) && holds(&entry.post))
}
