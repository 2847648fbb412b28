//! Sandbox sessions on the real Docker Engine, in both capture modes.
//!
//! No registry is reachable, so the probe image is assembled from host binaries (dash as
//! `/bin/sh` plus the coreutils the scripts use, with the libraries `ldd` names) and
//! imported with `docker import`. Its `/tmp` is mode 0755 on purpose: the session's
//! tmpfs must be writable by the sandbox user anyway. The tar is deterministic, so the
//! tag (from its sha256) is reused across runs.
#![cfg(feature = "docker")]
#![allow(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]

use contextos_effects::safe_fs::sha256_hex;
use contextos_effects::sandbox::profile::Profile;
use contextos_effects::sandbox::runner::Runner;
use contextos_effects::sandbox::session::{
    CaptureMode, Change, ExecOptions, ExecOutcome, Pending, Session, SessionConfig,
};
use contextos_effects::sandbox::spec::{SESSION_LABEL, SESSION_STATE_LABEL};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime};

const BINARIES: &[&str] = &[
    "dash", "cat", "ls", "rm", "mkdir", "chmod", "ln", "mkfifo", "mv", "sleep", "touch", "id",
];

const MODES: [CaptureMode; 2] = [CaptureMode::Overlay, CaptureMode::Copy];

fn docker(args: &[&str]) -> std::process::Output {
    Command::new("docker")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("the docker CLI is needed for these tests: {e}"))
}

fn which(name: &str) -> PathBuf {
    for dir in ["/usr/bin", "/bin", "/usr/sbin", "/sbin"] {
        let p = Path::new(dir).join(name);
        if p.is_file() {
            return p;
        }
    }
    panic!("{name} not found on the host");
}

fn libraries(bin: &Path) -> Vec<PathBuf> {
    let out = Command::new("ldd").arg(bin).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter(|w| w.starts_with('/'))
        .map(PathBuf::from)
        .collect()
}

fn append(
    tar: &mut tar::Builder<Vec<u8>>,
    path: &str,
    data: &[u8],
    mode: u32,
    kind: tar::EntryType,
) {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(kind);
    h.set_mode(mode);
    h.set_uid(0);
    h.set_gid(0);
    h.set_mtime(0);
    h.set_size(data.len() as u64);
    tar.append_data(&mut h, path.trim_start_matches('/'), data)
        .unwrap();
}

