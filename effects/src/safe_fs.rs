//! The physical stage of the safe-path primitive: file operations beneath a project
//! root that cannot be redirected out of it.
//!
//! Every operation starts from a directory handle on the root and resolves relative to
//! it with Linux `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)`:
//! a symlink (absolute, or with enough `..`) that points outside, a magic link
//! (`/proc/self/root`) or a mount point inside the tree makes the open fail instead of
//! escaping. Where `openat2` is unavailable, the fallback walks one component at a time
//! with `O_NOFOLLOW`, which refuses every symlink. The final open, create and rename are
//! made relative to the parent directory handle the check produced, so there is no
//! window between checking a path and using it.
//!
//! Paths given here must already be canonical (see [`contextos_core::canon`]); this module
//! re-checks that and never interprets `..`.

use crate::atomic_write::{self, temp_name, Publish};
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use std::path::{Path, PathBuf};

/// A refused or failed file operation; `code` is stable (documented with the path codes).
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct SafeFsError {
    pub code: &'static str,
    pub path: String,
    pub message: String,
}

fn fail(code: &'static str, path: &str, message: impl Into<String>) -> SafeFsError {
    SafeFsError {
        code,
        path: path.to_string(),
        message: message.into(),
    }
}

fn from_errno(path: &str, e: Errno) -> SafeFsError {
    match e {
        Errno::XDEV => fail(
            "path.escape",
            path,
            "resolution would leave the project (a symlink pointing outside, a magic link or a mount point)",
        ),
        Errno::LOOP => fail("path.symlink", path, "a symbolic link is in the way and is not followed"),
        Errno::NOTDIR => fail("path.not-a-directory", path, "a parent component is not a directory"),
        Errno::ISDIR => fail("path.is-directory", path, "the path is a directory"),
        Errno::NOENT => fail("path.not-found", path, "no such file or directory"),
        other => fail("path.io", path, other.to_string()),
    }
}

pub(crate) fn from_io(path: &str, e: &std::io::Error) -> SafeFsError {
    match Errno::from_io_error(e) {
        Some(errno) => from_errno(path, errno),
        None => fail("path.io", path, e.to_string()),
    }
}

/// Metadata of an existing file, read without following a symlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileInfo {
    pub mode: u32,
    pub size: u64,
    pub nlink: u64,
}

/// A handle on the project root; every operation resolves beneath it.
#[derive(Debug)]
pub struct SafeRoot {
    fd: OwnedFd,
    path: PathBuf,
}

const DIR_FLAGS: OFlags = OFlags::DIRECTORY.union(OFlags::CLOEXEC);

