//! `contextos hook install|uninstall` end to end: real repositories made by `git init`,
//! real `git commit` runs that execute the installed hook, with the git configuration
//! isolated from the machine's (private HOME, global config file, no system config).

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BEGIN: &str = "# >>> contextos pre-commit (managed; do not edit) >>>";
const END: &str = "# <<< contextos pre-commit <<<";

/// A stand-in for the contextos binary (installed with `--binary`) that records how the
/// hook ran it and answers per the `scan --staged --enforce` contract: exit 1 when a
/// `.env` is staged, 0 otherwise. It lets these tests check the hook's wiring exactly,
/// independent of what the real scanner finds.
const STUB: &str = r#"#!/bin/sh
printf 'contextos %s\n' "$*" >> "$CONTEXTOS_TEST_LOG"
if git diff --cached --name-only | grep -qx '.env'; then
    echo "stub scan: .env is staged" >&2
    exit 1
fi
exit 0
"#;

/// A user's own hook that records that it ran, then ends with `exit 0`: lines after it
/// could never run, so the block must come first.
const USER_HOOK: &str =
    "#!/bin/sh\n# my own checks\nprintf 'user hook\\n' >> \"$CONTEXTOS_TEST_LOG\"\nexit 0\n";

struct Env {
    home: tempfile::TempDir,
    tmp: tempfile::TempDir,
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}{}", self.stdout, self.stderr))
    }
}

fn run(out: Output) -> Run {
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

impl Env {
    fn new() -> Env {
        let env = Env {
            home: tempfile::tempdir().unwrap(),
            tmp: tempfile::tempdir().unwrap(),
        };
        std::fs::write(
            env.global_config(),
            "[user]\n\tname = Test\n\temail = test@example.invalid\n[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n",
        )
        .unwrap();
        env
    }

    fn global_config(&self) -> PathBuf {
        self.home.path().join(".gitconfig")
    }

    fn log(&self) -> PathBuf {
        self.tmp.path().join("hook.log")
    }

    fn log_lines(&self) -> Vec<String> {
        std::fs::read_to_string(self.log())
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    fn clear_log(&self) {
        let _ = std::fs::remove_file(self.log());
    }

    /// A command whose git sees only this test's configuration.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>, dir: &Path) -> Command {
        let mut c = Command::new(program);
        c.current_dir(dir)
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join(".config"))
            .env("XDG_STATE_HOME", self.home.path().join(".state"))
            .env("GIT_CONFIG_GLOBAL", self.global_config())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("CONTEXTOS_TEST_LOG", self.log());
        for v in [
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_INDEX_FILE",
            "GIT_COMMON_DIR",
            "GIT_CONFIG",
            "GIT_CONFIG_COUNT",
            "GIT_CONFIG_PARAMETERS",
            "GIT_CEILING_DIRECTORIES",
        ] {
            c.env_remove(v);
        }
        c
    }

    fn git(&self, dir: &Path, args: &[&str]) -> Run {
        let r = run(self.command("git", dir).args(args).output().unwrap());
        assert_eq!(r.code, 0, "git {args:?}: {}{}", r.stdout, r.stderr);
        r
    }

    fn try_git(&self, dir: &Path, args: &[&str]) -> Run {
        run(self.command("git", dir).args(args).output().unwrap())
    }

    /// `contextos ARGS` run in `dir`.
    fn cx_in(&self, dir: &Path, args: &[&str]) -> Run {
        self.cx_bin(Path::new(env!("CARGO_BIN_EXE_contextos")), dir, args)
    }

    fn cx_bin(&self, bin: &Path, dir: &Path, args: &[&str]) -> Run {
        run(self.command(bin, dir).args(args).output().unwrap())
    }

    /// `contextos --project REPO ARGS`, run from elsewhere.
    fn cx(&self, repo: &Path, args: &[&str]) -> Run {
        let mut full = vec!["--project", repo.to_str().unwrap()];
        full.extend_from_slice(args);
        self.cx_in(self.tmp.path(), &full)
    }

    /// A fresh repository with one commit, at `tmp/NAME`.
    fn repo(&self, name: &str) -> PathBuf {
        let dir = self.tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        self.git(&dir, &["init", "-q"]);
        std::fs::write(dir.join("README.md"), "# project\n").unwrap();
        self.git(&dir, &["add", "README.md"]);
        self.git(&dir, &["commit", "-q", "-m", "initial"]);
        dir
    }

    /// The stub scanner as an executable file outside every repository.
    fn stub(&self) -> PathBuf {
        let dir = self.tmp.path().join("stub-bin");
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("contextos");
        std::fs::write(&p, STUB).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    fn install_stub(&self, repo: &Path) -> Run {
        let stub = self.stub();
        let r = self.cx(
            repo,
            &["hook", "install", "--binary", stub.to_str().unwrap()],
        );
        assert_eq!(r.code, 0, "install: {}{}", r.stdout, r.stderr);
        r
    }

    /// Writes and stages `file`, then commits; the commit's result.
    fn commit(&self, repo: &Path, file: &str, content: &str) -> Run {
        let path = repo.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, content).unwrap();
        self.git(repo, &["add", "--", file]);
        self.try_git(repo, &["commit", "-q", "-m", &format!("change {file}")])
    }

    fn commits(&self, repo: &Path) -> usize {
        self.git(repo, &["rev-list", "--count", "HEAD"])
            .stdout
            .trim()
            .parse()
            .unwrap()
    }
}

