//! `JournaledTransaction`: all-or-nothing multi-file writes that survive `kill -9` and a
//! power cut.
//!
//! Protocol, per transaction `T` under the project lock (generation `G`); `T/` is the
//! directory `.contextos/state/journal/T`:
//! 1. check every path (lexical + physical) and every precondition, and record each
//!    pre-image (exists, sha256, mode);
//! 2. prepare, nothing durable yet: write a copy of every existing pre-image
//!    (`T/backup-N`), every new content with its post-image's mode (`T/stage-N`, created
//!    `O_EXCL | O_NOFOLLOW`) and the intent (`T/intent.json.tmp`: paths, pre- and
//!    post-images, staged names, `G`);
//! 3. one barrier: fsync every file of step 2, rename the intent to `T/intent.json`, fsync
//!    `T/` and the parent of every directory step 2 created — from here on recovery can
//!    undo everything;
//! 4. re-check the fence (`G` still ours) and the preconditions, then rename each staged
//!    file over its target / unlink deleted targets, relative to the checked directory
//!    handles, and fsync each target directory once;
//! 5. create `T/committed` (an empty file), remove `T/intent.json`, fsync `T/` — the
//!    commit point;
//! 6. clean up: remove `T/` (no fsync needed).
//!
//! A transaction of one change takes a shorter path ([`one_file`]): staged in `T/` and
//! fsynced, re-checked, renamed into place, its directory fsynced — no backup, intent or
//! commit record, since one rename is atomic already.
//!
//! Every fsync that is left is there for one ordering, named where it is made; an fsync
//! per file is not needed because nothing depends on a file of step 2 before the barrier
//! of step 3 (the book's journal chapter has the whole argument).
//!
//! Recovery (start of every mutating command, and `contextos journal recover`): a
//! transaction with `intent.json` but no `committed` is **rolled back** (every target that
//! holds its post-image restored from its backup or removed); any other is removed — it
//! either never touched a target (no intent yet) or every target durably holds its
//! post-image (the commit step removed the intent, or the record exists). Every
//! recovery step is idempotent, so a crash during recovery is just another crash. After
//! recovery, every file of a transaction is old or every file is new, and no temp or
//! backup file remains. Journals of the earlier protocol (staged files beside their
//! targets, every step fsynced on its own) are recovered the same way.

mod one_file;
mod parts;

use parts::{
    check_precondition, finished, holds_our_post_image, image_of, list, parent_dir, remove_tx_dir,
    same_file_system, tx_io, tx_path, Entry, Image, Intent, COMMITTED, INTENT, INTENT_TMP,
};
pub use parts::{
    Change, Committed, Failpoint, JournalError, Pending, Precondition, Step, JOURNAL_DIR,
};

use super::atomic_write::{create_unsynced, temp_name};
use super::durable::Unsynced;
use super::faults::Recovery;
use super::project_lock::ProjectLockGuard;
use super::safe_fs::{sha256_hex, SafeRoot};
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::AtFlags;
use std::collections::BTreeSet;

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
            temp: matches!(s.change, Change::Write { .. }).then(|| format!("stage-{i}")),
            backup: pre.exists.then(|| format!("backup-{i}")),
            pre,
            post,
        });
    }
    // One change needs no journal record: its one rename (or unlink) is atomic already.
    if let ([step], [entry]) = (steps, entries.as_slice()) {
        return one_file::commit(root, lock, step, entry, txid, failpoint);
    }
    let intent = Intent {
        txid: txid.clone(),
        generation: lock.generation(),
        staged_in_journal: true,
        entries,
    };
    let json = serde_json::to_vec_pretty(&intent).map_err(|e| JournalError::Corrupt {
        txid: txid.clone(),
        why: e.to_string(),
    })?;
    // 2–5 may fail half-way (a full disk, a target swapped for a link, a stale fence):
    // undo at once, so an error always means nothing was applied. If even that fails, the
    // journal keeps the transaction for the next recovery.
    let mut reached_commit = false;
    if let Err(e) = prepare_apply_commit(
        root,
        lock,
        steps,
        &intent,
        &json,
        &mut reached_commit,
        failpoint,
    ) {
        if crate::faults::disabled(Recovery::CommitUndo) {
            return Err(e);
        }
        let retract = reached_commit.then_some(json.as_slice());
        return match undo(root, &intent, retract) {
            Ok(()) => Err(e),
            Err(undo) => Err(JournalError::Corrupt {
                txid: txid.clone(),
                why: format!(
                    "{e}; rolling back failed too ({undo}); run `contextos journal recover`"
                ),
            }),
        };
    }
    // 6. Cleanup.
    let cleaned = cleanup(root, &intent);
    finished(
        cleaned,
        txid,
        intent.generation,
        intent.entries.len(),
        failpoint,
    )
}