/// The probe image's root file system; `/tmp` is 0755 and root-owned.
fn rootfs_tar() -> Vec<u8> {
    let mut tar = tar::Builder::new(Vec::new());
    let mut libs: BTreeSet<PathBuf> = BTreeSet::new();
    let bins: Vec<(String, PathBuf)> = BINARIES
        .iter()
        .map(|b| {
            let p = which(b);
            libs.extend(libraries(&p));
            (b.to_string(), p)
        })
        .collect();
    let mut dirs: BTreeSet<String> = ["/bin", "/etc", "/tmp", "/home"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for f in &libs {
        let mut d = f.parent();
        while let Some(p) = d {
            if p != Path::new("/") {
                dirs.insert(p.display().to_string());
            }
            d = p.parent();
        }
    }
    for d in &dirs {
        append(
            &mut tar,
            &format!("{d}/"),
            &[],
            0o755,
            tar::EntryType::Directory,
        );
    }
    for f in &libs {
        let data = std::fs::read(f).unwrap();
        append(
            &mut tar,
            &f.display().to_string(),
            &data,
            0o755,
            tar::EntryType::Regular,
        );
    }
    for (name, path) in &bins {
        let data = std::fs::read(path).unwrap();
        let dest = if name == "dash" {
            "/bin/sh".to_string()
        } else {
            format!("/bin/{name}")
        };
        append(&mut tar, &dest, &data, 0o755, tar::EntryType::Regular);
    }
    append(
        &mut tar,
        "/etc/passwd",
        b"root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n",
        0o644,
        tar::EntryType::Regular,
    );
    tar.into_inner().unwrap()
}

fn image() -> &'static str {
    static IMAGE: OnceLock<String> = OnceLock::new();
    IMAGE.get_or_init(|| {
        let tar = rootfs_tar();
        let tag = format!("contextos-session-probe:{}", &sha256_hex(&tar)[..12]);
        if docker(&["image", "inspect", &tag]).status.success() {
            return tag;
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("rootfs.tar");
        std::fs::write(&file, &tar).unwrap();
        let out = docker(&[
            "import",
            "--change",
            "ENV PATH=/bin",
            &file.display().to_string(),
            &tag,
        ]);
        assert!(
            out.status.success(),
            "docker import: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        tag
    })
}

fn runner() -> Runner {
    Runner::connect().unwrap()
}

fn image_id(r: &Runner) -> String {
    r.resolve_image(image(), &Profile::floor()).unwrap().id
}

/// A temp project with tracked files, a git directory, ContextOS state, an ignored
/// `target/` and a secret; for overlay mode it belongs to 1000:1000, as a developer's
/// checkout would.
struct Proj {
    dir: tempfile::TempDir,
    scratch: tempfile::TempDir,
    mode: CaptureMode,
}

const FILES: &[(&str, &str)] = &[
    ("README.md", "readme\n"),
    ("del.txt", "to delete\n"),
    ("script.sh", "echo hi\n"),
    ("src/a.rs", "fn a() {}\n"),
    ("src/b.rs", "fn b() {}\n"),
    ("src/c.rs", "fn c() {}\n"),
    (".gitignore", "target/\n"),
    (".env", "SECRET=hunter2\n"),
    (".git/config", "[core]\n"),
    (".git/HEAD", "ref: refs/heads/main\n"),
    (".contextos/state/lock", ""),
];

fn chown_tree(p: &Path) {
    std::os::unix::fs::lchown(p, Some(1000), Some(1000)).unwrap();
    if p.is_dir() && !p.is_symlink() {
        for e in std::fs::read_dir(p).unwrap() {
            chown_tree(&e.unwrap().path());
        }
    }
}

impl Proj {
    fn new(mode: CaptureMode) -> Proj {
        let dir = tempfile::tempdir().unwrap();
        for (rel, text) in FILES {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, text).unwrap();
        }
        if mode == CaptureMode::Overlay {
            chown_tree(dir.path());
        }
        Proj {
            dir,
            scratch: tempfile::tempdir().unwrap(),
            mode,
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn state_dir(&self) -> PathBuf {
        self.path().join(".contextos/state/sessions")
    }

    /// Replaces a host file the way the journal does: temp file, then rename.
    fn host_write(&self, rel: &str, text: &str, mode: u32) {
        use std::os::unix::fs::PermissionsExt as _;
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let tmp = p.with_extension("ctx-tmp");
        std::fs::write(&tmp, text).unwrap();
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(mode)).unwrap();
        if self.mode == CaptureMode::Overlay {
            chown_tree(&tmp);
        }
        std::fs::rename(&tmp, &p).unwrap();
    }

    /// Applies a changeset on the host as the journal would.
    fn apply(&self, p: &Pending) {
        for c in &p.changes {
            match c {
                Change::Write {
                    path,
                    content,
                    mode,
                    ..
                } => self.host_write(path, std::str::from_utf8(content).unwrap(), *mode),
                Change::Delete { path, .. } => {
                    std::fs::remove_file(self.path().join(path)).unwrap()
                }
            }
        }
    }
}

fn no_withhold(_: &str) -> bool {
    false
}

fn open<'a>(
    r: &'a Runner,
    proj: &'a Proj,
    id: &'a str,
    image_id: &'a str,
    profile: &'a Profile,
    withhold: &'a mut dyn FnMut(&str) -> bool,
) -> Session<'a> {
    let s = r
        .open_session(SessionConfig {
            id,
            project: proj.path(),
            state_dir: Box::leak(Box::new(proj.state_dir())),
            scratch_base: Some(proj.scratch.path()),
            image_id,
            profile,
            idle: Duration::from_secs(600),
            force_mode: Some(proj.mode),
            withhold,
        })
        .unwrap();
    assert_eq!(s.mode(), proj.mode);
    s
}

fn sh(s: &mut Session<'_>, script: &str) -> ExecOutcome {
    let argv = vec!["/bin/sh".to_string(), "-c".to_string(), script.to_string()];
    s.exec(&argv, ExecOptions::default(), &mut |_, _| {})
        .unwrap()
}

fn ok(s: &mut Session<'_>, script: &str) -> String {
    let o = sh(s, script);
    assert_eq!(o.exit_code, Some(0), "{script}: {}", o.stderr.text);
    o.stdout.text
}

fn paths(p: &Pending) -> Vec<&str> {
    p.changes.iter().map(Change::path).collect()
}