impl SafeRoot {
    pub fn open(root: &Path) -> Result<Self, SafeFsError> {
        let shown = root.display().to_string();
        let fd = rustix::fs::open(
            root,
            OFlags::RDONLY | DIR_FLAGS | OFlags::NOFOLLOW,
            Mode::empty(),
        )
        .map_err(|e| from_errno(&shown, e))?;
        Ok(SafeRoot {
            fd,
            path: root.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens the directory that holds `rel`, creating missing directories (mode 0755)
    /// when `create` is set. Returns the directory handle and the final name.
    pub fn parent(&self, rel: &str, create: bool) -> Result<(OwnedFd, String), SafeFsError> {
        let mut created = Vec::new();
        self.parent_tracked(rel, create, &mut created)
    }

    /// [`SafeRoot::parent`] creating missing directories, and naming each directory it
    /// created (outermost first): a new directory's own name is durable only once its
    /// parent is fsynced, which a crash-safe caller has to do ([`SafeRoot::sync_dir`]).
    pub fn create_parent(&self, rel: &str) -> Result<(OwnedFd, String, Vec<String>), SafeFsError> {
        let mut created = Vec::new();
        let (dir, name) = self.parent_tracked(rel, true, &mut created)?;
        Ok((dir, name, created))
    }

    fn parent_tracked(
        &self,
        rel: &str,
        create: bool,
        created: &mut Vec<String>,
    ) -> Result<(OwnedFd, String), SafeFsError> {
        check_canonical(rel)?;
        let (dirs, name) = match rel.rsplit_once('/') {
            Some((d, n)) => (d, n),
            None => ("", rel),
        };
        let dir = self
            .open_dir(dirs, create, created)
            .map_err(|e| SafeFsError {
                path: rel.to_string(),
                ..e
            })?;
        Ok((dir, name.to_string()))
    }

    /// Opens the directory `dirs` (canonical; `""` is the root) beneath the root.
    fn open_dir(
        &self,
        dirs: &str,
        create: bool,
        created: &mut Vec<String>,
    ) -> Result<OwnedFd, SafeFsError> {
        let mut dir = rustix::io::dup(&self.fd).map_err(|e| from_errno(dirs, e))?;
        if dirs.is_empty() {
            return Ok(dir);
        }
        // Fast path: resolve all parent components at once beneath the root.
        match open_dir_beneath(&self.fd, dirs) {
            Ok(fd) => return Ok(fd),
            Err(e) if e.code == "path.not-found" && create => {}
            Err(e) if e.code == "path.unsupported" => {}
            Err(e) => return Err(e),
        }
        // Component by component, creating what is missing; each step is relative to the
        // handle of the previous one and refuses symlinks.
        let mut walked = String::new();
        for comp in dirs.split('/') {
            if !walked.is_empty() {
                walked.push('/');
            }
            walked.push_str(comp);
            let next = match open_dir_beneath(&dir, comp) {
                Ok(fd) => fd,
                Err(e) if e.code == "path.not-found" && create => {
                    match rustix::fs::mkdirat(&dir, comp, Mode::from_raw_mode(0o755)) {
                        // One that a racing writer just created counts too: nobody may
                        // have made its name durable yet.
                        Ok(()) | Err(Errno::EXIST) => created.push(walked.clone()),
                        Err(e) => return Err(from_errno(dirs, e)),
                    }
                    open_dir_beneath(&dir, comp)?
                }
                Err(e) => return Err(e),
            };
            dir = next;
        }
        Ok(dir)
    }

    /// Metadata of `name` in `dir` without following it; refuses symlinks, directories
    /// and (for in-place safety) files with more than one hard link.
    pub fn inspect(
        &self,
        dir: &OwnedFd,
        name: &str,
        rel: &str,
    ) -> Result<Option<FileInfo>, SafeFsError> {
        match rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => {
                let kind = rustix::fs::FileType::from_raw_mode(st.st_mode);
                if kind == rustix::fs::FileType::Symlink {
                    return Err(fail(
                        "path.symlink",
                        rel,
                        "the file is a symbolic link and is not followed",
                    ));
                }
                if kind == rustix::fs::FileType::Directory {
                    return Err(fail("path.is-directory", rel, "the path is a directory"));
                }
                if kind != rustix::fs::FileType::RegularFile {
                    return Err(fail(
                        "path.special-file",
                        rel,
                        "the path is not a regular file",
                    ));
                }
                #[allow(
                    clippy::useless_conversion,
                    reason = "the stat field's integer type differs between targets"
                )]
                let nlink = u64::from(st.st_nlink);
                if nlink > 1 {
                    return Err(fail(
                        "path.hardlink",
                        rel,
                        format!("the file has {nlink} hard links; writing it could change a file outside the project"),
                    ));
                }
                // `st_mode` is u16 on some targets.
                #[allow(
                    clippy::useless_conversion,
                    reason = "the stat field's integer type differs between targets"
                )]
                let mode = u32::from(st.st_mode) & 0o7777;
                Ok(Some(FileInfo {
                    mode,
                    size: u64::try_from(st.st_size).unwrap_or(0),
                    nlink,
                }))
            }
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(from_errno(rel, e)),
        }
    }

    /// Reads a regular file beneath the root without following symlinks anywhere.
    pub fn read(&self, rel: &str) -> Result<Vec<u8>, SafeFsError> {
        let (dir, name) = self.parent(rel, false)?;
        self.inspect_any_links(&dir, &name, rel)?;
        let fd = rustix::fs::openat(
            &dir,
            name.as_str(),
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| from_errno(rel, e))?;
        let mut file = std::fs::File::from(fd);
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut file, &mut out)
            .map_err(|e| fail("path.io", rel, e.to_string()))?;
        Ok(out)
    }

    fn inspect_any_links(&self, dir: &OwnedFd, name: &str, rel: &str) -> Result<(), SafeFsError> {
        match self.inspect(dir, name, rel) {
            Ok(Some(_)) => Ok(()),
            Ok(None) => Err(fail("path.not-found", rel, "no such file")),
            // Reading a hard-linked file changes nothing; only writes must refuse it.
            Err(e) if e.code == "path.hardlink" => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Replaces (or creates) `rel` with `bytes` through [`atomic_write`], in the
    /// directory handle the beneath-the-root check produced: a temp file created
    /// exclusively beside the target, fsynced, renamed over the target once it is checked
    /// not to be a link, directory or hard-linked file, then the directory fsynced. The
    /// mode of an existing file is kept; a new file gets `new_mode`.
    pub fn write_atomic(&self, rel: &str, bytes: &[u8], new_mode: u32) -> Result<(), SafeFsError> {
        let tmp = temp_name(rel, &uuid::Uuid::new_v4().simple().to_string());
        self.stage(rel, &tmp, bytes, new_mode)?;
        self.rename_into_place(rel, &tmp).inspect_err(|_| {
            let _ = self.remove_temp(rel, &tmp);
        })
    }

    /// Creates the temp file `tmp` beside `rel` (exclusively, never through a link) with
    /// `bytes`, fsynced. The mode is the existing target's, else `new_mode`.
    pub fn stage(
        &self,
        rel: &str,
        tmp: &str,
        bytes: &[u8],
        new_mode: u32,
    ) -> Result<(), SafeFsError> {
        let (dir, name) = self.parent(rel, true)?;
        let mode = self.inspect(&dir, &name, rel)?.map_or(new_mode, |i| i.mode);
        atomic_write::stage(&dir, tmp, bytes, mode).map_err(|e| from_io(rel, &e))
    }

    /// Like [`SafeRoot::stage`], with exactly `mode` whether or not the target exists (the
    /// journal decides the post-image's mode, and a rollback restores the pre-image's).
    pub fn stage_with_mode(
        &self,
        rel: &str,
        tmp: &str,
        bytes: &[u8],
        mode: u32,
    ) -> Result<(), SafeFsError> {
        let (dir, name) = self.parent(rel, true)?;
        // The same checks of the target as `stage` (no link, directory or device).
        self.inspect(&dir, &name, rel)?;
        atomic_write::stage(&dir, tmp, bytes, mode).map_err(|e| from_io(rel, &e))
    }

    /// Renames the staged `tmp` over `rel` relative to one directory handle, after
    /// checking the target is not a link, directory or hard-linked file; fsyncs the directory.
    pub fn rename_into_place(&self, rel: &str, tmp: &str) -> Result<(), SafeFsError> {
        let (dir, name) = self.parent(rel, false)?;
        self.inspect(&dir, &name, rel)?;
        atomic_write::publish(&dir, tmp, &name, Publish::Replace)
            .map(|_| ())
            .map_err(|e| from_io(rel, &e))
    }

    /// Removes the regular file `rel` (absent is fine) and fsyncs its directory.
    pub fn remove(&self, rel: &str) -> Result<(), SafeFsError> {
        match self.unlink_unsynced(rel)? {
            Some(dir) => crate::faults::fsync(&dir).map_err(|e| from_io(rel, &e)),
            None => Ok(()),
        }
    }

    /// Removes the regular file `rel` without fsyncing its directory (the caller syncs
    /// it later with [`SafeRoot::sync_dir`]); returns that directory, or `None` when there
    /// was nothing to remove.
    pub fn unlink_unsynced(&self, rel: &str) -> Result<Option<OwnedFd>, SafeFsError> {
        let (dir, name) = match self.parent(rel, false) {
            Ok(x) => x,
            Err(e) if e.code == "path.not-found" => return Ok(None),
            Err(e) => return Err(e),
        };
        if self.inspect(&dir, &name, rel)?.is_none() {
            return Ok(None);
        }
        rustix::fs::unlinkat(&dir, name.as_str(), rustix::fs::AtFlags::empty())
            .map_err(|e| from_errno(rel, e))?;
        Ok(Some(dir))
    }

    /// Renames `from`, a file in the directory `from_dir` beneath this root (the
    /// journal's), over `rel`, after the same checks of the target as
    /// [`SafeRoot::rename_into_place`]. Does not fsync: the caller syncs the target's
    /// directory ([`SafeRoot::sync_dir`]) before anything may depend on the new name.
    pub fn move_into_place(
        &self,
        from_dir: &impl AsFd,
        from: &str,
        rel: &str,
    ) -> Result<(), SafeFsError> {
        let (dir, name) = self.parent(rel, false)?;
        self.inspect(&dir, &name, rel)?;
        rustix::fs::renameat(from_dir, from, &dir, name.as_str()).map_err(|e| from_errno(rel, e))
    }

    /// Fsyncs the directory `dir` (`""` is the root): every name created, renamed or
    /// removed in it so far survives a power cut.
    pub fn sync_dir(&self, dir: &str) -> Result<(), SafeFsError> {
        if !dir.is_empty() {
            check_canonical(dir)?;
        }
        let fd = self.open_dir(dir, false, &mut Vec::new())?;
        crate::faults::fsync(&fd).map_err(|e| from_io(dir, &e))
    }

    /// Removes a temp file beside `rel` if it exists.
    pub fn remove_temp(&self, rel: &str, tmp: &str) -> Result<(), SafeFsError> {
        let dir = match self.parent(rel, false) {
            Ok((d, _)) => d,
            Err(e) if e.code == "path.not-found" => return Ok(()),
            Err(e) => return Err(e),
        };
        match rustix::fs::unlinkat(&dir, tmp, rustix::fs::AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(from_errno(rel, e)),
        }
    }

    /// The sha256 (hex) and mode of `rel`, or `None` when it does not exist.
    pub fn fingerprint(&self, rel: &str) -> Result<Option<(String, u32)>, SafeFsError> {
        let (dir, name) = match self.parent(rel, false) {
            Ok(x) => x,
            Err(e) if e.code == "path.not-found" => return Ok(None),
            Err(e) => return Err(e),
        };
        let Some(info) = self.inspect(&dir, &name, rel)? else {
            return Ok(None);
        };
        let bytes = self.read(rel)?;
        Ok(Some((sha256_hex(&bytes), info.mode)))
    }
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(bytes))
}