/// Steps 2–5 of the protocol.
fn prepare_apply_commit(
    root: &SafeRoot,
    lock: &ProjectLockGuard,
    steps: &[Step],
    intent: &Intent,
    json: &[u8],
    reached_commit: &mut bool,
    failpoint: &mut dyn FnMut(Failpoint),
) -> Result<(), JournalError> {
    let journal = prepare(root, steps, intent, json, failpoint)?;
    apply(root, lock, steps, intent, &journal, failpoint)?;
    // 5. Commit point: the record created and the intent removed, both made durable by one
    //    fsync of `T/`. Since step 4 every target durably holds its post-image, so both
    //    outcomes of recovery are whole: an intent without a record rolls back (all old),
    //    anything else is removed (all new). A crash before this fsync returns may keep
    //    either change or both, and each combination is one of the two. With the intent
    //    gone once the fsync returns, the cleanup needs no fsync of its own.
    //    The record is an empty file, only its name matters; it needs an inode, so on a
    //    disk out of inodes the commit fails here, after every rename, and is undone.
    let txid = &intent.txid;
    *reached_commit = true;
    create_unsynced(&journal, COMMITTED, b"", 0o600).map_err(tx_io(txid, COMMITTED))?;
    rustix::fs::unlinkat(&journal, INTENT, AtFlags::empty())
        .map_err(|e| tx_io(txid, INTENT)(e.into()))?;
    crate::faults::fsync(&journal).map_err(tx_io(txid, COMMITTED))?;
    failpoint(Failpoint::Committed);
    Ok(())
}

/// Steps 2–3: every file written, then made durable in one barrier. Returns `T/`.
///
/// Nothing here touches a target, and recovery deletes a transaction without
/// `intent.json` unread, so a crash anywhere before the intent's rename is durable loses
/// nothing, whatever the file system kept of the files written so far: a torn backup or
/// staged file is never used. Only the rename of step 3 makes them matter, so it comes
/// after their fsyncs; and no target is touched before `T/` (the names of the backups
/// and the intent) and `T/`'s own name are durable too.
fn prepare(
    root: &SafeRoot,
    steps: &[Step],
    intent: &Intent,
    json: &[u8],
    failpoint: &mut dyn FnMut(Failpoint),
) -> Result<OwnedFd, JournalError> {
    let txid = &intent.txid;
    let (journal, _, mut created) = root.create_parent(&tx_path(txid, INTENT))?;
    let mut unsynced = Unsynced::new();
    // 2. Backups of every existing pre-image.
    for (i, e) in intent.entries.iter().enumerate() {
        if let Some(b) = &e.backup {
            let bytes = root.read(&e.path)?;
            let file = create_unsynced(&journal, b, &bytes, 0o600).map_err(tx_io(txid, b))?;
            unsynced.push(file).map_err(tx_io(txid, ""))?;
            failpoint(Failpoint::BackupWritten(i));
        }
    }
    // New contents, staged in `T/` rather than beside their targets: a crash before the
    // intent is durable then leaves nothing outside `T/` for recovery to find. Each
    // target's directory is created and checked (no link, directory or device at the
    // target) now, as the apply will find it.
    for (i, (s, e)) in steps.iter().zip(&intent.entries).enumerate() {
        if let (Change::Write { content, .. }, Some(t)) = (&s.change, &e.temp) {
            let (dir, name, new_dirs) = root.create_parent(&e.path)?;
            root.inspect(&dir, &name, &e.path)?;
            same_file_system(&dir, &journal, &e.path)?;
            created.extend(new_dirs);
            // The post-image's mode: the existing file's, or the one asked for.
            let mode = e.post.mode.unwrap_or(0o644);
            let file = create_unsynced(&journal, t, content, mode).map_err(tx_io(txid, t))?;
            unsynced.push(file).map_err(tx_io(txid, ""))?;
            failpoint(Failpoint::Staged(i));
        }
    }
    let file =
        create_unsynced(&journal, INTENT_TMP, json, 0o600).map_err(tx_io(txid, INTENT_TMP))?;
    unsynced.push(file).map_err(tx_io(txid, ""))?;
    // 3. The barrier. The data of every backup, staged file and the intent first: once the
    //    intent's name is durable, recovery relies on the backups, and the apply would
    //    publish the staged files.
    unsynced.sync().map_err(tx_io(txid, ""))?;
    rustix::fs::renameat(&journal, INTENT_TMP, &journal, INTENT)
        .map_err(|e| tx_io(txid, INTENT)(e.into()))?;
    // The names in `T/` (the intent, the backups), then the name of every directory made
    // above (`T/` itself, a target's new directory): its parent holds it. A new target
    // directory need not be durable before the apply, only before the commit record; it
    // is synced here because it was created here.
    crate::faults::fsync(&journal).map_err(tx_io(txid, INTENT))?;
    let parents: BTreeSet<&str> = created.iter().map(|d| parent_dir(d)).collect();
    for dir in parents {
        root.sync_dir(dir)?;
    }
    failpoint(Failpoint::IntentWritten);
    Ok(journal)
}

