//! JournaledTransaction under real crashes: a child process runs a multi-file
//! transaction and SIGKILLs itself at every failpoint (and, separately, is killed by the
//! parent at random moments); after recovery every file of the transaction is old or
//! every file is new, and no temp, backup or journal file is left.
#![allow(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]

use contextos_effects::journal::{self, Change, Failpoint, Precondition, Step};
use contextos_effects::project_lock::{acquire, AcquireOptions};
use contextos_effects::safe_fs::SafeRoot;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const FILES: [&str; 4] = ["a.txt", "src/b.rs", "src/deep/c.md", "docs/d.txt"];
const OPTIONAL: &str = "src/optional.txt";

fn lock_opts() -> AcquireOptions {
    AcquireOptions {
        timeout: Duration::from_secs(30),
        command: "journal-test".into(),
    }
}

/// The transaction from version `n` to `n + 1`: every file gets the new version, and the
/// optional file exists exactly at odd versions (created or deleted).
fn next_version(n: u64) -> Vec<Step> {
    let v = n + 1;
    let mut steps: Vec<Step> = FILES
        .iter()
        .map(|f| Step {
            change: Change::Write {
                path: (*f).to_string(),
                content: format!("version {v} of {f}\n").into_bytes(),
                mode: 0o640,
                exact_mode: false,
            },
            precondition: Precondition::Any,
        })
        .collect();
    steps.push(Step {
        change: if v % 2 == 1 {
            Change::Write {
                path: OPTIONAL.into(),
                content: format!("version {v}\n").into_bytes(),
                mode: 0o600,
                exact_mode: false,
            }
        } else {
            Change::Delete {
                path: OPTIONAL.into(),
            }
        },
        precondition: if v % 2 == 1 {
            Precondition::MustNotExist
        } else {
            Precondition::Any
        },
    });
    steps
}

/// The version every file agrees on; panics if the files disagree (a torn transaction).
fn consistent_version(root: &Path) -> u64 {
    let versions: Vec<u64> = FILES
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(root.join(f)).unwrap_or_else(|_| "version 0".into());
            text.split_whitespace().nth(1).unwrap().parse().unwrap()
        })
        .collect();
    assert!(
        versions.windows(2).all(|w| w[0] == w[1]),
        "torn transaction: {versions:?}"
    );
    let v = versions[0];
    assert_eq!(
        root.join(OPTIONAL).exists(),
        v % 2 == 1,
        "optional file disagrees with version {v}"
    );
    if v > 0 {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(root.join(FILES[0]))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o640, "mode of a new file");
    }
    v
}

/// No temp, backup or journal leftovers anywhere in the project.
fn assert_clean(root: &Path) {
    fn walk(dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                walk(&p, out);
            } else {
                out.push(p.display().to_string());
            }
        }
    }
    let mut files = Vec::new();
    walk(root, &mut files);
    let stray: Vec<&String> = files
        .iter()
        .filter(|f| f.contains(".ctx-") || f.contains("/journal/"))
        .collect();
    assert!(stray.is_empty(), "leftovers: {stray:?}");
}

fn recover_in_process(root: &Path) -> Vec<journal::Pending> {
    let lock = acquire(root, &lock_opts(), &mut |_| {}).unwrap();
    let safe = SafeRoot::open(root).unwrap();
    journal::recover(&safe, &lock).unwrap()
}

/// Child: recover, then move to the next version, dying at failpoint number `CTX_KILL_AT`
/// (counted from 1), or looping forever when `CTX_LOOP` is set.
#[test]
#[ignore = "run as a child process by the crash tests"]
fn worker_transaction() {
    let root = std::path::PathBuf::from(std::env::var("CTX_ROOT").unwrap());
    let kill_at: Option<usize> = std::env::var("CTX_KILL_AT")
        .ok()
        .map(|v| v.parse().unwrap());
    let looping = std::env::var("CTX_LOOP").is_ok();
    loop {
        let lock = acquire(&root, &lock_opts(), &mut |_| {}).unwrap();
        let safe = SafeRoot::open(&root).unwrap();
        journal::recover(&safe, &lock).unwrap();
        let n = consistent_version(&root);
        let mut count = 0usize;
        journal::commit(&safe, &lock, &next_version(n), &mut |_fp: Failpoint| {
            count += 1;
            if Some(count) == kill_at {
                let _ = rustix::process::kill_process(
                    rustix::process::getpid(),
                    rustix::process::Signal::KILL,
                );
            }
        })
        .unwrap();
        drop(lock);
        if !looping {
            break;
        }
        // Tells the parent this child has committed at least once, so its kill can
        // land anywhere in a running loop however long the process took to start.
        let _ = std::fs::write(root.join(PROGRESS), b"");
    }
}

/// Written by a looping worker after each commit it completes.
const PROGRESS: &str = "worker-progress";

