//! Effect handlers under faults: a full file system during a journal commit, the lock's
//! state write and a log append; `EIO` at every fsync (and a crash right after it); a crash
//! at every fsync of a commit; a read-only remount in the middle of a commit; a wall-clock
//! jump while the lock is held.
//! Each must fail closed with an error that names the fault, and lose nothing: after
//! recovery a transaction is all old or all new, no lock is left held, no journal or temp
//! file remains, and the decision log holds exactly the records whose append succeeded.
//!
//! The file systems are real: each test mounts its own small tmpfs under its own temp
//! directory (so tests running in parallel never share one), fills it until `ENOSPC` or
//! remounts it read-only, and unmounts it on the way out, panics included. Mounting needs
//! root (CAP_SYS_ADMIN), as on the CI machines; without it these tests fail, saying so,
//! rather than pass without having run. `EIO`, the crash and the clock skew come from the
//! crate's `fault-injection` feature (`src/faults.rs`), told through the environment to
//! child processes, which are this test binary run again (`--ignored --exact worker_*`).
//!
//! `each_fault_test_catches_its_disabled_recovery` runs the fault tests again with one
//! recovery step switched off (`CTX_FAULT_DISABLE`) and checks each then fails, naming
//! the loss.
#![allow(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]

use contextos_effects::decision_log::{self, DecisionRecord, LogOptions, VerifyReport};
use contextos_effects::journal::{self, Change, JournalError, Precondition, Step};
use contextos_effects::project_lock::{acquire, status, AcquireOptions, ProjectLockError};
use contextos_effects::safe_fs::SafeRoot;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const ENOSPC_TEXT: &str = "No space left on device";
const EIO_TEXT: &str = "Input/output error";
const EROFS_TEXT: &str = "Read-only file system";

// ---------------------------------------------------------------------------------------
// A tmpfs of our own.

/// A tmpfs mounted on a fresh temp directory; unmounted when dropped (before the
/// directory is removed: fields drop after `drop`).
struct Tmpfs {
    mnt: PathBuf,
    _dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(options: &str) -> Tmpfs {
        let dir = tempfile::tempdir().unwrap();
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "ctx-fault-test"])
            .arg(&mnt)
            .output()
            .unwrap_or_else(|e| panic!("cannot run mount(8): {e}"));
        assert!(
            out.status.success(),
            "the fault tests mount a small tmpfs (`mount -t tmpfs -o {options}`) and need root \
             (CAP_SYS_ADMIN), as on the CI machines; they never skip. mount said: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        std::fs::create_dir(mnt.join("inode-filler")).unwrap();
        Tmpfs { mnt, _dir: dir }
    }

    fn remount(&self, mode: &str) {
        let out = Command::new("mount")
            .args(["-o", &format!("remount,{mode}")])
            .arg(&self.mnt)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "remount,{mode}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }

    fn page(&self) -> u64 {
        rustix::fs::statvfs(&self.mnt).unwrap().f_bsize
    }

    /// Fills the data blocks, then frees `pages` of them: the next writes find exactly
    /// that much room.
    fn fill_blocks_leaving(&self, pages: u64) {
        let path = self.mnt.join("filler");
        let mut f = std::fs::File::create(&path).unwrap();
        let chunk = vec![0xA5u8; 64 * 1024];
        let small = vec![0xA5u8; 512];
        for buf in [&chunk, &small] {
            loop {
                match f.write(buf) {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(e) if e.raw_os_error() == Some(28) => break,
                    Err(e) => panic!("filling {}: {e}", path.display()),
                }
            }
        }
        let len = f.metadata().unwrap().len();
        f.set_len(len.saturating_sub(pages * self.page())).unwrap();
    }

    /// Uses up the inodes, then frees `left` of them.
    fn fill_inodes_leaving(&self, left: usize) {
        let dir = self.mnt.join("inode-filler");
        let mut made = Vec::new();
        loop {
            let p = dir.join(format!("i{}", made.len()));
            match std::fs::File::create_new(&p) {
                Ok(_) => made.push(p),
                Err(e) if e.raw_os_error() == Some(28) => break,
                Err(e) => panic!("filling inodes: {e}"),
            }
        }
        assert!(made.len() >= left, "fewer inodes than asked to leave");
        for p in made.iter().rev().take(left) {
            std::fs::remove_file(p).unwrap();
        }
    }

    fn free(&self) {
        match std::fs::remove_file(self.mnt.join("filler")) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => panic!("{e}"),
        }
        for e in std::fs::read_dir(self.mnt.join("inode-filler")).unwrap() {
            std::fs::remove_file(e.unwrap().path()).unwrap();
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let ok = Command::new("umount")
            .arg(&self.mnt)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            // Still busy (a panic left a descriptor open): detach it instead of leaking it.
            let _ = Command::new("umount").arg("-l").arg(&self.mnt).status();
        }
    }
}

