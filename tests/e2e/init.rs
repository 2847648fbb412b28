//! `contextos init` end to end, in real repositories made by `git init`: the agents it
//! finds, the files it scaffolds and never overwrites, the compile and the git hook it
//! sets up, and a second run that changes nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

struct Repo {
    dir: tempfile::TempDir,
    home: tempfile::TempDir,
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Repo {
    fn new() -> Repo {
        let r = Repo {
            dir: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        };
        let ok = r
            .command("git")
            .args(["init", "-q", "-b", "main"])
            .status()
            .unwrap()
            .success();
        assert!(ok, "git init");
        r
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    /// A command that sees only this test's home directory and git configuration.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.current_dir(self.root())
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join(".config"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", self.home.path().join(".gitconfig"));
        for v in [
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_INDEX_FILE",
            "GIT_CEILING_DIRECTORIES",
        ] {
            c.env_remove(v);
        }
        c
    }

    fn init(&self, args: &[&str]) -> Out {
        let out = self
            .command(env!("CARGO_BIN_EXE_contextos"))
            .arg("init")
            .args(args)
            .output()
            .unwrap();
        Out {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.root().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    /// Every file below the root except git's own, with its bytes.
    fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                let rel = p.strip_prefix(base).unwrap().to_path_buf();
                if rel.starts_with(".git") && !rel.starts_with(".github") {
                    continue;
                }
                if p.is_dir() {
                    walk(base, &p, out);
                } else {
                    out.insert(rel, std::fs::read(&p).unwrap());
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(self.root(), self.root(), &mut out);
        out
    }

    fn pre_commit(&self) -> Option<String> {
        std::fs::read_to_string(self.root().join(".git/hooks/pre-commit")).ok()
    }
}

#[test]
fn init_sets_a_repository_up_and_a_second_run_changes_nothing() {
    let r = Repo::new();
    // The repository uses Claude Code; the user's home has Codex.
    r.write(".claude/settings.local.json", "{}\n");
    std::fs::create_dir_all(r.home.path().join(".codex")).unwrap();

    let first = r.init(&[]);
    assert_eq!(first.code, 0, "{}\n{}", first.stdout, first.stderr);
    assert!(
        first
            .stdout
            .contains("claude   (.claude in the repository)"),
        "{}",
        first.stdout
    );
    assert!(
        first.stdout.contains("codex    (~/.codex)"),
        "{}",
        first.stdout
    );
    assert!(
        first.stdout.contains("contextos.toml: created"),
        "{}",
        first.stdout
    );
    assert!(first.stdout.contains("next:"), "{}", first.stdout);

    // The scaffolded project: the found agents as targets, a starter policy whose tests
    // pass, and only those agents' files.
    let config = r.read("contextos.toml");
    assert!(
        config.contains("targets = [\"agents\", \"claude\", \"codex\"]"),
        "{config}"
    );
    assert!(r
        .read(".contextos/policies/main.policy")
        .contains("test \"the starter rules hold\""));
    for f in [
        "AGENTS.md",
        "CLAUDE.md",
        ".claude/settings.json",
        ".codex/hooks.json",
    ] {
        assert!(r.root().join(f).is_file(), "{f} missing");
    }
    for absent in [".cursor/hooks.json", ".github/hooks/contextos.json"] {
        assert!(
            !r.root().join(absent).exists(),
            "{absent} written for an agent not in use"
        );
    }
    let settings: serde_json::Value =
        serde_json::from_str(&r.read(".claude/settings.json")).unwrap();
    assert!(
        settings["permissions"]["deny"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d == "Edit(/config/production/**)"),
        "{settings}"
    );
    let hook = r.pre_commit().expect("the git hook is installed");
    assert!(hook.contains("scan --staged"), "{hook}");

    let tested = r
        .command(env!("CARGO_BIN_EXE_contextos"))
        .arg("test")
        .output()
        .unwrap();
    assert!(
        tested.status.success(),
        "{}",
        String::from_utf8_lossy(&tested.stdout)
    );

    // Idempotent: the second run changes no byte.
    let before = r.snapshot();
    let hook_before = r.pre_commit();
    let second = r.init(&[]);
    assert_eq!(second.code, 0, "{}\n{}", second.stdout, second.stderr);
    assert!(
        second.stdout.contains("contextos.toml: kept"),
        "{}",
        second.stdout
    );
    assert!(
        second.stdout.contains("in sync: nothing to write"),
        "{}",
        second.stdout
    );
    assert_eq!(r.snapshot(), before, "a second init changed files");
    assert_eq!(r.pre_commit(), hook_before);
}

#[test]
fn init_never_overwrites_the_users_files_and_agents_chooses() {
    let r = Repo::new();
    let own_config = "# mine\n[policies]\nstdlib = true\n";
    let own_policy = "language 1;\n@id(\"mine\") deny path write \"vault/**\" because \"Mine.\";\n";
    r.write("contextos.toml", own_config);
    r.write(".contextos/policies/team.policy", own_policy);
    r.write("AGENTS.md", "# Team notes\n\nKeep this.\n");

    let out = r.init(&["--agents", "cursor", "--no-git-hook"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    // The user's configuration keeps every byte and records the chosen agent.
    let config = r.read("contextos.toml");
    assert!(config.starts_with(own_config), "{config}");
    assert!(config.ends_with("\n[compile]\n# The agents `contextos compile` writes configuration for (recorded by `contextos init`).\ntargets = [\"cursor\"]\n"), "{config}");
    assert!(
        out.stdout
            .contains("contextos.toml: kept, with `[compile] targets` added (cursor)"),
        "{}",
        out.stdout
    );
    assert_eq!(r.read(".contextos/policies/team.policy"), own_policy);
    assert!(!r.root().join(".contextos/policies/main.policy").exists());
    assert!(r
        .read("AGENTS.md")
        .starts_with("# Team notes\n\nKeep this.\n"));
    assert!(r.root().join(".cursor/hooks.json").is_file());
    assert!(!r.root().join(".claude/settings.json").exists());
    assert!(r.pre_commit().is_none(), "--no-git-hook installed a hook");
    assert!(
        out.stdout.contains("left alone (--no-git-hook)"),
        "{}",
        out.stdout
    );

    // A later plain compile writes for the recorded agent only, and a second init (even
    // naming other agents) leaves the recorded choice and every file as they are.
    let compiled = r
        .command(env!("CARGO_BIN_EXE_contextos"))
        .arg("compile")
        .output()
        .unwrap();
    assert!(
        compiled.status.success(),
        "{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    assert!(!r.root().join(".claude/settings.json").exists());
    assert!(!r.root().join(".zed/settings.json").exists());
    let before = r.snapshot();
    let again = r.init(&["--agents", "cursor", "--no-git-hook"]);
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    assert_eq!(r.snapshot(), before, "a second init changed files");
    assert!(
        again.stdout.contains("its `[compile] targets` = [cursor]"),
        "{}",
        again.stdout
    );

    let bad = r.init(&["--agents", "notepad"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("unknown agent `notepad`"),
        "{}",
        bad.stderr
    );
}

/// A repository that already prepares the Copilot cloud agent with its own
/// `copilot-setup-steps.yml` keeps it: `init` succeeds, says so, and a second run is clean.
#[test]
fn init_keeps_the_users_copilot_setup_steps() {
    let r = Repo::new();
    let own = "name: Copilot setup steps\non: workflow_dispatch\njobs:\n  copilot-setup-steps:\n    runs-on: ubuntu-latest\n    steps:\n      - run: ./install-tools.sh\n";
    r.write(".github/workflows/copilot-setup-steps.yml", own);
    let out = r.init(&["--agents", "copilot", "--no-git-hook"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(r.read(".github/workflows/copilot-setup-steps.yml"), own);
    assert!(r.root().join(".github/hooks/contextos.json").is_file());
    assert!(
        out.stderr
            .contains("own Copilot setup workflow is kept as written"),
        "{}",
        out.stderr
    );
    let before = r.snapshot();
    let again = r.init(&["--agents", "copilot", "--no-git-hook"]);
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    assert_eq!(r.snapshot(), before);
}

/// `[compile.copilot] install` is the command the setup workflow runs.
#[test]
fn the_copilot_install_command_comes_from_the_configuration() {
    let r = Repo::new();
    r.write(
        "contextos.toml",
        "[policies]\nstdlib = true\n\n[compile]\ntargets = [\"copilot\"]\n\n[compile.copilot]\ninstall = \"cargo install --locked --git https://git.acme.test/contextos --tag v0.1.0 contextos\"\n",
    );
    let out = r.init(&["--agents", "copilot", "--no-git-hook"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let wf = r.read(".github/workflows/copilot-setup-steps.yml");
    assert!(
        wf.contains("        run: \"cargo install --locked --git https://git.acme.test/contextos --tag v0.1.0 contextos\"\n"),
        "{wf}"
    );
    assert!(
        !out.stderr.contains("[compile.copilot] install"),
        "{}",
        out.stderr
    );
}

/// The completion scripts and manual pages come from the same command definitions: every
/// subcommand is in them.
#[test]
fn completions_and_man_pages_cover_every_command() {
    let r = Repo::new();
    let run = |args: &[&str]| {
        let out = r
            .command(env!("CARGO_BIN_EXE_contextos"))
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let bash = run(&["completions", "bash"]);
    assert!(bash.contains("_contextos()"), "{bash}");
    for cmd in ["compile", "init", "hook", "scan", "completions", "man"] {
        assert!(bash.contains(cmd), "bash completion lacks {cmd}");
    }
    assert!(run(&["completions", "zsh"]).starts_with("#compdef contextos"));
    assert!(run(&["completions", "fish"]).contains("complete -c contextos"));
    let man = run(&["man"]);
    assert!(man.contains(".TH contextos 1"), "{man}");
    assert!(man.contains("compile"), "{man}");
    let dir = r.root().join("man");
    run(&["man", "--out", dir.to_str().unwrap()]);
    for page in [
        "contextos.1",
        "contextos-compile.1",
        "contextos-init.1",
        "contextos-hook.1",
    ] {
        let text =
            std::fs::read_to_string(dir.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(text.starts_with(".ie"), "{page}: {text}");
    }
}

/// The agents of issue 17's later targets are found by their files in the repository.
#[test]
fn init_finds_continue() {
    let r = Repo::new();
    r.write(".continue/config.yaml", "name: team\n");
    let out = r.init(&["--no-git-hook"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("continue (.continue in the repository)"),
        "{}",
        out.stdout
    );
    assert!(
        r.read("contextos.toml").contains("\"continue\""),
        "{}",
        r.read("contextos.toml")
    );
}

/// Aider is found by its configuration file, which init keeps as the user wrote it (no
/// YAML merge) and says what to add; a second run changes nothing.
#[test]
fn init_finds_aider_and_keeps_its_conf() {
    let r = Repo::new();
    let own = "model: sonnet\n";
    r.write(".aider.conf.yml", own);
    let out = r.init(&["--no-git-hook"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("aider    (.aider.conf.yml in the repository)"),
        "{}",
        out.stdout
    );
    assert_eq!(r.read(".aider.conf.yml"), own);
    assert!(r.root().join("AGENTS.md").is_file());
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(all.contains("add `read: [AGENTS.md]`"), "{all}");
    let before = r.snapshot();
    let again = r.init(&["--no-git-hook"]);
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    assert_eq!(r.snapshot(), before, "a second init changed files");
}

/// OpenCode is found by its `opencode.json`, whose keys init keeps.
#[test]
fn init_finds_opencode() {
    let r = Repo::new();
    r.write("opencode.json", "{\"model\": \"x\"}\n");
    let out = r.init(&["--no-git-hook"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("opencode (opencode.json in the repository)"),
        "{}",
        out.stdout
    );
    let conf: serde_json::Value = serde_json::from_str(&r.read("opencode.json")).unwrap();
    assert_eq!(conf["model"], "x");
    assert_eq!(conf["$schema"], "https://opencode.ai/config.json");
}
