//! A staged blob read from its loose object file with one `read`, not a memory map.
//!
//! gix maps every loose object it reads and unmaps it after. A scan reads thousands of
//! them (`git add` writes every new file as one) on two or more threads, and in a
//! process with several threads every `munmap` interrupts the other cores to flush their
//! TLBs: on the 116 MB index that was 6,232 map and unmap pairs and about a sixth of the
//! scan's CPU. Reading the file into memory does the same work without them.
//!
//! Only what this module is sure of is answered here: a loose blob whose header and length
//! check out. Anything else (a packed object, another kind, an unreadable or damaged
//! file, an object under an alternate) is left to gix, so errors and every other case are
//! reported as before.

use gix::objs::Kind;
use gix::zlib::{Inflate, Status};
use std::cell::RefCell;
use std::io::Read;
use std::path::Path;

/// The largest loose object header (`git2`'s bound, as gix uses).
const HEADER_MAX: usize = 64;

/// A compressed buffer larger than this is not kept for the next object: one large blob
/// must not pin its size in memory for the rest of the scan.
const KEEP_BYTES: usize = 4 << 20;

thread_local! {
    /// The object file last read on this thread. A worker reads thousands of objects one
    /// after another; reading each into the same buffer spares an allocation, a `statx`
    /// for the size and the fresh pages a new buffer faults in.
    static COMPRESSED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };

    /// The inflater last used on this thread, reset for each object. A new one allocates
    /// and initialises zlib's state and window (some 40 KiB) for every blob; over the
    /// 116 MB index, 6,208 of them, that was about 1.5% of the scan's instructions.
    static INFLATE: RefCell<Inflate> = RefCell::new(Inflate::default());
}

/// What the loose object file of a blob holds.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Loose {
    /// The blob's content.
    Blob(Vec<u8>),
    /// A blob larger than the limit, not inflated.
    TooLarge,
}

/// The blob `id` from its loose object file under `objects` (the repository's objects
/// directory), or `None` to ask gix.
pub(crate) fn blob(objects: &Path, id: &gix::oid, limit: u64) -> Option<Loose> {
    let hex = id.to_hex().to_string();
    let (dir, file) = (hex.get(..2)?, hex.get(2..)?);
    let path = objects.join(dir).join(file);
    COMPRESSED.with_borrow_mut(|buf| {
        buf.clear();
        let read = std::fs::File::open(&path).and_then(|mut f| f.read_to_end(buf));
        let out = read.ok().and_then(|_| inflate_blob(buf, limit));
        if buf.capacity() > KEEP_BYTES {
            *buf = Vec::new();
        }
        out
    })
}

/// The blob in a loose object file's bytes, or `None` when they are not one whole blob.
fn inflate_blob(compressed: &[u8], limit: u64) -> Option<Loose> {
    INFLATE.with_borrow_mut(|inflate| {
        // Whatever the last object left (an error, a stream cut short), this one starts
        // from a fresh stream.
        inflate.reset();
        inflate_with(inflate, compressed, limit)
    })
}

fn inflate_with(inflate: &mut Inflate, compressed: &[u8], limit: u64) -> Option<Loose> {
    let mut header = [0u8; HEADER_MAX];
    let (status, consumed_in, consumed_out) = inflate.prefix(compressed, &mut header).ok()?;
    if status == Status::BufError {
        return None;
    }
    let written = header.get(..consumed_out)?;
    let (kind, size, header_len) = gix::objs::decode::loose_header(written).ok()?;
    if kind != Kind::Blob {
        return None;
    }
    if size > limit {
        return Some(Loose::TooLarge);
    }
    let size = usize::try_from(size).ok()?;
    let held = consumed_out.checked_sub(header_len)?;
    if held > size || (status == Status::StreamEnd && held != size) {
        return None;
    }
    let mut out = Vec::new();
    if status == Status::StreamEnd {
        out.extend_from_slice(header.get(header_len..consumed_out)?);
    } else {
        let rest = compressed.get(consumed_in..)?;
        let n = inflate
            .rest(rest, written, header_len, &mut out, size)
            .ok()?;
        if n != size {
            return None;
        }
    }
    Some(Loose::Blob(out))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// Whatever `git hash-object -w` stores, read back here byte for byte, at every size
    /// around the header buffer and well past it; over the limit it is not inflated.
    #[test]
    fn reads_what_git_writes_and_leaves_the_rest_to_gix() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        let objects = root.join(".git/objects");
        for len in [0usize, 1, 20, 50, 63, 64, 65, 1000, 300_000] {
            let content: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let path = root.join(format!("f{len}"));
            std::fs::write(&path, &content).unwrap();
            let hex = git(root, &["hash-object", "-w", path.to_str().unwrap()]);
            let id = gix::ObjectId::from_hex(hex.as_bytes()).unwrap();
            assert_eq!(
                blob(&objects, &id, u64::MAX),
                Some(Loose::Blob(content.clone())),
                "{len} bytes"
            );
            if len > 0 {
                assert_eq!(
                    blob(&objects, &id, len as u64 - 1),
                    Some(Loose::TooLarge),
                    "{len} bytes over a limit of one less"
                );
            }
        }
        // A tree is not a blob; a missing object is not loose; a damaged file is not
        // trusted: gix answers those.
        std::fs::write(root.join("a"), "a").unwrap();
        git(root, &["add", "a"]);
        let tree = git(root, &["write-tree"]);
        let tree = gix::ObjectId::from_hex(tree.as_bytes()).unwrap();
        assert_eq!(blob(&objects, &tree, u64::MAX), None);
        let missing = gix::ObjectId::from_hex(b"1234567890123456789012345678901234567890").unwrap();
        assert_eq!(blob(&objects, &missing, u64::MAX), None);
        let hex = git(
            root,
            &["hash-object", "-w", root.join("f1000").to_str().unwrap()],
        );
        let file = objects.join(&hex[..2]).join(&hex[2..]);
        let mut bytes = std::fs::read(&file).unwrap();
        bytes.truncate(bytes.len() / 2);
        let mut perms = std::fs::metadata(&file).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false, reason = "a test object file")]
        perms.set_readonly(false);
        std::fs::set_permissions(&file, perms).unwrap();
        std::fs::write(&file, &bytes).unwrap();
        let id = gix::ObjectId::from_hex(hex.as_bytes()).unwrap();
        assert_eq!(blob(&objects, &id, u64::MAX), None);
        // The thread's inflater starts afresh after a damaged stream and one over the
        // limit, which both stop mid-stream.
        let big = root.join("f300000");
        let hex = git(root, &["hash-object", "-w", big.to_str().unwrap()]);
        let id = gix::ObjectId::from_hex(hex.as_bytes()).unwrap();
        assert_eq!(blob(&objects, &id, 1000), Some(Loose::TooLarge));
        assert_eq!(
            blob(&objects, &id, u64::MAX),
            Some(Loose::Blob(std::fs::read(&big).unwrap()))
        );
    }
}