// ---------------------------------------------------------------------------------------
// Transactions and what "all old or all new" means for them.

const FILES: [&str; 4] = ["a.txt", "src/b.rs", "src/deep/c.md", "docs/d.txt"];
const OPTIONAL: &str = "src/optional.txt";

fn lock_opts() -> AcquireOptions {
    AcquireOptions {
        timeout: Duration::from_secs(30),
        command: "fault-test".into(),
    }
}

fn write_step(path: &str, content: String, precondition: Precondition) -> Step {
    Step {
        change: Change::Write {
            path: path.to_string(),
            content: content.into_bytes(),
            mode: 0o640,
            exact_mode: false,
        },
        precondition,
    }
}

/// From version `n` to `n + 1`: every file is rewritten, and the optional file exists
/// exactly at odd versions (created or deleted).
fn rewrite(n: u64) -> Vec<Step> {
    let v = n + 1;
    let mut steps: Vec<Step> = FILES
        .iter()
        .map(|f| write_step(f, format!("version {v} of {f}\n"), Precondition::Any))
        .collect();
    steps.push(if v % 2 == 1 {
        write_step(
            OPTIONAL,
            format!("version {v}\n"),
            Precondition::MustNotExist,
        )
    } else {
        Step {
            change: Change::Delete {
                path: OPTIONAL.into(),
            },
            precondition: Precondition::Any,
        }
    });
    steps
}

/// The version every file of [`rewrite`] agrees on, or what disagrees.
fn rewrite_version(root: &Path) -> Result<u64, String> {
    let versions: Vec<u64> = FILES
        .iter()
        .map(|f| match std::fs::read_to_string(root.join(f)) {
            Ok(t) => t.split_whitespace().nth(1).unwrap().parse().unwrap(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
            Err(e) => panic!("{f}: {e}"),
        })
        .collect();
    if versions.windows(2).any(|w| w[0] != w[1]) {
        return Err(format!(
            "torn transaction: the files hold versions {versions:?}"
        ));
    }
    let v = versions[0];
    if root.join(OPTIONAL).exists() != (v % 2 == 1) {
        return Err(format!(
            "torn transaction: the optional file disagrees with version {v}"
        ));
    }
    Ok(v)
}

const CREATED: usize = 3;

/// From `n` to `n + 1`: three new files, nothing else — only creations, so no rename frees
/// an inode and the commit record is the last thing that needs one.
fn create(n: u64) -> Vec<Step> {
    (0..CREATED)
        .map(|i| {
            write_step(
                &format!("new/{}-{i}.txt", n + 1),
                format!("set {}\n", n + 1),
                Precondition::MustNotExist,
            )
        })
        .collect()
}

fn create_version(root: &Path) -> Result<u64, String> {
    for set in 1u64.. {
        let present = (0..CREATED)
            .filter(|i| root.join(format!("new/{set}-{i}.txt")).exists())
            .count();
        match present {
            0 => return Ok(set - 1),
            CREATED => {}
            some => {
                return Err(format!(
                    "torn transaction: {some} of the {CREATED} files of set {set} exist"
                ))
            }
        }
    }
    unreachable!()
}

const SOLO: &str = "solo/one.txt";

/// From `n` to `n + 1` in one file: the journal's one-file path (no intent, no record).
fn solo(n: u64) -> Vec<Step> {
    vec![write_step(
        SOLO,
        format!("version {} of the one file\n", n + 1),
        Precondition::Any,
    )]
}

/// The version the one file holds (0 when it does not exist), or what it holds instead.
fn solo_version(root: &Path) -> Result<u64, String> {
    match std::fs::read_to_string(root.join(SOLO)) {
        Ok(t) => t
            .split_whitespace()
            .nth(1)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("torn file: {SOLO} holds {t:?}")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => panic!("{SOLO}: {e}"),
    }
}

fn must(v: Result<u64, String>) -> u64 {
    v.unwrap_or_else(|e| panic!("{e}"))
}

/// No temp, backup or journal file anywhere beneath the project.
fn assert_clean(root: &Path) {
    fn walk(dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                walk(&e.path(), out);
            } else {
                out.push(e.path().display().to_string());
            }
        }
    }
    let mut files = Vec::new();
    walk(root, &mut files);
    let stray: Vec<&String> = files
        .iter()
        .filter(|f| f.contains(".ctx-") || f.contains("/journal/"))
        .collect();
    assert!(stray.is_empty(), "leftovers after recovery: {stray:?}");
    assert!(journal::status(&SafeRoot::open(root).unwrap())
        .unwrap()
        .is_empty());
}

