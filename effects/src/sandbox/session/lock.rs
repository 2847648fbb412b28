//! One process at a time per session: an exclusive `flock` on `<state_dir>/<id>.lock`,
//! held for the whole life of a [`super::Session`], so two `contextos run --session X`
//! (or two threads) take turns instead of interleaving execs and syncs.
//!
//! The lock belongs to the open file description, so threads of one process exclude
//! each other as processes do. Tearing a session down unlinks the lock file while
//! holding it; a waiter that then gets the lock on the unlinked inode notices that the
//! path no longer names its file and starts over, so nobody holds a lock nobody else
//! can see.

use super::state::state_error;
use crate::sandbox::runner::SandboxError;
use rustix::fs::FlockOperation;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct SessionLock {
    // Held only for its lock; closing it releases the lock.
    _file: File,
    pub path: PathBuf,
}

fn lock_path(state_dir: &Path, id: &str) -> PathBuf {
    state_dir.join(format!("{id}.lock"))
}

impl SessionLock {
    /// Waits for the lock.
    pub fn acquire(state_dir: &Path, id: &str) -> Result<SessionLock, SandboxError> {
        Self::take(state_dir, id, FlockOperation::LockExclusive)
            .map(|l| l.ok_or_else(|| state_error(state_dir, "lock not granted")))?
    }

    /// The lock if nobody holds it (`None` when busy): a sweep never waits for a
    /// session that is in use.
    pub fn try_acquire(state_dir: &Path, id: &str) -> Result<Option<SessionLock>, SandboxError> {
        Self::take(state_dir, id, FlockOperation::NonBlockingLockExclusive)
    }

    fn take(
        state_dir: &Path,
        id: &str,
        op: FlockOperation,
    ) -> Result<Option<SessionLock>, SandboxError> {
        super::state::validate_id(id)?;
        let path = lock_path(state_dir, id);
        loop {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o600)
                .open(&path)
                .map_err(|e| state_error(&path, e))?;
            match rustix::fs::flock(&file, op) {
                Ok(()) => {}
                Err(rustix::io::Errno::WOULDBLOCK) => return Ok(None),
                Err(e) => return Err(state_error(&path, e)),
            }
            let held = file.metadata().map_err(|e| state_error(&path, e))?;
            match std::fs::metadata(&path) {
                Ok(now) if now.ino() == held.ino() && now.dev() == held.dev() => {
                    return Ok(Some(SessionLock { _file: file, path }))
                }
                // Unlinked (or replaced) by a teardown while we waited: try again.
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(state_error(&path, e)),
            }
        }
    }

    /// Unlinks the lock file (teardown), still holding the lock until drop.
    pub fn unlink(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_waits_and_an_unlinked_lock_is_retaken() {
        let d = tempfile::tempdir().unwrap();
        let a = SessionLock::acquire(d.path(), "s").unwrap();
        assert!(SessionLock::try_acquire(d.path(), "s").unwrap().is_none());
        assert!(SessionLock::try_acquire(d.path(), "t").unwrap().is_some());
        a.unlink();
        drop(a);
        let b = SessionLock::try_acquire(d.path(), "s").unwrap().unwrap();
        assert!(b.path.exists(), "a fresh lock file");
        assert!(SessionLock::acquire(d.path(), "../x").is_err());
    }
}
