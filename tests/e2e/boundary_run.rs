//! Issue 14, part 7, on the real Docker Engine and real git repositories: what an
//! agent's command does inside its sandbox session comes back to the host only as a
//! changeset decided path by path and applied through the journal — in both capture
//! modes (a private copy, and an overlay over a project owned by uid 1000).

use super::contextos;
use super::sandbox::{assert_session_gone, chown_1000, docker, git, image, labelled, run_json_env};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const MODES: [&str; 2] = ["copy", "overlay"];

const POLICY: &str = "language 1;\ndefault exec = allow;\n";

/// A git repository with tracked files, ContextOS configured with the probe image, and
/// the capture mode forced (overlay: the tree handed to uid 1000 first).
struct Repo {
    dir: tempfile::TempDir,
    mode: &'static str,
}

impl Repo {
    fn new(mode: &'static str, files: &[(&str, &str)]) -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".contextos/policies")).unwrap();
        std::fs::write(root.join(".contextos/policies/main.policy"), POLICY).unwrap();
        std::fs::write(
            root.join("contextos.toml"),
            format!("[sandbox]\nimage = \"{}\"\n", image()),
        )
        .unwrap();
        std::fs::write(root.join(".gitignore"), ".contextos/state/\ntarget/\n").unwrap();
        for (rel, text) in files {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        git(root, &["init", "-q"]);
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "init"]);
        if mode == "overlay" {
            chown_1000(root);
        }
        Repo { dir, mode }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn env(&self) -> [(&'static str, &'static str); 1] {
        [("CONTEXTOS_SESSION_MODE", self.mode)]
    }

