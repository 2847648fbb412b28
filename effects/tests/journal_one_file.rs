//! The one-file path of the journal (a transaction of a single change: no backup, intent
//! or commit record) under crashes, `EIO` and races: after recovery the target is whole,
//! old or new, and nothing is left in the journal or beside the target.
//!
//! Three shapes: a rewrite (with a sha256 precondition), a creation in directories that do
//! not exist yet, a deletion. Child processes (this binary run again with `--ignored
//! --exact worker_one_file`) are SIGKILLed at every failpoint and at every fsync, and meet
//! `EIO` at every fsync (`fault-injection` feature, see `src/faults.rs`), then a crash inside
//! the undo that follows.
#![allow(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]

use contextos_effects::journal::{self, Change, Failpoint, JournalError, Precondition, Step};
use contextos_effects::project_lock::{acquire, AcquireOptions};
use contextos_effects::safe_fs::{sha256_hex, SafeRoot};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

const EIO_TEXT: &str = "Input/output error";

fn lock_opts() -> AcquireOptions {
    AcquireOptions {
        timeout: Duration::from_secs(30),
        command: "one-file-test".into(),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Rewrite,
    Create,
    Delete,
}

const SHAPES: [Shape; 3] = [Shape::Rewrite, Shape::Create, Shape::Delete];

const REWRITTEN: &str = "src/one.txt";
const OLD: &str = "old\n";
const NEW: &str = "the new content, longer than the old\n";
const CREATED: &str = "fresh/a/b/new.txt";
const DELETED: &str = "doomed.txt";

impl Shape {
    fn name(self) -> &'static str {
        match self {
            Shape::Rewrite => "rewrite",
            Shape::Create => "create",
            Shape::Delete => "delete",
        }
    }

    fn parse(name: &str) -> Shape {
        *SHAPES.iter().find(|s| s.name() == name).unwrap()
    }

    /// Puts the project in the state before the transaction (old).
    fn set_up(self, root: &Path) {
        let file = |rel: &str, mode: u32| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, OLD).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        match self {
            Shape::Rewrite => file(REWRITTEN, 0o600),
            Shape::Create => match std::fs::remove_dir_all(root.join("fresh")) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => panic!("{e}"),
            },
            Shape::Delete => file(DELETED, 0o644),
        }
    }

    fn step(self) -> Step {
        let old_sha = Precondition::Sha256(sha256_hex(OLD.as_bytes()));
        match self {
            Shape::Rewrite => Step {
                change: Change::Write {
                    path: REWRITTEN.into(),
                    content: NEW.into(),
                    mode: 0o640,
                    exact_mode: false,
                },
                precondition: old_sha,
            },
            Shape::Create => Step {
                change: Change::Write {
                    path: CREATED.into(),
                    content: NEW.into(),
                    mode: 0o640,
                    exact_mode: false,
                },
                precondition: Precondition::MustNotExist,
            },
            Shape::Delete => Step {
                change: Change::Delete {
                    path: DELETED.into(),
                },
                precondition: old_sha,
            },
        }
    }

    /// Whether the target holds the new image (`Ok(true)`), the old one (`Ok(false)`), or
    /// anything else (a torn file, a wrong mode).
    fn state(self, root: &Path) -> Result<bool, String> {
        let (rel, old_mode, new_mode) = match self {
            Shape::Rewrite => (REWRITTEN, Some(0o600), Some(0o600)),
            Shape::Create => (CREATED, None, Some(0o640)),
            Shape::Delete => (DELETED, Some(0o644), None),
        };
        let p = root.join(rel);
        let now = match std::fs::read_to_string(&p) {
            Ok(text) => {
                let mode = std::fs::symlink_metadata(&p).unwrap().permissions().mode() & 0o7777;
                Some((text, mode))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(format!("{rel}: {e}")),
        };
        let image = |content: &str, mode: Option<u32>| mode.map(|m| (content.to_string(), m));
        if now == image(OLD, old_mode) {
            Ok(false)
        } else if now == image(NEW, new_mode) {
            Ok(true)
        } else {
            Err(format!("{rel} is neither old nor new: {now:?}"))
        }
    }
}

