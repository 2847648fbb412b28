//! Checking the whole log: every record's hash, the chain and `seq` across segments,
//! and the head against the last record and the key.

use super::append_guard::AppendGuard;
use super::error::{io, LogError};
use super::head::{check_head_mac, read_head, HEAD_FILE};
use super::record::{check_hash, parse_line, LoggedRecord, GENESIS};
use super::report::{Problem, ProblemKind, VerifyReport};
use super::segments::{list_segments, ACTIVE_FILE};
use crate::user_key::UserKey;
use std::fs::File;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};

/// One tampering normally yields one or two problems; past this the rest is noise.
pub(super) const MAX_PROBLEMS: usize = 1000;

#[derive(Debug)]
pub(super) struct Last {
    pub(super) seq: u64,
    pub(super) hash: String,
    file: PathBuf,
    line: u64,
}

/// Walks records in log order, checking each against the one before.
#[derive(Debug)]
pub(super) struct Walk {
    pub(super) problems: Vec<Problem>,
    pub(super) records: u64,
    /// Whether any line has been seen (the first record must start at genesis).
    started: bool,
    /// After a malformed line the previous hash and seq are unknown; the next record
    /// re-anchors the walk instead of reporting a second, derived problem.
    resync: bool,
    prev: String,
    next_seq: u64,
    pub(super) last: Option<Last>,
    /// The seq the head names, and the hash the log holds at that seq.
    head_seq: Option<u64>,
    hash_at_head_seq: Option<String>,
    capped: bool,
}

impl Walk {
    pub(super) fn new(head_seq: Option<u64>) -> Self {
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

    pub(super) fn file(&mut self, path: &Path, sealed_seq: Option<u64>) -> Result<(), LogError> {
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
    let _guard = AppendGuard::shared(state_dir)?;
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
                let outcome = match UserKey::load(kp)? {
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