/// Step 4: fenced and re-checked apply, made durable before the commit record.
fn apply(
    root: &SafeRoot,
    lock: &ProjectLockGuard,
    steps: &[Step],
    intent: &Intent,
    journal: &impl AsFd,
    failpoint: &mut dyn FnMut(Failpoint),
) -> Result<(), JournalError> {
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
    // No fsync per rename: until the commit record exists a crash rolls back, and the
    // rollback looks at each target as it finds it (post-image: restored; pre-image, the
    // rename lost: nothing to do). The staged file's data is durable since step 3, so a
    // rename that survives never shows a torn file.
    let mut dirs = BTreeSet::new();
    for (i, e) in intent.entries.iter().enumerate() {
        let changed = match &e.temp {
            Some(t) => {
                root.move_into_place(journal, t, &e.path)?;
                true
            }
            // Deleting what does not exist changes no directory.
            None => root.unlink_unsynced(&e.path)?.is_some(),
        };
        if changed {
            dirs.insert(parent_dir(&e.path));
        }
        failpoint(Failpoint::Applied(i));
    }
    // Every rename and unlink durable before the commit record can be: a durable record
    // with a lost rename would be rolled forward as a torn transaction.
    for dir in dirs {
        root.sync_dir(dir)?;
    }
    Ok(())
}

/// Undoes a transaction whose steps 2–5 failed. When the commit step was reached
/// (`retract` holds the intent), it is taken back first, durably: the intent restored and
/// the record removed. While the record is there or the intent is missing, recovery rolls
/// forward, so a crash half-way through this undo would leave the transaction torn.
fn undo(root: &SafeRoot, intent: &Intent, retract: Option<&[u8]>) -> Result<(), JournalError> {
    if let Some(json) = retract {
        if !crate::faults::disabled(Recovery::CommitRetract) {
            retract_commit(root, &intent.txid, json)?;
        }
    }
    roll_back(root, intent)?;
    cleanup(root, intent)
}

fn retract_commit(root: &SafeRoot, txid: &str, json: &[u8]) -> Result<(), JournalError> {
    let (journal, _) = root.parent(&tx_path(txid, INTENT), false)?;
    if root
        .inspect(&journal, INTENT, &tx_path(txid, INTENT))?
        .is_none()
    {
        root.remove_temp(&tx_path(txid, INTENT_TMP), INTENT_TMP)?;
        let file =
            create_unsynced(&journal, INTENT_TMP, json, 0o600).map_err(tx_io(txid, INTENT_TMP))?;
        crate::faults::fsync(&file).map_err(tx_io(txid, INTENT_TMP))?;
        rustix::fs::renameat(&journal, INTENT_TMP, &journal, INTENT)
            .map_err(|e| tx_io(txid, INTENT)(e.into()))?;
    }
    match rustix::fs::unlinkat(&journal, COMMITTED, AtFlags::empty()) {
        Ok(()) | Err(rustix::io::Errno::NOENT) => {}
        Err(e) => return Err(tx_io(txid, COMMITTED)(e.into())),
    }
    crate::faults::fsync(&journal).map_err(tx_io(txid, INTENT))
}

fn cleanup(root: &SafeRoot, intent: &Intent) -> Result<(), JournalError> {
    if !intent.staged_in_journal {
        // The earlier protocol's temps, beside their targets.
        for e in &intent.entries {
            if let Some(t) = &e.temp {
                root.remove_temp(&e.path, t)?;
            }
        }
    }
    remove_tx_dir(root, &intent.txid)
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
    match root.read(&tx_path(txid, INTENT)) {
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
            state: match (&intent, names.iter().any(|n| n == COMMITTED)) {
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
        match (p.state, read_intent(root, &p.txid)?) {
            ("prepared", Some(intent)) => {
                if !crate::faults::disabled(Recovery::RecoverUndo) {
                    roll_back(root, &intent)?;
                }
                cleanup(root, &intent)?;
            }
            // Committed: every target has its post-image (in either protocol, every temp
            // was renamed before the commit point), only the journal is left. No intent:
            // no target was touched (the prepare never finished), or the commit step
            // removed it after every target durably held its post-image.
            _ => remove_tx_dir(root, &p.txid)?,
        }
    }
    Ok(pending)
}

fn roll_back(root: &SafeRoot, intent: &Intent) -> Result<(), JournalError> {
    for (i, e) in intent.entries.iter().enumerate() {
        if let (Some(t), false) = (&e.temp, intent.staged_in_journal) {
            root.remove_temp(&e.path, t)?;
        }
        // Undo only what this transaction did: a target that holds its post-image. One
        // that holds neither image (or is no longer a regular file) was changed by
        // someone else and is left alone.
        if !holds_our_post_image(root, e)? {
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
