//! The files of the log: the active segment, sealed segments named for their first
//! `seq`, and reading the last line of one without reading the log.

use super::error::{corrupt, io, tampered, LogError};
use super::record::{check_hash, parse_line, LoggedRecord};
use std::fs::{File, OpenOptions};
use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};

pub const ACTIVE_FILE: &str = "decisions.jsonl";

pub(super) fn rotate(state_dir: &Path, active: &Path) -> Result<(), LogError> {
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

pub(super) fn segment_name(first_seq: u64) -> String {
    format!("decisions.{first_seq:012}.jsonl")
}

/// Sealed segments, oldest first.
pub(super) fn list_segments(state_dir: &Path) -> Result<Vec<(u64, PathBuf)>, LogError> {
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
pub(super) fn newest_last_line(state_dir: &Path) -> Result<Option<(PathBuf, LastLine)>, LogError> {
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
pub(super) struct LastLine {
    /// Without the newline.
    pub(super) bytes: Vec<u8>,
    /// Offset of the line's first byte.
    pub(super) start: u64,
    pub(super) terminated: bool,
}

/// Reads backwards from the end, so the cost is the last line's length, not the log's.
pub(super) fn read_last_line(path: &Path) -> Result<Option<LastLine>, LogError> {
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
pub(super) fn repair_torn_tail(active: &Path) -> Result<(), LogError> {
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
    crate::faults::fsync(&file).map_err(io(active))
}

pub(super) fn sync_dir(dir: &Path) -> Result<(), LogError> {
    crate::atomic_write::sync_dir(dir).map_err(io(dir))
}

pub(super) fn read_records(path: &Path) -> Result<Vec<LoggedRecord>, LogError> {
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