/// No temp file anywhere beneath the project, and an empty journal.
fn assert_clean(root: &Path) {
    fn walk(dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            out.push(e.path().display().to_string());
            if e.file_type().unwrap().is_dir() {
                walk(&e.path(), out);
            }
        }
    }
    let mut found = Vec::new();
    walk(root, &mut found);
    let stray: Vec<&String> = found
        .iter()
        .filter(|f| f.contains(".ctx-") || f.contains("/journal/"))
        .collect();
    assert!(stray.is_empty(), "leftovers after recovery: {stray:?}");
    assert!(journal::status(&SafeRoot::open(root).unwrap())
        .unwrap()
        .is_empty());
}

fn recover(root: &Path) -> Vec<journal::Pending> {
    let lock = acquire(root, &lock_opts(), &mut |_| {}).unwrap();
    journal::recover(&SafeRoot::open(root).unwrap(), &lock).unwrap()
}

fn commit(root: &Path, shape: Shape, fp: &mut dyn FnMut(Failpoint)) -> Result<(), JournalError> {
    let lock = acquire(root, &lock_opts(), &mut |_| {}).unwrap();
    let c = journal::commit(&SafeRoot::open(root).unwrap(), &lock, &[shape.step()], fp)?;
    assert_eq!(c.files, 1);
    assert_eq!(c.generation, lock.generation());
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Child processes.

/// Child: take the lock, recover, commit `CTX_SHAPE`, dying at failpoint `CTX_KILL_AT`
/// (counted from 1); the fault plan (`CTX_FAULT_*`) comes from the environment. Writes
/// `ok`, `committed` or `err` and the error, then the fsyncs made, to `CTX_REPORT`.
#[test]
#[ignore = "run as a child process by the one-file crash tests"]
fn worker_one_file() {
    let root = PathBuf::from(std::env::var("CTX_ROOT").unwrap());
    let shape = Shape::parse(&std::env::var("CTX_SHAPE").unwrap());
    let kill_at: Option<usize> = std::env::var("CTX_KILL_AT")
        .ok()
        .map(|v| v.parse().unwrap());
    let mut outcome = match acquire(&root, &lock_opts(), &mut |_| {}) {
        Err(e) => format!("err\t{e}"),
        Ok(lock) => {
            let safe = SafeRoot::open(&root).unwrap();
            match journal::recover(&safe, &lock) {
                Err(e) => format!("err\t{e}"),
                Ok(_) => {
                    let mut count = 0;
                    let mut fp = |_: Failpoint| {
                        count += 1;
                        if Some(count) == kill_at {
                            let _ = rustix::process::kill_process(
                                rustix::process::getpid(),
                                rustix::process::Signal::KILL,
                            );
                        }
                    };
                    match journal::commit(&safe, &lock, &[shape.step()], &mut fp) {
                        Ok(_) => "ok".to_string(),
                        Err(e @ JournalError::CommittedNotCleaned { .. }) => {
                            format!("committed\t{e}")
                        }
                        Err(e) => format!("err\t{e}"),
                    }
                }
            }
        }
    };
    outcome.push_str(&format!(
        "\nfsyncs\t{}",
        contextos_effects::faults::fsync_calls()
    ));
    std::fs::write(std::env::var("CTX_REPORT").unwrap(), outcome).unwrap();
}

/// What a worker reported: its outcome line and how many fsyncs it made; `None` when it
/// was killed before writing it.
fn run_worker(root: &Path, shape: Shape, env: &[(&str, String)]) -> Option<(String, u64)> {
    let report = root.with_extension("report");
    let _ = std::fs::remove_file(&report);
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--ignored",
        "--exact",
        "worker_one_file",
        "--test-threads",
        "1",
    ])
    .env("CTX_ROOT", root)
    .env("CTX_SHAPE", shape.name())
    .env("CTX_REPORT", &report)
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.status().unwrap();
    let text = std::fs::read_to_string(&report).ok()?;
    let (outcome, fsyncs) = text.rsplit_once("\nfsyncs\t").unwrap();
    Some((outcome.to_string(), fsyncs.parse().unwrap()))
}

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    std::fs::create_dir(&root).unwrap();
    (dir, root)
}

/// Recovers, then checks the target is whole (old or new) and nothing is left; returns
/// whether it is new.
fn recovered_state(root: &Path, shape: Shape, when: &str) -> bool {
    recover(root);
    let new = shape
        .state(root)
        .unwrap_or_else(|e| panic!("{when}: torn: {e}"));
    assert_clean(root);
    new
}