/// Nothing of the session is left on the engine (by label) or on disk.
fn assert_gone(proj: &Proj) {
    let label = format!(
        "label={SESSION_STATE_LABEL}={}",
        proj.state_dir().canonicalize().unwrap().display()
    );
    let c = docker(&["ps", "-aq", "--filter", &label]);
    assert!(
        c.stdout.is_empty(),
        "containers left: {}",
        String::from_utf8_lossy(&c.stdout)
    );
    let v = docker(&["volume", "ls", "-q", "--filter", &label]);
    assert!(
        v.stdout.is_empty(),
        "volumes left: {}",
        String::from_utf8_lossy(&v.stdout)
    );
    let left: Vec<_> = std::fs::read_dir(proj.scratch.path()).unwrap().collect();
    assert!(left.is_empty(), "scratch left: {left:?}");
}

fn sha(text: &str) -> Option<String> {
    Some(sha256_hex(text.as_bytes()))
}

#[test]
fn a_command_rewriting_three_files_brings_back_exactly_its_changes() {
    let r = runner();
    let img = image_id(&r);
    let prof = Profile::floor();
    for mode in MODES {
        let proj = Proj::new(mode);
        let mut w = no_withhold;
        let id = format!("exact-{mode}");
        let mut s = open(&r, &proj, &id, &img, &prof, &mut w);
        assert!(s.fresh());
        if mode == CaptureMode::Overlay {
            assert_eq!(s.user(), (1000, 1000), "the project's owner");
        }
        ok(
            &mut s,
            "echo x >> src/a.rs && echo y > src/b.rs && printf z > src/c.rs && rm del.txt \
             && chmod +x README.md && mkdir -p newdir && echo new > newdir/f.txt",
        );
        let p = s.pending().unwrap();
        assert!(p.refused.is_empty(), "{mode}: {:?}", p.refused);
        assert!(
            p.kept_in_session.is_empty(),
            "{mode}: {:?}",
            p.kept_in_session
        );
        assert_eq!(
            paths(&p),
            vec![
                "README.md",
                "del.txt",
                "newdir/f.txt",
                "src/a.rs",
                "src/b.rs",
                "src/c.rs"
            ],
            "{mode}"
        );
        let by = |path: &str| p.changes.iter().find(|c| c.path() == path).unwrap().clone();
        assert_eq!(
            by("README.md"),
            Change::Write {
                path: "README.md".into(),
                content: b"readme\n".to_vec(),
                mode: 0o755,
                expect_sha256: sha("readme\n"),
                must_not_exist: false
            }
        );
        assert_eq!(
            by("del.txt"),
            Change::Delete {
                path: "del.txt".into(),
                expect_sha256: sha("to delete\n")
            }
        );
        assert_eq!(
            by("newdir/f.txt"),
            Change::Write {
                path: "newdir/f.txt".into(),
                content: b"new\n".to_vec(),
                mode: 0o644,
                expect_sha256: None,
                must_not_exist: true
            }
        );
        assert_eq!(
            by("src/a.rs"),
            Change::Write {
                path: "src/a.rs".into(),
                content: b"fn a() {}\nx\n".to_vec(),
                mode: 0o644,
                expect_sha256: sha("fn a() {}\n"),
                must_not_exist: false
            }
        );
        assert_eq!(p.bytes, 7 + 4 + 12 + 2 + 1);
        assert_eq!(
            std::fs::read_to_string(proj.path().join("src/a.rs")).unwrap(),
            "fn a() {}\n",
            "the host is untouched"
        );
        s.close().unwrap();
        assert_gone(&proj);
    }
}

#[test]
fn removing_everything_then_recreating_a_directory_deletes_every_lower_file() {
    let r = runner();
    let img = image_id(&r);
    let prof = Profile::floor();
    for mode in MODES {
        let proj = Proj::new(mode);
        let mut w = no_withhold;
        let id = format!("opaque-{mode}");
        let mut s = open(&r, &proj, &id, &img, &prof, &mut w);
        ok(
            &mut s,
            "rm -rf /workspace/* && mkdir /workspace/src && echo new > /workspace/src/n.rs",
        );
        if mode == CaptureMode::Overlay {
            let upper = s.scratch().join("upper/src");
            let mut buf = [0u8; 4];
            let n = rustix::fs::lgetxattr(&upper, "user.overlay.opaque", &mut buf[..]).unwrap();
            assert_eq!(
                &buf[..n],
                b"y",
                "the recreated directory is opaque in the upper"
            );
        }
        let p = s.pending().unwrap();
        assert!(p.refused.is_empty(), "{mode}: {:?}", p.refused);
        assert_eq!(
            paths(&p),
            vec![
                "README.md",
                "del.txt",
                "script.sh",
                "src/a.rs",
                "src/b.rs",
                "src/c.rs",
                "src/n.rs"
            ],
            "{mode}"
        );
        assert!(p.changes[..6]
            .iter()
            .all(|c| matches!(c, Change::Delete { .. })));
        s.close().unwrap();
        assert_gone(&proj);
    }
}