    /// `contextos --format json run ARGS…` in this repository's mode.
    fn run(&self, args: &[&str]) -> (i32, Value) {
        let (r, j) = run_json_env(self.root(), args, &self.env());
        if j["session"]["mode"].is_string() {
            assert_eq!(j["session"]["mode"], self.mode, "{j}");
        }
        (r.code, j)
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    fn state_dir(&self) -> PathBuf {
        self.root()
            .canonicalize()
            .unwrap()
            .join(".contextos/state/sessions")
    }

    /// No container or volume of this repository's sessions is left on the engine.
    fn assert_clean(&self) {
        let label = format!("io.contextos.session.state={}", self.state_dir().display());
        assert_eq!(
            labelled(&label),
            (String::new(), String::new()),
            "{}: a session left a container or a volume behind",
            self.mode
        );
    }
}

impl Drop for Repo {
    /// A failing test still closes its sessions.
    fn drop(&mut self) {
        let _ = contextos(self.root(), &["session", "close", "--all"]);
    }
}

fn stdout(j: &Value) -> &str {
    j["sandbox"]["stdout"]["text"].as_str().unwrap_or_default()
}

fn paths(j: &Value, key: &str) -> Vec<String> {
    j["results"][key]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|c| c["path"].as_str().or(c.as_str()).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Every entry under `dir` (not following links) with its bytes' sha256 (or link target),
/// mode and mtime (files only: a directory's changes show as entries), except the state
/// directory ContextOS itself writes.
fn tree(dir: &Path) -> BTreeMap<String, (String, u32, u128)> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, (String, u32, u128)>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(base).unwrap().display().to_string();
            if rel == ".contextos/state" {
                continue;
            }
            let m = std::fs::symlink_metadata(&p).unwrap();
            let mtime = m
                .modified()
                .ok()
                .filter(|_| !m.is_dir())
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            let sha = if m.is_file() {
                super::sandbox::contextos_sha(&std::fs::read(&p).unwrap())
            } else if m.is_symlink() {
                format!("-> {}", std::fs::read_link(&p).unwrap().display())
            } else {
                "dir".into()
            };
            out.insert(rel, (sha, m.permissions().mode(), mtime));
            if m.is_dir() {
                walk(base, &p, out);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

#[test]
fn a_hostile_line_leaves_the_host_untouched() {
    // The real home of the user running the tests gets a canary directory; the
    // contextos process gets a home of its own with a canary `.bashrc`.
    let real_home = PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()));
    let canary_dir = real_home.join(format!(".contextos-e2e-canary-{}", std::process::id()));
    std::fs::create_dir_all(&canary_dir).unwrap();
    std::fs::write(canary_dir.join("keep.txt"), "keep\n").unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("canary.txt"), "outside\n").unwrap();
    let line = r#"rm -rf "$HOME"/* ~/.??* 2>/dev/null; echo evil >> ~/.bashrc; echo x > /etc/x 2>/dev/null; echo y > /tmp/y"#;
    let host_tmp_y = std::fs::symlink_metadata("/tmp/y").ok().map(|m| m.len());
    for mode in MODES {
        // The same line from a script: the exec verdict sees only `sh evil.sh`, so it
        // runs, and only the sandbox stands between it and the host.
        let script = format!("{line}\necho \"home=$HOME\"; cat /tmp/y; ls -A ~ | wc -l\n");
        let repo = Repo::new(
            mode,
            &[("src/lib.rs", "fn main() {}\n"), ("evil.sh", &script)],
        );
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join(".bashrc"), "# canary\n").unwrap();
        std::fs::write(home.path().join("notes"), "mine\n").unwrap();
        let home_s = home.path().display().to_string();
        let before = (
            tree(&canary_dir),
            tree(home.path()),
            tree(repo.root()),
            tree(outside.path()),
        );
        // ContextOS's own user key (the policy cache's and the log's) lives in the
        // user's state directory, which is not what this test watches.
        let own_state = tempfile::tempdir().unwrap();
        let own_state_s = own_state.path().display().to_string();
        let env = [
            ("HOME", home_s.as_str()),
            ("XDG_STATE_HOME", own_state_s.as_str()),
            ("CONTEXTOS_SESSION_MODE", mode),
        ];
        // As a line, the exec verdict already refuses it: nothing runs.
        let (r, j) = run_json_env(repo.root(), &["--", "/bin/sh", "-c", line], &env);
        assert_eq!(r.code, 1, "{mode}: {j}");
        assert_eq!(
            (j["verdict"].as_str(), j["ran"].as_bool()),
            (Some("deny"), Some(false))
        );
        let (r, j) = run_json_env(repo.root(), &["--", "sh", "evil.sh"], &env);
        // It ran, in the sandbox, to the end: its own home is the container's.
        assert_eq!(j["ran"], true, "{mode}: {j}");
        assert_eq!(j["mode"], "sandbox");
        assert_eq!(j["session"]["mode"], mode, "{j}");
        assert_eq!(r.code, 0, "{mode}: {j}");
        // Its home was emptied but for the new `.bashrc`: the container's, not ours.
        assert_eq!(stdout(&j), "home=/home/sandbox\ny\n1\n", "{j}");
        assert!(paths(&j, "changes").is_empty(), "{mode}: {j}");
        let after = (
            tree(&canary_dir),
            tree(home.path()),
            tree(repo.root()),
            tree(outside.path()),
        );
        assert_eq!(before, after, "{mode}: the host changed");
        assert_eq!(
            std::fs::read_to_string(home.path().join(".bashrc")).unwrap(),
            "# canary\n"
        );
        assert!(!Path::new("/etc/x").exists());
        assert_eq!(
            std::fs::symlink_metadata("/tmp/y").ok().map(|m| m.len()),
            host_tmp_y,
            "the container's /tmp/y is not the host's"
        );
        assert_session_gone(j["session"]["id"].as_str().unwrap());
        repo.assert_clean();
    }
    std::fs::remove_dir_all(&canary_dir).unwrap();
}

const FORMATTER: &str = r#"#!/bin/sh
# Upper-cases every file it is given, in place.
for f in "$@"; do
  tr a-z A-Z < "$f" > /tmp/fmt.out && cat /tmp/fmt.out > "$f"
done
"#;

