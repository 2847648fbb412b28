//! Writing the log: [`append`] one record in O(1), and [`reseal`] after a human looked.

use super::append_guard::{AppendGuard, GUARD_TIMEOUT};
use super::error::{corrupt, io, tampered, LogError};
use super::head::{check_head_mac, read_head, write_head, HEAD_FILE};
use super::mask::{mask_secrets, mask_value};
use super::record::{check_hash, parse_line, Body, DecisionRecord, LoggedRecord, GENESIS};
use super::segments::{
    list_segments, newest_last_line, repair_torn_tail, rotate, sync_dir, ACTIVE_FILE,
};
use super::verify::Walk;
use crate::clock::rfc3339;
use crate::faults::Recovery;
use crate::safe_fs::sha256_hex;
use crate::user_key::{self, UserKey};
use std::fs::OpenOptions;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const DEFAULT_ROTATE_BYTES: u64 = 16 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct LogOptions {
    /// Per-user HMAC key; created on first use. `None` leaves the head unsigned.
    pub key_path: Option<PathBuf>,
    /// Seal the active file before it would grow past this many bytes; 0 never rotates.
    pub rotate_bytes: u64,
    /// RFC 3339 time to record instead of the clock (tests, replays). Written verbatim.
    pub now: Option<String>,
    /// How long a writer waits for the append guard. A hook answers on every tool call and
    /// must not wait behind a stuck holder past the agent's own timeout.
    pub guard_timeout: Duration,
}

impl Default for LogOptions {
    fn default() -> Self {
        LogOptions {
            key_path: user_key::default_path(),
            rotate_bytes: DEFAULT_ROTATE_BYTES,
            now: None,
            guard_timeout: GUARD_TIMEOUT,
        }
    }
}

/// Appends one record and returns it as written (masked, with `seq`, `time`, `prev`,
/// `hash`). Safe to call from many processes at once.
pub fn append(
    state_dir: &Path,
    rec: &DecisionRecord,
    opts: &LogOptions,
) -> Result<LoggedRecord, LogError> {
    std::fs::create_dir_all(state_dir).map_err(io(state_dir))?;
    let _guard = AppendGuard::acquire(state_dir, opts.guard_timeout)?;
    let key = opts
        .key_path
        .as_deref()
        .map(UserKey::load_or_create)
        .transpose()?;
    let (last_seq, last_hash) = trusted_tail(state_dir, key.as_ref())?;
    let seq = last_seq
        .checked_add(1)
        .ok_or_else(|| corrupt(state_dir, "sequence number overflow"))?;
    let time = opts
        .now
        .clone()
        .unwrap_or_else(|| rfc3339(crate::clock::now()));
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
    // Under the guard nobody else appends: the record starts here.
    let start = file.metadata().map_err(io(&active))?.len();
    let line_written = file
        .write_all(&line)
        .and_then(|()| crate::faults::fsync(&file))
        .map_err(io(&active))
        .and_then(|()| if existed { Ok(()) } else { sync_dir(state_dir) });
    if let Err(e) = line_written {
        return Err(cut(&file, start, &active, e));
    }
    let head_path = state_dir.join(HEAD_FILE);
    let had_head = head_path.symlink_metadata().is_ok();
    if let Err(e) = write_head(state_dir, seq, &hash, key.as_ref()) {
        if crate::faults::disabled(Recovery::LogCut) {
            return Err(e);
        }
        // The head goes back before the line: if it cannot, the line stays, and the head
        // (old or new) still agrees with a whole, chained record the next append adopts,
        // instead of naming one that was cut.
        let head_back = if had_head {
            write_head(state_dir, last_seq, &last_hash, key.as_ref())
        } else {
            match std::fs::remove_file(&head_path) {
                Ok(()) => sync_dir(state_dir),
                Err(gone) if gone.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(other) => Err(io(&head_path)(other)),
            }
        };
        return Err(match head_back {
            Ok(()) => cut(&file, start, &active, e),
            Err(back) => corrupt(
                &head_path,
                format!("{e}; restoring the previous head failed too ({back}); the next append adopts the record"),
            ),
        });
    }
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

/// Takes back a record whose append failed, so an error always means "not logged": the
/// caller (a hook) warns that the record is lost, and the log holds neither a torn line
/// nor a record its writer reported as failed.
fn cut(file: &std::fs::File, start: u64, active: &Path, error: LogError) -> LogError {
    if crate::faults::disabled(Recovery::LogCut) {
        return error;
    }
    match file
        .set_len(start)
        .and_then(|()| crate::faults::fsync(file))
    {
        Ok(()) => error,
        Err(undo) => corrupt(
            active,
            format!("{error}; cutting the unfinished record failed too ({undo}); the next append repairs the tail"),
        ),
    }
}

/// Re-signs the head over the log as it now stands: the explicit, human step after
/// [`verify`](super::verify()) found a head problem (lost head, key introduced or replaced) and someone
/// decided the records are to be trusted. Refuses while any *record* is malformed,
/// edited or out of chain — move such a log aside instead. Returns the record count.
pub fn reseal(state_dir: &Path, opts: &LogOptions) -> Result<u64, LogError> {
    std::fs::create_dir_all(state_dir).map_err(io(state_dir))?;
    let _guard = AppendGuard::acquire(state_dir, opts.guard_timeout)?;
    let key = opts
        .key_path
        .as_deref()
        .map(UserKey::load_or_create)
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
fn trusted_tail(state_dir: &Path, key: Option<&UserKey>) -> Result<(u64, String), LogError> {
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