#[test]
fn sigkill_at_every_failpoint_leaves_the_target_old_or_new() {
    for shape in SHAPES {
        let (_dir, root) = project();
        let mut seen = std::collections::BTreeSet::new();
        for kill_at in 1usize.. {
            assert!(kill_at < 20, "{shape:?}: the commit never finished");
            shape.set_up(&root);
            let report = run_worker(&root, shape, &[("CTX_KILL_AT", kill_at.to_string())]);
            let when = format!("{shape:?} killed at failpoint {kill_at}");
            let new = recovered_state(&root, shape, &when);
            if let Some((outcome, _)) = report {
                assert_eq!(outcome, "ok", "{when}");
                assert!(new, "{when}: a commit that returned ok");
                break;
            }
            seen.insert(new);
        }
        // Every shape has failpoints after its rename; a write has one before it too.
        assert!(seen.contains(&true), "{shape:?}: {seen:?}");
        if shape != Shape::Delete {
            assert!(seen.contains(&false), "{shape:?}: {seen:?}");
        }
    }
}

#[test]
fn sigkill_at_every_fsync_leaves_the_target_old_or_new() {
    for shape in SHAPES {
        let (_dir, root) = project();
        let mut seen = std::collections::BTreeSet::new();
        for n in 1u64.. {
            assert!(n < 50, "{shape:?}: the worker never ran out of fsyncs");
            shape.set_up(&root);
            let report = run_worker(&root, shape, &[("CTX_FAULT_FSYNC_KILL", n.to_string())]);
            let when = format!("{shape:?} killed at fsync {n}");
            let new = recovered_state(&root, shape, &when);
            if let Some((outcome, _)) = report {
                assert_eq!(outcome, "ok", "{when}");
                assert!(new, "{when}: a commit that returned ok");
                break;
            }
            seen.insert(new);
        }
        // A crash at the lock's fsyncs (or the staged file's) keeps the old file; one at
        // the directory fsync, after the rename, finds the new one.
        assert_eq!(seen.len(), 2, "{shape:?}: {seen:?}");
    }
}

#[test]
fn eio_at_every_fsync_fails_closed_and_a_crash_in_the_undo_recovers() {
    for shape in SHAPES {
        let (_dir, root) = project();
        let mut failed = 0;
        for n in 1u64.. {
            assert!(n < 50, "{shape:?}: the worker never ran out of fsyncs");
            shape.set_up(&root);
            let when = format!("{shape:?}, EIO at fsync {n}");
            let (outcome, fsyncs) =
                run_worker(&root, shape, &[("CTX_FAULT_FSYNC_EIO", n.to_string())])
                    .unwrap_or_else(|| panic!("{when}: the worker died"));
            let applied = !outcome.starts_with("err");
            if !applied || outcome.starts_with("committed") {
                assert!(outcome.contains(EIO_TEXT), "{when}: {outcome}");
                failed += 1;
            }
            assert_eq!(
                shape.state(&root),
                Ok(applied),
                "{when}: {outcome}: an error must mean nothing was applied, success everything"
            );
            assert_eq!(recovered_state(&root, shape, &when), applied, "{when}");
            if fsyncs < n {
                assert_eq!(outcome, "ok", "{when}");
                break;
            }
            // The same EIO, then a crash at one of the next fsyncs (inside the undo).
            for later in 1..=3 {
                shape.set_up(&root);
                run_worker(
                    &root,
                    shape,
                    &[
                        ("CTX_FAULT_FSYNC_EIO", n.to_string()),
                        ("CTX_FAULT_FSYNC_KILL", (n + later).to_string()),
                    ],
                );
                recovered_state(
                    &root,
                    shape,
                    &format!("{when}, killed at fsync {}", n + later),
                );
            }
        }
        assert!(failed >= 2, "{shape:?}: too few fsyncs failed ({failed})");
    }
}

/// `eio_at_every_fsync…` run again with the undo switched off must fail: it is what
/// catches a one-file commit that reports an error with its change in place.
#[test]
fn the_eio_test_catches_a_disabled_undo() {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "eio_at_every_fsync_fails_closed_and_a_crash_in_the_undo_recovers",
            "--test-threads",
            "1",
            "--nocapture",
        ])
        .env("CTX_FAULT_DISABLE", "commit-undo")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("1 failed"), "the test did not run: {text}");
    assert!(
        text.contains("an error must mean nothing was applied"),
        "it failed, but not by detecting the change left in place: {text}"
    );
}