#[test]
fn a_formatter_brings_back_exactly_the_three_files_it_rewrote() {
    for mode in MODES {
        let repo = Repo::new(
            mode,
            &[
                ("fmt.sh", FORMATTER),
                ("src/a.txt", "alpha\n"),
                ("src/b.txt", "bravo\n"),
                ("src/c.txt", "charlie\n"),
                ("src/d.txt", "delta\n"),
            ],
        );
        std::fs::write(repo.root().join("untracked.txt"), "scratch notes\n").unwrap();
        let untracked = tree(repo.root())["untracked.txt"].clone();
        let (code, j) = repo.run(&["--", "sh", "fmt.sh", "src/a.txt", "src/b.txt", "src/c.txt"]);
        assert_eq!(code, 0, "{mode}: {j}");
        let mut changed = paths(&j, "changes");
        changed.sort();
        assert_eq!(
            changed,
            ["src/a.txt", "src/b.txt", "src/c.txt"],
            "{mode}: {j}"
        );
        assert_eq!(j["apply"]["applied"], true, "{j}");
        assert_eq!(j["apply"]["transaction"]["files"], 3, "{j}");
        assert_eq!(
            j["apply"]["transaction"]["generation"], 1,
            "the first and only transaction: {j}"
        );
        assert_eq!(
            git(repo.root(), &["diff", "--name-only"]),
            "src/a.txt\nsrc/b.txt\nsrc/c.txt\n"
        );
        assert_eq!(
            git(
                repo.root(),
                &["status", "--porcelain", "--untracked-files=all"]
            ),
            " M src/a.txt\n M src/b.txt\n M src/c.txt\n?? untracked.txt\n"
        );
        assert_eq!(repo.read("src/a.txt"), "ALPHA\n");
        assert_eq!(repo.read("src/c.txt"), "CHARLIE\n");
        assert_eq!(repo.read("src/d.txt"), "delta\n");
        assert_eq!(tree(repo.root())["untracked.txt"], untracked);
        // Nothing is left pending in the journal.
        let s = contextos(repo.root(), &["--format", "json", "journal", "status"]);
        assert_eq!(s.json()["transactions"], json!([]), "{}", s.stdout);
        repo.assert_clean();
    }
}

#[test]
fn a_governance_change_refuses_the_whole_changeset_and_is_reset_in_the_session() {
    let probe = contextos(
        tempfile::tempdir().unwrap().path(),
        &[
            "explain",
            "path",
            "--op",
            "write",
            ".contextos/policies/x.policy",
        ],
    );
    assert!(
        probe.stdout.contains("deny"),
        "the stdlib protects policies: {}",
        probe.stdout
    );
    for mode in MODES {
        // As a line, the exec verdict sees the policy write and nothing runs; from a
        // script only the changeset shows it.
        let gov = "echo 'language 1;' > .contextos/policies/x.policy; echo changed > notes.txt\n";
        let repo = Repo::new(mode, &[("notes.txt", "original\n"), ("gov.sh", gov)]);
        let sid = format!("gov-{mode}");
        let (code, j) = repo.run(&["--session", &sid, "--", "/bin/sh", "-c", gov]);
        assert_eq!((code, j["ran"].as_bool()), (1, Some(false)), "{j}");
        let (code, j) = repo.run(&["--session", &sid, "--", "sh", "gov.sh"]);
        assert_eq!(code, 1, "{mode}: {j}");
        assert_eq!(j["exitCode"], 0, "the command itself succeeded: {j}");
        assert_eq!(j["apply"]["applied"], false, "{j}");
        assert_eq!(j["apply"]["verdict"], "deny", "{j}");
        let mut changed = paths(&j, "changes");
        changed.sort();
        assert_eq!(
            changed,
            [".contextos/policies/x.policy", "notes.txt"],
            "{j}"
        );
        assert_eq!(
            repo.read("notes.txt"),
            "original\n",
            "{mode}: the ordinary change landed"
        );
        assert!(!repo.root().join(".contextos/policies/x.policy").exists());
        assert_eq!(git(repo.root(), &["status", "--porcelain"]), "");
        // The next command in the same session does not see the refused changes.
        let (code, j) = repo.run(&[
            "--session",
            &sid,
            "--",
            "/bin/sh",
            "-c",
            "cat notes.txt; ls .contextos/policies",
        ]);
        assert_eq!(code, 0, "{j}");
        assert_eq!(j["session"]["fresh"], false, "{j}");
        assert_eq!(stdout(&j), "original\nmain.policy\n", "{mode}: {j}");
        assert!(paths(&j, "changes").is_empty(), "{j}");
        let c = contextos(repo.root(), &["session", "close", &sid]);
        assert_eq!(c.code, 0, "{}", c.stderr);
        repo.assert_clean();
    }
}

