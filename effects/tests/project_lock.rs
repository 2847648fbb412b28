//! ProjectMutationLock with real processes: this test binary re-executes itself as the
//! workers (`--ignored --exact worker_*` with an environment role), so every contender
//! is a separate OS process holding its own file descriptor.
#![allow(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]

use contextos_effects::project_lock::{acquire, status, AcquireOptions, ProjectLockError};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn opts(timeout_ms: u64) -> AcquireOptions {
    AcquireOptions {
        timeout: Duration::from_millis(timeout_ms),
        command: "lock-test".into(),
    }
}

fn spawn_worker(name: &str, root: &Path, extra: &[(&str, String)]) -> Child {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--ignored",
        "--exact",
        name,
        "--nocapture",
        "--test-threads",
        "1",
    ])
    .env("CTX_LOCK_ROOT", root)
    .stdout(Stdio::null())
    .stderr(Stdio::inherit());
    for (k, v) in extra {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

fn env_path(k: &str) -> PathBuf {
    PathBuf::from(std::env::var(k).unwrap())
}

/// Worker: N read-modify-write increments of `counter` under the lock, each critical
/// section proving exclusivity with an O_EXCL marker and logging enter/exit.
#[test]
#[ignore = "run as a child process by many_processes_never_overlap"]
fn worker_increment() {
    let root = env_path("CTX_LOCK_ROOT");
    let iters: u32 = std::env::var("CTX_LOCK_ITERS").unwrap().parse().unwrap();
    let go = root.join("go");
    while !go.exists() {
        std::thread::sleep(Duration::from_millis(1));
    }
    for _ in 0..iters {
        let guard = acquire(&root, &opts(120_000), &mut |_| {}).unwrap();
        guard.verify_fence().unwrap();
        let marker = root.join("inside");
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&marker)
            .expect("another process is inside the critical section");
        let mut log = std::fs::OpenOptions::new()
            .append(true)
            .open(root.join("log"))
            .unwrap();
        writeln!(
            log,
            "enter {} {} {}",
            guard.generation(),
            guard.token(),
            std::process::id()
        )
        .unwrap();
        let counter = root.join("counter");
        let n: u64 = std::fs::read_to_string(&counter)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        std::fs::write(&counter, format!("{}\n", n + 1)).unwrap();
        writeln!(log, "exit {} {}", guard.generation(), guard.token()).unwrap();
        std::fs::remove_file(&marker).unwrap();
        drop(guard);
    }
}