fn child(root: &Path, env: &[(&str, String)]) -> std::process::Child {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--ignored",
        "--exact",
        "worker_transaction",
        "--test-threads",
        "1",
    ])
    .env("CTX_ROOT", root)
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

#[test]
fn a_clean_commit_is_all_new_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for n in 0..4 {
        let lock = acquire(root, &lock_opts(), &mut |_| {}).unwrap();
        let safe = SafeRoot::open(root).unwrap();
        let c = journal::commit(&safe, &lock, &next_version(n), &mut |_| {}).unwrap();
        assert_eq!(c.files, 5);
        assert_eq!(c.generation, lock.generation());
        drop(lock);
        assert_eq!(consistent_version(root), n + 1);
        assert_clean(root);
        assert!(journal::status(&SafeRoot::open(root).unwrap())
            .unwrap()
            .is_empty());
    }
}

#[test]
fn sigkill_at_every_failpoint_recovers_to_all_old_or_all_new() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // Count the failpoints of one transaction from version 0 and from version 1 (their
    // shapes differ: create vs delete of the optional file, backups or not).
    let mut outcomes = std::collections::BTreeMap::new();
    // Twice over, so every failpoint number is hit in transactions of different shapes.
    for kill_at in (1..=20usize).chain(1..=20) {
        let before = consistent_version(root);
        let status = child(root, &[("CTX_KILL_AT", kill_at.to_string())])
            .wait()
            .unwrap();
        let pending = recover_in_process(root);
        let after = consistent_version(root);
        assert!(
            after == before || after == before + 1,
            "kill at {kill_at}: {before} -> {after}"
        );
        assert_clean(root);
        assert!(!root
            .join(".contextos/state/journal")
            .read_dir()
            .map(|mut d| d.next().is_some())
            .unwrap_or(false));
        *outcomes
            .entry((status.success(), after == before + 1))
            .or_insert(0) += 1;
        let _ = pending;
    }
    // Killed before the commit point rolls back; killed after it (or not killed) rolls forward.
    assert!(
        outcomes.contains_key(&(false, false)),
        "some kills must roll back: {outcomes:?}"
    );
    assert!(
        outcomes.contains_key(&(false, true)),
        "some kills must roll forward: {outcomes:?}"
    );
    assert!(
        outcomes.contains_key(&(true, true)),
        "kill points past the last failpoint complete: {outcomes:?}"
    );
}

fn random_kill_trials(trials: u32) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut last = 0;
    let mut interrupted = 0;
    for _ in 0..trials {
        let _ = std::fs::remove_file(root.join(PROGRESS));
        let mut c = child(root, &[("CTX_LOOP", "1".into())]);
        // Start-up time depends on the machine's load, not on the journal: wait for the
        // first commit, then kill at a random moment of the loop.
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
        std::thread::sleep(Duration::from_micros(2_000 + seed % 20_000));
        c.kill().unwrap();
        c.wait().unwrap();
        interrupted += usize::from(!recover_in_process(root).is_empty());
        let v = consistent_version(root);
        assert!(v >= last, "versions never go backwards: {last} -> {v}");
        last = v;
        assert_clean(root);
    }
    assert!(last > 0, "the children made progress");
    assert!(interrupted > 0, "no kill landed inside a transaction");
}

#[test]
fn sigkill_at_random_moments_never_tears_a_transaction() {
    random_kill_trials(25);
}

/// The soak: `CTX_SOAK_TRIALS=1000 cargo test --release -p contextos-effects --test journal -- --ignored soak`.
#[test]
#[ignore = "long soak; run explicitly"]
fn soak_random_kills() {
    let trials = std::env::var("CTX_SOAK_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    random_kill_trials(trials);
}

#[test]
fn preconditions_are_checked_and_nothing_is_applied_on_failure() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("x.txt"), "old").unwrap();
    let lock = acquire(root, &lock_opts(), &mut |_| {}).unwrap();
    let safe = SafeRoot::open(root).unwrap();
    let steps = vec![
        Step {
            change: Change::Write {
                path: "y.txt".into(),
                content: b"new".to_vec(),
                mode: 0o644,
                exact_mode: false,
            },
            precondition: Precondition::MustNotExist,
        },
        Step {
            change: Change::Write {
                path: "x.txt".into(),
                content: b"new".to_vec(),
                mode: 0o644,
                exact_mode: false,
            },
            precondition: Precondition::Sha256("0".repeat(64)),
        },
    ];
    let err = journal::commit(&safe, &lock, &steps, &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("precondition failed"), "{err}");
    assert!(!root.join("y.txt").exists());
    assert_eq!(std::fs::read_to_string(root.join("x.txt")).unwrap(), "old");
    let dup = vec![steps[0].clone(), steps[0].clone()];
    assert!(matches!(
        journal::commit(&safe, &lock, &dup, &mut |_| {}),
        Err(journal::JournalError::Duplicate { .. })
    ));
}