/// An error from `commit` says whether the change landed: only past the commit point.
fn applied_despite(e: &JournalError) -> bool {
    matches!(e, JournalError::CommittedNotCleaned { .. })
}

fn recover(root: &Path) {
    let lock = acquire(root, &lock_opts(), &mut |_| {}).unwrap();
    journal::recover(&SafeRoot::open(root).unwrap(), &lock).unwrap();
}

// ---------------------------------------------------------------------------------------
// Full disk.

#[derive(Clone, Copy)]
enum Exhaust {
    Blocks,
    Inodes,
}

/// Commits `tx` with ever more room left on a full tmpfs, from none until it succeeds,
/// so `ENOSPC` lands on every step that needs room in turn.
fn full_disk_sweep(
    exhaust: Exhaust,
    tx: fn(u64) -> Vec<Step>,
    version: fn(&Path) -> Result<u64, String>,
    min_failures: usize,
) {
    let fs = Tmpfs::mount("size=2m,nr_inodes=400");
    let root = fs.mnt.join("p");
    std::fs::create_dir(&root).unwrap();
    // Start from version 1, so a transaction rewrites and backs up as well as creates.
    {
        let lock = acquire(&root, &lock_opts(), &mut |_| {}).unwrap();
        journal::commit(&SafeRoot::open(&root).unwrap(), &lock, &tx(0), &mut |_| {}).unwrap();
    }
    let mut failures = Vec::new();
    for room in 0usize.. {
        assert!(room < 200, "the transaction never fit: {failures:?}");
        let before = must(version(&root));
        // The lock is taken before the disk fills: its own full-disk case has a test.
        let lock = acquire(&root, &lock_opts(), &mut |_| {}).unwrap();
        let safe = SafeRoot::open(&root).unwrap();
        match exhaust {
            Exhaust::Blocks => fs.fill_blocks_leaving(room as u64),
            Exhaust::Inodes => fs.fill_inodes_leaving(room),
        }
        let result = journal::commit(&safe, &lock, &tx(before), &mut |_| {});
        let applied = match &result {
            Ok(_) => true,
            Err(e) => {
                let text = e.to_string();
                assert!(
                    text.contains(ENOSPC_TEXT),
                    "room {room}: the error must name the full disk: {text}"
                );
                failures.push(text);
                applied_despite(e)
            }
        };
        let expected = before + u64::from(applied);
        assert_eq!(
            version(&root),
            Ok(expected),
            "room {room}: {result:?}: an error must mean nothing was applied, success everything"
        );
        fs.free();
        journal::recover(&safe, &lock).unwrap();
        drop(lock);
        assert_eq!(
            must(version(&root)),
            expected,
            "room {room}: after recovery"
        );
        assert_clean(&root);
        if result.is_ok() {
            break;
        }
    }
    assert!(
        failures.len() >= min_failures,
        "ENOSPC must have hit several steps: {failures:?}"
    );
}

#[test]
fn full_disk_during_a_journal_commit_fails_closed_and_recovers() {
    // Out of data blocks: backups, the intent and the staged files each hit ENOSPC in turn.
    full_disk_sweep(Exhaust::Blocks, rewrite, rewrite_version, 3);
    // Out of inodes: the last to hit it is the commit record, after every file is in place.
    full_disk_sweep(Exhaust::Inodes, create, create_version, 3);
}

#[test]
fn full_disk_during_a_one_file_commit_fails_closed_and_recovers() {
    // Out of data blocks: the staged file cannot be written.
    full_disk_sweep(Exhaust::Blocks, solo, solo_version, 1);
    // Out of inodes: the transaction's directory, then the staged file.
    full_disk_sweep(Exhaust::Inodes, solo, solo_version, 2);
}