fn write_hook(path: &Path, text: &[u8], mode: u32) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

fn canonical(p: &Path) -> String {
    p.canonicalize().unwrap().display().to_string()
}

#[test]
fn githook_block_runs_first_and_the_users_hook_still_runs_after_it() {
    let env = Env::new();
    let repo = env.repo("repo");
    let hook = repo.join(".git/hooks/pre-commit");
    write_hook(&hook, USER_HOOK.as_bytes(), 0o755);
    let r = env.install_stub(&repo);
    assert!(r.stdout.contains("after line 1"), "{}", r.stdout);

    let text = std::fs::read_to_string(&hook).unwrap();
    assert!(text.starts_with(&format!("#!/bin/sh\n{BEGIN}\n")), "{text}");
    assert!(text.ends_with(&format!("{END}\n{}", &USER_HOOK["#!/bin/sh\n".len()..])));

    // A clean commit: the block runs the scan for this working tree, then the user's hook.
    env.clear_log();
    let c = env.commit(&repo, "README.md", "# project\n\nmore\n");
    assert_eq!(c.code, 0, "{}{}", c.stdout, c.stderr);
    assert_eq!(
        env.log_lines(),
        vec![
            format!(
                "contextos --project {} scan --staged --enforce",
                canonical(&repo)
            ),
            "user hook".to_string(),
        ]
    );

    // A bad commit: the scan says no, git stops, the user's hook (ending in `exit 0`)
    // never gets the chance to wave it through.
    env.clear_log();
    let before = env.commits(&repo);
    let c = env.commit(&repo, ".env", "TOKEN=x\n");
    assert_ne!(c.code, 0, "the commit must be blocked");
    assert!(
        c.stderr.contains("stub scan: .env is staged"),
        "{}",
        c.stderr
    );
    assert_eq!(env.log_lines().len(), 1, "{:?}", env.log_lines());
    assert_eq!(env.commits(&repo), before);
}

