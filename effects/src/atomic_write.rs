//! The one way ContextOS replaces a file: a temp file created exclusively in the target's
//! own directory, written, fsynced, then given the target's name relative to the same
//! directory handle, and the directory fsynced.
//!
//! A reader sees the old file or the new one, never a torn one, and after the directory
//! fsync the new name survives a power cut. The temp file is opened `O_EXCL | O_NOFOLLOW`,
//! so a link planted under its name is refused rather than written through; the final
//! rename replaces whatever sits at the target's name (a link included) instead of
//! following it. The caller chooses the Unix permissions, which are set with `fchmod`
//! so the umask cannot widen or narrow them.
//!
//! Callers add their own guarantees around this core: [`crate::safe_fs`] resolves the
//! directory beneath the project root and checks the target before the rename, the
//! journal stages its temps under transaction names and renames them only after its
//! fence check ([`stage`] and [`publish`] are the two halves it uses).

use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{Advice, AtFlags, Mode, OFlags};
use rustix::io::Errno;
use std::path::Path;

/// How a finished temp file takes the target's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Publish {
    /// Rename over whatever is at the name.
    Replace,
    /// Link to the name only if nothing is there: the first of racing writers wins and
    /// nobody's file is ever replaced (for values that must be created once, like a key).
    IfAbsent,
}

/// What [`write_in`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Written,
    /// [`Publish::IfAbsent`] found the name taken; the existing file is untouched.
    AlreadyPresent,
}

/// The name of a temp file for the path `rel` (its last component is used), unique per
/// `tag` (a transaction id or a uuid). Hidden, and recognisable as ours by `.ctx-`.
pub fn temp_name(rel: &str, tag: &str) -> String {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    // Keep names short enough for NAME_MAX even for long targets.
    let short: String = name.chars().take(100).collect();
    format!(".{short}.ctx-{tag}.tmp")
}

/// Creates `tmp` in `dir` exclusively, never through a link, holding `bytes` with
/// permissions exactly `mode`, fsynced. On failure the temp file is removed.
pub fn stage(dir: &impl AsFd, tmp: &str, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let fd = create_unsynced(dir, tmp, bytes, mode)?;
    crate::faults::fsync(&fd).inspect_err(|_| {
        let _ = rustix::fs::unlinkat(dir, tmp, AtFlags::empty());
    })
}

/// [`stage`] without its fsync: the file is written and its write-back started, and the
/// caller makes it durable later, together with others ([`crate::durable::Unsynced`]).
/// Until then it may be empty or torn after a power cut, so nothing may depend on it.
///
/// The handle returned is read-only (enough for fsync): a file system with a file open
/// for writing cannot be remounted read-only, and an administrator's remount must not
/// fail because a transaction holds files it already wrote. It is checked to be the
/// file just written, not one swapped in under its name.
pub fn create_unsynced(
    dir: &impl AsFd,
    tmp: &str,
    bytes: &[u8],
    mode: u32,
) -> std::io::Result<OwnedFd> {
    let fd = rustix::fs::openat(
        dir,
        tmp,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(mode),
    )?;
    let result = (|| -> std::io::Result<OwnedFd> {
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode))?;
        let mut file = std::fs::File::from(fd);
        std::io::Write::write_all(&mut file, bytes)?;
        let fd = OwnedFd::from(file);
        // A hint only (durability comes from the fsync that follows): Linux starts the
        // write-back of dirty pages at once, so the file system allocates every file of a
        // group before the first fsync, and that fsync's journal commit carries them all.
        let _ = rustix::fs::fadvise(&fd, 0, None, Advice::DontNeed);
        let written = rustix::fs::fstat(&fd)?;
        let read_only = rustix::fs::openat(
            dir,
            tmp,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let reopened = rustix::fs::fstat(&read_only)?;
        if (reopened.st_dev, reopened.st_ino) != (written.st_dev, written.st_ino) {
            return Err(std::io::Error::other(format!(
                "{tmp} was replaced while it was written"
            )));
        }
        Ok(read_only)
    })();
    if result.is_err() {
        let _ = rustix::fs::unlinkat(dir, tmp, AtFlags::empty());
    }
    result
}

/// Gives the staged `tmp` the name `name` in the same directory, then fsyncs the
/// directory. With [`Publish::IfAbsent`] the temp name is removed afterwards either way.
pub fn publish(dir: &impl AsFd, tmp: &str, name: &str, how: Publish) -> std::io::Result<Outcome> {
    let outcome = match how {
        Publish::Replace => {
            rustix::fs::renameat(dir, tmp, dir, name)?;
            Outcome::Written
        }
        Publish::IfAbsent => {
            let linked = rustix::fs::linkat(dir, tmp, dir, name, AtFlags::empty());
            let _ = rustix::fs::unlinkat(dir, tmp, AtFlags::empty());
            match linked {
                Ok(()) => Outcome::Written,
                Err(Errno::EXIST) => Outcome::AlreadyPresent,
                Err(e) => return Err(e.into()),
            }
        }
    };
    crate::faults::fsync(dir)?;
    Ok(outcome)
}

/// [`stage`] then [`publish`] under a fresh temp name; a temp file left by a failed
/// publish is removed.
pub fn write_in(
    dir: &impl AsFd,
    name: &str,
    bytes: &[u8],
    mode: u32,
    how: Publish,
) -> std::io::Result<Outcome> {
    let tmp = temp_name(name, &uuid::Uuid::new_v4().simple().to_string());
    stage(dir, &tmp, bytes, mode)?;
    publish(dir, &tmp, name, how).inspect_err(|_| {
        let _ = rustix::fs::unlinkat(dir, tmp.as_str(), AtFlags::empty());
    })
}

