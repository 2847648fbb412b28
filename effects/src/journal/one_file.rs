//! The one-file path of [`super::commit`]: a transaction of a single change (one rewrite,
//! one creation or one deletion) needs no backup, intent or commit record, because the
//! one rename or unlink that applies it is already atomic.
//!
//! 1. check (done by the caller, as for any transaction): the safe-path checks, the
//!    precondition, the pre-image (exists, sha256, mode);
//! 2. stage a write in `T/stage` (`O_CREAT | O_EXCL | O_NOFOLLOW`, the post-image's mode,
//!    the target's directory created and checked as the full protocol does), then fsync
//!    that one file;
//! 3. re-check the fence and the pre-image (read whole, kept for an undo);
//! 4. rename `T/stage` over the target, or unlink it, relative to its checked directory
//!    handle; fsync the target's directory and the parent of every directory step 2 made
//!    for it — the commit point;
//! 5. remove `T/`, with no fsync.
//!
//! Why it is all-or-nothing without a journal record: before the rename the target is
//! untouched, and a crash leaves at most a `T/` without `intent.json`, which recovery
//! deletes unread. The rename replaces the target in one step, and the staged data is
//! durable before it, so after any crash the target is whole, old or new. Once the
//! directories are fsynced the new name survives a power cut. `T/` itself is never
//! fsynced: nothing depends on its names (staging in `T/` rather than beside the target
//! only makes sure a crash leaves nothing outside it). A failure after the rename and
//! before the commit point (an fsync's `EIO`) is undone from the pre-image read in step
//! 3, through `T/` again, so an error still means nothing was applied.

use super::parts::{
    check_precondition, finished, holds_our_post_image, parent_dir, remove_tx_dir,
    same_file_system, tx_io, tx_path, Change, Committed, Entry, Failpoint, Image, JournalError,
    Step,
};
use crate::atomic_write::create_unsynced;
use crate::faults::Recovery;
use crate::project_lock::ProjectLockGuard;
use crate::safe_fs::{sha256_hex, SafeRoot};
use std::collections::BTreeSet;

/// The staged post-image in `T/`.
const STAGED: &str = "stage";
/// The pre-image written back by an undo, in `T/` too.
const RESTORE: &str = "restore";

/// Applies the single change `step` (whose checked pre- and post-images are in `entry`)
/// as transaction `txid`. The caller holds the project lock.
pub(super) fn commit(
    root: &SafeRoot,
    lock: &ProjectLockGuard,
    step: &Step,
    entry: &Entry,
    txid: String,
    failpoint: &mut dyn FnMut(Failpoint),
) -> Result<Committed, JournalError> {
    let mut pre_bytes = None;
    let mut touched = false;
    if let Err(e) = apply(
        root,
        lock,
        step,
        entry,
        &txid,
        &mut pre_bytes,
        &mut touched,
        failpoint,
    ) {
        // Untouched target: only `T/` to remove. Touched: the commit point was not
        // reached (a directory fsync failed), so the pre-image goes back first.
        let undone = if touched && !crate::faults::disabled(Recovery::CommitUndo) {
            undo(root, entry, &txid, pre_bytes.as_deref())
        } else {
            Ok(())
        };
        return match undone.and_then(|()| remove_tx_dir(root, &txid)) {
            Ok(()) => Err(e),
            // No intent was written, so recovery has nothing to roll back: say plainly
            // that the file may hold either image (whole, as a rename leaves it).
            Err(undo) if touched => Err(JournalError::Corrupt {
                txid,
                why: format!(
                    "{e}; undoing it failed too ({undo}): {} holds its old or its new content, whole; check it",
                    entry.path
                ),
            }),
            Err(cleanup) => Err(JournalError::Corrupt {
                txid,
                why: format!(
                    "{e}; nothing was applied, but removing the journal directory failed ({cleanup}); the next `contextos journal recover` removes it"
                ),
            }),
        };
    }
    let cleaned = remove_tx_dir(root, &txid);
    finished(cleaned, txid, lock.generation(), 1, failpoint)
}