#[test]
fn full_disk_during_the_lock_state_write_leaves_no_stale_lock() {
    let fs = Tmpfs::mount("size=256k");
    let root = fs.mnt.join("p");
    std::fs::create_dir(&root).unwrap();
    let state_dir = root.join(".contextos/state");
    for first_ever in [true, false] {
        if !first_ever {
            drop(acquire(&root, &lock_opts(), &mut |_| {}).unwrap());
        }
        let last = status(&root).unwrap().state.map(|s| s.generation);
        fs.fill_blocks_leaving(0);
        let err = acquire(&root, &lock_opts(), &mut |_| {}).unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(err, ProjectLockError::Io { .. }) && text.contains(ENOSPC_TEXT),
            "the error must name the full disk: {text}"
        );
        assert!(text.contains("lock.json"), "and the state file: {text}");
        let s = status(&root).unwrap();
        assert!(
            !s.held,
            "a failed acquire left the lock held (stale lock): {s:?}"
        );
        assert_eq!(
            s.state.map(|s| s.generation),
            last,
            "the state is the previous holder's, whole"
        );
        let mut names: Vec<String> = std::fs::read_dir(&state_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let expected: &[&str] = if first_ever {
            &["lock"]
        } else {
            &["lock", "lock.json"]
        };
        assert_eq!(names, expected, "no temp file of the failed state write");
        fs.free();
        let guard = acquire(
            &root,
            &AcquireOptions {
                timeout: Duration::from_secs(2),
                command: "after the disk was freed".into(),
            },
            &mut |_| {},
        )
        .unwrap_or_else(|e| panic!("a failed acquire left the lock held: {e}"));
        assert_eq!(guard.generation(), last.unwrap_or(0) + 1);
    }
}

fn log_opts(key: &Path) -> LogOptions {
    LogOptions {
        key_path: Some(key.to_path_buf()),
        rotate_bytes: 0,
        now: None,
        guard_timeout: Duration::from_secs(30),
    }
}

fn log_record(i: usize, pad: usize) -> DecisionRecord {
    DecisionRecord {
        agent: "fault-test".into(),
        event: "PreToolUse".into(),
        tool: "Write".into(),
        request: serde_json::json!({"n": i, "pad": "p".repeat(pad)}),
        verdict: "allow".into(),
        rules: vec![],
        duration_us: 1,
    }
}

/// The log verifies with no problem and holds exactly `records` records.
fn assert_log(state: &Path, key: &Path, records: u64, when: &str) {
    let report: VerifyReport = decision_log::verify(state, Some(key)).unwrap();
    assert!(
        report.problems.is_empty(),
        "{when}: a failed append left a partial record or a wrong head: {:?}",
        report
            .problems
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    );
    assert_eq!(
        report.records, records,
        "{when}: a failed append left its record in the log (or lost one that succeeded)"
    );
}

#[test]
fn full_disk_during_a_log_append_leaves_no_partial_record() {
    let fs = Tmpfs::mount("size=256k");
    let home = tempfile::tempdir().unwrap();
    let key = home.path().join("log.key");
    let state = fs.mnt.join("state");
    for i in 0..3 {
        decision_log::append(&state, &log_record(i, 100), &log_opts(&key)).unwrap();
    }
    let mut records = 3;
    let mut failures = 0;
    for room in 0u64.. {
        assert!(room < 20, "the record never fit");
        fs.fill_blocks_leaving(room);
        // Three pages long: the write runs out of room part-way through the line.
        match decision_log::append(&state, &log_record(9, 3 * 4096), &log_opts(&key)) {
            Ok(_) => records += 1,
            Err(e) => {
                let text = e.to_string();
                assert!(text.contains(ENOSPC_TEXT), "room {room}: {text}");
                failures += 1;
            }
        }
        assert_log(
            &state,
            &key,
            records,
            &format!("room {room}, disk still full"),
        );
        fs.free();
        if records > 3 {
            break;
        }
    }
    assert!(failures >= 1, "the disk was never full enough");
    decision_log::append(&state, &log_record(10, 10), &log_opts(&key)).unwrap();
    assert_log(&state, &key, records + 1, "after the disk was freed");
}

// ---------------------------------------------------------------------------------------
// EIO on fsync, in child processes.