#[test]
fn githook_install_is_idempotent_and_refreshes_a_stale_binary() {
    let env = Env::new();
    let repo = env.repo("repo");
    let hook = repo.join(".git/hooks/pre-commit");
    write_hook(&hook, USER_HOOK.as_bytes(), 0o750);
    env.install_stub(&repo);
    let once = std::fs::read(&hook).unwrap();

    let stub = env.stub();
    let r = env.cx(
        &repo,
        &[
            "--format",
            "json",
            "hook",
            "install",
            "--binary",
            stub.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["schemaVersion"], 1);
    assert_eq!(j["action"], "unchanged");
    assert_eq!(j["hook"], canonical(&hook));
    assert_eq!(std::fs::read(&hook).unwrap(), once);

    // Installing from another binary replaces the path in the one block.
    let r = env.cx(&repo, &["--format", "json", "hook", "install"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.json()["action"], "updated");
    let text = std::fs::read_to_string(&hook).unwrap();
    assert_eq!(text.matches(BEGIN).count(), 1, "{text}");
    assert_eq!(text.matches(END).count(), 1, "{text}");
    let real = canonical(Path::new(env!("CARGO_BIN_EXE_contextos")));
    assert!(text.contains(&format!("contextos_bin='{real}'")), "{text}");
    assert!(!text.contains(stub.to_str().unwrap()), "{text}");
    assert_eq!(mode(&hook), 0o750, "the user's mode is kept");
}

#[test]
fn githook_uninstall_leaves_the_users_hook_byte_identical() {
    let env = Env::new();
    let repo = env.repo("repo");
    let hook = repo.join(".git/hooks/pre-commit");
    // Odd but valid bytes: no final line end, a Latin-1 byte, a tab, a marker look-alike.
    let original: &[u8] =
        b"#!/usr/bin/env bash\n\t# caf\xe9\necho '# >>> contextos pre-commit' >/dev/null\ntrue";
    write_hook(&hook, original, 0o700);
    env.install_stub(&repo);
    assert_ne!(std::fs::read(&hook).unwrap(), original);

    let r = env.cx(&repo, &["--format", "json", "hook", "uninstall"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.json()["action"], "removed");
    assert_eq!(std::fs::read(&hook).unwrap(), original);
    assert_eq!(mode(&hook), 0o700);

    // Nothing left to remove: still success, nothing touched.
    let r = env.cx(&repo, &["--format", "json", "hook", "uninstall"]);
    assert_eq!(r.code, 0);
    assert_eq!(r.json()["action"], "absent");
    assert_eq!(std::fs::read(&hook).unwrap(), original);
}

#[test]
fn githook_a_hook_install_created_is_0755_and_uninstall_deletes_it() {
    let env = Env::new();
    let repo = env.repo("repo");
    let hook = repo.join(".git/hooks/pre-commit");
    let r = env.cx(&repo, &["--format", "json", "hook", "install"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.json()["action"], "created");
    assert_eq!(mode(&hook), 0o755);
    assert!(std::fs::read_to_string(&hook)
        .unwrap()
        .starts_with(&format!("#!/bin/sh\n{BEGIN}\n")));
    let r = env.cx(&repo, &["--format", "json", "hook", "uninstall"]);
    assert_eq!(r.code, 0);
    assert_eq!(r.json()["action"], "deleted");
    assert!(!hook.exists());
    // No temporary files left behind in the hooks directory.
    let stray: Vec<_> = std::fs::read_dir(repo.join(".git/hooks"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("contextos"))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
}

#[test]
fn githook_a_relative_core_hooks_path_is_taken_from_the_working_tree_root() {
    let env = Env::new();
    let repo = env.repo("repo");
    env.git(&repo, &["config", "core.hooksPath", ".githooks"]);
    // Installed from a subdirectory: the relative path is still taken from the root,
    // where git runs hooks, not from the directory install ran in.
    std::fs::create_dir_all(repo.join("src/deep")).unwrap();
    let stub = env.stub();
    let r = env.cx_in(
        &repo.join("src/deep"),
        &[
            "--format",
            "json",
            "hook",
            "install",
            "--binary",
            stub.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let j = r.json();
    let hook = repo.join(".githooks/pre-commit");
    assert_eq!(j["hook"], canonical(&hook));
    assert_eq!(j["hooksPath"], ".githooks");
    assert!(
        j["warnings"][0]
            .as_str()
            .unwrap()
            .contains("inside the working tree"),
        "{j}"
    );
    assert!(!repo.join(".git/hooks/pre-commit").exists());

    env.clear_log();
    let c = env.commit(&repo, "src/lib.rs", "pub fn f() {}\n");
    assert_eq!(c.code, 0, "{}{}", c.stdout, c.stderr);
    assert_eq!(env.log_lines().len(), 1, "git ran the hook we wrote");
    let c = env.commit(&repo, ".env", "TOKEN=x\n");
    assert_ne!(c.code, 0, "blocked through core.hooksPath");
}

#[test]
fn githook_an_absolute_core_hooks_path_from_an_included_global_file_is_honoured() {
    let env = Env::new();
    let repo = env.repo("repo");
    let shared = env.tmp.path().join("shared hooks");
    // Global config includes a file only for repositories under tmp/: the full stack,
    // includeIf and all, decides where git looks.
    let extra = env.home.path().join("work.gitconfig");
    std::fs::write(
        &extra,
        format!("[core]\n\thooksPath = {}\n", shared.display()),
    )
    .unwrap();
    let mut global = std::fs::read_to_string(env.global_config()).unwrap();
    global.push_str(&format!(
        "[includeIf \"gitdir:{}/\"]\n\tpath = {}\n",
        env.tmp.path().canonicalize().unwrap().display(),
        extra.display()
    ));
    std::fs::write(env.global_config(), global).unwrap();
    assert_eq!(
        env.git(&repo, &["config", "core.hooksPath"]).stdout.trim(),
        shared.display().to_string()
    );

    let r = env.install_stub(&repo);
    let hook = shared.join("pre-commit");
    assert!(
        r.stdout.contains(&hook.display().to_string()),
        "{}",
        r.stdout
    );
    assert!(hook.is_file());
    env.clear_log();
    let c = env.commit(&repo, "a.txt", "a\n");
    assert_eq!(c.code, 0, "{}{}", c.stdout, c.stderr);
    assert_eq!(env.log_lines().len(), 1);
    let c = env.commit(&repo, ".env", "TOKEN=x\n");
    assert_ne!(c.code, 0);
}

#[test]
fn githook_linked_worktrees_share_the_hook_and_scan_their_own_tree() {
    let env = Env::new();
    let repo = env.repo("repo");
    let wt = env.tmp.path().join("wt");
    env.git(
        &repo,
        &["worktree", "add", "-q", "-b", "side", wt.to_str().unwrap()],
    );
    // Installed from the linked worktree: git looks in the common directory's hooks.
    let stub = env.stub();
    let r = env.cx(
        &wt,
        &[
            "--format",
            "json",
            "hook",
            "install",
            "--binary",
            stub.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        r.json()["hook"],
        canonical(&repo.join(".git/hooks/pre-commit"))
    );

    env.clear_log();
    let c = env.commit(&wt, "b.txt", "b\n");
    assert_eq!(c.code, 0, "{}{}", c.stdout, c.stderr);
    let c = env.commit(&repo, "c.txt", "c\n");
    assert_eq!(c.code, 0, "{}{}", c.stdout, c.stderr);
    assert_eq!(
        env.log_lines(),
        vec![
            format!(
                "contextos --project {} scan --staged --enforce",
                canonical(&wt)
            ),
            format!(
                "contextos --project {} scan --staged --enforce",
                canonical(&repo)
            ),
        ]
    );
    let c = env.commit(&wt, ".env", "TOKEN=x\n");
    assert_ne!(c.code, 0, "blocked in the linked worktree");
}

#[test]
fn githook_a_non_shell_hook_is_refused_by_name_and_left_alone() {
    let env = Env::new();
    let repo = env.repo("repo");
    let hook = repo.join(".git/hooks/pre-commit");
    let original = b"#!/usr/bin/env python3\nimport sys\nsys.exit(0)\n";
    write_hook(&hook, original, 0o755);
    let r = env.cx(&repo, &["hook", "install"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("`python3`"), "{}", r.stderr);
    assert!(r.stderr.contains("POSIX shell"), "{}", r.stderr);
    assert_eq!(std::fs::read(&hook).unwrap(), original);

    let r = env.cx(&repo, &["--format", "json", "hook", "install"]);
    assert_eq!(r.code, 2);
    let j = r.json();
    assert_eq!(j["schemaVersion"], 1);
    assert!(j["error"].as_str().unwrap().contains("python3"), "{j}");
}

#[test]
fn githook_a_missing_binary_blocks_the_commit() {
    let env = Env::new();
    let repo = env.repo("repo");
    // Installed by a contextos that is later deleted (an uninstalled or moved binary).
    let bin_dir = env.tmp.path().join("gone");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let bin = bin_dir.join("contextos");
    std::fs::copy(env!("CARGO_BIN_EXE_contextos"), &bin).unwrap();
    // `hook install` reads git, so the front hands it to the companion beside it.
    std::fs::copy(
        env!("CARGO_BIN_EXE_contextos-full"),
        bin_dir.join("contextos-full"),
    )
    .unwrap();
    let r = env.cx_bin(
        &bin,
        env.tmp.path(),
        &["--project", repo.to_str().unwrap(), "hook", "install"],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let text = std::fs::read_to_string(repo.join(".git/hooks/pre-commit")).unwrap();
    assert!(
        text.contains(&format!("contextos_bin='{}'", canonical(&bin))),
        "{text}"
    );
    std::fs::remove_file(&bin).unwrap();

    // Even with a contextos on PATH, the hook does not fall back to it.
    let before = env.commits(&repo);
    std::fs::write(repo.join("README.md"), "changed\n").unwrap();
    env.git(&repo, &["add", "README.md"]);
    let path = format!(
        "{}:{}",
        env.stub().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let c = run(env
        .command("git", &repo)
        .env("PATH", path)
        .args(["commit", "-q", "-m", "x"])
        .output()
        .unwrap());
    assert_eq!(c.code, 1, "{}{}", c.stdout, c.stderr);
    assert!(c.stderr.contains("commit blocked"), "{}", c.stderr);
    assert!(
        c.stderr.contains("missing or not executable"),
        "{}",
        c.stderr
    );
    assert!(env.log_lines().is_empty(), "the PATH stub must not run");
    assert_eq!(env.commits(&repo), before);
}

#[test]
fn githook_a_hook_without_shebang_runs_under_sh_as_git_runs_it() {
    let env = Env::new();
    let repo = env.repo("repo");
    let hook = repo.join(".git/hooks/pre-commit");
    let original = b"printf 'user hook\\n' >> \"$CONTEXTOS_TEST_LOG\"\n";
    write_hook(&hook, original, 0o755);
    env.install_stub(&repo);
    assert!(std::fs::read_to_string(&hook).unwrap().starts_with(BEGIN));
    env.clear_log();
    let c = env.commit(&repo, "a.txt", "a\n");
    assert_eq!(c.code, 0, "{}{}", c.stdout, c.stderr);
    assert_eq!(env.log_lines().len(), 2, "{:?}", env.log_lines());
    assert_eq!(env.log_lines()[1], "user hook");
    assert_ne!(env.commit(&repo, ".env", "x\n").code, 0);
    let r = env.cx(&repo, &["hook", "uninstall"]);
    assert_eq!(r.code, 0);
    assert_eq!(std::fs::read(&hook).unwrap(), original);
}

#[test]
fn githook_links_damaged_blocks_and_disabled_hooks_are_refused_without_writing() {
    let env = Env::new();
    let repo = env.repo("repo");
    let hooks = repo.join(".git/hooks");
    let hook = hooks.join("pre-commit");

    // A symbolic link (often to a tracked script): never written through.
    let target = repo.join("scripts/pre-commit");
    write_hook(&target, USER_HOOK.as_bytes(), 0o755);
    std::os::unix::fs::symlink(&target, &hook).unwrap();
    let r = env.cx(&repo, &["hook", "install"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("symbolic link"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), USER_HOOK);
    assert!(std::fs::symlink_metadata(&hook)
        .unwrap()
        .file_type()
        .is_symlink());
    // Uninstall through the link finds no block and changes nothing.
    let r = env.cx(&repo, &["--format", "json", "hook", "uninstall"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.json()["action"], "absent");
    std::fs::remove_file(&hook).unwrap();

    // A begin marker without its end: an error naming the line, nothing written.
    let damaged = format!("#!/bin/sh\necho one\n{BEGIN}\necho two\n");
    write_hook(&hook, damaged.as_bytes(), 0o755);
    for cmd in ["install", "uninstall"] {
        let r = env.cx(&repo, &["hook", cmd]);
        assert_eq!(r.code, 2, "{cmd}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains("line 3"), "{}", r.stderr);
        assert_eq!(std::fs::read_to_string(&hook).unwrap(), damaged);
    }

    // A hook that is not executable is ignored by git, and so would our block be.
    write_hook(&hook, USER_HOOK.as_bytes(), 0o644);
    let r = env.cx(&repo, &["hook", "install"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("not executable"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), USER_HOOK);
}

#[test]
fn githook_outside_a_repository_is_an_error() {
    let env = Env::new();
    let dir = env.tmp.path().join("plain");
    std::fs::create_dir_all(&dir).unwrap();
    let r = env.cx(&dir, &["hook", "install"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("not inside a git repository"),
        "{}",
        r.stderr
    );
}

#[test]
fn githook_pre_commit_framework_definition_runs_the_enforcing_scan() {
    let yaml = include_str!("../../.pre-commit-hooks.yaml");
    for line in [
        "- id: contextos-scan",
        "  entry: contextos scan --staged --enforce",
        "  language: system",
        "  pass_filenames: false",
        "  always_run: true",
        "  stages: [pre-commit]",
    ] {
        assert!(yaml.lines().any(|l| l == line), "missing `{line}`");
    }
}

/// A leaked AWS secret and an OpenSSH private key, assembled at run time so this source
/// file itself holds no secret-shaped line.
fn leaked_env() -> String {
    let key_id = ["AKIA", "Q3EGRZ7TXW4NPL2M"].concat();
    let secret = ["wJ8rT2kX9mQ4vB7nL1pZ", "5cY3hD6fG0sA8eU2iO4w"].concat();
    let armour = ["-----BEGIN OPENSSH ", "PRIVATE KEY-----"].concat();
    let armour_end = ["-----END OPENSSH ", "PRIVATE KEY-----"].concat();
    format!(
        "AWS_ACCESS_KEY_ID={key_id}\nAWS_SECRET_ACCESS_KEY={secret}\nDEPLOY_KEY=\"{armour}\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDx4kTq0nP3vXy7Zb2mE9sWcLr8aK5uHj1dGf6oYtNiQwAAAJgx8rLhMfK5\n{armour_end}\"\n"
    )
}

/// The real binary, end to end: `contextos hook install` with nothing but defaults, then
/// `git commit` runs `contextos scan --staged --enforce` from the block.
#[test]
fn githook_the_real_scan_blocks_a_bad_commit_and_lets_a_clean_one_through() {
    let env = Env::new();
    let repo = env.repo("repo");
    let hook = repo.join(".git/hooks/pre-commit");
    write_hook(&hook, USER_HOOK.as_bytes(), 0o755);
    let r = env.cx(&repo, &["hook", "install"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);

    env.clear_log();
    let c = env.commit(&repo, "README.md", "# project\n\nHow to build it.\n");
    assert_eq!(c.code, 0, "a clean commit passes: {}{}", c.stdout, c.stderr);
    assert_eq!(
        env.log_lines(),
        vec!["user hook"],
        "the user's hook still runs"
    );

    env.clear_log();
    let before = env.commits(&repo);
    let c = env.commit(&repo, ".env", &leaked_env());
    assert_eq!(
        c.code, 1,
        "a bad commit is blocked: {}{}",
        c.stdout, c.stderr
    );
    assert!(
        c.stderr.contains(".env") || c.stdout.contains(".env"),
        "{}{}",
        c.stdout,
        c.stderr
    );
    assert_eq!(env.commits(&repo), before);
    assert!(env.log_lines().is_empty(), "nothing after the block ran");

    // Unstaging the bad file lets the next clean commit through again.
    env.git(&repo, &["rm", "-q", "--cached", ".env"]);
    let c = env.commit(&repo, "src/lib.rs", "pub fn build() {}\n");
    assert_eq!(c.code, 0, "{}{}", c.stdout, c.stderr);
}

/// `git commit -a` and `git commit PATH` hand the hook a temporary index through
/// `GIT_INDEX_FILE`; the scan must judge that index, not `.git/index`.
#[test]
fn githook_the_real_scan_judges_the_index_git_commit_a_builds() {
    let env = Env::new();
    let repo = env.repo("repo");
    let r = env.cx(&repo, &["hook", "install"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    std::fs::write(repo.join("README.md"), "# project\n\nclean\n").unwrap();
    let c = env.try_git(&repo, &["commit", "-q", "-a", "-m", "clean via -a"]);
    assert_eq!(
        c.code, 0,
        "a clean commit -a passes: {}{}",
        c.stdout, c.stderr
    );
    let before = env.commits(&repo);
    std::fs::write(repo.join("README.md"), leaked_env()).unwrap();
    let c = env.try_git(&repo, &["commit", "-q", "-a", "-m", "leak via -a"]);
    assert_ne!(c.code, 0, "commit -a with a leak: {}{}", c.stdout, c.stderr);
    let c = env.try_git(&repo, &["commit", "-q", "-m", "leak via path", "README.md"]);
    assert_ne!(
        c.code, 0,
        "commit PATH with a leak: {}{}",
        c.stdout, c.stderr
    );
    assert_eq!(env.commits(&repo), before);
}

#[test]
fn githook_a_worktree_s_own_core_hooks_path_is_honoured() {
    let env = Env::new();
    let repo = env.repo("repo");
    let wt = env.tmp.path().join("wt");
    env.git(
        &repo,
        &["worktree", "add", "-q", "-b", "side", wt.to_str().unwrap()],
    );
    let own = env.tmp.path().join("wt-hooks");
    env.git(&repo, &["config", "extensions.worktreeConfig", "true"]);
    env.git(
        &wt,
        &[
            "config",
            "--worktree",
            "core.hooksPath",
            own.to_str().unwrap(),
        ],
    );
    env.install_stub(&wt);
    assert!(own.join("pre-commit").is_file());
    assert!(!repo.join(".git/hooks/pre-commit").exists());
    env.clear_log();
    let c = env.commit(&wt, ".env", "TOKEN=x\n");
    assert_ne!(c.code, 0, "{}{}", c.stdout, c.stderr);
    // The main worktree has no hook: its commit runs nothing.
    let c = env.commit(&repo, "a.txt", "a\n");
    assert_eq!(c.code, 0, "{}{}", c.stdout, c.stderr);
    assert_eq!(env.log_lines().len(), 1, "{:?}", env.log_lines());
}

#[test]
fn githook_a_project_in_a_subdirectory_is_scanned_as_that_project() {
    let env = Env::new();
    let repo = env.repo("repo");
    let sub = repo.join("services/api");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(sub.join("contextos.toml"), "").unwrap();
    let stub = env.stub();
    // No --project: found from the working directory, like every command.
    let r = env.cx_in(
        &sub,
        &[
            "--format",
            "json",
            "hook",
            "install",
            "--binary",
            stub.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.json()["project"], "services/api");
    env.clear_log();
    let c = env.commit(&repo, "a.txt", "a\n");
    assert_eq!(c.code, 0, "{}{}", c.stdout, c.stderr);
    assert_eq!(
        env.log_lines(),
        vec![format!(
            "contextos --project {}/services/api scan --staged --enforce",
            canonical(&repo)
        )]
    );
}

#[test]
fn githook_a_block_of_the_node_tool_is_reported_not_silently_kept() {
    let env = Env::new();
    let repo = env.repo("repo");
    let hook = repo.join(".git/hooks/pre-commit");
    let legacy = "#!/bin/sh\n# BEGIN CONTEXTOS HOOK\n./node_modules/.bin/contextos scan --staged --enforce || exit $?\n# END CONTEXTOS HOOK\n";
    write_hook(&hook, legacy.as_bytes(), 0o755);
    let stub = env.stub();
    let r = env.cx(
        &repo,
        &[
            "--format",
            "json",
            "hook",
            "install",
            "--binary",
            stub.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let j = r.json();
    assert!(
        j["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("# BEGIN CONTEXTOS HOOK")),
        "{j}"
    );
    let text = std::fs::read_to_string(&hook).unwrap();
    assert!(text.find(BEGIN).unwrap() < text.find("# BEGIN CONTEXTOS HOOK").unwrap());
}

#[test]
fn githook_paths_with_spaces_quotes_and_dollars_reach_the_scan_intact() {
    let env = Env::new();
    let repo = env.repo("my repo's $HOME `x`");
    let dir = env.tmp.path().join("odd bin/it's $(here)");
    std::fs::create_dir_all(&dir).unwrap();
    let stub = dir.join("contextos");
    std::fs::copy(env.stub(), &stub).unwrap();
    let r = env.cx(
        &repo,
        &["hook", "install", "--binary", stub.to_str().unwrap()],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    env.clear_log();
    // Committed from a subdirectory: git runs the hook from the root all the same.
    std::fs::create_dir_all(repo.join("sub")).unwrap();
    std::fs::write(repo.join("sub/a.txt"), "a\n").unwrap();
    env.git(&repo.join("sub"), &["add", "a.txt"]);
    let c = env.try_git(&repo.join("sub"), &["commit", "-q", "-m", "a"]);
    assert_eq!(c.code, 0, "{}{}", c.stdout, c.stderr);
    assert_eq!(
        env.log_lines(),
        vec![format!(
            "contextos --project {} scan --staged --enforce",
            canonical(&repo)
        )]
    );
}