#[test]
fn ignored_build_outputs_stay_in_the_session_and_the_next_command_sees_them() {
    let r = runner();
    let img = image_id(&r);
    let prof = Profile::floor();
    for mode in MODES {
        let proj = Proj::new(mode);
        let mut w = no_withhold;
        let id = format!("ignored-{mode}");
        let mut s = open(&r, &proj, &id, &img, &prof, &mut w);
        ok(
            &mut s,
            "mkdir -p target/debug && echo bin > target/debug/app && echo x >> src/a.rs",
        );
        let p = s.pending().unwrap();
        assert_eq!(paths(&p), vec!["src/a.rs"], "{mode}");
        assert_eq!(p.kept_in_session, vec!["target/debug/app"]);
        proj.apply(&p);
        s.accept(&p).unwrap();
        assert_eq!(ok(&mut s, "cat target/debug/app"), "bin\n");
        let p = s.pending().unwrap();
        assert!(p.changes.is_empty(), "{mode}: {:?}", paths(&p));
        assert_eq!(
            p.kept_in_session,
            vec!["target/debug/app"],
            "still in the session"
        );
        assert!(!proj.path().join("target").exists(), "never applied");
        s.close().unwrap();
        assert_gone(&proj);
    }
}

#[test]
fn links_fifos_and_hard_links_are_refused_and_discard_removes_them() {
    let r = runner();
    let img = image_id(&r);
    let prof = Profile::floor();
    for mode in MODES {
        let proj = Proj::new(mode);
        let mut w = no_withhold;
        let id = format!("odd-{mode}");
        let mut s = open(&r, &proj, &id, &img, &prof, &mut w);
        ok(
            &mut s,
            "ln -s /etc/passwd evil && mkfifo pipe && ln src/b.rs hard",
        );
        let p = s.pending().unwrap();
        let refused: Vec<&str> = p.refused.iter().map(|x| x.path.as_str()).collect();
        assert_eq!(
            refused,
            vec!["evil", "hard", "pipe", "src/b.rs"],
            "{mode}: {:?}",
            p.refused
        );
        assert!(p.changes.is_empty(), "{mode}: {:?}", paths(&p));
        s.discard(&p).unwrap();
        assert!(s.pending().unwrap().is_empty(), "{mode}");
        assert_eq!(
            ok(&mut s, "ls"),
            "README.md\ndel.txt\nscript.sh\nsrc\n",
            "{mode}"
        );
        assert_eq!(ok(&mut s, "cat src/b.rs"), "fn b() {}\n");
        s.close().unwrap();
        assert_gone(&proj);
    }
}

#[test]
fn git_and_state_are_out_of_reach_and_withheld_files_unreadable() {
    let r = runner();
    let img = image_id(&r);
    let prof = Profile::floor();
    for mode in MODES {
        let proj = Proj::new(mode);
        let mut w = |rel: &str| rel == ".env";
        let id = format!("hidden-{mode}");
        let mut s = open(&r, &proj, &id, &img, &prof, &mut w);
        let o = sh(
            &mut s,
            "cat .env; cat .git/config; cat .contextos/state/lock; true",
        );
        assert!(
            !o.stdout.text.contains("hunter2"),
            "{mode}: {}",
            o.stdout.text
        );
        assert!(
            !o.stdout.text.contains("[core]"),
            "{mode}: {}",
            o.stdout.text
        );
        sh(
            &mut s,
            "echo hacked > .git/config; mkdir -p .git/hooks; echo x > .git/hooks/pre-commit; \
             echo s > .contextos/state/lock; echo leak > .env; true",
        );
        let p = s.pending().unwrap();
        assert!(p.changes.is_empty(), "{mode}: {:?}", paths(&p));
        assert!(
            p.refused.iter().all(|x| x.path.starts_with(".git/")
                || x.path.starts_with(".contextos/state/")
                || x.path == ".env"),
            "{mode}: {:?}",
            p.refused
        );
        assert_eq!(
            std::fs::read_to_string(proj.path().join(".git/config")).unwrap(),
            "[core]\n"
        );
        assert_eq!(
            std::fs::read_to_string(proj.path().join(".env")).unwrap(),
            "SECRET=hunter2\n"
        );
        s.discard(&p).unwrap();
        assert!(s.pending().unwrap().is_empty());
        s.close().unwrap();
        assert_gone(&proj);
    }
}