const OPENAT2_RETRIES: u32 = 128;

/// Opens directory `path` (one or more components) beneath `base`.
fn open_dir_beneath(base: &impl AsFd, path: &str) -> Result<OwnedFd, SafeFsError> {
    let flags = OFlags::RDONLY | DIR_FLAGS;
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS | ResolveFlags::NO_XDEV;
    // The kernel answers EAGAIN when a rename elsewhere raced with resolving `..`; it
    // asks the caller to retry. Bounded, then refused.
    let mut attempt = 0;
    let result = loop {
        match rustix::fs::openat2(base, path, flags, Mode::empty(), resolve) {
            Err(Errno::AGAIN) if attempt < OPENAT2_RETRIES => attempt += 1,
            other => break other,
        }
    };
    match result {
        Ok(fd) => Ok(fd),
        Err(Errno::AGAIN) => Err(fail(
            "path.busy",
            path,
            "resolution kept racing with concurrent renames",
        )),
        // No openat2 (old kernel, seccomp): one component at a time, never following a link.
        Err(Errno::NOSYS) | Err(Errno::PERM) if !path.contains('/') => {
            rustix::fs::openat(base, path, flags | OFlags::NOFOLLOW, Mode::empty())
                .map_err(|e| from_errno(path, e))
        }
        Err(Errno::NOSYS) | Err(Errno::PERM) => {
            Err(fail("path.unsupported", path, "openat2 is unavailable"))
        }
        Err(e) => Err(from_errno(path, e)),
    }
}

fn check_canonical(rel: &str) -> Result<(), SafeFsError> {
    match contextos_core::canon::canonical_path(rel) {
        Ok(c) if c == rel => Ok(()),
        Ok(c) => Err(fail(
            "path.not-canonical",
            rel,
            format!("expected the canonical form `{c}`"),
        )),
        Err(e) => Err(fail(e.code, rel, e.message)),
    }
}
