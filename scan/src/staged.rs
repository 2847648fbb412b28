//! Reads what a commit would record: the git index against HEAD, through gix (no git
//! process). Content always comes from index blobs, never from the working tree, so a
//! file edited after `git add` is scanned as staged.
//!
//! An unborn HEAD is the empty tree (the first commit is scanned in full). Unmerged
//! entries are an error naming the path: nothing can be committed until they are
//! resolved, and a scan must not guess which side counts. Intent-to-add entries hold no
//! content yet and are skipped; submodule gitlinks are reported as touched paths with no
//! content; symlinks are scanned as their target text.

use crate::change::{Added, ChangeStatus, ChangedFile, EntryKind};
use gix::bstr::{BStr, ByteSlice};
use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// Why the staged change could not be read. Every variant makes the scan exit 2.
#[derive(Debug, thiserror::Error)]
pub enum StagedError {
    #[error("no git repository at or above {0}: {1}")]
    NotARepository(PathBuf, String),
    #[error("the repository at {0} is bare: there is no index to scan")]
    Bare(PathBuf),
    #[error("cannot read the index: {0}")]
    Index(String),
    #[error("cannot read HEAD: {0}")]
    Head(String),
    #[error("cannot read object {id} ({path}): {message}")]
    Object {
        id: String,
        path: String,
        message: String,
    },
    #[error("{path}: unmerged (conflict stages in the index); resolve it before committing")]
    Unmerged { path: String },
    #[error("{path}: a sparse-index directory entry; run `git sparse-checkout disable` or scan a full index")]
    Sparse { path: String },
}

/// Limits for reading blobs.
#[derive(Debug, Clone, Copy)]
pub struct ReadOptions {
    /// Blobs larger than this are not read; they become `oversize` findings.
    pub max_blob_bytes: u64,
}

fn show(path: &BStr) -> String {
    path.to_str_lossy().into_owned()
}

fn kind_of(mode: gix::object::tree::EntryMode) -> EntryKind {
    if mode.is_commit() {
        EntryKind::Submodule
    } else if mode.is_link() {
        EntryKind::Symlink
    } else if mode.is_executable() {
        EntryKind::Executable
    } else {
        EntryKind::File
    }
}

/// The 0-based line ranges of `new` that `old` does not have (a histogram line diff).
pub fn added_lines(old: &[u8], new: &[u8]) -> Vec<Range<usize>> {
    use imara_diff::intern::InternedInput;
    use imara_diff::{diff, sources, Algorithm};
    let input = InternedInput::new(sources::byte_lines(old), sources::byte_lines(new));
    let mut out: Vec<Range<usize>> = Vec::new();
    diff(
        Algorithm::Histogram,
        &input,
        |_before: Range<u32>, after: Range<u32>| {
            if !after.is_empty() {
                out.push(after.start as usize..after.end as usize);
            }
        },
    );
    out
}

type HeadEntries = HashMap<Vec<u8>, (gix::ObjectId, gix::object::tree::EntryMode)>;

/// Records `HEAD`'s files under `prefix`, skipping every directory whose tree the index's
/// cache-tree extension records as valid and identical: git keeps that extension exactly
/// so that `git diff --cached` need not open unchanged trees, and a commit of a few files
/// in a large repository then reads a few trees, not all of them.
fn walk_head(
    repo: &gix::Repository,
    tree_id: gix::ObjectId,
    cache: Option<&gix::index::extension::Tree>,
    prefix: &mut Vec<u8>,
    out: &mut HeadEntries,
    unchanged: &mut HashSet<Vec<u8>>,
) -> Result<(), StagedError> {
    if let Some(c) = cache {
        if c.num_entries.is_some() && c.id == tree_id {
            unchanged.insert(prefix.clone());
            return Ok(());
        }
    }
    let tree = repo
        .find_tree(tree_id)
        .map_err(|e| StagedError::Head(format!("tree {tree_id}: {e}")))?;
    let decoded = tree
        .decode()
        .map_err(|e| StagedError::Head(format!("tree {tree_id}: {e}")))?;
    for e in &decoded.entries {
        let len = prefix.len();
        if !prefix.is_empty() {
            prefix.push(b'/');
        }
        prefix.extend_from_slice(e.filename);
        if e.mode.is_tree() {
            let child = cache.and_then(|c| {
                c.children
                    .iter()
                    .find(|ch| ch.name.as_slice() == e.filename.as_bytes())
            });
            walk_head(repo, e.oid.to_owned(), child, prefix, out, unchanged)?;
        } else {
            out.insert(prefix.clone(), (e.oid.to_owned(), e.mode));
        }
        prefix.truncate(len);
    }
    Ok(())
}

/// True when `path` lies in a directory the cache-tree showed unchanged (`""` is the root).
fn under_unchanged(path: &[u8], unchanged: &HashSet<Vec<u8>>) -> bool {
    if unchanged.contains(&b""[..]) {
        return true;
    }
    path.iter()
        .enumerate()
        .filter(|(_, &b)| b == b'/')
        .any(|(i, _)| unchanged.contains(&path[..i]))
}