/// Child: the fsyncs of taking the lock and of one commit of each shape, in that order.
#[test]
#[ignore = "run as a child process by the fsync count test"]
fn worker_count_fsyncs() {
    let root = PathBuf::from(std::env::var("CTX_ROOT").unwrap());
    let calls = contextos_effects::faults::fsync_calls;
    let mut counts = Vec::new();
    for shape in SHAPES {
        shape.set_up(&root);
        let before = calls();
        let lock = acquire(&root, &lock_opts(), &mut |_| {}).unwrap();
        let locked = calls();
        journal::commit(
            &SafeRoot::open(&root).unwrap(),
            &lock,
            &[shape.step()],
            &mut |_| {},
        )
        .unwrap();
        counts.push(format!(
            "{} {} {}",
            shape.name(),
            locked - before,
            calls() - locked
        ));
    }
    std::fs::write(std::env::var("CTX_REPORT").unwrap(), counts.join("\n")).unwrap();
}

#[test]
fn a_one_file_commit_makes_only_the_fsyncs_it_needs() {
    let (_dir, root) = project();
    let report = root.with_extension("report");
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "worker_count_fsyncs",
            "--test-threads",
            "1",
        ])
        .env("CTX_ROOT", &root)
        .env("CTX_REPORT", &report)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    // The lock's state write: 2. A rewrite: the staged file and its directory. A creation
    // in `fresh/a/b`: the staged file, `fresh/a/b`, and the parents of the three new
    // directories (`fresh/a`, `fresh`, the root). A deletion: its directory.
    assert_eq!(
        std::fs::read_to_string(&report).unwrap(),
        "rewrite 2 2\ncreate 2 5\ndelete 2 1"
    );
}

// ---------------------------------------------------------------------------------------
// Races and preconditions, in process.

/// A commit of `shape` that runs `meanwhile` once its file is staged (after the first
/// check, before the re-check and the rename), and must fail saying `says`.
fn interfered(shape: Shape, meanwhile: &dyn Fn(&Path), says: &str) -> (tempfile::TempDir, PathBuf) {
    let (dir, root) = project();
    shape.set_up(&root);
    let err = commit(&root, shape, &mut |fp| {
        if fp == Failpoint::Staged(0) {
            meanwhile(&root);
        }
    })
    .unwrap_err();
    assert!(err.to_string().contains(says), "{err}");
    assert_clean(&root);
    (dir, root)
}

#[test]
fn a_target_swapped_for_a_symlink_before_the_rename_is_refused() {
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    let v = victim.clone();
    let (_dir, root) = interfered(
        Shape::Rewrite,
        &move |root| {
            std::fs::remove_file(root.join(REWRITTEN)).unwrap();
            std::os::unix::fs::symlink(&v, root.join(REWRITTEN)).unwrap();
        },
        "symbolic link",
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    let link = std::fs::symlink_metadata(root.join(REWRITTEN)).unwrap();
    assert!(link.file_type().is_symlink(), "the link is left alone");
}

#[test]
fn a_pre_image_changed_before_the_rename_aborts_and_keeps_the_other_writer() {
    let (_dir, root) = interfered(
        Shape::Rewrite,
        &|root| std::fs::write(root.join(REWRITTEN), "someone else\n").unwrap(),
        "changed while the transaction was prepared",
    );
    assert_eq!(
        std::fs::read_to_string(root.join(REWRITTEN)).unwrap(),
        "someone else\n"
    );
}

#[test]
fn a_file_created_in_the_way_before_the_rename_aborts_a_creation() {
    let (_dir, root) = interfered(
        Shape::Create,
        &|root| std::fs::write(root.join(CREATED), "raced\n").unwrap(),
        "changed while the transaction was prepared",
    );
    assert_eq!(
        std::fs::read_to_string(root.join(CREATED)).unwrap(),
        "raced\n"
    );
}

#[test]
fn a_stale_fence_before_the_rename_aborts() {
    let (_dir, root) = interfered(
        Shape::Rewrite,
        &|root| {
            let state = root.join(".contextos/state/lock.json");
            let mut v: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
            v["generation"] = serde_json::json!(v["generation"].as_u64().unwrap() + 7);
            std::fs::write(&state, serde_json::to_vec(&v).unwrap()).unwrap();
        },
        "fencing",
    );
    assert_eq!(Shape::Rewrite.state(&root), Ok(false));
}

#[test]
fn each_shape_commits_alone_and_leaves_nothing() {
    for shape in SHAPES {
        let (_dir, root) = project();
        shape.set_up(&root);
        commit(&root, shape, &mut |_| {}).unwrap();
        assert_eq!(shape.state(&root), Ok(true), "{shape:?}");
        assert_clean(&root);
    }
}

#[test]
fn a_failed_precondition_applies_nothing() {
    for shape in SHAPES {
        let (_dir, root) = project();
        shape.set_up(&root);
        // Rewrite and delete expect the old sha256; creation expects no file.
        let target = root.join(match shape {
            Shape::Rewrite => REWRITTEN,
            Shape::Create => CREATED,
            Shape::Delete => DELETED,
        });
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(&target, "not what was expected\n").unwrap();
        let err = commit(&root, shape, &mut |_| {}).unwrap_err();
        assert!(err.to_string().contains("precondition failed"), "{err}");
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "not what was expected\n"
        );
        assert_clean(&root);
    }
}