/// Child: take the lock, recover, commit the next version, then log a record (only the
/// first two with `CTX_RECOVER_ONLY`, no record with `CTX_SKIP_LOG`); write what each
/// step did to `CTX_REPORT`. The fault plan comes from the environment.
#[test]
#[ignore = "run as a child process by the fsync fault test"]
fn worker_fsync_faults() {
    let root = PathBuf::from(std::env::var("CTX_ROOT").unwrap());
    let report = PathBuf::from(std::env::var("CTX_REPORT").unwrap());
    let key = PathBuf::from(std::env::var("CTX_KEY").unwrap());
    let mut lines = Vec::new();
    match acquire(&root, &lock_opts(), &mut |_| {}) {
        Err(e) => lines.push(format!("lock\terr\t{e}")),
        Ok(lock) => {
            lines.push("lock\tok".to_string());
            let safe = SafeRoot::open(&root).unwrap();
            match journal::recover(&safe, &lock) {
                Err(e) => lines.push(format!("recover\terr\t{e}")),
                Ok(_) if std::env::var_os("CTX_RECOVER_ONLY").is_some() => {
                    lines.push("recover\tok".to_string());
                }
                Ok(_) => {
                    let v = must(rewrite_version(&root));
                    lines.push(
                        match journal::commit(&safe, &lock, &rewrite(v), &mut |_| {}) {
                            Ok(_) => "commit\tok".to_string(),
                            Err(e) if applied_despite(&e) => format!("commit\tcommitted\t{e}"),
                            Err(e) => format!("commit\terr\t{e}"),
                        },
                    );
                }
            }
        }
    }
    if std::env::var_os("CTX_SKIP_LOG").is_none() && std::env::var_os("CTX_RECOVER_ONLY").is_none()
    {
        let state = root.join(".contextos/state");
        lines.push(
            match decision_log::append(&state, &log_record(1, 10), &log_opts(&key)) {
                Ok(_) => "log\tok".to_string(),
                Err(e) => format!("log\terr\t{e}"),
            },
        );
    }
    lines.push(format!(
        "fsyncs\t{}",
        contextos_effects::faults::fsync_calls()
    ));
    std::fs::write(report, lines.join("\n")).unwrap();
}

/// What a worker reported: each step's outcome ("ok", "committed" or "err") and text.
#[derive(Debug, Default)]
struct Report {
    steps: Vec<(String, String, String)>,
    fsyncs: u64,
}

impl Report {
    fn read(path: &Path) -> Option<Report> {
        let text = std::fs::read_to_string(path).ok()?;
        let mut r = Report::default();
        for line in text.lines() {
            let mut parts = line.splitn(3, '\t');
            let (step, outcome) = (parts.next().unwrap(), parts.next().unwrap());
            if step == "fsyncs" {
                r.fsyncs = outcome.parse().unwrap();
            } else {
                let text = parts.next().unwrap_or("").to_string();
                r.steps.push((step.to_string(), outcome.to_string(), text));
            }
        }
        Some(r)
    }

    fn outcome(&self, step: &str) -> Option<&str> {
        self.steps
            .iter()
            .find(|s| s.0 == step)
            .map(|s| s.1.as_str())
    }
}

fn run_worker(root: &Path, key: &Path, report: &Path, env: &[(&str, String)]) -> Option<Report> {
    let _ = std::fs::remove_file(report);
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--ignored",
        "--exact",
        "worker_fsync_faults",
        "--test-threads",
        "1",
    ])
    .env("CTX_ROOT", root)
    .env("CTX_KEY", key)
    .env("CTX_REPORT", report)
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.status().unwrap();
    Report::read(report)
}

