//! One path a commit would record, as the scanner sees it: its status against HEAD, how
//! git stores it, its staged content and which of its lines the change adds.

use serde::Serialize;
use std::ops::Range;

/// What kind of change a staged entry is relative to HEAD.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase", tag = "status")]
pub enum ChangeStatus {
    Added,
    Modified,
    Deleted,
    /// Same content under a new path (`from` is the old path).
    Renamed {
        from: String,
    },
}

/// How git records the entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    File,
    Executable,
    /// The blob holds the link's target text.
    Symlink,
    /// A submodule gitlink: a commit id, no content.
    Submodule,
}

/// Which lines of the new content the change adds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Added {
    /// Every line (a new file, or content that was binary before).
    All,
    /// 0-based, half-open line ranges of the new content.
    Lines(Vec<Range<usize>>),
}

/// One path the change touches, with the content a commit would record.
#[derive(Debug, Clone)]
pub struct ChangedFile {
    /// Repository-relative, `/`-separated; bytes that are not UTF-8 are shown as U+FFFD.
    pub path: String,
    pub status: ChangeStatus,
    pub kind: EntryKind,
    /// Size of the staged blob in bytes (0 for deletions and submodules).
    pub size: u64,
    /// The staged blob; `None` for deletions, submodules and blobs over the size limit.
    pub content: Option<Vec<u8>>,
    pub added: Added,
    /// The blob exceeds the configured limit and was not read.
    pub oversize: bool,
}

impl ChangedFile {
    /// Every path this change touches under this entry (both ends of a rename).
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        let from = match &self.status {
            ChangeStatus::Renamed { from } => Some(from.as_str()),
            _ => None,
        };
        std::iter::once(self.path.as_str()).chain(from)
    }
}