#[test]
fn a_journal_left_mid_path_is_recovered_to_old_or_new() {
    // What a crash can leave: a transaction directory without `intent.json`, holding the
    // staged file (before or after its data was durable) or an undo's restore file.
    for (shape, name) in [(Shape::Rewrite, "stage"), (Shape::Delete, "restore")] {
        let (_dir, root) = project();
        shape.set_up(&root);
        let t = root.join(".contextos/state/journal/00000000000000000001-dead");
        std::fs::create_dir_all(&t).unwrap();
        std::fs::write(t.join(name), NEW).unwrap();
        let pending = recover(&root);
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].state, "incomplete");
        assert_eq!(shape.state(&root), Ok(false), "{shape:?}: untouched");
        assert_clean(&root);
    }
}

// ---------------------------------------------------------------------------------------
// Random kills of a worker that commits one file after another.

const LOOPED: &str = "loop/one.txt";
/// Written by the looping worker after each commit it completes.
const PROGRESS: &str = "worker-progress";

/// The version `LOOPED` holds (0 when it does not exist); panics on anything else.
fn looped_version(root: &Path) -> u64 {
    match std::fs::read_to_string(root.join(LOOPED)) {
        Ok(text) => text
            .strip_prefix("version ")
            .and_then(|v| v.strip_suffix('\n'))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("torn file: {text:?}")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
        Err(e) => panic!("{e}"),
    }
}

/// Child: forever, recover and move `LOOPED` to the next version — created the first
/// time, then rewritten under the sha256 of the version it read.
#[test]
#[ignore = "run as a child process by the random-kill test"]
fn worker_one_file_loop() {
    let root = PathBuf::from(std::env::var("CTX_ROOT").unwrap());
    loop {
        let lock = acquire(&root, &lock_opts(), &mut |_| {}).unwrap();
        let safe = SafeRoot::open(&root).unwrap();
        journal::recover(&safe, &lock).unwrap();
        let v = looped_version(&root);
        let precondition = match std::fs::read(root.join(LOOPED)) {
            Ok(bytes) => Precondition::Sha256(sha256_hex(&bytes)),
            Err(_) => Precondition::MustNotExist,
        };
        let step = Step {
            change: Change::Write {
                path: LOOPED.into(),
                content: format!("version {}\n", v + 1).into_bytes(),
                mode: 0o640,
                exact_mode: false,
            },
            precondition,
        };
        journal::commit(&safe, &lock, &[step], &mut |_| {}).unwrap();
        drop(lock);
        let _ = std::fs::write(root.join(PROGRESS), b"");
    }
}

#[test]
fn sigkill_at_random_moments_never_tears_the_one_file() {
    let (_dir, root) = project();
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let (mut last, mut interrupted) = (0, 0);
    for _ in 0..20 {
        let _ = std::fs::remove_file(root.join(PROGRESS));
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--ignored",
                "--exact",
                "worker_one_file_loop",
                "--test-threads",
                "1",
            ])
            .env("CTX_ROOT", &root)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Start-up time depends on the machine's load: wait for a first commit, then kill
        // at a random moment of the loop.
        let started = std::time::Instant::now();
        while !root.join(PROGRESS).exists() {
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "the worker never committed"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(Duration::from_micros(1_000 + seed % 10_000));
        child.kill().unwrap();
        child.wait().unwrap();
        interrupted += usize::from(!recover(&root).is_empty());
        let v = looped_version(&root);
        assert!(v >= last, "versions never go backwards: {last} -> {v}");
        last = v;
        let mode = std::fs::metadata(root.join(LOOPED))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777;
        assert_eq!(mode, 0o640);
        assert_clean(&root);
    }
    assert!(last > 1, "the workers made progress");
    assert!(interrupted > 0, "no kill landed inside a transaction");
}
