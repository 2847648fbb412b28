//! The decision log: every verdict `contextos hook …` gives, appended to a hash chain
//! whose tail is pinned by an HMAC-signed head, so edits, deletions, reordering and
//! truncation are detectable afterwards.
//!
//! # Files (all in the state directory the caller passes, normally `.contextos/state`)
//!
//! * `decisions.jsonl` — the active segment: one record per line, `\n`-terminated.
//! * `decisions.<seq>.jsonl` — sealed segments; `<seq>` is the segment's first `seq`,
//!   zero-padded to 12 digits, so names sort in log order.
//! * `decisions.head` — `{"seq":N,"hash":"<64 hex>","mac":"<64 hex or empty>"}` + `\n`:
//!   the last record's `seq` and `hash`. Replaced atomically (temp, fsync, rename,
//!   directory fsync) after every append.
//! * `decisions.lock` — empty; `flock`ed exclusively around every append (and shared by
//!   [`verify`] and [`tail`], so they never see half an append). Never renamed or
//!   deleted, so every process locks the same inode.
//!
//! Files are created `0600`.
//!
//! # Record line
//!
//! Members in exactly this order, compact JSON (serde_json, no whitespace):
//! `seq, time, agent, event, tool, request, verdict, rules, durationUs, prev, hash`.
//!
//! * `hash` = lowercase hex sha256 of the **body**: the line's bytes with the final
//!   `,"hash":"<64 hex>"` member removed — i.e. the same object serialised without
//!   `hash`, ending `…,"prev":"<64 hex>"}`. A verifier strips the 75-byte suffix
//!   `,"hash":"<64 hex>"}`, appends `}`, and hashes; it never re-serialises, so
//!   number formatting or key order inside `request` cannot cause false alarms.
//!   A line whose `hash` member is not last, byte for byte, is malformed.
//! * `prev` = the previous record's `hash` (64 zeros for `seq` 1). The line is a
//!   function of its body, so this commits to every byte of the previous line.
//! * `seq` starts at 1 and is contiguous across segments; the first record of a new
//!   segment chains to the last record of the sealed one.
//!
//! # Head MAC
//!
//! `mac` = lowercase hex HMAC-SHA256, keyed with a per-user key kept outside the
//! repository ([`default_key_path`]), over `seq` as 8 bytes big-endian followed by the
//! 64 ASCII bytes of `hash`. The key file holds 64 lowercase hex characters (32 random
//! bytes) and a newline, mode `0600`. Without a key the head is unsigned (`mac` empty):
//! anyone who can truncate the log can rewrite the head to match.
//!
//! # Appends stay O(1)
//!
//! Under the lock an append reads the head and the last line of the newest file (never
//! the whole log), checks they agree, writes one line with `O_APPEND`, fsyncs, and
//! replaces the head. It refuses (fails closed) when the tail cannot be trusted — bad
//! or missing MAC while a key is given, a signed head while none is, head and last line
//! disagreeing, the head missing from a signed log of more than one record — because
//! extending the log would re-sign, and so launder, the tampering. [`reseal`] is the
//! deliberate way out once a human has looked. The crash windows are repaired
//! silently: an unterminated last line is cut (or, if it is a whole record, given its
//! newline), a record whose head update was lost is adopted if it chains onto the head,
//! and a first record without any head is adopted.
//!
//! # Masking
//!
//! Secrets never reach the file: every string of `request` (and `agent`, `event`,
//! `tool`) goes through [`mask_value`] / [`mask_secrets`] before hashing, so the hash
//! covers the masked text and the clear text exists nowhere on disk.

use super::safe_fs::sha256_hex;
use hmac::{Hmac, Mac};
use regex::Regex;
use rustix::fs::FlockOperation;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Sha256;
use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::os::unix::fs::{
    DirBuilderExt as _, FileExt as _, OpenOptionsExt as _, PermissionsExt as _,
};
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub const ACTIVE_FILE: &str = "decisions.jsonl";
pub const HEAD_FILE: &str = "decisions.head";
pub const LOCK_FILE: &str = "decisions.lock";
/// `prev` of the first record.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";
pub const DEFAULT_ROTATE_BYTES: u64 = 16 * 1024 * 1024;

/// A stopped or hung holder must not hang the hook forever: an error lets the caller
/// deny, whereas a hook killed by the agent's own timeout may be treated as "allow".
const LOCK_TIMEOUT: Duration = Duration::from_secs(30);
/// `,"hash":"` + 64 hex + `"}`.
const HASH_SUFFIX_LEN: usize = 9 + 64 + 2;
/// One tampering normally yields one or two problems; past this the rest is noise.
const MAX_PROBLEMS: usize = 1000;

/// One verdict, as the hook hands it over. `request` is masked before it is written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionRecord {
    pub agent: String,
    pub event: String,
    pub tool: String,
    pub request: Value,
    pub verdict: String,
    pub rules: Vec<String>,
    pub duration_us: u64,
}

/// One line of the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LoggedRecord {
    pub seq: u64,
    pub time: String,
    pub agent: String,
    pub event: String,
    pub tool: String,
    pub request: Value,
    pub verdict: String,
    pub rules: Vec<String>,
    pub duration_us: u64,
    pub prev: String,
    pub hash: String,
}

/// The hashed part of a line; the field order here *is* the canonical order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Body<'a> {
    seq: u64,
    time: &'a str,
    agent: &'a str,
    event: &'a str,
    tool: &'a str,
    request: &'a Value,
    verdict: &'a str,
    rules: &'a [String],
    duration_us: u64,
    prev: &'a str,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Head {
    seq: u64,
    hash: String,
    mac: String,
}

#[derive(Debug, Clone)]
pub struct LogOptions {
    /// Per-user HMAC key; created on first use. `None` leaves the head unsigned.
    pub key_path: Option<PathBuf>,
    /// Seal the active file before it would grow past this many bytes; 0 never rotates.
    pub rotate_bytes: u64,
    /// RFC 3339 time to record instead of the clock (tests, replays). Written verbatim.
    pub now: Option<String>,
    /// How long a writer waits for the log lock. A hook answers on every tool call and
    /// must not wait behind a stuck holder past the agent's own timeout.
    pub lock_timeout: Duration,
}