#[test]
fn accept_makes_the_baseline_and_discard_restores_the_host_state() {
    let r = runner();
    let img = image_id(&r);
    let prof = Profile::floor();
    for mode in MODES {
        let proj = Proj::new(mode);
        let mut w = no_withhold;
        let id = format!("accept-{mode}");
        let mut s = open(&r, &proj, &id, &img, &prof, &mut w);
        ok(
            &mut s,
            "echo one > src/a.rs && echo n > new.txt && rm del.txt",
        );
        let p = s.pending().unwrap();
        assert_eq!(paths(&p), vec!["del.txt", "new.txt", "src/a.rs"]);
        proj.apply(&p);
        s.accept(&p).unwrap();
        assert!(s.pending().unwrap().is_empty(), "{mode}: accepted");
        let o = sh(&mut s, "cat src/a.rs new.txt");
        assert_eq!(o.stdout.text, "one\nn\n");
        assert!(
            !o.restarted,
            "{mode}: the session already mirrors what was accepted"
        );
        assert!(s.pending().unwrap().is_empty(), "{mode}");

        ok(
            &mut s,
            "echo more >> src/b.rs && rm -rf src && echo x > fresh.txt",
        );
        let p = s.pending().unwrap();
        assert_eq!(
            paths(&p),
            vec!["fresh.txt", "src/a.rs", "src/b.rs", "src/c.rs"],
            "{mode}"
        );
        s.discard(&p).unwrap();
        assert!(s.pending().unwrap().is_empty(), "{mode}: discarded");
        assert_eq!(
            ok(&mut s, "cat src/a.rs src/b.rs src/c.rs"),
            "one\nfn b() {}\nfn c() {}\n"
        );
        assert_eq!(sh(&mut s, "cat fresh.txt").exit_code, Some(1));
        s.close().unwrap();
        assert_gone(&proj);
    }
}

#[test]
fn a_host_change_between_commands_is_seen_by_the_next_one() {
    let r = runner();
    let img = image_id(&r);
    let prof = Profile::floor();
    for mode in MODES {
        let proj = Proj::new(mode);
        let mut w = no_withhold;
        let id = format!("stale-{mode}");
        let mut s = open(&r, &proj, &id, &img, &prof, &mut w);
        // Read (caches the dentry) and copy up without a change (a synced upper entry).
        assert_eq!(
            ok(
                &mut s,
                "cat src/a.rs src/c.rs && chmod +x src/c.rs && chmod -x src/c.rs"
            ),
            "fn a() {}\nfn c() {}\n"
        );
        assert!(s.pending().unwrap().is_empty(), "{mode}");
        proj.host_write("src/a.rs", "host edit\n", 0o644);
        proj.host_write("src/c.rs", "host c\n", 0o644);
        proj.host_write("added.txt", "added\n", 0o644);
        std::fs::remove_file(proj.path().join("del.txt")).unwrap();
        let o = sh(&mut s, "cat src/a.rs src/c.rs added.txt; cat del.txt");
        assert_eq!(
            o.stdout.text, "host edit\nhost c\nadded\n",
            "{mode}: {}",
            o.stderr.text
        );
        assert_eq!(o.exit_code, Some(1), "del.txt is gone");
        if mode == CaptureMode::Overlay {
            assert!(o.restarted, "the stale view needed a remount");
        }
        let p = s.pending().unwrap();
        assert!(
            p.is_empty(),
            "{mode}: host changes are not session changes: {:?}",
            paths(&p)
        );
        // A session change that conflicts with a later host change keeps its
        // precondition, so the journal would refuse it.
        ok(&mut s, "echo mine > src/b.rs");
        proj.host_write("src/b.rs", "theirs\n", 0o644);
        ok(&mut s, "true");
        let p = s.pending().unwrap();
        assert_eq!(paths(&p), vec!["src/b.rs"]);
        assert!(
            matches!(&p.changes[0], Change::Write { expect_sha256, .. } if *expect_sha256 == sha("fn b() {}\n"))
        );
        s.close().unwrap();
        assert_gone(&proj);
    }
}