#[test]
fn eio_at_every_fsync_fails_closed_and_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    std::fs::create_dir(&root).unwrap();
    let key = dir.path().join("log.key");
    let report = dir.path().join("report");
    let state = root.join(".contextos/state");
    // Version 1 and one record, written without faults (the key is created here).
    recover(&root);
    commit_cleanly(&root, rewrite, 0);
    decision_log::append(&state, &log_record(0, 10), &log_opts(&key)).unwrap();
    let mut records = 1u64;
    let mut failed_steps = std::collections::BTreeSet::new();
    for n in 1u64.. {
        assert!(n < 500, "the worker never ran out of fsyncs to fail");
        // EIO at fsync n.
        let before = must(rewrite_version(&root));
        let r = run_worker(
            &root,
            &key,
            &report,
            &[("CTX_FAULT_FSYNC_EIO", n.to_string())],
        )
        .unwrap_or_else(|| panic!("EIO at fsync {n}: the worker died"));
        for (step, outcome, text) in &r.steps {
            if outcome != "ok" {
                assert!(
                    text.contains(EIO_TEXT),
                    "EIO at fsync {n}: the {step} error must name the I/O error: {text}"
                );
                failed_steps.insert(step.clone());
            }
        }
        let applied = matches!(r.outcome("commit"), Some("ok" | "committed"));
        let expected = before + u64::from(applied);
        assert_eq!(
            rewrite_version(&root),
            Ok(expected),
            "EIO at fsync {n}: {r:?}: an error must mean nothing was applied, success everything"
        );
        records += u64::from(r.outcome("log") == Some("ok"));
        assert_log(&state, &key, records, &format!("EIO at fsync {n}"));
        recover(&root);
        assert_eq!(must(rewrite_version(&root)), expected, "EIO at fsync {n}");
        assert_clean(&root);
        if r.fsyncs < n {
            assert!(r.steps.iter().all(|s| s.1 == "ok"), "{r:?}");
            break;
        }

        // EIO at fsync n, then a crash at one of the next fsyncs (inside the undo).
        for later in 1..=3 {
            let before = must(rewrite_version(&root));
            run_worker(
                &root,
                &key,
                &report,
                &[
                    ("CTX_FAULT_FSYNC_EIO", n.to_string()),
                    ("CTX_FAULT_FSYNC_KILL", (n + later).to_string()),
                    ("CTX_SKIP_LOG", "1".to_string()),
                ],
            );
            // Recovery itself meets an EIO (at one of its first fsyncs) and fails closed;
            // the next one finishes the job.
            let r = run_worker(
                &root,
                &key,
                &report,
                &[
                    ("CTX_FAULT_FSYNC_EIO", (3 + n % 4).to_string()),
                    ("CTX_RECOVER_ONLY", "1".to_string()),
                ],
            )
            .unwrap_or_else(|| panic!("recovery under EIO: the worker died"));
            if let Some((step, _, text)) = r.steps.iter().find(|s| s.1 != "ok") {
                assert!(
                    text.contains(EIO_TEXT),
                    "recovery under EIO: {step}: {text}"
                );
                failed_steps.insert(format!("{step} (after a crash)"));
            }
            recover(&root);
            let after = must(rewrite_version(&root));
            assert!(
                after == before || after == before + 1,
                "EIO at fsync {n}, killed at {}: {before} -> {after}",
                n + later
            );
            assert_clean(&root);
        }
    }
    for step in ["lock", "commit", "log", "recover (after a crash)"] {
        assert!(
            failed_steps.contains(step),
            "no fsync of the {step} step failed: {failed_steps:?}"
        );
    }
}

/// A crash at every fsync of a commit: each is the edge of a window of the protocol (files
/// written but not yet synced, renames not yet synced, a commit record not yet synced, a
/// cleanup half done). After recovery the files are all old or all new and nothing is
/// left. A SIGKILL keeps the page cache, so this checks what recovery makes of the state
/// at each of those edges; what a power cut could lose in between is argued in the book
/// (journal chapter), not tested.
#[test]
fn sigkill_at_every_fsync_recovers_to_all_old_or_all_new() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    std::fs::create_dir(&root).unwrap();
    let key = dir.path().join("log.key");
    let report = dir.path().join("report");
    recover(&root);
    commit_cleanly(&root, rewrite, 0);
    let mut outcomes = std::collections::BTreeSet::new();
    for n in 1u64.. {
        assert!(n < 500, "the worker never ran out of fsyncs to crash at");
        let before = must(rewrite_version(&root));
        let r = run_worker(
            &root,
            &key,
            &report,
            &[
                ("CTX_FAULT_FSYNC_KILL", n.to_string()),
                ("CTX_SKIP_LOG", "1".to_string()),
            ],
        );
        let pending = {
            let lock = acquire(&root, &lock_opts(), &mut |_| {}).unwrap();
            journal::recover(&SafeRoot::open(&root).unwrap(), &lock).unwrap()
        };
        let after = must(rewrite_version(&root));
        assert_clean(&root);
        if let Some(r) = r {
            // Not killed: the worker made fewer than n fsyncs.
            assert!(r.steps.iter().all(|s| s.1 == "ok"), "{r:?}");
            assert_eq!(after, before + 1, "a commit that returned ok");
            break;
        }
        assert!(
            after == before || after == before + 1,
            "killed at fsync {n}: {before} -> {after}"
        );
        outcomes.insert((!pending.is_empty(), after == before + 1));
    }
    for (interrupted, applied) in [(true, false), (true, true)] {
        assert!(
            outcomes.contains(&(interrupted, applied)),
            "no crash left a transaction to {} ({outcomes:?})",
            if applied { "roll forward" } else { "roll back" }
        );
    }
}

// ---------------------------------------------------------------------------------------
// Read-only remount.

/// Commits version `n` of the test files under the lock, with no fault armed.
fn commit_cleanly(root: &Path, tx: fn(u64) -> Vec<Step>, n: u64) {
    let lock = acquire(root, &lock_opts(), &mut |_| {}).unwrap();
    journal::commit(&SafeRoot::open(root).unwrap(), &lock, &tx(n), &mut |_| {}).unwrap();
}