/// Steps 2–4. Sets `touched` once the target has changed (renamed over or unlinked), and
/// `pre_bytes` to the pre-image's content before that, for an undo.
#[allow(
    clippy::too_many_arguments,
    reason = "the two out-parameters tell the caller what an undo needs even when this fails"
)]
fn apply(
    root: &SafeRoot,
    lock: &ProjectLockGuard,
    step: &Step,
    entry: &Entry,
    txid: &str,
    pre_bytes: &mut Option<Vec<u8>>,
    touched: &mut bool,
    failpoint: &mut dyn FnMut(Failpoint),
) -> Result<(), JournalError> {
    let path = entry.path.as_str();
    // 2. Stage. `T/` and any directory made for it need no fsync: nothing depends on a
    //    name in `T/`, and a crash that loses them loses only what recovery would delete.
    //    The target's new directories are another matter, synced at the commit point.
    let mut new_dirs = Vec::new();
    let journal = match &step.change {
        Change::Write { content, .. } => {
            let (journal, _, _) = root.create_parent(&tx_path(txid, STAGED))?;
            let (dir, name, created) = root.create_parent(path)?;
            root.inspect(&dir, &name, path)?;
            same_file_system(&dir, &journal, path)?;
            new_dirs = created;
            let mode = entry.post.mode.unwrap_or(0o644);
            let file =
                create_unsynced(&journal, STAGED, content, mode).map_err(tx_io(txid, STAGED))?;
            // The one data fsync: the rename below may become durable at any moment, and
            // must never publish a torn or empty file.
            crate::faults::fsync(&file).map_err(tx_io(txid, STAGED))?;
            failpoint(Failpoint::Staged(0));
            Some(journal)
        }
        Change::Delete { .. } => None,
    };
    // 3. Re-check, as the full protocol does before its first rename: the fence, then the
    //    pre-image, read whole so an undo can write it back.
    lock.verify_fence()?;
    let (now, bytes) = current(root, path)?;
    if now != entry.pre {
        return Err(JournalError::Precondition {
            path: path.to_string(),
            why: "the file changed while the transaction was prepared".into(),
        });
    }
    check_precondition(path, &now, &step.precondition)?;
    *pre_bytes = bytes;
    // 4. The one atomic step, relative to the target's directory handle after checking
    //    that no link, directory or device sits at its name.
    let changed = match &journal {
        Some(journal) => {
            root.move_into_place(journal, STAGED, path)?;
            true
        }
        // Deleting what does not exist changes nothing.
        None => root.unlink_unsynced(path)?.is_some(),
    };
    *touched = changed;
    failpoint(Failpoint::Applied(0));
    // The commit point: the new name (or its absence), and the names of the directories
    // made for it, durable. Until then a power cut may keep the target old or new, and
    // either is whole.
    if changed {
        root.sync_dir(parent_dir(path))?;
    }
    let parents: BTreeSet<&str> = new_dirs.iter().map(|d| parent_dir(d)).collect();
    for dir in parents {
        root.sync_dir(dir)?;
    }
    failpoint(Failpoint::Committed);
    Ok(())
}

/// The image of `path` and its content (`None` when it does not exist), from one read.
fn current(root: &SafeRoot, path: &str) -> Result<(Image, Option<Vec<u8>>), JournalError> {
    let absent = Image {
        exists: false,
        sha256: None,
        mode: None,
    };
    let (dir, name) = match root.parent(path, false) {
        Ok(found) => found,
        Err(e) if e.code == "path.not-found" => return Ok((absent, None)),
        Err(e) => return Err(e.into()),
    };
    // Refuses a link, directory, device or hard-linked file, as `image_of` does.
    let Some(info) = root.inspect(&dir, &name, path)? else {
        return Ok((absent, None));
    };
    let bytes = root.read(path)?;
    let image = Image {
        exists: true,
        sha256: Some(sha256_hex(&bytes)),
        mode: Some(info.mode),
    };
    Ok((image, Some(bytes)))
}

/// Puts the pre-image back after the target was changed but before the commit point.
/// Only a target that holds this transaction's post-image is touched (anything else was
/// changed by someone else). The written-back file is staged in `T/` and fsynced before
/// its rename, as any publication is, so a crash during the undo leaves the target old
/// or new, whole, and at most a `T/` without intent for recovery to delete.
fn undo(
    root: &SafeRoot,
    entry: &Entry,
    txid: &str,
    pre_bytes: Option<&[u8]>,
) -> Result<(), JournalError> {
    let path = entry.path.as_str();
    if !holds_our_post_image(root, entry)? {
        return Ok(());
    }
    match (entry.pre.exists, pre_bytes) {
        (true, Some(bytes)) => {
            let (journal, _, _) = root.create_parent(&tx_path(txid, RESTORE))?;
            root.remove_temp(&tx_path(txid, RESTORE), RESTORE)?;
            let mode = entry.pre.mode.unwrap_or(0o644);
            let file =
                create_unsynced(&journal, RESTORE, bytes, mode).map_err(tx_io(txid, RESTORE))?;
            crate::faults::fsync(&file).map_err(tx_io(txid, RESTORE))?;
            root.move_into_place(&journal, RESTORE, path)?;
        }
        (false, _) => {
            root.unlink_unsynced(path)?;
        }
        (true, None) => {
            return Err(JournalError::Corrupt {
                txid: txid.to_string(),
                why: format!("{path}: the pre-image was not read before the change"),
            })
        }
    }
    root.sync_dir(parent_dir(path))?;
    Ok(())
}