/// [`write_in`] for a path outside any project root (state files, the user key, git
/// hooks): opens the directory that holds `path` and writes there.
pub fn write(path: &Path, bytes: &[u8], mode: u32, how: Publish) -> std::io::Result<Outcome> {
    let (dir, name) = open_parent(path)?;
    write_in(&dir, name, bytes, mode, how)
}

/// The directory holding `path`, opened, and the file's name in it.
fn open_parent(path: &Path) -> std::io::Result<(OwnedFd, &str)> {
    let name = path.file_name().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{}: not a file path", path.display()),
        )
    })?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let dir = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let name = name.to_str().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{}: the file name is not UTF-8", path.display()),
        )
    })?;
    Ok((dir, name))
}

/// Replaces the file at `path` for readers at once (a temp file renamed over it, so a
/// reader sees the old bytes or the new, never a mix) without making it durable: no
/// fsync of the file or its directory. Only for caches, which are verified when read and
/// rebuilt when missing or damaged: a power cut that loses or tears the new file costs a
/// rebuild, never a wrong read, and the two fsyncs were most of a cold hook's file work.
/// The file's bytes are `parts`, one after the other.
pub fn replace_cache(path: &Path, parts: &[&[u8]], mode: u32) -> std::io::Result<()> {
    let (dir, name) = open_parent(path)?;
    let tmp = temp_name(name, &uuid::Uuid::new_v4().simple().to_string());
    let written = (|| -> std::io::Result<()> {
        let fd = rustix::fs::openat(
            &dir,
            tmp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(mode),
        )?;
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode))?;
        let mut file = std::fs::File::from(fd);
        for part in parts {
            std::io::Write::write_all(&mut file, part)?;
        }
        rustix::fs::renameat(&dir, tmp.as_str(), &dir, name)?;
        Ok(())
    })();
    if written.is_err() {
        let _ = rustix::fs::unlinkat(&dir, tmp.as_str(), AtFlags::empty());
    }
    written
}

/// Removes temp files of `name` in `dir` that a writer killed between [`stage`] and
/// [`publish`] left behind. Only for a caller that excludes every other writer of
/// `name` (the project lock's holder for `lock.json`): anyone else's temp may be live.
pub fn remove_stale_temps(dir: &Path, name: &str) -> std::io::Result<usize> {
    let prefix = temp_name(name, "");
    let prefix = prefix.strip_suffix(".tmp").unwrap_or(&prefix);
    let mut removed = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let file = entry.file_name();
        let Some(file) = file.to_str() else {
            continue;
        };
        if file.starts_with(prefix) && file.ends_with(".tmp") && entry.file_type()?.is_file() {
            match std::fs::remove_file(entry.path()) {
                Ok(()) => removed += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
    }
    if removed > 0 {
        sync_dir(dir)?;
    }
    Ok(removed)
}

/// Durably records a change to `dir`'s entries (a created, renamed or removed name).
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    crate::faults::fsync(std::fs::File::open(dir)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    fn mode_of(p: &Path) -> u32 {
        std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".ctx-"))
            .collect()
    }

    #[test]
    fn replaces_with_the_callers_mode_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.json");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(
            write(&path, b"new", 0o600, Publish::Replace).unwrap(),
            Outcome::Written
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(mode_of(&path), 0o600);
        write(&path, b"exec", 0o755, Publish::Replace).unwrap();
        assert_eq!(mode_of(&path), 0o755);
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn a_link_at_the_target_is_replaced_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let path = dir.path().join("target");
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        write(&path, b"new", 0o600, Publish::Replace).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(!std::fs::symlink_metadata(&path)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    }

    #[test]
    fn if_absent_keeps_the_first_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key");
        assert_eq!(
            write(&path, b"first", 0o600, Publish::IfAbsent).unwrap(),
            Outcome::Written
        );
        assert_eq!(
            write(&path, b"second", 0o600, Publish::IfAbsent).unwrap(),
            Outcome::AlreadyPresent
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "first");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn staging_refuses_a_planted_link_and_a_missing_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, dir.path().join(".t.ctx-x.tmp")).unwrap();
        let handle = std::fs::File::open(dir.path()).unwrap();
        assert!(stage(&handle, ".t.ctx-x.tmp", b"evil", 0o600).is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        let missing = dir.path().join("no/such/dir/file");
        assert!(write(&missing, b"x", 0o600, Publish::Replace).is_err());
    }

    #[test]
    fn stale_temps_of_one_name_are_removed_and_others_kept() {
        let dir = tempfile::tempdir().unwrap();
        let stale = dir.path().join(temp_name("lock.json", "dead"));
        let other = dir.path().join(temp_name("decisions.head", "live"));
        std::fs::write(&stale, "x").unwrap();
        std::fs::write(&other, "y").unwrap();
        std::fs::write(dir.path().join("lock.json"), "{}").unwrap();
        assert_eq!(remove_stale_temps(dir.path(), "lock.json").unwrap(), 1);
        assert!(!stale.exists() && other.exists());
        assert!(dir.path().join("lock.json").exists());
    }

    #[test]
    fn temp_names_are_hidden_tagged_and_bounded() {
        assert_eq!(temp_name("a/b/c.txt", "t1"), ".c.txt.ctx-t1.tmp");
        assert!(temp_name(&"x".repeat(300), "t").len() < 255);
    }
}