#[test]
fn build_outputs_stay_in_the_session_and_are_seen_by_the_next_command() {
    for mode in MODES {
        let repo = Repo::new(mode, &[("src/main.c", "int main;\n")]);
        let sid = format!("build-{mode}");
        let (code, j) = repo.run(&[
            "--session",
            &sid,
            "--",
            "/bin/sh",
            "-c",
            "mkdir -p target/debug && cat src/main.c > target/debug/main.o && echo built > BUILD.txt",
        ]);
        assert_eq!(code, 0, "{mode}: {j}");
        assert_eq!(
            paths(&j, "keptInSession"),
            ["target/debug/main.o"],
            "{mode}: {j}"
        );
        assert_eq!(paths(&j, "changes"), ["BUILD.txt"], "{j}");
        assert_eq!(j["apply"]["applied"], true, "{j}");
        assert_eq!(repo.read("BUILD.txt"), "built\n");
        assert!(
            !repo.root().join("target").exists(),
            "{mode}: a build output reached the host"
        );
        let (code, j) = repo.run(&["--session", &sid, "--", "cat", "target/debug/main.o"]);
        assert_eq!(code, 0, "{j}");
        assert_eq!(stdout(&j), "int main;\n", "{mode}: {j}");
        assert!(!repo.root().join("target").exists());
        let c = contextos(repo.root(), &["session", "close", &sid]);
        assert_eq!(c.code, 0, "{}", c.stderr);
        repo.assert_clean();
    }
}

