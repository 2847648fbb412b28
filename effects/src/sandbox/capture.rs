//! Output capture: keeps at most `cap` bytes of a stream, counts and hashes all of it.
//!
//! The hash covers every byte the command wrote, not only the kept prefix, so two runs
//! whose output differs after the cap still have different digests; the counter tells
//! how much was dropped.

use serde::Serialize;
use sha2::{Digest, Sha256};

/// Which stream a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

#[derive(Debug, Clone)]
pub struct Capture {
    cap: usize,
    kept: Vec<u8>,
    total: u64,
    hasher: Sha256,
}

/// What a finished capture reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Captured {
    /// The kept prefix, lossily decoded as UTF-8.
    pub text: String,
    /// Bytes the command wrote in total.
    pub bytes: u64,
    /// Bytes kept (≤ the cap).
    pub kept: u64,
    pub truncated: bool,
    /// sha256 (hex) of every byte written, kept or not.
    pub sha256: String,
}

impl Capture {
    pub fn new(cap: u64) -> Capture {
        Capture {
            cap: usize::try_from(cap).unwrap_or(usize::MAX),
            kept: Vec::new(),
            total: 0,
            hasher: Sha256::new(),
        }
    }

    /// Adds a chunk; returns the part that was kept (to echo it live, if wanted).
    pub fn push<'a>(&mut self, chunk: &'a [u8]) -> &'a [u8] {
        self.hasher.update(chunk);
        self.total = self.total.saturating_add(chunk.len() as u64);
        let room = self.cap.saturating_sub(self.kept.len());
        let take = chunk.get(..room.min(chunk.len())).unwrap_or(&[]);
        self.kept.extend_from_slice(take);
        take
    }

    pub fn finish(self) -> Captured {
        let digest = self.hasher.finalize();
        Captured {
            text: String::from_utf8_lossy(&self.kept).into_owned(),
            bytes: self.total,
            kept: self.kept.len() as u64,
            truncated: self.total > self.kept.len() as u64,
            sha256: hex::encode(digest),
        }
    }
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    reason = "tests fail loudly at the first unexpected value"
)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_prefix_and_hashes_everything() {
        let mut c = Capture::new(5);
        assert_eq!(c.push(b"abc"), b"abc");
        assert_eq!(c.push(b"defgh"), b"de");
        assert_eq!(c.push(b"ij"), b"");
        let r = c.finish();
        assert_eq!(r.text, "abcde");
        assert_eq!(r.bytes, 10);
        assert_eq!(r.kept, 5);
        assert!(r.truncated);
        assert_eq!(
            r.sha256,
            crate::safe_fs::sha256_hex(b"abcdefghij"),
            "the digest covers the dropped bytes too"
        );
    }

    #[test]
    fn under_the_cap_nothing_is_flagged() {
        let mut c = Capture::new(64);
        c.push(b"hello\n");
        let r = c.finish();
        assert!(!r.truncated);
        assert_eq!(r.bytes, 6);
        assert_eq!(r.text, "hello\n");
        let empty = Capture::new(0).finish();
        assert_eq!(empty.sha256, crate::safe_fs::sha256_hex(b""));
        assert!(!empty.truncated);
    }
}
