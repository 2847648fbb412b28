//! `decisions.head`: the last record's `seq` and `hash`, with a MAC under the user key so
//! a truncated log cannot be given a matching head by anyone without the key.

use super::error::{corrupt, io, LogError};
use super::record::is_hex64;
use crate::atomic_write::{self, Publish};
use crate::user_key::UserKey;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

pub const HEAD_FILE: &str = "decisions.head";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Head {
    pub(super) seq: u64,
    pub(super) hash: String,
    pub(super) mac: String,
}

/// The head MAC is keyed with the user key itself (not a derived key): logs written
/// before the key had a second use must keep verifying.
fn head_mac(key: &UserKey, seq: u64, hash: &str) -> Hmac<Sha256> {
    let mut mac = key.raw_mac();
    mac.update(&seq.to_be_bytes());
    mac.update(hash.as_bytes());
    mac
}

/// Whether `head` may be trusted with the key we were given (or without one).
pub(super) fn check_head_mac(head: &Head, key: Option<&UserKey>) -> Result<(), String> {
    match key {
        None if head.mac.is_empty() => Ok(()),
        // Writing an unsigned head over a signed one would be a silent downgrade.
        None => Err("the head is signed but no key was given".to_string()),
        Some(_) if head.mac.is_empty() => {
            Err("the head is unsigned but a key was given: it may have been rewritten".to_string())
        }
        Some(key) => {
            let mac = head_mac(key, head.seq, &head.hash);
            match hex::decode(&head.mac) {
                Ok(tag) if mac.verify_slice(&tag).is_ok() => Ok(()),
                _ => Err(
                    "the head's MAC does not verify: the head was forged or written with another key"
                        .to_string(),
                ),
            }
        }
    }
}

pub(super) fn read_head(path: &Path) -> Result<Option<Head>, LogError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(path)(e)),
    };
    let head: Head = serde_json::from_slice(&bytes)
        .map_err(|e| corrupt(path, format!("unreadable head: {e}")))?;
    if head.seq == 0 || !is_hex64(&head.hash) || !(head.mac.is_empty() || is_hex64(&head.mac)) {
        return Err(corrupt(path, "unreadable head: bad seq, hash or mac"));
    }
    Ok(Some(head))
}

/// Size of the head file: the JSON record padded with spaces, then a newline.
pub(super) const HEAD_BYTES: usize = 256;
/// Like every file of the log: private to the user.
const HEAD_MODE: u32 = 0o600;
/// `O_NOFOLLOW`: the head is never written through a symbolic link planted in its place.
pub(super) const NOFOLLOW: i32 = rustix::fs::OFlags::NOFOLLOW.bits() as i32;

pub(super) fn write_head(
    state_dir: &Path,
    seq: u64,
    hash: &str,
    key: Option<&UserKey>,
) -> Result<(), LogError> {
    let path = state_dir.join(HEAD_FILE);
    let mac = match key {
        Some(k) => hex::encode(head_mac(k, seq, hash).finalize().into_bytes()),
        None => String::new(),
    };
    let head = Head {
        seq,
        hash: hash.to_string(),
        mac,
    };
    let mut bytes = serde_json::to_vec(&head).map_err(|e| corrupt(&path, e.to_string()))?;
    // Fixed size, so an update is one overwrite in place of a record that fits in a single
    // disk sector, made durable by one `fdatasync` — a hook appends on every tool call, and
    // the temp-file-and-rename dance costs two more syncs. A torn head (a sector write
    // that did not complete) reads as corrupt: appends then refuse until `log reseal`
    // re-checks the whole chain, so a crash can cost availability of the log, never its
    // integrity.
    if bytes.len() >= HEAD_BYTES {
        return Err(corrupt(
            &path,
            "the head record does not fit its fixed size",
        ));
    }
    bytes.resize(HEAD_BYTES - 1, b' ');
    bytes.push(b'\n');
    match OpenOptions::new()
        .write(true)
        .custom_flags(NOFOLLOW)
        .open(&path)
    {
        Ok(f) => {
            use std::os::unix::fs::FileExt;
            return f
                .write_all_at(&bytes, 0)
                .and_then(|()| f.set_len(HEAD_BYTES as u64))
                .and_then(|()| crate::faults::fdatasync(&f))
                .map_err(io(&path));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        // A symbolic link (ELOOP) or anything else unexpected is not written through.
        Err(e) => return Err(io(&path)(e)),
    }
    // The first head: created whole, so no reader ever sees a short one.
    atomic_write::write(&path, &bytes, HEAD_MODE, Publish::Replace)
        .map(|_| ())
        .map_err(io(&path))
}