#[test]
fn a_stale_fence_refuses_to_apply() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let lock = acquire(root, &lock_opts(), &mut |_| {}).unwrap();
    let safe = SafeRoot::open(root).unwrap();
    let state = root.join(".contextos/state/lock.json");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
    v["generation"] = serde_json::json!(lock.generation() + 7);
    std::fs::write(&state, serde_json::to_vec(&v).unwrap()).unwrap();
    let err = journal::commit(&safe, &lock, &next_version(0), &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("fencing"), "{err}");
    assert!(!root.join("a.txt").exists());
}

#[test]
fn a_failure_half_way_through_applying_undoes_what_was_applied() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    {
        let lock = acquire(root, &lock_opts(), &mut |_| {}).unwrap();
        let safe = SafeRoot::open(root).unwrap();
        journal::commit(&safe, &lock, &next_version(0), &mut |_| {}).unwrap();
    }
    assert_eq!(consistent_version(root), 1);
    let lock = acquire(root, &lock_opts(), &mut |_| {}).unwrap();
    let safe = SafeRoot::open(root).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let second = root.join(FILES[1]);
    // After the first rename, swap the second target for a symlink: its rename is refused.
    let err = journal::commit(&safe, &lock, &next_version(1), &mut |fp| {
        if fp == Failpoint::Applied(0) {
            std::fs::remove_file(&second).unwrap();
            std::os::unix::fs::symlink(outside.path().join("x"), &second).unwrap();
        }
    })
    .unwrap_err();
    assert!(err.to_string().contains("symbolic link"), "{err}");
    // The first file is back to version 1; the journal is empty.
    let first = std::fs::read_to_string(root.join(FILES[0])).unwrap();
    assert!(first.starts_with("version 1 "), "{first}");
    assert!(journal::status(&safe).unwrap().is_empty());
    assert!(
        std::fs::read_dir(outside.path()).unwrap().next().is_none(),
        "nothing written through the link"
    );
}

fn mode_of(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

#[test]
fn an_exact_mode_changes_an_existing_file_and_a_rollback_restores_it() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for f in ["tool.sh", "keep.sh", "other.txt"] {
        std::fs::write(root.join(f), "old\n").unwrap();
        std::fs::set_permissions(root.join(f), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let write = |path: &str, mode: u32, exact_mode: bool| Step {
        change: Change::Write {
            path: path.into(),
            content: b"new\n".to_vec(),
            mode,
            exact_mode,
        },
        precondition: Precondition::Any,
    };
    let lock = acquire(root, &lock_opts(), &mut |_| {}).unwrap();
    let safe = SafeRoot::open(root).unwrap();
    // A failure after the first file was applied rolls back its content and its mode.
    let other = root.join("other.txt");
    let err = journal::commit(
        &safe,
        &lock,
        &[
            write("tool.sh", 0o755, true),
            write("other.txt", 0o644, false),
        ],
        &mut |fp| {
            if fp == Failpoint::Applied(0) {
                std::fs::remove_file(&other).unwrap();
                std::os::unix::fs::symlink("/nonexistent", &other).unwrap();
            }
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("symbolic link"), "{err}");
    assert_eq!(
        std::fs::read_to_string(root.join("tool.sh")).unwrap(),
        "old\n"
    );
    assert_eq!(
        mode_of(&root.join("tool.sh")),
        0o644,
        "the rollback restores the mode"
    );
    std::fs::remove_file(&other).unwrap();
    // Applied: the exact mode lands; without it the existing file keeps its own.
    journal::commit(
        &safe,
        &lock,
        &[
            write("tool.sh", 0o755, true),
            write("keep.sh", 0o755, false),
        ],
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(mode_of(&root.join("tool.sh")), 0o755);
    assert_eq!(mode_of(&root.join("keep.sh")), 0o644);
    assert_eq!(
        std::fs::read_to_string(root.join("keep.sh")).unwrap(),
        "new\n"
    );
}

#[test]
fn deleting_a_missing_file_in_a_missing_directory_is_a_no_op() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let lock = acquire(root, &lock_opts(), &mut |_| {}).unwrap();
    let safe = SafeRoot::open(root).unwrap();
    let steps = [
        Step {
            change: Change::Delete {
                path: "gone/away/f.txt".into(),
            },
            precondition: Precondition::Any,
        },
        Step {
            change: Change::Write {
                path: "kept.txt".into(),
                content: b"new\n".to_vec(),
                mode: 0o644,
                exact_mode: false,
            },
            precondition: Precondition::MustNotExist,
        },
    ];
    let c = journal::commit(&safe, &lock, &steps, &mut |_| {}).unwrap();
    assert_eq!(c.files, 2);
    assert!(
        !root.join("gone").exists(),
        "no directory made for a delete"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("kept.txt")).unwrap(),
        "new\n"
    );
    assert_clean(root);
}
