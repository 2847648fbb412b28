//! Grouped durability: write many files first, then make them durable together.
//!
//! An fsync right after each write makes the file system commit its journal once per
//! file. When every file of a group is written first (each one's write-back started at
//! once, see [`crate::atomic_write::create_unsynced`]) and only then fsynced, one journal
//! commit carries the allocations of them all and the later fsyncs mostly find their data
//! on disk already. The fsyncs themselves stay: grouping changes when a file becomes
//! durable, never whether it does before [`Unsynced::sync`] returns.

use rustix::fd::OwnedFd;

/// Files are fsynced early once this many are open, so a large group stays far below the
/// usual soft limit of 1,024 open files (this only splits the group).
const MAX_OPEN: usize = 256;

/// Written files that are not durable yet.
#[derive(Debug, Default)]
pub struct Unsynced {
    files: Vec<OwnedFd>,
}

impl Unsynced {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a written file; fsyncs the group first when it is full.
    pub fn push(&mut self, file: OwnedFd) -> std::io::Result<()> {
        if self.files.len() >= MAX_OPEN {
            self.sync()?;
        }
        self.files.push(file);
        Ok(())
    }

    /// Fsyncs (and closes) every file added so far; on `Ok`, all of them are durable.
    pub fn sync(&mut self) -> std::io::Result<()> {
        for file in self.files.drain(..) {
            crate::faults::fsync(&file)?;
        }
        Ok(())
    }
}
