//! The physical stage of the safe-path primitive on real directories, symlinks, hard
//! links and a concurrent symlink swap.
#![allow(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]

use contextos_effects::safe_fs::SafeRoot;
use std::os::unix::fs::{symlink, PermissionsExt};

struct Fixture {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    outside: std::path::PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret"), "outside").unwrap();
    Fixture {
        _dir: dir,
        root,
        outside,
    }
}

fn code(r: Result<impl std::fmt::Debug, contextos_effects::safe_fs::SafeFsError>) -> &'static str {
    match r {
        Ok(v) => panic!("expected a refusal, got {v:?}"),
        Err(e) => e.code,
    }
}

fn outside_untouched(f: &Fixture) {
    let mut names: Vec<String> = std::fs::read_dir(&f.outside)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["secret"],
        "something was written outside the project"
    );
    assert_eq!(
        std::fs::read_to_string(f.outside.join("secret")).unwrap(),
        "outside"
    );
}

#[test]
fn writes_and_reads_inside_creating_parents_and_keeping_modes() {
    let f = fixture();
    let r = SafeRoot::open(&f.root).unwrap();
    r.write_atomic("a/b/c.txt", b"one", 0o644).unwrap();
    assert_eq!(r.read("a/b/c.txt").unwrap(), b"one");
    std::fs::set_permissions(
        f.root.join("a/b/c.txt"),
        std::fs::Permissions::from_mode(0o750),
    )
    .unwrap();
    r.write_atomic("a/b/c.txt", b"two", 0o644).unwrap();
    let meta = std::fs::metadata(f.root.join("a/b/c.txt")).unwrap();
    assert_eq!(
        meta.permissions().mode() & 0o7777,
        0o750,
        "mode of an existing file is kept"
    );
    assert_eq!(std::fs::read(f.root.join("a/b/c.txt")).unwrap(), b"two");
    r.write_atomic("top.txt", b"x", 0o600).unwrap();
    assert_eq!(
        std::fs::metadata(f.root.join("top.txt"))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777,
        0o600
    );
    let leftovers: Vec<_> = std::fs::read_dir(f.root.join("a/b"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "no temp file left: {leftovers:?}");
}

#[test]
fn symlinks_pointing_outside_never_escape() {
    let f = fixture();
    symlink(&f.outside, f.root.join("abs")).unwrap();
    symlink("../outside", f.root.join("rel")).unwrap();
    std::fs::create_dir_all(f.root.join("deep/er")).unwrap();
    symlink("../../../outside", f.root.join("deep/er/up")).unwrap();
    symlink("/proc/self/root/tmp", f.root.join("magic")).unwrap();
    let r = SafeRoot::open(&f.root).unwrap();
    for p in ["abs/x", "rel/x", "deep/er/up/x", "abs/new/dir/x", "magic/x"] {
        assert_eq!(
            code(r.write_atomic(p, b"pwned", 0o644)),
            "path.escape",
            "{p}"
        );
    }
    for p in ["abs/secret", "rel/secret", "deep/er/up/secret"] {
        assert_eq!(code(r.read(p)), "path.escape", "{p}");
    }
    outside_untouched(&f);
}

#[test]
fn a_final_symlink_is_never_followed() {
    let f = fixture();
    symlink(f.outside.join("secret"), f.root.join("link.txt")).unwrap();
    symlink("inside.txt", f.root.join("inner-link.txt")).unwrap();
    std::fs::write(f.root.join("inside.txt"), "in").unwrap();
    let r = SafeRoot::open(&f.root).unwrap();
    assert_eq!(
        code(r.write_atomic("link.txt", b"pwned", 0o644)),
        "path.symlink"
    );
    assert_eq!(code(r.read("link.txt")), "path.symlink");
    assert_eq!(
        code(r.write_atomic("inner-link.txt", b"x", 0o644)),
        "path.symlink"
    );
    outside_untouched(&f);
}

#[test]
fn symlinked_directories_that_stay_inside_resolve() {
    let f = fixture();
    std::fs::create_dir_all(f.root.join("real")).unwrap();
    symlink("real", f.root.join("alias")).unwrap();
    let r = SafeRoot::open(&f.root).unwrap();
    r.write_atomic("alias/f.txt", b"ok", 0o644).unwrap();
    assert_eq!(std::fs::read(f.root.join("real/f.txt")).unwrap(), b"ok");
}

#[test]
fn hard_links_are_refused_for_writes() {
    let f = fixture();
    std::fs::hard_link(f.outside.join("secret"), f.root.join("h.txt")).unwrap();
    let r = SafeRoot::open(&f.root).unwrap();
    assert_eq!(
        code(r.write_atomic("h.txt", b"pwned", 0o644)),
        "path.hardlink"
    );
    assert_eq!(
        r.read("h.txt").unwrap(),
        b"outside",
        "reading changes nothing"
    );
    outside_untouched(&f);
}

#[test]
fn directories_special_files_and_bad_paths() {
    let f = fixture();
    std::fs::create_dir_all(f.root.join("d")).unwrap();
    std::fs::write(f.root.join("file"), "x").unwrap();
    let r = SafeRoot::open(&f.root).unwrap();
    assert_eq!(code(r.write_atomic("d", b"x", 0o644)), "path.is-directory");
    assert_eq!(
        code(r.write_atomic("file/below", b"x", 0o644)),
        "path.not-a-directory"
    );
    assert_eq!(code(r.read("missing")), "path.not-found");
    assert_eq!(
        code(r.write_atomic("../outside/x", b"x", 0o644)),
        "path.traversal"
    );
    assert_eq!(code(r.write_atomic("/etc/x", b"x", 0o644)), "path.absolute");
    assert_eq!(
        code(r.write_atomic("./a//b", b"x", 0o644)),
        "path.not-canonical"
    );
    assert_eq!(
        code(r.write_atomic(".GIT/config", b"x", 0o644)),
        "path.git-alias"
    );
    outside_untouched(&f);
}

/// Worker process: flips `d` between the real directory and a symlink to the outside,
/// atomically (`renameat2(RENAME_EXCHANGE)`), until `stop` appears.
#[test]
#[ignore = "run as a child process by a_concurrent_symlink_swap_never_lets_a_write_escape"]
fn worker_swapper() {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    let root = std::path::PathBuf::from(std::env::var("CTX_SWAP_ROOT").unwrap());
    let (d, link, stop) = (root.join("d"), root.join("d.link"), root.join("stop"));
    let mut swaps = 0u64;
    while !stop.exists() {
        for _ in 0..64 {
            renameat_with(CWD, &link, CWD, &d, RenameFlags::EXCHANGE).unwrap();
            swaps += 1;
        }
    }
    std::fs::write(root.join("swaps"), swaps.to_string()).unwrap();
}

#[test]
fn a_concurrent_symlink_swap_never_lets_a_write_escape() {
    let f = fixture();
    let r = SafeRoot::open(&f.root).unwrap();
    std::fs::create_dir(f.root.join("d")).unwrap();
    symlink(&f.outside, f.root.join("d.link")).unwrap();
    let mut swapper = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "worker_swapper",
            "--test-threads",
            "1",
        ])
        .env("CTX_SWAP_ROOT", &f.root)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let (mut ok, mut refused) = (0u32, 0u32);
    for i in 0..3000 {
        match r.write_atomic("d/f", format!("{i}").as_bytes(), 0o644) {
            Ok(()) => ok += 1,
            Err(e) => {
                assert!(
                    matches!(e.code, "path.escape" | "path.symlink" | "path.busy"),
                    "{e}"
                );
                refused += 1;
            }
        }
    }
    std::fs::write(f.root.join("stop"), "").unwrap();
    assert!(swapper.wait().unwrap().success());
    let swaps: u64 = std::fs::read_to_string(f.root.join("swaps"))
        .unwrap()
        .parse()
        .unwrap();
    assert!(swaps > 100, "the race must actually race ({swaps} swaps)");
    assert!(
        ok > 0 && refused > 0,
        "both outcomes must occur: {ok} written, {refused} refused"
    );
    outside_untouched(&f);
}