#[test]
fn a_read_only_remount_mid_commit_fails_closed_and_recovers() {
    read_only_sweep(rewrite, rewrite_version, 5);
}

#[test]
fn a_read_only_remount_mid_one_file_commit_fails_closed_and_recovers() {
    // Before the rename: refused, nothing applied. After it: past the commit point (a
    // tmpfs directory fsync cannot fail), only the journal directory is left.
    read_only_sweep(solo, solo_version, 2);
}

/// Commits `tx` with the file system remounted read-only at its first failpoint, then
/// its second, and so on until the commit outruns the remount.
fn read_only_sweep(
    tx: fn(u64) -> Vec<Step>,
    version: fn(&Path) -> Result<u64, String>,
    min_failures: usize,
) {
    let fs = Tmpfs::mount("size=4m");
    let root = fs.mnt.join("p");
    std::fs::create_dir(&root).unwrap();
    commit_cleanly(&root, tx, 0);
    let mut failures = 0;
    for at in 1usize.. {
        assert!(at < 100, "the commit never outran the remount");
        let before = must(version(&root));
        let lock = acquire(&root, &lock_opts(), &mut |_| {}).unwrap();
        let safe = SafeRoot::open(&root).unwrap();
        let mut count = 0;
        let mut remounted = false;
        let result = journal::commit(&safe, &lock, &tx(before), &mut |_| {
            count += 1;
            if count == at {
                fs.remount("ro");
                remounted = true;
            }
        });
        drop(lock);
        drop(safe);
        if !remounted {
            result.unwrap();
            assert_eq!(must(version(&root)), before + 1);
            assert_clean(&root);
            break;
        }
        let applied = match &result {
            Ok(_) => true,
            Err(e) => {
                let text = e.to_string();
                assert!(
                    text.contains(EROFS_TEXT),
                    "remount at failpoint {at}: the error must name the read-only file system: {text}"
                );
                failures += 1;
                applied_despite(e)
            }
        };
        // Still read-only: taking the lock fails closed (its state cannot be written)
        // and leaves it free.
        let err = acquire(&root, &lock_opts(), &mut |_| {}).unwrap_err();
        assert!(err.to_string().contains(EROFS_TEXT), "{err}");
        assert!(
            !status(&root).unwrap().held,
            "a failed acquire left the lock held"
        );
        fs.remount("rw");
        recover(&root);
        let after = must(version(&root));
        if result.is_err() && !applied {
            assert_eq!(after, before, "remount at failpoint {at}: {result:?}");
        } else {
            assert_eq!(after, before + 1, "remount at failpoint {at}: {result:?}");
        }
        assert_clean(&root);
    }
    assert!(
        failures >= min_failures,
        "the remount landed in too few steps ({failures})"
    );
}

// ---------------------------------------------------------------------------------------
// Clock jumps.