impl Default for LogOptions {
    fn default() -> Self {
        LogOptions {
            key_path: default_key_path(),
            rotate_bytes: DEFAULT_ROTATE_BYTES,
            now: None,
            lock_timeout: LOCK_TIMEOUT,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ProblemKind {
    /// Not a record (bad JSON, unknown fields, non-canonical `hash` member, torn line,
    /// misnamed or empty segment, unreadable head).
    Malformed,
    /// The record's content does not hash to its `hash`: it was edited.
    HashMismatch,
    /// `prev` does not name the previous record, or the log does not start at genesis:
    /// records (or a whole segment) were deleted, inserted or reordered.
    BrokenChain,
    SeqGap,
    /// The head names a later record than the log holds: records were cut off the end.
    Truncated,
    /// The head and the last record disagree in some other way.
    HeadMismatch,
    /// The head's MAC is missing or wrong: the head was forged (or the key changed).
    BadMac,
    /// Records exist but there is no head, so truncation cannot be detected.
    MissingHead,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub file: PathBuf,
    /// 1-based; `None` when the problem concerns the file as a whole.
    pub line: Option<u64>,
    pub kind: ProblemKind,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: ", self.file.display())?,
            None => write!(f, "{}: ", self.file.display())?,
        }
        write!(f, "{:?}: {}", self.kind, self.message)
    }
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifyReport {
    /// Records read (malformed lines excluded).
    pub records: u64,
    /// Files walked: sealed segments plus the active file.
    pub segments: usize,
    /// The head carries a MAC that verified with the key.
    pub head_signed: bool,
    /// In log order, first problem first.
    pub problems: Vec<Problem>,
    /// Weaknesses that are not evidence of tampering (e.g. no key to check the head).
    pub warnings: Vec<String>,
}

impl VerifyReport {
    pub fn is_valid(&self) -> bool {
        self.problems.is_empty()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: timed out after {waited:?} waiting for the decision-log lock")]
    LockTimeout { path: PathBuf, waited: Duration },
    #[error("{path}: {reason}")]
    Corrupt { path: PathBuf, reason: String },
    #[error("{path}: {reason}; refusing to extend a decision log whose tail cannot be trusted (verify it, then reseal it deliberately)")]
    Tampered { path: PathBuf, reason: String },
    #[error("{path}: the decision-log key is accessible to other users (mode {mode:03o}); run `chmod 600` on it")]
    KeyPermissions { path: PathBuf, mode: u32 },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> LogError + '_ {
    move |source| LogError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn corrupt(path: &Path, reason: impl Into<String>) -> LogError {
    LogError::Corrupt {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

fn tampered(path: &Path, reason: impl Into<String>) -> LogError {
    LogError::Tampered {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// `$XDG_STATE_HOME/contextos/log.key`, else `~/.local/state/contextos/log.key`. Relative
/// values are ignored, as the XDG spec requires.
pub fn default_key_path() -> Option<PathBuf> {
    let absolute = |var: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    absolute("XDG_STATE_HOME")
        .or_else(|| absolute("HOME").map(|h| h.join(".local").join("state")))
        .map(|base| base.join("contextos").join("log.key"))
}

// ---------------------------------------------------------------------------------------
// Append

/// Appends one record and returns it as written (masked, with `seq`, `time`, `prev`,
/// `hash`). Safe to call from many processes at once.
pub fn append(
    state_dir: &Path,
    rec: &DecisionRecord,
    opts: &LogOptions,
) -> Result<LoggedRecord, LogError> {
    std::fs::create_dir_all(state_dir).map_err(io(state_dir))?;
    let _lock = LogLock::acquire(state_dir, opts.lock_timeout)?;
    let key = opts
        .key_path
        .as_deref()
        .map(load_or_create_key)
        .transpose()?;
    let (last_seq, last_hash) = trusted_tail(state_dir, key.as_ref())?;
    let seq = last_seq
        .checked_add(1)
        .ok_or_else(|| corrupt(state_dir, "sequence number overflow"))?;
    let time = opts
        .now
        .clone()
        .unwrap_or_else(|| rfc3339(SystemTime::now()));
    let agent = mask_secrets(&rec.agent);
    let event = mask_secrets(&rec.event);
    let tool = mask_secrets(&rec.tool);
    let request = mask_value(&rec.request);
    let body = Body {
        seq,
        time: &time,
        agent: &agent,
        event: &event,
        tool: &tool,
        request: &request,
        verdict: &rec.verdict,
        rules: &rec.rules,
        duration_us: rec.duration_us,
        prev: &last_hash,
    };
    let active = state_dir.join(ACTIVE_FILE);
    let mut line = serde_json::to_vec(&body).map_err(|e| corrupt(&active, e.to_string()))?;
    let hash = sha256_hex(&line);
    if line.pop() != Some(b'}') {
        return Err(corrupt(
            &active,
            "record did not serialise to a JSON object",
        ));
    }
    line.extend_from_slice(format!(",\"hash\":\"{hash}\"}}\n").as_bytes());

    let size = match std::fs::metadata(&active) {
        Ok(m) => Some(m.len()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io(&active)(e)),
    };
    let mut existed = size.is_some();
    if let Some(size) = size {
        let would_be = size.saturating_add(line.len() as u64);
        if opts.rotate_bytes > 0 && size > 0 && would_be > opts.rotate_bytes {
            rotate(state_dir, &active)?;
            existed = false;
        }
    }
    let mut file = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(&active)
        .map_err(io(&active))?;
    file.write_all(&line).map_err(io(&active))?;
    file.sync_all().map_err(io(&active))?;
    if !existed {
        sync_dir(state_dir)?;
    }
    write_head(state_dir, seq, &hash, key.as_ref())?;
    Ok(LoggedRecord {
        seq,
        time,
        agent,
        event,
        tool,
        request,
        verdict: rec.verdict.clone(),
        rules: rec.rules.clone(),
        duration_us: rec.duration_us,
        prev: last_hash,
        hash,
    })
}

/// Re-signs the head over the log as it now stands: the explicit, human step after
/// [`verify`] found a head problem (lost head, key introduced or replaced) and someone
/// decided the records are to be trusted. Refuses while any *record* is malformed,
/// edited or out of chain — move such a log aside instead. Returns the record count.
pub fn reseal(state_dir: &Path, opts: &LogOptions) -> Result<u64, LogError> {
    std::fs::create_dir_all(state_dir).map_err(io(state_dir))?;
    let _lock = LogLock::acquire(state_dir, opts.lock_timeout)?;
    let key = opts
        .key_path
        .as_deref()
        .map(load_or_create_key)
        .transpose()?;
    repair_torn_tail(&state_dir.join(ACTIVE_FILE))?;
    let mut walk = Walk::new(None);
    let segments = list_segments(state_dir)?;
    for (seq, path) in &segments {
        walk.file(path, Some(*seq))?;
    }
    let active = state_dir.join(ACTIVE_FILE);
    if active.exists() {
        walk.file(&active, None)?;
    }
    if let Some(p) = walk.problems.first() {
        return Err(corrupt(
            &p.file,
            format!("cannot reseal a log with damaged records ({p}); move the log aside to start a new one"),
        ));
    }
    let head_path = state_dir.join(HEAD_FILE);
    match walk.last {
        Some(last) => write_head(state_dir, last.seq, &last.hash, key.as_ref())?,
        None => match std::fs::remove_file(&head_path) {
            Ok(()) => sync_dir(state_dir)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(&head_path)(e)),
        },
    }
    Ok(walk.records)
}

/// The `(seq, hash)` the next record chains onto, after checking that the head is
/// authentic and agrees with the last line. Reads only the head and one line.
fn trusted_tail(state_dir: &Path, key: Option<&Key>) -> Result<(u64, String), LogError> {
    let head_path = state_dir.join(HEAD_FILE);
    let head = read_head(&head_path)?;
    if let Some(h) = &head {
        check_head_mac(h, key).map_err(|reason| tampered(&head_path, reason))?;
    }
    repair_torn_tail(&state_dir.join(ACTIVE_FILE))?;
    let last = match newest_last_line(state_dir)? {
        Some((path, line)) => {
            if !line.terminated {
                return Err(tampered(
                    &path,
                    "the last line of a sealed segment is incomplete",
                ));
            }
            let rec = parse_line(&line.bytes).map_err(|m| tampered(&path, m))?;
            check_hash(&line.bytes, &rec).map_err(|(_, m)| tampered(&path, m))?;
            Some((path, rec))
        }
        None => None,
    };
    match (head, last) {
        (None, None) => Ok((0, GENESIS.to_string())),
        (None, Some((path, rec))) => {
            // A first append that crashed before writing the head leaves exactly this;
            // anything longer in a signed log means the head was deleted, and adopting
            // the last line would sign whatever truncation went with it.
            if key.is_some() && rec.seq != 1 {
                return Err(tampered(
                    &head_path,
                    format!(
                        "the head is missing but {} holds records up to seq {}",
                        path.display(),
                        rec.seq
                    ),
                ));
            }
            if rec.seq == 1 && rec.prev != GENESIS {
                return Err(tampered(&path, "record 1 does not chain from genesis"));
            }
            Ok((rec.seq, rec.hash))
        }
        (Some(h), None) => Err(tampered(
            &head_path,
            format!("the head names record {} but the log is empty", h.seq),
        )),
        (Some(h), Some((path, rec))) => {
            if rec.seq == h.seq && rec.hash == h.hash {
                Ok((rec.seq, rec.hash))
            } else if Some(rec.seq) == h.seq.checked_add(1) && rec.prev == h.hash {
                // Written and fsynced, but the process died before the head update.
                Ok((rec.seq, rec.hash))
            } else if rec.seq < h.seq {
                Err(tampered(
                    &path,
                    format!(
                        "the log ends at seq {} but the head names seq {}: records were removed from the end",
                        rec.seq, h.seq
                    ),
                ))
            } else {
                Err(tampered(
                    &path,
                    format!(
                        "the last record (seq {}, hash {}) does not match the head (seq {}, hash {})",
                        rec.seq, rec.hash, h.seq, h.hash
                    ),
                ))
            }
        }
    }
}

fn rotate(state_dir: &Path, active: &Path) -> Result<(), LogError> {
    let file = File::open(active).map_err(io(active))?;
    let mut first = Vec::new();
    BufReader::new(file)
        .read_until(b'\n', &mut first)
        .map_err(io(active))?;
    if first.pop() != Some(b'\n') {
        return Err(tampered(active, "the first line is incomplete"));
    }
    let rec = parse_line(&first).map_err(|m| tampered(active, m))?;
    let sealed = state_dir.join(segment_name(rec.seq));
    if sealed.symlink_metadata().is_ok() {
        return Err(corrupt(
            &sealed,
            "a sealed segment with this name already exists",
        ));
    }
    std::fs::rename(active, &sealed).map_err(io(active))?;
    sync_dir(state_dir)
}

fn segment_name(first_seq: u64) -> String {
    format!("decisions.{first_seq:012}.jsonl")
}

/// Sealed segments, oldest first.
fn list_segments(state_dir: &Path) -> Result<Vec<(u64, PathBuf)>, LogError> {
    let entries = match std::fs::read_dir(state_dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(state_dir)(e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io(state_dir))?;
        let name = entry.file_name();
        let Some(digits) = name
            .to_str()
            .and_then(|n| n.strip_prefix("decisions."))
            .and_then(|n| n.strip_suffix(".jsonl"))
        else {
            continue;
        };
        if digits.len() == 12 && digits.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(seq) = digits.parse::<u64>() {
                out.push((seq, entry.path()));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The last line of the active file, or of the newest sealed segment if the active file
/// is missing or empty (a crash between sealing and the next write).
fn newest_last_line(state_dir: &Path) -> Result<Option<(PathBuf, LastLine)>, LogError> {
    let active = state_dir.join(ACTIVE_FILE);
    if let Some(line) = read_last_line(&active)? {
        return Ok(Some((active, line)));
    }
    for (_, path) in list_segments(state_dir)?.into_iter().rev() {
        if let Some(line) = read_last_line(&path)? {
            return Ok(Some((path, line)));
        }
    }
    Ok(None)
}

#[derive(Debug)]
struct LastLine {
    /// Without the newline.
    bytes: Vec<u8>,
    /// Offset of the line's first byte.
    start: u64,
    terminated: bool,
}

/// Reads backwards from the end, so the cost is the last line's length, not the log's.
fn read_last_line(path: &Path) -> Result<Option<LastLine>, LogError> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(path)(e)),
    };
    let len = file.metadata().map_err(io(path))?.len();
    if len == 0 {
        return Ok(None);
    }
    let mut last = [0u8; 1];
    file.read_exact_at(&mut last, len - 1).map_err(io(path))?;
    let terminated = last[0] == b'\n';
    let end = if terminated { len - 1 } else { len };
    let mut buf: Vec<u8> = Vec::new();
    let mut pos = end;
    let mut chunk: u64 = 4096;
    loop {
        if pos == 0 {
            return Ok(Some(LastLine {
                bytes: buf,
                start: 0,
                terminated,
            }));
        }
        let n = chunk.min(pos);
        let mut piece = vec![0u8; n as usize];
        file.read_exact_at(&mut piece, pos - n).map_err(io(path))?;
        pos -= n;
        let found = piece.iter().rposition(|b| *b == b'\n');
        piece.extend_from_slice(&buf);
        buf = piece;
        if let Some(i) = found {
            return Ok(Some(LastLine {
                bytes: buf.split_off(i + 1),
                start: pos + i as u64 + 1,
                terminated,
            }));
        }
        chunk = chunk.saturating_mul(2);
    }
}

/// A crash mid-write can leave an unterminated last line that no head covers. If it is
/// in fact a whole record only its newline is missing and it is kept; otherwise it is
/// cut off.
fn repair_torn_tail(active: &Path) -> Result<(), LogError> {
    let Some(last) = read_last_line(active)? else {
        return Ok(());
    };
    if last.terminated {
        return Ok(());
    }
    let whole = parse_line(&last.bytes)
        .ok()
        .is_some_and(|rec| check_hash(&last.bytes, &rec).is_ok());
    let mut file = OpenOptions::new()
        .write(true)
        .append(whole)
        .open(active)
        .map_err(io(active))?;
    if whole {
        file.write_all(b"\n").map_err(io(active))?;
    } else {
        file.set_len(last.start).map_err(io(active))?;
    }
    file.sync_all().map_err(io(active))
}

fn sync_dir(dir: &Path) -> Result<(), LogError> {
    File::open(dir).and_then(|d| d.sync_all()).map_err(io(dir))
}

// ---------------------------------------------------------------------------------------
// Lines and hashes

fn parse_line(line: &[u8]) -> Result<LoggedRecord, String> {
    let rec: LoggedRecord =
        serde_json::from_slice(line).map_err(|e| format!("not a decision record: {e}"))?;
    if !is_hex64(&rec.hash) || !is_hex64(&rec.prev) {
        return Err("`hash` and `prev` must be 64 lowercase hex digits".to_string());
    }
    Ok(rec)
}

/// The hash rule of the module docs, on the bytes as stored.
fn check_hash(line: &[u8], rec: &LoggedRecord) -> Result<(), (ProblemKind, String)> {
    let suffix = format!(",\"hash\":\"{}\"}}", rec.hash);
    let Some(prefix) = line.strip_suffix(suffix.as_bytes()) else {
        return Err((
            ProblemKind::Malformed,
            "the record is not in canonical form (`hash` must be the last member, written verbatim)"
                .to_string(),
        ));
    };
    debug_assert_eq!(line.len() - prefix.len(), HASH_SUFFIX_LEN);
    let mut body = Vec::with_capacity(prefix.len() + 1);
    body.extend_from_slice(prefix);
    body.push(b'}');
    let actual = sha256_hex(&body);
    if actual == rec.hash {
        Ok(())
    } else {
        Err((
            ProblemKind::HashMismatch,
            format!(
                "record seq {} was edited: its content hashes to {actual}, not to its stored hash {}",
                rec.seq, rec.hash
            ),
        ))
    }
}

fn is_hex64(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    fn nibble(b: u8) -> Option<u8> {
        match b {
            b'0'..=b'9' => Some(b - b'0'),
            b'a'..=b'f' => Some(b - b'a' + 10),
            _ => None,
        }
    }
    // An odd length leaves a one-byte chunk, which fails the pattern below.
    s.as_bytes()
        .chunks(2)
        .map(|pair| match pair {
            [hi, lo] => Some((nibble(*hi)? << 4) | nibble(*lo)?),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// Head, key and MAC

/// Deliberately no `Debug`: the key must not end up in logs or error messages.
struct Key([u8; 32]);

type HmacSha256 = Hmac<Sha256>;

fn head_mac(key: &Key, seq: u64, hash: &str) -> Result<HmacSha256, String> {
    let mut mac = <HmacSha256 as Mac>::new_from_slice(&key.0).map_err(|e| e.to_string())?;
    mac.update(&seq.to_be_bytes());
    mac.update(hash.as_bytes());
    Ok(mac)
}

/// Whether `head` may be trusted with the key we were given (or without one).
fn check_head_mac(head: &Head, key: Option<&Key>) -> Result<(), String> {
    match key {
        None if head.mac.is_empty() => Ok(()),
        // Writing an unsigned head over a signed one would be a silent downgrade.
        None => Err("the head is signed but no key was given".to_string()),
        Some(_) if head.mac.is_empty() => {
            Err("the head is unsigned but a key was given: it may have been rewritten".to_string())
        }
        Some(key) => {
            let mac = head_mac(key, head.seq, &head.hash)?;
            match unhex(&head.mac) {
                Some(tag) if mac.verify_slice(&tag).is_ok() => Ok(()),
                _ => Err(
                    "the head's MAC does not verify: the head was forged or written with another key"
                        .to_string(),
                ),
            }
        }
    }
}

fn read_head(path: &Path) -> Result<Option<Head>, LogError> {
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
const HEAD_BYTES: usize = 256;
/// `O_NOFOLLOW`: the head is never written through a symbolic link planted in its place.
const NOFOLLOW: i32 = rustix::fs::OFlags::NOFOLLOW.bits() as i32;

fn write_head(state_dir: &Path, seq: u64, hash: &str, key: Option<&Key>) -> Result<(), LogError> {
    let path = state_dir.join(HEAD_FILE);
    let mac = match key {
        Some(k) => hex(&head_mac(k, seq, hash)
            .map_err(|e| corrupt(&path, e))?
            .finalize()
            .into_bytes()),
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
                .and_then(|()| f.sync_data())
                .map_err(io(&path));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        // A symbolic link (ELOOP) or anything else unexpected is not written through.
        Err(e) => return Err(io(&path)(e)),
    }
    let tmp = state_dir.join(format!("{HEAD_FILE}.{}.tmp", uuid::Uuid::new_v4().simple()));
    let write = || -> std::io::Result<()> {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(&path)(e)
    })?;
    sync_dir(state_dir)
}

/// `Ok(None)` when the key file does not exist.
fn load_key(path: &Path) -> Result<Option<Key>, LogError> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(path)(e)),
    };
    let meta = file.metadata().map_err(io(path))?;
    if !meta.is_file() {
        return Err(corrupt(path, "the decision-log key is not a regular file"));
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(LogError::KeyPermissions {
            path: path.to_path_buf(),
            mode,
        });
    }
    let mut text = String::new();
    file.read_to_string(&mut text).map_err(io(path))?;
    let bytes = unhex(text.trim_end_matches('\n'))
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .ok_or_else(|| corrupt(path, "the decision-log key must be 64 lowercase hex digits"))?;
    Ok(Some(Key(bytes)))
}

/// The user's secret key (created on first use), for other authenticated state such as
/// the policy cache. Callers must derive their own key from it for domain separation.
pub fn user_key(path: &Path) -> Result<[u8; 32], LogError> {
    load_or_create_key(path).map(|k| k.0)
}

/// Creates the key on first use. Concurrent first uses race through `link`, which fails
/// rather than replacing, so every process ends up with the one key that won.
fn load_or_create_key(path: &Path) -> Result<Key, LogError> {
    if let Some(key) = load_key(path)? {
        return Ok(key);
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .ok_or_else(|| corrupt(path, "the key path has no directory"))?;
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io(dir))?;
    let tmp = dir.join(format!(".log.key.{}.tmp", uuid::Uuid::new_v4().simple()));
    let mut text = hex(&random_key());
    text.push('\n');
    let write = || -> std::io::Result<()> {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        match std::fs::hard_link(&tmp, path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(e),
        }
    };
    let written = write();
    let _ = std::fs::remove_file(&tmp);
    written.map_err(io(path))?;
    sync_dir(dir)?;
    load_key(path)?.ok_or_else(|| corrupt(path, "the decision-log key vanished after creation"))
}

fn random_key() -> [u8; 32] {
    let mut key = [0u8; 32];
    let urandom = File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut key));
    if urandom.is_err() {
        // Two v4 UUIDs: 244 bits from the OS generator behind `uuid`.
        key[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
        key[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    }
    key
}

/// Exclusive `flock` on `decisions.lock`, opened per call: the lock belongs to the open
/// file description, so threads of one process exclude each other as processes do.
#[derive(Debug)]
struct LogLock {
    file: File,
}

impl LogLock {
    /// The writers' lock.
    fn acquire(state_dir: &Path, timeout: Duration) -> Result<Self, LogError> {
        let path = state_dir.join(LOCK_FILE);
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
    fn shared(state_dir: &Path) -> Result<Option<Self>, LogError> {
        let path = state_dir.join(LOCK_FILE);
        match File::open(&path) {
            Ok(file) => Self::wait(
                file,
                path,
                FlockOperation::NonBlockingLockShared,
                LOCK_TIMEOUT,
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
                Ok(()) => return Ok(LogLock { file }),
                Err(e) if e == rustix::io::Errno::WOULDBLOCK || e == rustix::io::Errno::INTR => {}
                Err(e) => return Err(io(&path)(e.into())),
            }
            let waited = start.elapsed();
            if waited >= timeout {
                return Err(LogError::LockTimeout { path, waited });
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(5));
        }
    }
}

impl Drop for LogLock {
    fn drop(&mut self) {
        // Closing releases it too; unlocking first makes that independent of any
        // duplicate of the descriptor.
        let _ = rustix::fs::flock(&self.file, FlockOperation::Unlock);
    }
}

// ---------------------------------------------------------------------------------------
// Verify and tail

#[derive(Debug)]
struct Last {
    seq: u64,
    hash: String,
    file: PathBuf,
    line: u64,
}

/// Walks records in log order, checking each against the one before.
#[derive(Debug)]
struct Walk {
    problems: Vec<Problem>,
    records: u64,
    /// Whether any line has been seen (the first record must start at genesis).
    started: bool,
    /// After a malformed line the previous hash and seq are unknown; the next record
    /// re-anchors the walk instead of reporting a second, derived problem.
    resync: bool,
    prev: String,
    next_seq: u64,
    last: Option<Last>,
    /// The seq the head names, and the hash the log holds at that seq.
    head_seq: Option<u64>,
    hash_at_head_seq: Option<String>,
    capped: bool,
}

impl Walk {
    fn new(head_seq: Option<u64>) -> Self {
        Walk {
            problems: Vec::new(),
            records: 0,
            started: false,
            resync: false,
            prev: GENESIS.to_string(),
            next_seq: 1,
            last: None,
            head_seq,
            hash_at_head_seq: None,
            capped: false,
        }
    }

    fn problem(&mut self, file: &Path, line: Option<u64>, kind: ProblemKind, message: String) {
        if self.problems.len() >= MAX_PROBLEMS {
            self.capped = true;
            return;
        }
        self.problems.push(Problem {
            file: file.to_path_buf(),
            line,
            kind,
            message,
        });
    }

    fn file(&mut self, path: &Path, sealed_seq: Option<u64>) -> Result<(), LogError> {
        let file = File::open(path).map_err(io(path))?;
        let mut reader = BufReader::new(file);
        let mut buf = Vec::new();
        let mut line_no = 0u64;
        loop {
            buf.clear();
            if reader.read_until(b'\n', &mut buf).map_err(io(path))? == 0 {
                break;
            }
            line_no += 1;
            if buf.pop() != Some(b'\n') {
                self.problem(
                    path,
                    Some(line_no),
                    ProblemKind::Malformed,
                    "incomplete last line (no newline): a torn write or a cut".to_string(),
                );
                self.started = true;
                self.resync = true;
                break;
            }
            let rec = match parse_line(&buf) {
                Ok(rec) => rec,
                Err(message) => {
                    self.problem(path, Some(line_no), ProblemKind::Malformed, message);
                    self.started = true;
                    self.resync = true;
                    continue;
                }
            };
            if let (1, Some(expected)) = (line_no, sealed_seq) {
                if rec.seq != expected {
                    self.problem(
                        path,
                        Some(line_no),
                        ProblemKind::Malformed,
                        format!(
                            "the segment is named for seq {expected} but starts at seq {}",
                            rec.seq
                        ),
                    );
                }
            }
            if let Err((kind, message)) = check_hash(&buf, &rec) {
                self.problem(path, Some(line_no), kind, message);
            }
            self.chain(path, line_no, &rec);
        }
        if line_no == 0 && sealed_seq.is_some() {
            self.problem(
                path,
                None,
                ProblemKind::Malformed,
                "empty sealed segment".to_string(),
            );
        }
        Ok(())
    }

    fn chain(&mut self, path: &Path, line_no: u64, rec: &LoggedRecord) {
        if !self.started {
            if rec.seq != 1 || rec.prev != GENESIS {
                self.problem(
                    path,
                    Some(line_no),
                    ProblemKind::BrokenChain,
                    format!(
                        "the log starts at seq {} with prev {}, not at seq 1 from genesis: earlier records (or a whole sealed segment) are missing",
                        rec.seq, rec.prev
                    ),
                );
            }
        } else if !self.resync {
            if rec.prev != self.prev {
                self.problem(
                    path,
                    Some(line_no),
                    ProblemKind::BrokenChain,
                    format!(
                        "seq {}: prev {} is not the hash of the record before it ({}): a record was deleted, inserted or reordered",
                        rec.seq, rec.prev, self.prev
                    ),
                );
            }
            if rec.seq != self.next_seq {
                self.problem(
                    path,
                    Some(line_no),
                    ProblemKind::SeqGap,
                    format!("expected seq {}, found {}", self.next_seq, rec.seq),
                );
            }
        }
        self.started = true;
        self.resync = false;
        self.prev = rec.hash.clone();
        self.next_seq = rec.seq.saturating_add(1);
        self.records += 1;
        if self.head_seq == Some(rec.seq) {
            self.hash_at_head_seq = Some(rec.hash.clone());
        }
        self.last = Some(Last {
            seq: rec.seq,
            hash: rec.hash.clone(),
            file: path.to_path_buf(),
            line: line_no,
        });
    }
}

/// Checks the whole log: every record's hash, the chain and seq across segments, and
/// that the head (authenticated with the key at `key_path`, which is never created
/// here) names the last record. I/O failures are errors; everything about the content
/// is reported as a [`Problem`].
pub fn verify(state_dir: &Path, key_path: Option<&Path>) -> Result<VerifyReport, LogError> {
    let _lock = LogLock::shared(state_dir)?;
    let head_path = state_dir.join(HEAD_FILE);
    let mut report = VerifyReport::default();
    let mut head_problems = Vec::new();
    let head = match read_head(&head_path) {
        Ok(h) => h,
        Err(LogError::Corrupt { reason, .. }) => {
            head_problems.push(Problem {
                file: head_path.clone(),
                line: None,
                kind: ProblemKind::Malformed,
                message: reason,
            });
            None
        }
        Err(e) => return Err(e),
    };
    let head_unreadable = !head_problems.is_empty();

    let mut walk = Walk::new(head.as_ref().map(|h| h.seq));
    for (seq, path) in list_segments(state_dir)? {
        walk.file(&path, Some(seq))?;
        report.segments += 1;
    }
    let active = state_dir.join(ACTIVE_FILE);
    match std::fs::symlink_metadata(&active) {
        Ok(_) => {
            walk.file(&active, None)?;
            report.segments += 1;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(&active)(e)),
    }

    match (&head, &walk.last) {
        (None, Some(last)) if !head_unreadable => head_problems.push(Problem {
            file: head_path.clone(),
            line: None,
            kind: ProblemKind::MissingHead,
            message: format!(
                "no head, but the log holds records up to seq {}: removal of records from the end cannot be detected",
                last.seq
            ),
        }),
        (None, _) => {}
        (Some(h), None) => head_problems.push(Problem {
            file: head_path.clone(),
            line: None,
            kind: ProblemKind::Truncated,
            message: format!("the head names seq {} but the log holds no records", h.seq),
        }),
        (Some(h), Some(last)) if h.seq > last.seq => head_problems.push(Problem {
            file: last.file.clone(),
            line: None,
            kind: ProblemKind::Truncated,
            message: format!(
                "the head names seq {} but the log ends at seq {} (line {}): {} record(s) removed from the end",
                h.seq,
                last.seq,
                last.line,
                h.seq - last.seq
            ),
        }),
        (Some(h), Some(last)) if h.seq < last.seq => {
            let at_head = match &walk.hash_at_head_seq {
                Some(hash) if *hash == h.hash => "matches",
                Some(_) => "does not match",
                None => "is absent from",
            };
            head_problems.push(Problem {
                file: head_path.clone(),
                line: None,
                kind: ProblemKind::HeadMismatch,
                message: format!(
                    "the log continues past the head (head seq {}, last seq {}; the head's record {at_head} the log): a crash between write and head update, or records appended without the key",
                    h.seq, last.seq
                ),
            });
        }
        (Some(h), Some(last)) if h.hash != last.hash => head_problems.push(Problem {
            file: head_path.clone(),
            line: None,
            kind: ProblemKind::HeadMismatch,
            message: format!(
                "the head names hash {} for seq {}, the log holds {}",
                h.hash, h.seq, last.hash
            ),
        }),
        (Some(_), Some(_)) => {}
    }

    if let Some(h) = &head {
        match key_path {
            Some(kp) => {
                let outcome = match load_key(kp)? {
                    Some(key) => check_head_mac(h, Some(&key)),
                    None => Err(format!(
                        "the key {} does not exist, so the head cannot be authenticated",
                        kp.display()
                    )),
                };
                match outcome {
                    Ok(()) => report.head_signed = true,
                    Err(message) => head_problems.push(Problem {
                        file: head_path.clone(),
                        line: None,
                        kind: ProblemKind::BadMac,
                        message,
                    }),
                }
            }
            None => report.warnings.push(
                "no key given: the head is not authenticated, so truncation detection is only as strong as the head file"
                    .to_string(),
            ),
        }
    }
    if walk.capped {
        report
            .warnings
            .push(format!("only the first {MAX_PROBLEMS} problems are listed"));
    }
    report.records = walk.records;
    report.problems = walk.problems;
    report.problems.extend(head_problems);
    Ok(report)
}

/// The last `n` records across segments, oldest first. Parses but does not verify (that
/// is [`verify`]'s job); an unterminated final line is an uncommitted write and skipped.
pub fn tail(state_dir: &Path, n: usize) -> Result<Vec<LoggedRecord>, LogError> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let _lock = LogLock::shared(state_dir)?;
    let mut files: Vec<PathBuf> = list_segments(state_dir)?
        .into_iter()
        .map(|(_, p)| p)
        .collect();
    let active = state_dir.join(ACTIVE_FILE);
    if active.exists() {
        files.push(active);
    }
    let mut chunks: Vec<Vec<LoggedRecord>> = Vec::new();
    let mut have = 0usize;
    for path in files.iter().rev() {
        let mut recs = read_records(path)?;
        let take = (n - have).min(recs.len());
        let kept = recs.split_off(recs.len() - take);
        have += kept.len();
        chunks.push(kept);
        if have == n {
            break;
        }
    }
    Ok(chunks.into_iter().rev().flatten().collect())
}

fn read_records(path: &Path) -> Result<Vec<LoggedRecord>, LogError> {
    let file = File::open(path).map_err(io(path))?;
    let mut reader = BufReader::new(file);
    let mut buf = Vec::new();
    let mut out = Vec::new();
    let mut line_no = 0u64;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).map_err(io(path))? == 0 {
            break;
        }
        line_no += 1;
        if buf.pop() != Some(b'\n') {
            break;
        }
        let rec = parse_line(&buf).map_err(|m| corrupt(path, format!("line {line_no}: {m}")))?;
        out.push(rec);
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// Time

/// `YYYY-MM-DDTHH:MM:SS.ffffffZ` (UTC, microseconds). Times before 1970 clamp to it.
fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (year, month, day) = civil_from_days(secs / 86_400);
    let rem = secs % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:06}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_micros()
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm,
/// restricted to non-negative days).
pub fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

// ---------------------------------------------------------------------------------------
// Masking

/// Names whose values are secrets: in `NAME=value`, `--name value`, and object keys.
const SECRET_NAMES: &str = "password|passwd|secret|token|api_key|apikey|key";
/// Capture groups that may hold the secret part of a match (one per quoting style).
const SECRET_GROUPS: [&str; 3] = ["s", "dq", "sq"];

/// Literals (lower-case) at least one of which every match of the paired pattern
/// contains. A pattern is compiled and run only when its literal occurs, so the common
/// record (`cargo test`, `src/lib.rs`) costs no regex compilation in a hook process.
const NAME_TRIGGERS: &[&str] = &["pass", "secret", "token", "key"];

fn mask_sources() -> Vec<(&'static [&'static str], String)> {
    let names = format!("(?:{SECRET_NAMES})");
    vec![
        // PEM, OpenSSH and PGP private keys; an unterminated block is masked to the end.
        (&["-----begin"], r"(?P<s>-----BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|\z))".to_string()),
        (&["gh"], r"(?P<s>(?P<p>gh[pousr]_)[A-Za-z0-9]{20,})".to_string()),
        (&["github_pat_"], r"(?P<s>(?P<p>github_pat_)[A-Za-z0-9_]{20,})".to_string()),
        (&["akia", "asia"], r"(?P<s>(?P<p>A(?:KIA|SIA))[A-Z0-9]{16})".to_string()),
        (&["xox"], r"(?P<s>(?P<p>xox[abpsr]-)[A-Za-z0-9-]{10,})".to_string()),
        // OpenAI and Anthropic; `\b` keeps words like "task-…" out.
        (&["sk-"], r"\b(?P<s>(?P<p>sk-(?:ant-|proj-)?)[A-Za-z0-9_-]{16,})".to_string()),
        (&["k_live_", "k_test_"], r"\b(?P<s>(?P<p>[sr]k_(?:live|test)_)[A-Za-z0-9]{10,})".to_string()),
        (&["aiza"], r"(?P<s>(?P<p>AIza)[0-9A-Za-z_-]{35})".to_string()),
        (&["eyj"], r"(?P<s>(?P<p>eyJ)[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*)".to_string()),
        (&["authorization"], r#"(?i)\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest|negotiate)\s+)?(?P<s>[^\s"',;]+)"#.to_string()),
        (&["bearer"], r"(?i)\bbearer\s+(?P<s>[A-Za-z0-9._~+/=-]{8,})".to_string()),
        // URL userinfo: greedy up to the last `@` of the authority, so an unescaped `@`
        // in the password does not leave its tail in clear.
        (&["://"], r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@]*:(?P<s>[^\s/?#]+)@".to_string()),
        (&["-u"], r#"(?:^|\s)(?:-u|--user|--proxy-user)(?:\s+|=)["']?[^\s:"']*:(?P<s>[^\s"']+)"#.to_string()),
        (NAME_TRIGGERS, format!(
            r#"(?i)[A-Za-z0-9_.-]*{names}[A-Za-z0-9_.-]*["']?\s*(?::=|=|:)\s*(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<s>[^\s"'&;,]+))"#
        )),
        (NAME_TRIGGERS, format!(
            r#"(?i)(?:^|\s)--?[A-Za-z0-9_-]*{names}[A-Za-z0-9_-]*\s+(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<s>[^\s"'-][^\s"']*))"#
        )),
    ]
}

struct Mask {
    triggers: &'static [&'static str],
    source: String,
    /// `None` inside only if the pattern failed to compile.
    re: OnceLock<Option<Regex>>,
}

static MASKS: LazyLock<Vec<Mask>> = LazyLock::new(|| {
    mask_sources()
        .into_iter()
        .map(|(triggers, source)| Mask {
            triggers,
            source,
            re: OnceLock::new(),
        })
        .collect()
});

/// Whether `s` contains one of the (ASCII, lower-case) secret names, ignoring ASCII case.
fn contains_secret_name(lower: &str) -> bool {
    SECRET_NAMES.split('|').any(|n| lower.contains(n))
}

/// A shell variable reference names a secret without containing it.
fn is_var_ref(s: &str) -> bool {
    let Some(name) = s.strip_prefix('$') else {
        return false;
    };
    let name = name
        .strip_prefix('{')
        .and_then(|n| n.strip_suffix('}'))
        .unwrap_or(name);
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A key or variable named like a secret. Non-ASCII text counts as one: Unicode case
/// folding (`ſ`, `K`) could spell a name that ASCII comparison misses.
fn is_secret_name(s: &str) -> bool {
    !s.is_ascii() || contains_secret_name(&s.to_ascii_lowercase())
}

/// `--password`, `-api-key`, `--GITHUB_TOKEN`: a flag whose name holds a secret name.
fn is_secret_flag(s: &str) -> bool {
    let Some(rest) = s.strip_prefix("--").or_else(|| s.strip_prefix('-')) else {
        return false;
    };
    !s.is_ascii()
        || (rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            && contains_secret_name(&rest.to_ascii_lowercase()))
}

/// A byte range to mask; the first `label` bytes are a public token prefix (`ghp_`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: usize,
    end: usize,
    label: usize,
}

/// Overlapping ranges merged; `None` if the patterns are unavailable.
fn secret_spans(s: &str) -> Option<Vec<Span>> {
    let lower = s.to_ascii_lowercase();
    let ascii = s.is_ascii();
    let mut spans = Vec::new();
    for mask in MASKS.iter() {
        if ascii && !mask.triggers.iter().any(|t| lower.contains(t)) {
            continue;
        }
        let re = mask
            .re
            .get_or_init(|| Regex::new(&mask.source).ok())
            .as_ref()?;
        for caps in re.captures_iter(s) {
            let Some(m) = SECRET_GROUPS.iter().find_map(|g| caps.name(g)) else {
                continue;
            };
            if m.as_str().is_empty() || is_var_ref(m.as_str()) {
                continue;
            }
            let label = caps
                .name("p")
                .filter(|p| p.start() == m.start())
                .map_or(0, |p| p.len());
            spans.push(Span {
                start: m.start(),
                end: m.end(),
                label,
            });
        }
    }
    spans.sort_by_key(|sp| (sp.start, std::cmp::Reverse(sp.end)));
    let mut merged: Vec<Span> = Vec::with_capacity(spans.len());
    for sp in spans {
        match merged.last_mut() {
            Some(cur) if sp.start < cur.end => {
                if sp.end > cur.end {
                    // The label described the old extent, not the union.
                    cur.end = sp.end;
                    cur.label = 0;
                } else if sp.start == cur.start && sp.end == cur.end {
                    cur.label = cur.label.max(sp.label);
                }
            }
            _ => merged.push(sp),
        }
    }
    Some(merged)
}

fn tag(secret: &str) -> String {
    let digest = sha256_hex(secret.as_bytes());
    digest.get(..8).unwrap_or_default().to_string()
}

fn masked(secret: &str, label: usize) -> String {
    let prefix = secret.get(..label).unwrap_or_default();
    format!("{prefix}****{}", tag(secret))
}

/// Masks the whole of `s`, keeping a token prefix if `s` is exactly one token.
fn mask_whole(s: &str) -> String {
    let label = secret_spans(s)
        .unwrap_or_default()
        .into_iter()
        .find(|sp| sp.start == 0 && sp.end == s.len())
        .map_or(0, |sp| sp.label);
    masked(s, label)
}

/// Replaces every secret in `s` with `****` and the first 8 hex digits of the secret's
/// sha256 (after a public token prefix such as `ghp_`, which is kept), so equal secrets
/// stay correlatable without being recoverable.
pub fn mask_secrets(s: &str) -> String {
    let Some(spans) = secret_spans(s) else {
        // Without the patterns nothing can be told apart; hide everything.
        return if s.is_empty() {
            String::new()
        } else {
            masked(s, 0)
        };
    };
    if spans.is_empty() {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut at = 0;
    for sp in spans {
        out.push_str(s.get(at..sp.start).unwrap_or_default());
        out.push_str(&masked(
            s.get(sp.start..sp.end).unwrap_or_default(),
            sp.label,
        ));
        at = sp.end;
    }
    out.push_str(s.get(at..).unwrap_or_default());
    out
}

/// [`mask_secrets`] on every string (keys included), plus what only structure reveals:
/// the value of an object key named like a secret (`{"GITHUB_TOKEN": "…"}`), and the
/// argv element after `--password`, `-u user:`, `Bearer`, or `Authorization:`.
pub fn mask_value(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(mask_secrets(s)),
        Value::Array(items) => {
            let mut prev: Option<&str> = None;
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                let m = match (item, prev) {
                    (Value::String(s), Some(p)) => mask_after(p, s)
                        .map_or_else(|| Value::String(mask_secrets(s)), Value::String),
                    _ => mask_value(item),
                };
                out.push(m);
                prev = item.as_str();
            }
            Value::Array(out)
        }
        Value::Object(map) => map
            .iter()
            .map(|(k, val)| {
                let m = match val {
                    Value::String(s) if !s.is_empty() && !is_var_ref(s) && is_secret_name(k) => {
                        Value::String(mask_whole(s))
                    }
                    _ => mask_value(val),
                };
                (mask_secrets(k), m)
            })
            .collect(),
        other => other.clone(),
    }
}

/// The masked form of argv element `s` when the element before it says it is a secret.
fn mask_after(prev: &str, s: &str) -> Option<String> {
    if s.is_empty() || is_var_ref(s) {
        return None;
    }
    let lower = prev.to_ascii_lowercase();
    if is_secret_flag(prev) && !s.starts_with('-') {
        return Some(mask_whole(s));
    }
    if matches!(lower.as_str(), "-u" | "--user" | "--proxy-user") {
        let (user, pass) = s.split_once(':')?;
        return (!pass.is_empty() && !is_var_ref(pass))
            .then(|| format!("{}:{}", mask_secrets(user), mask_whole(pass)));
    }
    if matches!(lower.as_str(), "bearer" | "basic") {
        return Some(mask_whole(s));
    }
    let scheme = matches!(
        s.to_ascii_lowercase().as_str(),
        "bearer" | "basic" | "token" | "digest" | "negotiate"
    );
    if lower.trim_end().ends_with("authorization:") && !scheme {
        return Some(mask_whole(s));
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    const NOW: &str = "2025-01-02T03:04:05.000000Z";

    struct Fixture {
        _dirs: (tempfile::TempDir, tempfile::TempDir),
        state: PathBuf,
        key: PathBuf,
    }

    fn fixture() -> Fixture {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        Fixture {
            state: project.path().join(".contextos").join("state"),
            key: home.path().join("contextos").join("log.key"),
            _dirs: (project, home),
        }
    }

    fn opts(f: &Fixture, rotate_bytes: u64) -> LogOptions {
        LogOptions {
            key_path: Some(f.key.clone()),
            rotate_bytes,
            now: Some(NOW.to_string()),
            lock_timeout: LOCK_TIMEOUT,
        }
    }

    fn rec(i: usize) -> DecisionRecord {
        DecisionRecord {
            agent: "claude-code".into(),
            event: "PreToolUse".into(),
            tool: "Bash".into(),
            request: json!({"domain": "exec", "argv": ["cargo", "test", "--release"], "n": i}),
            verdict: if i.is_multiple_of(3) { "deny" } else { "allow" }.into(),
            rules: vec![format!("rule-{i}")],
            duration_us: 42,
        }
    }

    fn fill(f: &Fixture, n: usize, rotate_bytes: u64) -> Vec<LoggedRecord> {
        (1..=n)
            .map(|i| append(&f.state, &rec(i), &opts(f, rotate_bytes)).unwrap())
            .collect()
    }

    fn active(f: &Fixture) -> PathBuf {
        f.state.join(ACTIVE_FILE)
    }

    fn lines(path: &Path) -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }

    fn write_lines(path: &Path, lines: &[String]) {
        let mut text = lines.join("\n");
        if !lines.is_empty() {
            text.push('\n');
        }
        std::fs::write(path, text).unwrap();
    }

    fn check(f: &Fixture) -> VerifyReport {
        verify(&f.state, Some(&f.key)).unwrap()
    }

    fn kinds(r: &VerifyReport) -> Vec<ProblemKind> {
        r.problems.iter().map(|p| p.kind).collect()
    }

    fn assert_clean(r: &VerifyReport, records: u64) {
        assert!(r.problems.is_empty(), "{:#?}", r.problems);
        assert_eq!(r.records, records);
    }

    #[test]
    fn the_head_is_rewritten_in_place_and_never_through_a_symlink() {
        let f = fixture();
        fill(&f, 3, 0);
        let head = f.state.join(HEAD_FILE);
        assert_eq!(std::fs::metadata(&head).unwrap().len(), HEAD_BYTES as u64);
        assert!(verify(&f.state, Some(&f.key)).unwrap().is_valid());
        // A link planted in the head's place: the append refuses and the target is untouched.
        let victim = f.state.join("victim.txt");
        std::fs::write(&victim, "precious").unwrap();
        std::fs::remove_file(&head).unwrap();
        std::os::unix::fs::symlink(&victim, &head).unwrap();
        assert!(append(&f.state, &rec(4), &opts(&f, 0)).is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    }

    #[test]
    fn constants_and_patterns_are_sound() {
        assert_eq!(GENESIS.len(), 64);
        assert!(is_hex64(GENESIS));
        for m in MASKS.iter() {
            assert!(Regex::new(&m.source).is_ok(), "{}", m.source);
        }
        assert!(is_var_ref("$GITHUB_TOKEN") && is_var_ref("${A_1}") && !is_var_ref("$1x"));
        assert!(
            is_secret_flag("--api-key")
                && is_secret_flag("-PASSWORD")
                && !is_secret_flag("--force")
        );
        assert!(is_secret_name("GITHUB_TOKEN") && !is_secret_name("session"));
        assert_eq!(segment_name(7), "decisions.000000000007.jsonl");
    }

    #[test]
    fn clean_chain_verifies_and_tails() {
        let f = fixture();
        let written = fill(&f, 10, 0);
        assert_eq!(written[0].prev, GENESIS);
        for pair in written.windows(2) {
            assert_eq!(pair[1].prev, pair[0].hash);
            assert_eq!(pair[1].seq, pair[0].seq + 1);
        }
        let r = check(&f);
        assert_clean(&r, 10);
        assert!(r.head_signed);
        assert_eq!(r.segments, 1);
        assert!(r.warnings.is_empty());
        let last3 = tail(&f.state, 3).unwrap();
        assert_eq!(last3.iter().map(|r| r.seq).collect::<Vec<_>>(), [8, 9, 10]);
        assert_eq!(last3[2], written[9]);
        assert_eq!(tail(&f.state, 100).unwrap().len(), 10);
    }

    #[test]
    fn line_format_follows_the_documented_rule() {
        let f = fixture();
        fill(&f, 2, 0);
        let line = lines(&active(&f)).remove(1);
        assert!(line.starts_with("{\"seq\":2,\"time\":\"2025-01-02T03:04:05.000000Z\",\"agent\":"));
        let keys: Vec<String> = serde_json::from_str::<serde_json::Map<String, Value>>(&line)
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys.len(), 11);
        // Independent recomputation: drop the 75-byte hash suffix, close the object.
        let (body, suffix) = line.split_at(line.len() - HASH_SUFFIX_LEN);
        assert!(suffix.starts_with(",\"hash\":\"") && suffix.ends_with("\"}"));
        let hash = &suffix[9..73];
        assert_eq!(sha256_hex(format!("{body}}}").as_bytes()), hash);
        let head: Head =
            serde_json::from_slice(&std::fs::read(f.state.join(HEAD_FILE)).unwrap()).unwrap();
        assert_eq!(head.seq, 2);
        assert_eq!(head.hash, hash);
        assert_eq!(head.mac.len(), 64);
    }

    #[test]
    fn files_are_private() {
        let f = fixture();
        fill(&f, 1, 0);
        for p in [
            active(&f),
            f.state.join(HEAD_FILE),
            f.state.join(LOCK_FILE),
            f.key.clone(),
        ] {
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", p.display());
        }
        let key_text = std::fs::read_to_string(&f.key).unwrap();
        assert_eq!(key_text.len(), 65);
        assert!(is_hex64(key_text.trim_end()));
    }

    #[test]
    fn edited_verdict_is_a_hash_mismatch_at_that_line() {
        let f = fixture();
        fill(&f, 5, 0);
        let mut ls = lines(&active(&f));
        assert!(ls[1].contains("\"verdict\":\"allow\""));
        ls[1] = ls[1].replacen("\"verdict\":\"allow\"", "\"verdict\":\"allox\"", 1);
        write_lines(&active(&f), &ls);
        let r = check(&f);
        assert_eq!(kinds(&r), [ProblemKind::HashMismatch]);
        assert_eq!(r.problems[0].line, Some(2));
        assert_eq!(r.problems[0].file, active(&f));
        // The head still matches the last record, so appending is possible; the edit stays
        // on record.
        append(&f.state, &rec(6), &opts(&f, 0)).unwrap();
        assert_eq!(kinds(&check(&f)), [ProblemKind::HashMismatch]);
    }

    #[test]
    fn deleted_middle_line_breaks_the_chain() {
        let f = fixture();
        fill(&f, 5, 0);
        let mut ls = lines(&active(&f));
        ls.remove(2);
        write_lines(&active(&f), &ls);
        let r = check(&f);
        assert_eq!(kinds(&r), [ProblemKind::BrokenChain, ProblemKind::SeqGap]);
        assert!(r.problems.iter().all(|p| p.line == Some(3)));
    }

    #[test]
    fn swapped_lines_break_the_chain() {
        let f = fixture();
        fill(&f, 5, 0);
        let mut ls = lines(&active(&f));
        ls.swap(1, 2);
        write_lines(&active(&f), &ls);
        let r = check(&f);
        assert!(kinds(&r).contains(&ProblemKind::BrokenChain));
        assert_eq!(r.problems[0].line, Some(2));
    }

    #[test]
    fn removed_last_line_is_truncation_and_blocks_appends() {
        let f = fixture();
        fill(&f, 5, 0);
        let mut ls = lines(&active(&f));
        ls.pop();
        write_lines(&active(&f), &ls);
        assert_eq!(kinds(&check(&f)), [ProblemKind::Truncated]);
        let err = append(&f.state, &rec(6), &opts(&f, 0)).unwrap_err();
        assert!(matches!(err, LogError::Tampered { .. }), "{err}");
    }

    #[test]
    fn head_rewritten_without_the_key_is_a_bad_mac() {
        let f = fixture();
        let written = fill(&f, 5, 0);
        let mut ls = lines(&active(&f));
        ls.pop();
        write_lines(&active(&f), &ls);
        for mac in [String::new(), "ab".repeat(32)] {
            let forged = json!({"seq": 4, "hash": written[3].hash, "mac": mac});
            std::fs::write(f.state.join(HEAD_FILE), forged.to_string()).unwrap();
            let r = check(&f);
            assert_eq!(kinds(&r), [ProblemKind::BadMac], "{:#?}", r.problems);
            assert!(!r.head_signed);
            let err = append(&f.state, &rec(6), &opts(&f, 0)).unwrap_err();
            assert!(matches!(err, LogError::Tampered { .. }), "{err}");
        }
        // A different key is as good as none.
        let other = tempfile::tempdir().unwrap();
        let other_key = other.path().join("log.key");
        append(
            &f.state,
            &rec(6),
            &LogOptions {
                key_path: Some(other_key.clone()),
                ..opts(&f, 0)
            },
        )
        .unwrap_err();
        reseal(
            &f.state,
            &LogOptions {
                key_path: Some(other_key),
                ..opts(&f, 0)
            },
        )
        .unwrap();
        assert_eq!(kinds(&check(&f)), [ProblemKind::BadMac]);
    }

    #[test]
    fn rotation_keeps_one_chain_across_segments() {
        let f = fixture();
        let line_len = {
            let probe = fixture();
            fill(&probe, 1, 0);
            std::fs::metadata(active(&probe)).unwrap().len()
        };
        let written = fill(&f, 20, line_len * 3 + 10);
        let segs = list_segments(&f.state).unwrap();
        assert!(segs.len() >= 5, "{segs:?}");
        assert_eq!(segs[0].0, 1);
        for (seq, path) in &segs {
            let first: LoggedRecord = serde_json::from_str(&lines(path)[0]).unwrap();
            assert_eq!(first.seq, *seq);
            assert!(std::fs::metadata(path).unwrap().len() <= line_len * 3 + 10);
        }
        // The first record of every later file chains to the last of the one before.
        let first_active: LoggedRecord = serde_json::from_str(&lines(&active(&f))[0]).unwrap();
        assert_eq!(
            first_active.prev,
            written[first_active.seq as usize - 2].hash
        );
        let r = check(&f);
        assert_clean(&r, 20);
        assert_eq!(r.segments, segs.len() + 1);
        let t = tail(&f.state, 7).unwrap();
        assert_eq!(
            t.iter().map(|r| r.seq).collect::<Vec<_>>(),
            (14..=20).collect::<Vec<_>>()
        );
        assert_eq!(tail(&f.state, 50).unwrap(), written);
    }

    #[test]
    fn deleting_the_oldest_segment_is_detected() {
        let f = fixture();
        fill(&f, 12, 1200);
        let segs = list_segments(&f.state).unwrap();
        assert!(segs.len() >= 2);
        std::fs::remove_file(&segs[0].1).unwrap();
        let r = check(&f);
        assert_eq!(kinds(&r), [ProblemKind::BrokenChain]);
        assert_eq!(r.problems[0].file, segs[1].1);
        assert_eq!(r.problems[0].line, Some(1));
    }

    #[test]
    fn deleting_a_middle_segment_is_detected() {
        let f = fixture();
        fill(&f, 12, 1200);
        let segs = list_segments(&f.state).unwrap();
        assert!(segs.len() >= 3);
        std::fs::remove_file(&segs[1].1).unwrap();
        let r = check(&f);
        assert_eq!(kinds(&r), [ProblemKind::BrokenChain, ProblemKind::SeqGap]);
        assert_eq!(r.problems[0].file, segs[2].1);
    }

    #[test]
    fn deleting_the_active_file_is_truncation() {
        let f = fixture();
        fill(&f, 12, 1200);
        std::fs::remove_file(active(&f)).unwrap();
        assert_eq!(kinds(&check(&f)), [ProblemKind::Truncated]);
        append(&f.state, &rec(13), &opts(&f, 1200)).unwrap_err();
    }

    #[test]
    fn empty_state_is_a_valid_empty_log() {
        let f = fixture();
        let r = check(&f);
        assert_clean(&r, 0);
        assert_eq!(r.segments, 0);
        assert!(tail(&f.state, 5).unwrap().is_empty());
        // Verification never creates the key.
        assert!(!f.key.exists());
    }

    #[test]
    fn unsigned_mode_works_but_says_what_it_cannot_do() {
        let f = fixture();
        let unsigned = LogOptions {
            key_path: None,
            ..opts(&f, 0)
        };
        for i in 1..=3 {
            append(&f.state, &rec(i), &unsigned).unwrap();
        }
        let r = verify(&f.state, None).unwrap();
        assert_clean(&r, 3);
        assert!(!r.head_signed);
        assert!(r.warnings[0].contains("only as strong as the head file"));
        // With a key, an unsigned head is indistinguishable from a rewritten one.
        assert_eq!(kinds(&check(&f)), [ProblemKind::BadMac]);
        append(&f.state, &rec(4), &opts(&f, 0)).unwrap_err();
        // Signed → unsigned is refused too, and a missing head is recovered without a key.
        reseal(&f.state, &opts(&f, 0)).unwrap();
        append(&f.state, &rec(4), &unsigned).unwrap_err();
        std::fs::remove_file(f.state.join(HEAD_FILE)).unwrap();
        append(&f.state, &rec(4), &unsigned).unwrap();
        assert_clean(&verify(&f.state, None).unwrap(), 4);
    }

    #[test]
    fn a_lost_head_update_is_adopted() {
        let f = fixture();
        fill(&f, 3, 0);
        let old_head = std::fs::read(f.state.join(HEAD_FILE)).unwrap();
        append(&f.state, &rec(4), &opts(&f, 0)).unwrap();
        std::fs::write(f.state.join(HEAD_FILE), old_head).unwrap();
        assert_eq!(kinds(&check(&f)), [ProblemKind::HeadMismatch]);
        append(&f.state, &rec(5), &opts(&f, 0)).unwrap();
        assert_clean(&check(&f), 5);
    }

    #[test]
    fn a_torn_last_line_is_cut_and_a_whole_one_kept() {
        let f = fixture();
        fill(&f, 3, 0);
        let mut file = OpenOptions::new().append(true).open(active(&f)).unwrap();
        file.write_all(b"{\"seq\":4,\"ti").unwrap();
        let r = check(&f);
        assert_eq!(kinds(&r), [ProblemKind::Malformed]);
        assert_eq!(r.problems[0].line, Some(4));
        append(&f.state, &rec(4), &opts(&f, 0)).unwrap();
        assert_clean(&check(&f), 4);

        // Only the newline of a complete record missing: the record stays.
        let len = std::fs::metadata(active(&f)).unwrap().len();
        OpenOptions::new()
            .write(true)
            .open(active(&f))
            .unwrap()
            .set_len(len - 1)
            .unwrap();
        append(&f.state, &rec(5), &opts(&f, 0)).unwrap();
        assert_clean(&check(&f), 5);
    }

    #[test]
    fn a_deleted_head_blocks_a_signed_log_until_resealed() {
        let f = fixture();
        fill(&f, 3, 0);
        std::fs::remove_file(f.state.join(HEAD_FILE)).unwrap();
        assert_eq!(kinds(&check(&f)), [ProblemKind::MissingHead]);
        let err = append(&f.state, &rec(4), &opts(&f, 0)).unwrap_err();
        assert!(matches!(err, LogError::Tampered { .. }), "{err}");
        assert_eq!(reseal(&f.state, &opts(&f, 0)).unwrap(), 3);
        assert_clean(&check(&f), 3);
        append(&f.state, &rec(4), &opts(&f, 0)).unwrap();
        assert_clean(&check(&f), 4);
    }

    #[test]
    fn a_crash_before_the_first_head_is_recovered() {
        let f = fixture();
        fill(&f, 1, 0);
        std::fs::remove_file(f.state.join(HEAD_FILE)).unwrap();
        append(&f.state, &rec(2), &opts(&f, 0)).unwrap();
        assert_clean(&check(&f), 2);
    }

    #[test]
    fn reseal_refuses_a_log_with_edited_records() {
        let f = fixture();
        fill(&f, 3, 0);
        let mut ls = lines(&active(&f));
        ls[0] = ls[0].replacen("claude-code", "claude-codf", 1);
        write_lines(&active(&f), &ls);
        let err = reseal(&f.state, &opts(&f, 0)).unwrap_err();
        assert!(err.to_string().contains("HashMismatch"), "{err}");
    }

    #[test]
    fn a_group_readable_key_is_refused() {
        let f = fixture();
        fill(&f, 1, 0);
        std::fs::set_permissions(&f.key, std::fs::Permissions::from_mode(0o640)).unwrap();
        let err = append(&f.state, &rec(2), &opts(&f, 0)).unwrap_err();
        assert!(
            matches!(err, LogError::KeyPermissions { mode: 0o640, .. }),
            "{err}"
        );
    }

    #[test]
    fn malformed_line_is_reported_once() {
        let f = fixture();
        fill(&f, 4, 0);
        let mut ls = lines(&active(&f));
        ls[1] = "not json".to_string();
        write_lines(&active(&f), &ls);
        let r = check(&f);
        assert_eq!(kinds(&r), [ProblemKind::Malformed]);
        assert_eq!(r.problems[0].line, Some(2));
    }

    #[test]
    fn the_clock_formats_rfc3339() {
        let at = |secs: u64, micros: u32| {
            rfc3339(UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_micros(micros.into()))
        };
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(at(951_782_400, 0), "2000-02-29T00:00:00.000000Z");
        assert_eq!(at(1_700_000_000, 123_456), "2023-11-14T22:13:20.123456Z");
        assert_eq!(at(4_107_542_399, 0), "2100-02-28T23:59:59.000000Z");
        assert_eq!(at(4_107_542_400, 0), "2100-03-01T00:00:00.000000Z");
        let f = fixture();
        let logged = append(
            &f.state,
            &rec(1),
            &LogOptions {
                now: None,
                ..opts(&f, 0)
            },
        )
        .unwrap();
        let shape = Regex::new(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$").unwrap();
        assert!(shape.is_match(&logged.time), "{}", logged.time);
        assert!(logged.time.as_str() > "2024");
    }

    /// Each entry: the text as the agent sent it, and the secret parts that must vanish.
    fn secret_samples() -> Vec<(&'static str, Vec<&'static str>)> {
        vec![
            ("git push https://ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5@github.com/o/r", vec!["aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"]),
            ("token gho_16C7e42F292c6912E7710c838347Ae178B4a", vec!["16C7e42F292c6912E7710c838347Ae178B4a"]),
            ("ghu_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", vec!["AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"]),
            ("ghs_ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210", vec!["ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210"]),
            ("ghr_1234567890abcdefghijABCDEFGHIJklmnop", vec!["1234567890abcdefghijABCDEFGHIJklmnop"]),
            ("gh auth login github_pat_11ABCDEFG0abcdefghijklmnopqrstuvwxyz0123456789_ABCDEFGHIJKLMNOP", vec!["11ABCDEFG0abcdefghijklmnopqrstuvwxyz0123456789_ABCDEFGHIJKLMNOP"]),
            ("aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE", vec!["IOSFODNN7EXAMPLE"]),
            ("creds ASIAY34FZKBOKMUTVV7A expire", vec!["Y34FZKBOKMUTVV7A"]),
            ("slack xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx now", vec!["1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"]),
            ("openai sk-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKL", vec!["abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKL"]),
            ("openai sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90_-xyz", vec!["Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90_-xyz"]),
            ("claude sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEfGh", vec!["api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEfGh"]),
            ("stripe sk_live_51H8abcdefghijklmnopqrstuv", vec!["51H8abcdefghijklmnopqrstuv"]),
            ("maps AIzaSyA1234567890abcdefghijklmnopqrstuv", vec!["SyA1234567890abcdefghijklmnopqrstuv"]),
            ("jwt eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", vec!["hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"]),
            ("cat > id <<EOF\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nQyNTUxOQAAACBcRkUwbGhNOW1yQnVkZ0dFWUNKeXZF\n-----END OPENSSH PRIVATE KEY-----\nEOF", vec!["b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", "QyNTUxOQAAACBcRkUwbGhNOW1yQnVkZ0dFWUNKeXZF"]),
            ("echo '-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEAunterminatedkeymaterial", vec!["MIIEowIBAAKCAQEAunterminatedkeymaterial"]),
            ("curl -H 'Authorization: Bearer opaque-token-value-123456' https://api.example.com", vec!["opaque-token-value-123456"]),
            ("curl -H \"Authorization: Basic dXNlcjpodW50ZXIy\" https://x", vec!["dXNlcjpodW50ZXIy"]),
            ("git clone https://alice:s3cr3tPassw0rd@example.com/repo.git", vec!["s3cr3tPassw0rd"]),
            ("psql postgres://app:p@ss:w0rd@db:5432/prod", vec!["p@ss:w0rd", "ss:w0rd"]),
            ("DB_PASSWORD=hunter2hunter2 ./run", vec!["hunter2hunter2"]),
            ("mysql --password correcthorsebattery -e 'select 1'", vec!["correcthorsebattery"]),
            ("deploy --token=tok3nvalue99 --yes", vec!["tok3nvalue99"]),
            ("export MY_API_KEY=\"quoted secret value\"", vec!["quoted secret value"]),
            ("config.yaml: client_secret: 'yamlSecretValue'", vec!["yamlSecretValue"]),
            ("{\"apiKey\": \"jsonInlineKey123\"}", vec!["jsonInlineKey123"]),
            ("curl -u admin:curlPassw0rd https://x", vec!["curlPassw0rd"]),
            ("https://api.example.com/v1?api_key=queryKey777&x=1", vec!["queryKey777"]),
        ]
    }

    #[test]
    fn masking_never_writes_a_secret_and_keeps_ordinary_text() {
        let f = fixture();
        let samples = secret_samples();
        let mut request = json!({
            "domain": "exec",
            "command": "cargo test --release && rm -rf target",
            "argv": ["mysql", "--password", "argvSecretPw1", "-u", "root:argvUserPw2", "--release"],
            "headers": ["Authorization:", "Bearer", "splitBearerToken99"],
            "env": {"GITHUB_TOKEN": "envTokenValue42", "HOME": "/home/alice", "NPM_TOKEN": "$NPM_TOKEN"},
            "samples": samples.iter().map(|(text, _)| *text).collect::<Vec<_>>(),
        });
        request["nested"] = json!([{"deep": [samples[0].0]}]);
        let logged = append(
            &f.state,
            &DecisionRecord { request, ..rec(1) },
            &opts(&f, 0),
        )
        .unwrap();
        let file = std::fs::read_to_string(active(&f)).unwrap();
        let extra = [
            "argvSecretPw1",
            "argvUserPw2",
            "splitBearerToken99",
            "envTokenValue42",
        ];
        for secret in samples.iter().flat_map(|(_, s)| s.iter()).chain(&extra) {
            assert!(!file.contains(secret), "{secret} leaked into {file}");
        }
        for (text, _) in &samples {
            assert!(!file.contains(&serde_json::to_string(text).unwrap()[1..text.len() - 1]));
        }
        for ordinary in [
            "cargo test --release && rm -rf target",
            "\"--release\"",
            "/home/alice",
            "$NPM_TOKEN",
            "\"mysql\",\"--password\"",
            "git clone https://alice:",
            "@example.com/repo.git",
            "ghp_****",
            "sk-ant-****",
            "AKIA****",
            "root:****",
            "\"Authorization:\",\"Bearer\",\"****",
        ] {
            assert!(file.contains(ordinary), "{ordinary} missing from {file}");
        }
        assert_eq!(
            logged.request["command"],
            "cargo test --release && rm -rf target"
        );
        assert_clean(&check(&f), 1);
    }

    #[test]
    fn masks_are_correlatable_and_ordinary_text_is_untouched() {
        let a = mask_secrets("DB_PASSWORD=hunter2hunter2 ./a");
        let b = mask_secrets("other --password hunter2hunter2");
        let c = mask_secrets("DB_PASSWORD=somethingelse1 ./a");
        let tag = &sha256_hex(b"hunter2hunter2")[..8];
        assert_eq!(a, format!("DB_PASSWORD=****{tag} ./a"));
        assert_eq!(b, format!("other --password ****{tag}"));
        assert_ne!(a, c);
        // A token inside an assignment keeps its kind and the same tag as on its own.
        let token = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5";
        let alone = mask_secrets(token);
        assert!(alone.starts_with("ghp_****"));
        assert_eq!(
            mask_secrets(&format!("GITHUB_TOKEN={token}")),
            format!("GITHUB_TOKEN={alone}")
        );
        for ordinary in [
            "cargo test --release",
            "rm -rf target",
            "git commit -m 'fix the risk-assessment-framework-handling'",
            "The basic idea is simple",
            "ls -la /tmp && echo done",
            "TOKEN=$GITHUB_TOKEN make",
            "curl -H \"Authorization: Bearer ${API_TOKEN}\" https://x",
            "https://example.com/path?q=1",
            "sort -u names.txt",
            "",
        ] {
            assert_eq!(mask_secrets(ordinary), ordinary);
        }
    }

    #[test]
    fn concurrent_appends_form_one_chain() {
        let f = Arc::new(fixture());
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let f = Arc::clone(&f);
                std::thread::spawn(move || {
                    for i in 0..50 {
                        append(&f.state, &rec(t * 1000 + i), &opts(&f, 0)).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let r = check(&f);
        assert_clean(&r, 400);
        assert!(r.head_signed);
        let seqs: Vec<u64> = lines(&active(&f))
            .iter()
            .map(|l| serde_json::from_str::<LoggedRecord>(l).unwrap().seq)
            .collect();
        assert_eq!(seqs, (1..=400).collect::<Vec<_>>());
    }

    #[test]
    fn readers_never_see_half_an_append() {
        let f = Arc::new(fixture());
        fill(&f, 1, 0);
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writers: Vec<_> = (0..3)
            .map(|t| {
                let f = Arc::clone(&f);
                std::thread::spawn(move || {
                    for i in 0..30 {
                        append(&f.state, &rec(t * 1000 + i), &opts(&f, 3000)).unwrap();
                    }
                })
            })
            .collect();
        let reader = {
            let (f, done) = (Arc::clone(&f), Arc::clone(&done));
            std::thread::spawn(move || {
                let mut rounds = 0;
                while !done.load(std::sync::atomic::Ordering::SeqCst) || rounds == 0 {
                    let r = check(&f);
                    assert!(r.problems.is_empty(), "{:#?}", r.problems);
                    let t = tail(&f.state, 5).unwrap();
                    assert!(t.windows(2).all(|w| w[1].prev == w[0].hash));
                    rounds += 1;
                }
            })
        };
        for w in writers {
            w.join().unwrap();
        }
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        reader.join().unwrap();
        assert_clean(&check(&f), 91);
    }

    #[test]
    fn concurrent_appends_with_rotation_form_one_chain() {
        let f = Arc::new(fixture());
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let f = Arc::clone(&f);
                std::thread::spawn(move || {
                    for i in 0..25 {
                        append(&f.state, &rec(t * 1000 + i), &opts(&f, 4000)).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let r = check(&f);
        assert_clean(&r, 100);
        assert!(r.segments > 3);
    }
}