#[test]
fn tmp_and_home_are_writable_by_the_sandbox_user_whatever_the_image_mode() {
    let r = runner();
    let img = image_id(&r);
    let prof = Profile::floor();
    for mode in MODES {
        let proj = Proj::new(mode);
        let mut w = no_withhold;
        let id = format!("tmp-{mode}");
        let mut s = open(&r, &proj, &id, &img, &prof, &mut w);
        let out = ok(
            &mut s,
            "echo t > /tmp/x && cat /tmp/x && echo h > $HOME/y && cat $HOME/y && id -u",
        );
        assert!(
            out.ends_with("t\nh\n".to_string().as_str()) || out.contains("t\nh\n"),
            "{mode}: {out}"
        );
        let uid = s.user().0.to_string();
        assert!(
            out.trim_end().ends_with(&uid),
            "{mode}: runs as {uid}: {out}"
        );
        assert_ne!(uid, "0");
        s.close().unwrap();
        assert_gone(&proj);
    }
}

#[test]
fn two_users_of_one_session_take_turns() {
    let img = image_id(&runner());
    let proj = std::sync::Arc::new(Proj::new(CaptureMode::Copy));
    let spans = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let threads: Vec<_> = (0..2)
        .map(|i| {
            let (proj, spans, img) = (proj.clone(), spans.clone(), img.clone());
            std::thread::spawn(move || {
                let r = runner();
                let prof = Profile::floor();
                let mut w = no_withhold;
                let mut s = open(&r, &proj, "turns", &img, &prof, &mut w);
                let start = Instant::now();
                ok(&mut s, &format!("echo {i} >> log.txt && sleep 0.4"));
                let end = Instant::now();
                drop(s);
                spans.lock().unwrap().push((start, end));
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut spans = spans.lock().unwrap().clone();
    spans.sort();
    assert_eq!(spans.len(), 2);
    assert!(
        spans[0].1 <= spans[1].0,
        "the second user waited for the first: {spans:?}"
    );
    let r = runner();
    assert!(r.close_session(&proj.state_dir(), "turns").unwrap());
    assert_gone(&proj);
}

#[test]
fn idle_sweep_and_close_leave_nothing_behind_and_a_timeout_resets_the_session() {
    let r = runner();
    let img = image_id(&r);
    let prof = Profile::floor();
    for mode in MODES {
        let proj = Proj::new(mode);
        let mut w = no_withhold;
        let id = format!("idle-{mode}");
        let mut s = open(&r, &proj, &id, &img, &prof, &mut w);
        ok(&mut s, "echo kept > kept.txt");
        let o = s
            .exec(
                &["/bin/sleep".to_string(), "30".to_string()],
                ExecOptions {
                    timeout: Some(Duration::from_millis(500)),
                    ..Default::default()
                },
                &mut |_, _| {},
            )
            .unwrap();
        assert!(
            o.timed_out && o.reset && o.exit_code.is_none(),
            "{mode}: {o:?}"
        );
        assert_eq!(
            ok(&mut s, "cat kept.txt"),
            "kept\n",
            "{mode}: the reset keeps the session's changes"
        );
        let container = s.container().to_string();
        drop(s);
        let state = proj.state_dir();
        assert!(
            r.sweep_idle_sessions(&state, SystemTime::now())
                .unwrap()
                .is_empty(),
            "not idle yet"
        );
        let later = SystemTime::now() + Duration::from_secs(3600);
        assert_eq!(
            r.sweep_idle_sessions(&state, later).unwrap(),
            vec![id.clone()]
        );
        assert!(!r.container_exists(&container).unwrap());
        assert_gone(&proj);

        // An orphan: the record is lost but the container is still there.
        let mut s = open(&r, &proj, &id, &img, &prof, &mut w);
        assert!(s.fresh());
        ok(&mut s, "true");
        let container = s.container().to_string();
        drop(s);
        std::fs::remove_file(state.join(format!("{id}.json"))).unwrap();
        let removed = r.sweep_idle_sessions(&state, SystemTime::now()).unwrap();
        assert!(removed.contains(&container), "{mode}: {removed:?}");
        assert!(!r.container_exists(&container).unwrap());
        assert_gone(&proj);

        // Reopening picks the warm session up; closing by id removes it.
        let mut s = open(&r, &proj, &id, &img, &prof, &mut w);
        ok(&mut s, "echo w > warm.txt");
        drop(s);
        let mut w2 = no_withhold;
        let mut s = open(&r, &proj, &id, &img, &prof, &mut w2);
        assert!(!s.fresh());
        assert_eq!(paths(&s.pending().unwrap()), vec!["warm.txt"]);
        drop(s);
        assert!(r.close_session(&state, &id).unwrap());
        assert!(!r.close_session(&state, &id).unwrap());
        assert_gone(&proj);
        let _ = SESSION_LABEL;
    }
}

fn open_auto<'a>(
    r: &'a Runner,
    project: &'a Path,
    state_dir: &'a Path,
    scratch: &'a Path,
    image_id: &'a str,
    profile: &'a Profile,
    withhold: &'a mut dyn FnMut(&str) -> bool,
) -> Session<'a> {
    r.open_session(SessionConfig {
        id: "auto",
        project,
        state_dir,
        scratch_base: Some(scratch),
        image_id,
        profile,
        idle: Duration::from_secs(600),
        force_mode: None,
        withhold,
    })
    .unwrap()
}

#[test]
fn the_mode_is_chosen_by_owner_and_falls_back_to_copy_when_no_overlay_can_be_made() {
    let r = runner();
    let img = image_id(&r);
    let prof = Profile::floor();
    // A developer's checkout (owned by 1000): overlay, as the owner.
    let proj = Proj::new(CaptureMode::Overlay);
    let state = proj.state_dir();
    let mut w = no_withhold;
    let mut s = open_auto(
        &r,
        proj.path(),
        &state,
        proj.scratch.path(),
        &img,
        &prof,
        &mut w,
    );
    assert_eq!(
        (s.mode(), s.user(), s.fallback()),
        (CaptureMode::Overlay, (1000, 1000), None)
    );
    ok(&mut s, "echo x > src/a.rs");
    assert_eq!(paths(&s.pending().unwrap()), vec!["src/a.rs"]);
    s.close().unwrap();
    assert_gone(&proj);

    // A root-owned project: copy mode, as the profile's user.
    let proj = Proj::new(CaptureMode::Copy);
    let state = proj.state_dir();
    let s = open_auto(
        &r,
        proj.path(),
        &state,
        proj.scratch.path(),
        &img,
        &prof,
        &mut w,
    );
    assert_eq!((s.mode(), s.user()), (CaptureMode::Copy, (65534, 65534)));
    s.close().unwrap();
    assert_gone(&proj);

    // Overlay chosen but impossible (a scratch path the overlay options cannot carry):
    // copy mode, with the reason recorded.
    let proj = Proj::new(CaptureMode::Overlay);
    let state = proj.state_dir();
    let odd = tempfile::Builder::new()
        .prefix("ctx,scratch")
        .tempdir()
        .unwrap();
    let mut s = open_auto(&r, proj.path(), &state, odd.path(), &img, &prof, &mut w);
    assert_eq!(s.mode(), CaptureMode::Copy);
    assert!(
        s.fallback().is_some_and(|f| f.contains("overlay")),
        "{:?}",
        s.fallback()
    );
    ok(&mut s, "echo x > src/a.rs");
    assert_eq!(paths(&s.pending().unwrap()), vec!["src/a.rs"]);
    s.close().unwrap();
    assert_eq!(std::fs::read_dir(odd.path()).unwrap().count(), 0);

    // The scratch area may not lie inside the project.
    let inside = proj.path().join("scratch");
    std::fs::create_dir(&inside).unwrap();
    let e = r
        .open_session(SessionConfig {
            id: "inside",
            project: proj.path(),
            state_dir: &state,
            scratch_base: Some(&inside),
            image_id: &img,
            profile: &prof,
            idle: Duration::from_secs(60),
            force_mode: None,
            withhold: &mut w,
        })
        .unwrap_err();
    assert_eq!(e.code, "sandbox.session-scratch");
    assert_gone(&proj);
}

#[test]
fn output_streams_the_workdir_is_confined_and_a_changed_withheld_set_applies() {
    let r = runner();
    let img = image_id(&r);
    let prof = Profile::floor();
    for mode in MODES {
        let proj = Proj::new(mode);
        let id = format!("stream-{mode}");
        let mut hide_env = |rel: &str| rel == ".env";
        let mut s = open(&r, &proj, &id, &img, &prof, &mut hide_env);
        let mut seen = Vec::new();
        let o = s
            .exec(
                &[
                    "/bin/sh".into(),
                    "-c".into(),
                    "ls; echo err >&2; exit 3".into(),
                ],
                ExecOptions {
                    workdir: Some("src".into()),
                    ..Default::default()
                },
                &mut |stream, bytes| seen.push((stream, bytes.to_vec())),
            )
            .unwrap();
        assert_eq!(o.exit_code, Some(3));
        assert_eq!(o.stdout.text, "a.rs\nb.rs\nc.rs\n");
        assert_eq!(o.stderr.text, "err\n");
        let streamed: Vec<u8> = seen.iter().flat_map(|(_, b)| b.clone()).collect();
        assert_eq!(streamed.len() as u64, o.stdout.bytes + o.stderr.bytes);
        let bad = ExecOptions {
            workdir: Some("../etc".into()),
            ..Default::default()
        };
        assert!(s.exec(&["/bin/true".into()], bad, &mut |_, _| {}).is_err());
        assert!(!ok(&mut s, "cat .env; true").contains("hunter2"));
        drop(s);
        // The read verdict changed: the file is now visible (the overlay container is
        // recreated without the cover, the copy gets the file).
        let mut show_all = no_withhold;
        let mut s = open(&r, &proj, &id, &img, &prof, &mut show_all);
        assert!(!s.fresh());
        assert_eq!(ok(&mut s, "cat .env"), "SECRET=hunter2\n", "{mode}");
        assert!(s.pending().unwrap().is_empty(), "{mode}");
        drop(s);
        let mut hide_again = |rel: &str| rel == ".env";
        let mut s = open(&r, &proj, &id, &img, &prof, &mut hide_again);
        assert!(!ok(&mut s, "cat .env; true").contains("hunter2"), "{mode}");
        assert!(s.pending().unwrap().is_empty(), "{mode}");
        s.close().unwrap();
        assert_gone(&proj);
    }
}

/// Figures for the book and the report: `cargo test --features docker --test session
/// -- --ignored --nocapture figures`.
#[test]
#[ignore = "prints timings; run by hand"]
fn figures() {
    let r = runner();
    let img = image_id(&r);
    let prof = Profile::floor();
    for mode in MODES {
        let proj = Proj::new(mode);
        for i in 0..200 {
            proj.host_write(&format!("bulk/f{i}.txt"), "x\n", 0o644);
        }
        let mut w = no_withhold;
        let id = format!("fig-{mode}");
        let t = Instant::now();
        let mut s = open(&r, &proj, &id, &img, &prof, &mut w);
        let open_ms = t.elapsed().as_millis();
        let mut warm = Vec::new();
        for _ in 0..10 {
            let t = Instant::now();
            ok(&mut s, "true");
            warm.push(t.elapsed().as_micros());
        }
        warm.sort();
        let t = Instant::now();
        let p = s.pending().unwrap();
        let pending_us = t.elapsed().as_micros();
        assert!(p.is_empty());
        proj.host_write("src/a.rs", "edited\n", 0o644);
        let t = Instant::now();
        let o = sh(&mut s, "cat src/a.rs");
        let synced_ms = t.elapsed().as_millis();
        assert_eq!(o.stdout.text, "edited\n");
        let t = Instant::now();
        s.close().unwrap();
        let close_ms = t.elapsed().as_millis();
        eprintln!(
            "{mode}: open {open_ms} ms; warm exec `true` p50 {} us (min {}, max {}); pending {pending_us} us; \
             exec after a host rename {synced_ms} ms (restarted: {}); close {close_ms} ms",
            warm[5], warm[0], warm[9], o.restarted
        );
    }
}

#[test]
fn a_container_removed_by_hand_is_rebuilt_around_the_session() {
    let r = runner();
    let img = image_id(&r);
    let prof = Profile::floor();
    for mode in MODES {
        let proj = Proj::new(mode);
        let mut w = no_withhold;
        let id = format!("rebuilt-{mode}");
        let mut s = open(&r, &proj, &id, &img, &prof, &mut w);
        ok(&mut s, "echo mine > src/a.rs");
        assert!(docker(&["rm", "-f", s.container()]).status.success());
        proj.host_write("src/c.rs", "host\n", 0o644);
        let o = sh(&mut s, "cat src/a.rs src/c.rs");
        assert_eq!(o.stdout.text, "mine\nhost\n", "{mode}: {}", o.stderr.text);
        assert!(o.restarted);
        assert_eq!(paths(&s.pending().unwrap()), vec!["src/a.rs"], "{mode}");
        s.close().unwrap();
        assert_gone(&proj);
    }
}