#[test]
fn a_deletion_and_a_new_files_mode_come_back_and_a_symlink_is_refused() {
    for mode in MODES {
        let repo = Repo::new(
            mode,
            &[
                ("old.txt", "remove me\n"),
                ("tool.sh", "echo tool\n"),
                ("README.md", "readme\n"),
            ],
        );
        let (code, j) = repo.run(&[
            "--",
            "/bin/sh",
            "-c",
            "rm old.txt && echo 'echo new' > new.sh && chmod 755 new.sh",
        ]);
        assert_eq!(code, 0, "{mode}: {j}");
        assert_eq!(j["apply"]["applied"], true, "{j}");
        assert!(
            !repo.root().join("old.txt").exists(),
            "{mode}: the deletion did not come back"
        );
        let m = std::fs::metadata(repo.root().join("new.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(
            m & 0o777,
            0o755,
            "{mode}: the new file's mode did not come back ({m:o})"
        );
        assert_eq!(
            git(repo.root(), &["status", "--porcelain"]),
            " D old.txt\n?? new.sh\n"
        );

        let before = tree(repo.root());
        let (code, j) = repo.run(&[
            "--",
            "/bin/sh",
            "-c",
            "ln -s /etc/passwd link && echo more >> README.md",
        ]);
        assert_eq!(code, 2, "{mode}: {j}");
        assert_eq!(j["exitCode"], 0, "{j}");
        assert_eq!(paths(&j, "refused"), ["link"], "{mode}: {j}");
        assert_eq!(j["apply"]["applied"], false, "{j}");
        assert!(std::fs::symlink_metadata(repo.root().join("link")).is_err());
        assert_eq!(
            repo.read("README.md"),
            "readme\n",
            "{mode}: part of a refused changeset landed"
        );
        assert_eq!(tree(repo.root()), before);
        repo.assert_clean();
    }
}

#[test]
fn a_chmod_of_a_tracked_file_comes_back() {
    for mode in MODES {
        let repo = Repo::new(mode, &[("tool.sh", "echo tool\n")]);
        let (code, j) = repo.run(&["--", "/bin/sh", "-c", "chmod 755 tool.sh"]);
        assert_eq!(code, 0, "{mode}: {j}");
        assert_eq!(paths(&j, "changes"), ["tool.sh"], "{j}");
        assert_eq!(j["results"]["changes"][0]["mode"], 0o755, "{j}");
        assert_eq!(j["apply"]["applied"], true, "{j}");
        let m = std::fs::metadata(repo.root().join("tool.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(
            m & 0o777,
            0o755,
            "{mode}: the chmod did not come back ({m:o})"
        );
        assert_eq!(git(repo.root(), &["status", "--porcelain"]), " M tool.sh\n");
        repo.assert_clean();
    }
}

#[test]
fn session_list_shows_a_session_and_close_removes_it_entirely() {
    for mode in MODES {
        let repo = Repo::new(mode, &[("a.txt", "a\n")]);
        let sid = format!("list-{mode}");
        let (code, j) = repo.run(&["--session", &sid, "--", "cat", "a.txt"]);
        assert_eq!(code, 0, "{j}");
        assert_eq!(j["session"]["fresh"], true);
        assert_eq!(j["session"]["oneShot"], false);
        let container = j["session"]["container"].as_str().unwrap().to_string();
        let l = contextos(repo.root(), &["--format", "json", "session", "list"]);
        assert_eq!(l.code, 0, "{}", l.stderr);
        let sessions = l.json()["sessions"].clone();
        assert_eq!(sessions.as_array().map(Vec::len), Some(1), "{sessions}");
        assert_eq!(sessions[0]["id"], sid.as_str());
        assert_eq!(sessions[0]["mode"], mode);
        assert_eq!(sessions[0]["container"], container.as_str());
        assert_eq!(sessions[0]["expired"], false);
        let (containers, volumes) = labelled(&format!("io.contextos.session={sid}"));
        let mine: Vec<&str> = containers.lines().collect();
        assert_eq!(mine.len(), 1, "{containers}");
        let named = docker(&["inspect", "-f", "{{.Name}}", mine[0]]);
        assert_eq!(
            String::from_utf8_lossy(&named.stdout).trim(),
            format!("/{container}")
        );
        if mode == "overlay" {
            assert_eq!(volumes.lines().count(), 1, "the overlay volume: {volumes}");
        }
        let record = repo.state_dir().join(format!("{sid}.json"));
        assert!(record.is_file());

        let c = contextos(repo.root(), &["--format", "json", "session", "close", &sid]);
        assert_eq!(c.code, 0, "{}", c.stderr);
        assert_eq!(c.json()["closed"], json!([sid]));
        repo.assert_clean();
        assert!(!record.exists(), "the record is gone");
        let l = contextos(repo.root(), &["--format", "json", "session", "list"]);
        assert_eq!(l.json()["sessions"], json!([]));
        // Closing it again names it as unknown.
        let c = contextos(repo.root(), &["session", "close", &sid]);
        assert_eq!(c.code, 1, "{}", c.stderr);
    }
}

#[test]
fn the_claude_hook_routes_bash_into_the_sandbox_and_the_line_runs_the_same() {
    let line = "printf '%s|' \"it's\" a\\ b; echo; echo routed > routed.txt; echo done";
    // What the line prints on a host shell, in a scratch directory.
    let scratch = tempfile::tempdir().unwrap();
    let native = Command::new("/bin/sh")
        .args(["-c", line])
        .current_dir(scratch.path())
        .output()
        .unwrap();
    assert!(native.status.success());
    let expected = String::from_utf8(native.stdout).unwrap();
    assert_eq!(expected, "it's|a b|\ndone\n");
    for mode in MODES {
        let repo = Repo::new(mode, &[("a.txt", "a\n")]);
        std::fs::write(
            repo.root().join("contextos.toml"),
            format!(
                "[boundary]\nmode = \"boundary\"\n\n[sandbox]\nimage = \"{}\"\n",
                image()
            ),
        )
        .unwrap();
        git(repo.root(), &["commit", "-q", "-am", "boundary mode"]);
        if mode == "overlay" {
            chown_1000(repo.root());
        }
        let xdg = tempfile::tempdir().unwrap();
        let session_id = format!("0b7c1e9a-5d2f-4c61-9e3a-{mode:0>12}");
        let payload = json!({
            "session_id": session_id,
            "transcript_path": format!("/home/dev/.claude/projects/-repo/{session_id}.jsonl"),
            "cwd": repo.root(),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": { "command": line, "description": "Print and write" }
        });
        let mut child = Command::new(env!("CARGO_BIN_EXE_contextos"))
            .args(["hook", "claude"])
            .current_dir(repo.root())
            .env("XDG_STATE_HOME", xdg.path().join("state"))
            .env("XDG_CONFIG_HOME", xdg.path().join("config"))
            .env("CLAUDE_PROJECT_DIR", repo.root())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{e}: {} {}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        let h = &answer["hookSpecificOutput"];
        assert_eq!(h["permissionDecision"], "allow", "{answer}");
        assert_eq!(h["updatedInput"]["description"], "Print and write");
        let command = h["updatedInput"]["command"].as_str().unwrap().to_string();
        assert!(command.contains(" run --session "), "{command}");

        // Claude Code runs the new input through its shell in the project.
        let ran = Command::new("/bin/sh")
            .args(["-c", &command])
            .current_dir(repo.root())
            .env("CONTEXTOS_SESSION_MODE", mode)
            .env("XDG_STATE_HOME", xdg.path().join("state"))
            .env("XDG_CONFIG_HOME", xdg.path().join("config"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&ran.stderr);
        assert_eq!(ran.status.code(), Some(0), "{mode}: {stderr}");
        assert_eq!(
            String::from_utf8_lossy(&ran.stdout),
            expected,
            "{mode}: the routed line printed something else ({stderr})"
        );
        assert_eq!(
            repo.read("routed.txt"),
            "routed\n",
            "{mode}: the change did not come back"
        );
        assert_eq!(
            git(repo.root(), &["status", "--porcelain"]),
            "?? routed.txt\n"
        );
        let l = contextos(repo.root(), &["--format", "json", "session", "list"]);
        let ids: Vec<String> = l.json()["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s["id"].as_str().map(str::to_string))
            .collect();
        assert_eq!(
            ids,
            std::slice::from_ref(&session_id),
            "{mode}: {}",
            l.stdout
        );
        let c = contextos(repo.root(), &["session", "close", &session_id]);
        assert_eq!(c.code, 0, "{}", c.stderr);
        repo.assert_clean();
    }
}

#[test]
fn the_project_is_seen_at_its_host_path_and_commands_run_where_the_agent_is() {
    for mode in MODES {
        let repo = Repo::new(mode, &[("a.txt", "a\n"), ("sub/b.txt", "b\n")]);
        let root = repo.root().canonicalize().unwrap();
        // Agents name files by absolute host path and run from subdirectories.
        let line = format!(
            "pwd; cat {0}/a.txt b.txt; echo c > {0}/sub/c.txt",
            root.display()
        );
        let out = Command::new(env!("CARGO_BIN_EXE_contextos"))
            .args(["--format", "json", "run", "--yes", "--session", "here"])
            .args(["--", "/bin/sh", "-c", &line])
            .current_dir(root.join("sub"))
            .env("CONTEXTOS_SESSION_MODE", mode)
            .output()
            .unwrap();
        let j: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        assert_eq!(out.status.code(), Some(0), "{mode}: {j}");
        assert_eq!(
            stdout(&j),
            format!("{}/sub\na\nb\n", root.display()),
            "{mode}: {j}"
        );
        assert_eq!(repo.read("sub/c.txt"), "c\n", "{mode}");
        let c = contextos(repo.root(), &["session", "close", "here"]);
        assert_eq!(c.code, 0, "{}", c.stderr);
        repo.assert_clean();
    }
}
