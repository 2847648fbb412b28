//! The append guard: the decision log's own `flock`, distinct from the project lock (a
//! hook appends without taking the project lock, which a long `apply` may hold).

use super::error::{io, LogError};
use rustix::fs::FlockOperation;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub const GUARD_FILE: &str = "decisions.lock";
/// A stopped or hung holder must not hang the hook forever: an error lets the caller
/// deny, whereas a hook killed by the agent's own timeout may be treated as "allow".
pub(super) const GUARD_TIMEOUT: Duration = Duration::from_secs(30);

/// Exclusive `flock` on `decisions.lock`, opened per call: the lock belongs to the open
/// file description, so threads of one process exclude each other as processes do.
#[derive(Debug)]
pub(super) struct AppendGuard {
    file: File,
}

impl AppendGuard {
    /// The writers' lock.
    pub(super) fn acquire(state_dir: &Path, timeout: Duration) -> Result<Self, LogError> {
        let path = state_dir.join(GUARD_FILE);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .map_err(io(&path))?;
        Self::wait(
            file,
            path,
            FlockOperation::NonBlockingLockExclusive,
            timeout,
        )
    }

    /// A readers' lock, so a reader never sees an append half done (a line without its
    /// head update). Readers create nothing: no lock file means no writer ever ran.
    pub(super) fn shared(state_dir: &Path) -> Result<Option<Self>, LogError> {
        let path = state_dir.join(GUARD_FILE);
        match File::open(&path) {
            Ok(file) => Self::wait(
                file,
                path,
                FlockOperation::NonBlockingLockShared,
                GUARD_TIMEOUT,
            )
            .map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io(&path)(e)),
        }
    }

    fn wait(
        file: File,
        path: PathBuf,
        op: FlockOperation,
        timeout: Duration,
    ) -> Result<Self, LogError> {
        let start = Instant::now();
        let mut pause = Duration::from_micros(100);
        loop {
            match rustix::fs::flock(&file, op) {
                Ok(()) => return Ok(AppendGuard { file }),
                Err(e) if e == rustix::io::Errno::WOULDBLOCK || e == rustix::io::Errno::INTR => {}
                Err(e) => return Err(io(&path)(e.into())),
            }
            let waited = start.elapsed();
            if waited >= timeout {
                return Err(LogError::GuardTimeout { path, waited });
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(5));
        }
    }
}

impl Drop for AppendGuard {
    fn drop(&mut self) {
        // Closing releases it too; unlocking first makes that independent of any
        // duplicate of the descriptor.
        let _ = rustix::fs::flock(&self.file, FlockOperation::Unlock);
    }
}
