//! A section of a policy snapshot: bytes in memory, or a range of a file read when first
//! needed.
//!
//! A hook deciding one shell command reads the exec trie and the few rules it names; a
//! snapshot of 10,000 rules is about 2 MB, and reading all of it was a fifth of the
//! call (the kernel's copy, and the pages it fills). Loaded through [`ReadAt`], a
//! section is read whole the first time a trie or a list needs it, and one rule's bytes
//! are read alone. The file access itself is the caller's ([`ReadAt`]): this crate stays
//! free of I/O, and the caller decides what makes a read trustworthy.

use crate::frozen::Bytes;
use std::sync::{Arc, OnceLock};

/// Reads a snapshot's bytes where they are stored: implemented at the edge (the policy
/// cache) over its open file.
pub trait ReadAt: Send + Sync + std::fmt::Debug {
    /// Fills `buf` with the bytes from offset `at`. An error when they cannot be read or
    /// can no longer be vouched for (the file changed since it was checked); the caller of
    /// a section then reads it as damaged, which is a deny, never a missing rule.
    fn read_at(&self, at: u64, buf: &mut [u8]) -> Result<(), String>;
}

/// Snapshot bytes, in memory or still in the file.
#[derive(Debug, Clone)]
pub(crate) enum Section {
    Held(Bytes),
    Stored(Arc<Stored>),
}

#[derive(Debug)]
pub(crate) struct Stored {
    reader: Arc<dyn ReadAt>,
    at: u64,
    len: usize,
    whole: OnceLock<Option<Bytes>>,
}

impl Section {
    /// `len` bytes at absolute offset `at` of what `reader` reads, read on first need.
    pub(crate) fn stored(reader: Arc<dyn ReadAt>, at: u64, len: usize) -> Section {
        Section::Stored(Arc::new(Stored {
            reader,
            at,
            len,
            whole: OnceLock::new(),
        }))
    }

    /// Whether the section holds no bytes (known without reading it).
    pub(crate) fn is_empty(&self) -> bool {
        match self {
            Section::Held(b) => b.as_slice().is_empty(),
            Section::Stored(s) => s.len == 0,
        }
    }

    /// The whole section; `None` when it cannot be read.
    pub(crate) fn bytes(&self) -> Option<Bytes> {
        match self {
            Section::Held(b) => Some(b.clone()),
            Section::Stored(s) => s
                .whole
                .get_or_init(|| {
                    let mut buf = vec![0; s.len];
                    s.reader.read_at(s.at, &mut buf).ok()?;
                    Some(Bytes::new(Arc::new(buf)))
                })
                .clone(),
        }
    }

    /// `f` over `len` bytes at `at` within the section, reading only those when the
    /// section is not in memory; `None` when they lie outside it or cannot be read.
    pub(crate) fn with_range<R>(
        &self,
        at: usize,
        len: usize,
        f: impl FnOnce(&[u8]) -> R,
    ) -> Option<R> {
        let end = at.checked_add(len)?;
        match self {
            Section::Held(b) => b.as_slice().get(at..end).map(f),
            Section::Stored(s) => {
                if let Some(Some(whole)) = s.whole.get() {
                    return whole.as_slice().get(at..end).map(f);
                }
                if end > s.len {
                    return None;
                }
                let mut buf = vec![0; len];
                let from = s.at.checked_add(u64::try_from(at).ok()?)?;
                s.reader.read_at(from, &mut buf).ok()?;
                Some(f(&buf))
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Debug)]
    struct Counting {
        bytes: Vec<u8>,
        reads: AtomicUsize,
        fail: bool,
    }

    impl ReadAt for Counting {
        fn read_at(&self, at: u64, buf: &mut [u8]) -> Result<(), String> {
            self.reads.fetch_add(1, Ordering::SeqCst);
            if self.fail {
                return Err("changed".into());
            }
            let at = usize::try_from(at).unwrap();
            buf.copy_from_slice(self.bytes.get(at..at + buf.len()).ok_or("short")?);
            Ok(())
        }
    }

    #[test]
    fn a_range_is_read_alone_and_the_whole_section_once() {
        let r = Arc::new(Counting {
            bytes: (0u8..100).collect(),
            reads: AtomicUsize::new(0),
            fail: false,
        });
        let s = Section::stored(r.clone(), 10, 50);
        assert_eq!(s.with_range(5, 3, <[u8]>::to_vec).unwrap(), [15, 16, 17]);
        assert_eq!(r.reads.load(Ordering::SeqCst), 1);
        assert_eq!(
            s.with_range(48, 3, <[u8]>::to_vec),
            None,
            "past the section"
        );
        assert_eq!(s.bytes().unwrap().as_slice().len(), 50);
        assert_eq!(s.bytes().unwrap().as_slice().first(), Some(&10));
        assert_eq!(r.reads.load(Ordering::SeqCst), 2);
        // Once whole, ranges come from memory.
        assert_eq!(s.with_range(0, 2, <[u8]>::to_vec).unwrap(), [10, 11]);
        assert_eq!(r.reads.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_read_the_reader_refuses_is_none_never_zeros() {
        let r = Arc::new(Counting {
            bytes: vec![1; 10],
            reads: AtomicUsize::new(0),
            fail: true,
        });
        let s = Section::stored(r, 0, 10);
        assert!(s.bytes().is_none());
        assert!(s.with_range(0, 4, <[u8]>::to_vec).is_none());
    }
}