/// One path the index stages differently from `HEAD`, before its content is read.
#[derive(Debug, Clone)]
pub struct StagedEntry {
    pub path: String,
    pub status: ChangeStatus,
    pub kind: EntryKind,
    /// The staged blob (`None` for deletions).
    pub id: Option<gix::ObjectId>,
    /// What `HEAD` had at this path.
    pub old: Option<(gix::ObjectId, gix::object::tree::EntryMode)>,
}

/// Where the repository is and what the index stages. Content is read per entry with
/// [`StagedChange::load`], so a scan holds one file at a time per worker, not the index.
#[derive(Debug)]
pub struct StagedChange {
    pub workdir: PathBuf,
    pub git_dir: PathBuf,
    pub entries: Vec<StagedEntry>,
    pub head_unborn: bool,
    repo: gix::ThreadSafeRepository,
}

impl StagedChange {
    /// A handle to the repository for the calling thread.
    pub fn repo(&self) -> gix::Repository {
        self.repo.to_thread_local()
    }

    /// Every path the change touches (both ends of renames), sorted.
    pub fn paths(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .entries
            .iter()
            .flat_map(|e| {
                let from = match &e.status {
                    ChangeStatus::Renamed { from } => Some(from.clone()),
                    _ => None,
                };
                std::iter::once(e.path.clone()).chain(from)
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Reads an entry's staged content and works out which lines it adds.
    pub fn load(
        &self,
        repo: &gix::Repository,
        e: &StagedEntry,
        opts: ReadOptions,
    ) -> Result<ChangedFile, StagedError> {
        let empty = |size: u64, oversize: bool| ChangedFile {
            path: e.path.clone(),
            status: e.status.clone(),
            kind: e.kind,
            size,
            content: None,
            added: Added::Lines(Vec::new()),
            oversize,
        };
        let Some(id) = e.id else {
            return Ok(empty(0, false));
        };
        if e.kind == EntryKind::Submodule {
            return Ok(empty(0, false));
        }
        let err = |id: gix::ObjectId, message: String| StagedError::Object {
            id: id.to_string(),
            path: e.path.clone(),
            message,
        };
        let size = |id: gix::ObjectId| -> Result<u64, StagedError> {
            repo.find_header(id)
                .map(|h| h.size())
                .map_err(|x| err(id, x.to_string()))
        };
        let read = |id: gix::ObjectId| -> Result<Vec<u8>, StagedError> {
            repo.find_object(id)
                .map(|o| o.detach().data)
                .map_err(|x| err(id, x.to_string()))
        };
        // One read per blob: the object's size is asked for separately (a second open,
        // map and inflate of a loose object) only when the read fails, which is how an
        // object over the limit set by [`read_limited`] shows itself. Without that limit
        // the blob is read and its length checked: the same finding, more memory.
        let objects = repo.objects.store_ref().path();
        let within = |id: gix::ObjectId| -> Result<Option<Vec<u8>>, StagedError> {
            // A loose blob is read without a memory map (see `loose`); gix answers the rest.
            match crate::loose::blob(objects, &id, opts.max_blob_bytes) {
                Some(crate::loose::Loose::Blob(data)) => return Ok(Some(data)),
                Some(crate::loose::Loose::TooLarge) => return Ok(None),
                None => {}
            }
            match read(id) {
                Ok(data) if data.len() as u64 > opts.max_blob_bytes => Ok(None),
                Ok(data) => Ok(Some(data)),
                Err(e) => {
                    // Over the limit, or a real error: the object's header tells which.
                    if size(id)? > opts.max_blob_bytes {
                        Ok(None)
                    } else {
                        Err(e)
                    }
                }
            }
        };
        let Some(content) = within(id)? else {
            let mut f = empty(size(id)?, true);
            f.added = Added::All;
            return Ok(f);
        };
        let added = match (&e.status, e.old) {
            // Same content under a new name: nothing was added line by line.
            (ChangeStatus::Renamed { .. }, _) => Added::Lines(Vec::new()),
            // The old side is diffed only when it was a readable text blob of sane size;
            // otherwise every line counts as added (stricter, never looser).
            (_, Some((old_id, old_mode))) if old_mode.is_blob_or_symlink() => {
                match within(old_id)? {
                    Some(old) if !crate::text::is_binary(&old) => {
                        Added::Lines(added_lines(&old, &content))
                    }
                    _ => Added::All,
                }
            }
            _ => Added::All,
        };
        Ok(ChangedFile {
            path: e.path.clone(),
            status: e.status.clone(),
            kind: e.kind,
            size: content.len() as u64,
            content: Some(content),
            added,
            oversize: false,
        })
    }
}

/// Reads which paths the index stages differently from `HEAD` in the repository
/// containing `dir`. Blob contents are not read here.
pub fn read(dir: &Path) -> Result<StagedChange, StagedError> {
    let repo = gix::discover(dir)
        .map_err(|e| StagedError::NotARepository(dir.to_path_buf(), e.to_string()))?;
    read_repo(repo)
}

/// [`read`], with the object store refusing to inflate a blob larger than
/// `opts.max_blob_bytes` (`gitoxide.objects.allocLimit`): [`StagedChange::load`] then
/// reads each blob once instead of asking for its size first, and an oversize blob is
/// never held in memory.
pub fn read_limited(dir: &Path, opts: ReadOptions) -> Result<StagedChange, StagedError> {
    let limit = format!(
        "gitoxide.objects.allocLimit={}",
        opts.max_blob_bytes.min(usize::MAX as u64)
    );
    let mut trust = gix::sec::trust::Mapping::<gix::open::Options>::default();
    trust.full = trust.full.config_overrides([limit.as_str()]);
    trust.reduced = trust.reduced.config_overrides([limit.as_str()]);
    let repo = gix::ThreadSafeRepository::discover_opts(dir, Default::default(), trust)
        .map_err(|e| StagedError::NotARepository(dir.to_path_buf(), e.to_string()))?;
    read_repo(repo.into())
}

fn read_repo(repo: gix::Repository) -> Result<StagedChange, StagedError> {
    let Some(workdir) = repo.workdir().map(Path::to_path_buf) else {
        return Err(StagedError::Bare(repo.git_dir().to_path_buf()));
    };
    let index = repo
        .index_or_empty()
        .map_err(|e| StagedError::Index(e.to_string()))?;
    let mut head = repo.head().map_err(|e| StagedError::Head(e.to_string()))?;
    let head_unborn = head.is_unborn();
    let mut head_entries: HeadEntries = HashMap::new();
    let mut unchanged: HashSet<Vec<u8>> = HashSet::new();
    if !head_unborn {
        let tree_id = head
            .peel_to_commit()
            .and_then(|c| c.tree_id())
            .map_err(|e| StagedError::Head(e.to_string()))?
            .detach();
        walk_head(
            &repo,
            tree_id,
            index.tree(),
            &mut Vec::new(),
            &mut head_entries,
            &mut unchanged,
        )?;
    }

    let mut entries = Vec::new();
    for entry in index.entries() {
        let raw_path = entry.path(&index);
        if !unchanged.is_empty() && under_unchanged(raw_path.as_bytes(), &unchanged) {
            continue;
        }
        if entry.stage() != gix::index::entry::Stage::Unconflicted {
            return Err(StagedError::Unmerged {
                path: show(raw_path),
            });
        }
        if entry.mode.is_sparse() {
            return Err(StagedError::Sparse {
                path: show(raw_path),
            });
        }
        if entry
            .flags
            .contains(gix::index::entry::Flags::INTENT_TO_ADD)
        {
            continue;
        }
        let Some(mode) = entry.mode.to_tree_entry_mode() else {
            return Err(StagedError::Index(format!(
                "{}: unknown entry mode {:o}",
                show(raw_path),
                entry.mode.bits()
            )));
        };
        let old = head_entries.remove(raw_path.as_bytes());
        if let Some((old_id, old_mode)) = old {
            if old_id == entry.id && old_mode == mode {
                continue;
            }
        }
        entries.push(StagedEntry {
            path: show(raw_path),
            status: if old.is_some() {
                ChangeStatus::Modified
            } else {
                ChangeStatus::Added
            },
            kind: kind_of(mode),
            id: Some(entry.id),
            old,
        });
    }
    // What HEAD has and the index does not: deletions, or the old end of a rename.
    let mut deleted: Vec<(Vec<u8>, gix::ObjectId, gix::object::tree::EntryMode)> = head_entries
        .into_iter()
        .map(|(p, (id, mode))| (p, id, mode))
        .collect();
    deleted.sort();
    let mut added_by_blob: HashMap<gix::ObjectId, Vec<usize>> = HashMap::new();
    for (i, e) in entries.iter().enumerate().rev() {
        if let (ChangeStatus::Added, Some(id)) = (&e.status, e.id) {
            if e.kind != EntryKind::Submodule {
                added_by_blob.entry(id).or_default().push(i);
            }
        }
    }
    for (raw, id, mode) in deleted {
        let path = show(raw.as_bstr());
        let renamed_to = added_by_blob
            .get_mut(&id)
            .and_then(Vec::pop)
            .and_then(|i| entries.get_mut(i));
        match renamed_to {
            Some(e) => e.status = ChangeStatus::Renamed { from: path },
            None => entries.push(StagedEntry {
                path,
                status: ChangeStatus::Deleted,
                kind: kind_of(mode),
                id: None,
                old: Some((id, mode)),
            }),
        }
    }
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(StagedChange {
        workdir,
        git_dir: repo.git_dir().to_path_buf(),
        entries,
        head_unborn,
        repo: repo.into_sync(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_lines_are_the_new_sides_insertions() {
        let old = b"a\nb\nc\n";
        let new = b"a\nX\nb\nc\nY\nZ\n";
        assert_eq!(added_lines(old, new), vec![1..2, 4..6]);
        assert_eq!(added_lines(b"", b"a\nb"), vec![0..2]);
        assert_eq!(
            added_lines(b"a\nb\n", b"a\nb\n"),
            Vec::<Range<usize>>::new()
        );
        // A changed line is a removal plus an addition.
        assert_eq!(added_lines(b"a\nb\nc\n", b"a\nB\nc\n"), vec![1..2]);
    }
}