/// Child: takes the lock (its clock skewed through the environment), announces it with
/// its `acquiredAtUnixMs`, then holds it until killed.
#[test]
#[ignore = "run as a child process by the clock test"]
fn worker_hold_with_a_jumped_clock() {
    let root = PathBuf::from(std::env::var("CTX_ROOT").unwrap());
    let guard = acquire(&root, &lock_opts(), &mut |_| {}).unwrap();
    std::fs::write(
        root.join("holding"),
        guard.state().acquired_at_unix_ms.to_string(),
    )
    .unwrap();
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// Child: tries to take the lock for a moment (its clock skewed the other way); exits 0
/// when refused because the lock is held, 1 when it got the lock.
#[test]
#[ignore = "run as a child process by the clock test"]
fn worker_contend_with_a_jumped_clock() {
    let root = PathBuf::from(std::env::var("CTX_ROOT").unwrap());
    let opts = AcquireOptions {
        timeout: Duration::from_millis(300),
        command: "contender".into(),
    };
    match acquire(&root, &opts, &mut |_| {}) {
        Err(ProjectLockError::Timeout { .. }) => std::process::exit(0),
        Ok(_) => std::process::exit(1),
        Err(e) => panic!("{e}"),
    }
}

fn unix_ms() -> i64 {
    i64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

/// A holder that never exits by itself must not outlive a failing test.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(test: &str, root: &Path, skew: i64) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", test, "--test-threads", "1"])
        .env("CTX_ROOT", root)
        .env("CTX_FAULT_CLOCK_SKEW_SECS", skew.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

#[test]
fn a_clock_jump_while_the_lock_is_held_neither_frees_it_nor_keeps_a_dead_holder() {
    const YEAR: i64 = 365 * 24 * 3600;
    // The holder's clock a year behind (its lock looks a year old: the wall clock jumped
    // forward since), then ten years ahead (it looks acquired in the future: the clock
    // jumped back).
    for skew in [-YEAR, 10 * YEAR] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mut holder = KillOnDrop(spawn("worker_hold_with_a_jumped_clock", root, skew));
        let start = std::time::Instant::now();
        while !root.join("holding").exists()
            || std::fs::read(root.join("holding")).unwrap().is_empty()
        {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the holder never took the lock"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let acquired: i64 = std::fs::read_to_string(root.join("holding"))
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            ((acquired - unix_ms()) - skew * 1000).abs() < 3_600_000,
            "the holder's clock was not skewed by {skew} s: it recorded {acquired}"
        );
        let s = status(root).unwrap();
        assert!(
            s.held,
            "a live holder whose clock jumped must hold the lock"
        );
        let generation = s.state.as_ref().unwrap().generation;

        // A contender on the real clock waits, sees the holder, and gives up.
        let mut seen = None;
        let err = acquire(
            root,
            &AcquireOptions {
                timeout: Duration::from_millis(300),
                command: "contender".into(),
            },
            &mut |h| seen = h.map(|h| h.pid),
        );
        assert!(
            matches!(err, Err(ProjectLockError::Timeout { .. })),
            "the lock of a live holder was taken because the clock jumped: {err:?}"
        );
        assert_eq!(seen, Some(holder.0.id()));
        // So does one whose own clock jumped the other way.
        let contender = spawn("worker_contend_with_a_jumped_clock", root, -skew)
            .wait()
            .unwrap();
        assert_eq!(
            contender.code(),
            Some(0),
            "a contender with a jumped clock took a live holder's lock"
        );

        // A holder that really died is recovered at once, whatever the clocks say.
        holder.0.kill().unwrap();
        holder.0.wait().unwrap();
        let guard = acquire(root, &lock_opts(), &mut |_| {}).unwrap();
        assert_eq!(guard.generation(), generation + 1);
    }
}

// ---------------------------------------------------------------------------------------
// The fault tests detect the loss when the recovery they protect is switched off.

/// Runs one test of this binary again with `CTX_FAULT_DISABLE=step`.
fn run_mutated(test: &str, step: &str) -> Output {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--test-threads", "1", "--nocapture"])
        .env("CTX_FAULT_DISABLE", step)
        .output()
        .unwrap()
}

/// (recovery step switched off, the fault test that must then fail, what it must say;
/// `|` separates alternatives)
const MUTATIONS: &[(&str, &str, &str)] = &[
    (
        "commit-undo",
        "full_disk_during_a_journal_commit_fails_closed_and_recovers",
        "an error must mean nothing was applied",
    ),
    (
        "commit-undo",
        "eio_at_every_fsync_fails_closed_and_recovers",
        "an error must mean nothing was applied",
    ),
    (
        "commit-retract",
        "eio_at_every_fsync_fails_closed_and_recovers",
        // The crash lands in the undo's first restore: its temp file outlives a recovery
        // that rolls forward; one fsync later, the first file is old and the rest new.
        "leftovers after recovery|torn transaction",
    ),
    (
        "recover-undo",
        "a_read_only_remount_mid_commit_fails_closed_and_recovers",
        "torn transaction",
    ),
    (
        "lock-release",
        "full_disk_during_the_lock_state_write_leaves_no_stale_lock",
        "left the lock held",
    ),
    (
        "lock-release",
        "a_read_only_remount_mid_commit_fails_closed_and_recovers",
        "left the lock held",
    ),
    (
        "log-cut",
        "full_disk_during_a_log_append_leaves_no_partial_record",
        "a failed append left a partial record",
    ),
    (
        "log-cut",
        "eio_at_every_fsync_fails_closed_and_recovers",
        // EIO after the line was written: the line stays, the head does not name it.
        "a failed append left a partial record or a wrong head|a failed append left its record in the log",
    ),
];

#[test]
fn each_fault_test_catches_its_disabled_recovery() {
    for (step, test, says) in MUTATIONS {
        let out = run_mutated(test, step);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            text.contains("1 passed") || text.contains("1 failed"),
            "{test} did not run: {text}"
        );
        assert!(
            !out.status.success(),
            "{test} passed with `{step}` switched off: it does not protect that recovery"
        );
        assert!(
            says.split('|').any(|s| text.contains(s)),
            "{test} with `{step}` switched off failed, but not by detecting the loss (`{says}`): {text}"
        );
    }
}