/// Worker: takes the lock, announces it, then holds it until killed.
#[test]
#[ignore = "run as a child process by the kill and timeout tests"]
fn worker_hold_forever() {
    let root = env_path("CTX_LOCK_ROOT");
    let guard = acquire(&root, &opts(10_000), &mut |_| {}).unwrap();
    std::fs::write(root.join("holding"), guard.generation().to_string()).unwrap();
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

fn wait_for(path: &Path) -> String {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(30) {
        if let Ok(s) = std::fs::read_to_string(path) {
            if !s.is_empty() {
                return s;
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("{} never appeared", path.display());
}

#[test]
fn many_processes_never_overlap() {
    const PROCS: usize = 8;
    const ITERS: u32 = 100;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("counter"), "0\n").unwrap();
    std::fs::write(root.join("log"), "").unwrap();
    let children: Vec<Child> = (0..PROCS)
        .map(|_| {
            spawn_worker(
                "worker_increment",
                root,
                &[("CTX_LOCK_ITERS", ITERS.to_string())],
            )
        })
        .collect();
    std::fs::write(root.join("go"), "").unwrap();
    for mut c in children {
        assert!(c.wait().unwrap().success(), "a worker failed");
    }
    let count: u64 = std::fs::read_to_string(root.join("counter"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(count, PROCS as u64 * u64::from(ITERS), "lost updates");

    // The log is written only inside critical sections: enter/exit must alternate with
    // the same generation and token, and generations must strictly increase.
    let log = std::fs::read_to_string(root.join("log")).unwrap();
    let lines: Vec<Vec<&str>> = log.lines().map(|l| l.split(' ').collect()).collect();
    assert_eq!(lines.len(), PROCS * ITERS as usize * 2);
    let mut last_gen = 0u64;
    let mut tokens = std::collections::HashSet::new();
    for pair in lines.chunks(2) {
        let (enter, exit) = (&pair[0], &pair[1]);
        assert_eq!(enter[0], "enter", "{pair:?}");
        assert_eq!(exit[0], "exit", "overlapping critical sections: {pair:?}");
        assert_eq!(
            enter[1], exit[1],
            "generation changed inside a critical section"
        );
        assert_eq!(enter[2], exit[2], "token changed inside a critical section");
        let gen: u64 = enter[1].parse().unwrap();
        assert!(
            gen > last_gen,
            "generation {gen} after {last_gen}: not strictly increasing"
        );
        last_gen = gen;
        assert!(tokens.insert(enter[2].to_string()), "token reused");
    }
    let s = status(root).unwrap();
    assert!(!s.held);
    assert_eq!(s.state.map(|s| s.generation), Some(last_gen));
}

#[test]
fn a_killed_holder_releases_the_lock_and_the_generation_moves_on() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut child = spawn_worker("worker_hold_forever", root, &[]);
    let held_gen: u64 = wait_for(&root.join("holding")).trim().parse().unwrap();
    let s = status(root).unwrap();
    assert!(s.held, "status must see the live holder");
    assert_eq!(s.state.as_ref().map(|s| s.pid), Some(child.id()));

    // Busy: a short acquire times out and names the holder.
    let mut waited_for = None;
    let err = acquire(root, &opts(150), &mut |h| waited_for = h.map(|h| h.pid)).unwrap_err();
    assert!(matches!(err, ProjectLockError::Timeout { .. }), "{err}");
    assert!(
        err.to_string().contains(&format!("pid {}", child.id())),
        "{err}"
    );
    assert_eq!(waited_for, Some(child.id()));

    child.kill().unwrap(); // SIGKILL in the middle of its critical section
    child.wait().unwrap();
    let guard = acquire(root, &opts(10_000), &mut |_| {}).unwrap();
    assert_eq!(guard.generation(), held_gen + 1);
    assert_eq!(guard.state().pid, std::process::id());
}

#[test]
fn the_lock_is_not_reentrant_within_a_process() {
    let dir = tempfile::tempdir().unwrap();
    let first = acquire(dir.path(), &opts(1_000), &mut |_| {}).unwrap();
    let again = acquire(dir.path(), &opts(1_000), &mut |_| {});
    assert!(
        matches!(again, Err(ProjectLockError::Reentrant(_))),
        "{again:?}"
    );
    // Another project is independent.
    let other = tempfile::tempdir().unwrap();
    let second = acquire(other.path(), &opts(1_000), &mut |_| {}).unwrap();
    assert_eq!(second.generation(), 1);
    drop(first);
    let after = acquire(dir.path(), &opts(1_000), &mut |_| {}).unwrap();
    assert_eq!(after.generation(), 2, "released and re-acquired");
}

#[test]
fn fencing_detects_a_state_that_names_someone_else() {
    let dir = tempfile::tempdir().unwrap();
    let guard = acquire(dir.path(), &opts(1_000), &mut |_| {}).unwrap();
    guard.verify_fence().unwrap();
    let state_path = dir.path().join(".contextos/state/lock.json");
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&state_path).unwrap()).unwrap();
    v["generation"] = serde_json::json!(guard.generation() + 1);
    std::fs::write(&state_path, serde_json::to_vec(&v).unwrap()).unwrap();
    assert!(matches!(
        guard.verify_fence(),
        Err(ProjectLockError::Fenced { .. })
    ));
}

#[test]
fn corrupt_state_fails_closed() {
    let dir = tempfile::tempdir().unwrap();
    let state_dir = dir.path().join(".contextos/state");
    std::fs::create_dir_all(&state_dir).unwrap();
    std::fs::write(state_dir.join("lock.json"), "{ not json").unwrap();
    let err = acquire(dir.path(), &opts(1_000), &mut |_| {}).unwrap_err();
    assert!(
        matches!(err, ProjectLockError::CorruptState { .. }),
        "{err}"
    );
    // The failed attempt did not leave this process marked as holder.
    std::fs::remove_file(state_dir.join("lock.json")).unwrap();
    assert_eq!(
        acquire(dir.path(), &opts(1_000), &mut |_| {})
            .unwrap()
            .generation(),
        1
    );
}

#[test]
fn the_lock_file_is_never_deleted_and_no_temp_files_remain() {
    let dir = tempfile::tempdir().unwrap();
    for _ in 0..3 {
        drop(acquire(dir.path(), &opts(1_000), &mut |_| {}).unwrap());
    }
    let mut names: Vec<String> = std::fs::read_dir(dir.path().join(".contextos/state"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["lock", "lock.json"]);
}
