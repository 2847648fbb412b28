//! Amp and Amazon Q Developer end to end: `compile` writes each agent's documented
//! files with a deny rule of the policies in native form, and the real binary answers
//! each agent's hook exactly as its documentation describes the call — Amp's delegate
//! (the tool's arguments on stdin, `AGENT=amp` and `AGENT_TOOL_NAME` in the environment,
//! no arguments) and Amazon Q's `preToolUse` event on stdin — by exit code.

use crate::hooks::{Hook, Proj};
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

const EXAMPLE: &str = include_str!("../../examples/rust-service/.contextos/policies/main.policy");

fn fixture(agent: &str, name: &str) -> String {
    let p = format!(
        "{}/../tests/e2e/fixtures/hooks/{agent}/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// Runs the binary in `p` with `args`, `env` and `stdin`; `/repo` in stdin names `p`.
fn spawn(p: &Proj, args: &[&str], env: &[(&str, &str)], stdin: &str) -> Hook {
    let stdin = stdin.replace("/repo", &p.root().to_string_lossy());
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_contextos"));
    cmd.args(args)
        .env("XDG_STATE_HOME", p.home.path())
        .env_remove("AGENT")
        .env_remove("AGENT_TOOL_NAME")
        .env_remove("CLAUDE_PROJECT_DIR")
        .current_dir(p.root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    // The hook may answer before reading everything; a closed pipe is fine.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    let out = child.wait_with_output().unwrap();
    Hook {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Amp's delegate call: `contextos` started with no arguments.
fn amp(p: &Proj, tool: &str, stdin: &str) -> Hook {
    spawn(
        p,
        &[],
        &[
            ("AGENT", "amp"),
            ("AGENT_TOOL_NAME", tool),
            ("AMP_THREAD_ID", "T-7f0e2c1a"),
        ],
        stdin,
    )
}

fn fresh_session(p: &Proj) {
    let _ = std::fs::remove_dir_all(p.root().join(".contextos/state/sessions/agents"));
}

/// Exit 0 allows, 1 asks the operator, 2 rejects with stderr passed to the model (Amp
/// manual, "Delegating the decision to an external program"). Every Amp fixture, as Amp
/// sends it, with the stdlib's answer.
#[test]
fn amp_delegate_answers_by_exit_code() {
    let p = Proj::new();
    // A search is judged by the files its glob picks: give `*.env` one to pick.
    std::fs::write(p.root().join(".env"), "TOKEN=1\n").unwrap();
    let cases: &[(&str, &str, i32, &str)] = &[
        ("bash-cargo-test", "Bash", 0, ""),
        ("bash-git-push-force", "Bash", 1, "std-exec-force-push"),
        // No stdlib rule speaks: silence, Amp's own flow goes on.
        ("bash-make-release", "Bash", 0, ""),
        ("bash-rm-home", "Bash", 2, "std-exec-rm-root"),
        (
            "create-file-git-hook",
            "create_file",
            2,
            "std-self-protection",
        ),
        (
            "edit-file-amp-settings",
            "edit_file",
            2,
            "std-self-protection",
        ),
        ("edit-file-src-lib", "edit_file", 0, ""),
        ("grep-env", "Grep", 2, "would ask"),
        (
            "mcp-github-create-issue",
            "mcp__github__create_issue",
            2,
            "std-mcp-unlisted",
        ),
        ("oracle", "oracle", 0, ""),
        ("read-src-lib", "Read", 0, ""),
        ("read-ssh-key", "Read", 2, "std-credential-file-read"),
        ("read-web-page-docs", "read_web_page", 0, ""),
    ];
    let base = format!(
        "{}/../tests/e2e/fixtures/hooks/amp",
        env!("CARGO_MANIFEST_DIR")
    );
    assert_eq!(
        std::fs::read_dir(&base).unwrap().count(),
        cases.len(),
        "every amp fixture has a case"
    );
    let mut failures = Vec::new();
    for (name, tool, code, names) in cases {
        fresh_session(&p);
        let h = amp(&p, tool, &fixture("amp", name));
        if h.code != *code || !h.stdout.is_empty() || !h.stderr.contains(names) {
            failures.push(format!(
                "amp/{name}: exit {} (want {code} naming {names:?})\n  stdout: {}\n  stderr: {}",
                h.code, h.stdout, h.stderr
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The same call through `contextos hook amp`, and what must not pass: a delegate call
/// without the tool's name, unreadable arguments, and `contextos` alone outside Amp.
#[test]
fn amp_fails_closed_and_the_bare_binary_needs_amps_environment() {
    let p = Proj::new();
    let rm = fixture("amp", "bash-rm-home");
    let env = [("AGENT", "amp"), ("AGENT_TOOL_NAME", "Bash")];
    let h = spawn(&p, &["hook", "amp"], &env, &rm);
    assert_eq!(h.code, 2, "{}", h.stderr);
    assert!(h.stderr.contains("std-exec-rm-root"), "{}", h.stderr);
    fresh_session(&p);
    let h = spawn(&p, &["hook", "amp"], &env, r#"{"cmd":"cargo test"}"#);
    assert_eq!((h.code, h.stdout.as_str()), (0, ""), "{}", h.stderr);
    // No tool name: blocked, saying why.
    let h = spawn(&p, &["hook", "amp"], &[("AGENT", "amp")], &rm);
    assert_eq!(h.code, 2);
    assert!(h.stderr.contains("AGENT_TOOL_NAME"), "{}", h.stderr);
    // Arguments that are not JSON: blocked.
    let h = amp(&p, "Bash", "cmd=rm -rf ~");
    assert_eq!(h.code, 2, "{}", h.stderr);
    // `contextos` alone, without Amp's environment, is not a hook: usage, never exit 0/1.
    let h = spawn(&p, &[], &[("AGENT_TOOL_NAME", "Bash")], &rm);
    assert_eq!(h.code, 2, "{}{}", h.stdout, h.stderr);
    assert!(!h.stderr.contains("std-exec-rm-root"), "{}", h.stderr);
}

/// Amazon Q's `preToolUse`: exit 0 runs the tool, exit 2 blocks it and returns stderr to
/// the model; it cannot ask, so an ask blocks (the CLI's hooks documentation). Every
/// fixture, as the CLI sends it, with the stdlib's answer.
#[test]
fn amazonq_hook_answers_by_exit_code() {
    let p = Proj::new();
    let cases: &[(&str, i32, &str)] = &[
        ("agentspawn", 0, ""),
        ("posttooluse-fs-read", 0, ""),
        ("pretooluse-bash-cargo-test", 0, ""),
        ("pretooluse-bash-git-push-force", 2, "would ask"),
        ("pretooluse-bash-rm-home", 2, "std-exec-rm-root"),
        ("pretooluse-fs-read-src", 0, ""),
        ("pretooluse-fs-read-ssh-key", 2, "std-credential-file-read"),
        ("pretooluse-fs-write-agent-file", 2, "std-self-protection"),
        ("pretooluse-fs-write-git-hook", 2, "std-self-protection"),
        ("pretooluse-fs-write-src-lib", 0, ""),
        ("pretooluse-mcp-git-status", 2, "std-mcp-unlisted"),
        ("pretooluse-web-fetch-docs", 0, ""),
    ];
    let base = format!(
        "{}/../tests/e2e/fixtures/hooks/amazonq",
        env!("CARGO_MANIFEST_DIR")
    );
    assert_eq!(
        std::fs::read_dir(&base).unwrap().count(),
        cases.len(),
        "every amazonq fixture has a case"
    );
    let mut failures = Vec::new();
    for (name, code, names) in cases {
        fresh_session(&p);
        let h = p.hook("amazonq", &fixture("amazonq", name), &[]);
        if h.code != *code || !h.stdout.is_empty() || !h.stderr.contains(names) {
            failures.push(format!(
                "amazonq/{name}: exit {} (want {code} naming {names:?})\n  stdout: {}\n  stderr: {}",
                h.code, h.stdout, h.stderr
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // A preToolUse event without its tool input blocks.
    let h = p.hook(
        "amazonq",
        r#"{"hook_event_name":"preToolUse","cwd":"/repo","tool_name":"fs_write"}"#,
        &[],
    );
    assert_eq!(h.code, 2);
    assert!(h.stderr.contains("`tool_input` is missing"), "{}", h.stderr);
}

fn compile(dir: &Path, target: &str) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_contextos"))
        .arg("--project")
        .arg(dir)
        .args(["compile", "--target", target])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned()
            + String::from_utf8_lossy(&out.stderr).as_ref(),
    )
}

fn example_project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join(".git")).unwrap();
    std::fs::create_dir_all(d.path().join(".contextos/policies")).unwrap();
    std::fs::write(d.path().join(".contextos/policies/main.policy"), EXAMPLE).unwrap();
    d
}

fn json(dir: &Path, path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(path)).unwrap()).unwrap()
}

/// `--target amp`: `.amp/settings.json` in Amp's documented shape — the user's keys and
/// permission entries kept, the example's `no-force-push` deny as a native `reject` of
/// `Bash` `cmd`, every other call delegated to `contextos`, the MCP server — with
/// `AGENTS.md` compiled along and a second run in sync.
#[test]
fn amp_target_writes_its_settings_and_keeps_the_users() {
    let d = example_project();
    std::fs::create_dir_all(d.path().join(".amp")).unwrap();
    std::fs::write(
        d.path().join(".amp/settings.json"),
        r#"{"amp.anthropic.thinking.enabled": true,
            "amp.permissions": [{"tool": "mermaid", "action": "allow"}]}"#,
    )
    .unwrap();
    let (code, out) = compile(d.path(), "amp");
    assert_eq!(code, 0, "{out}");
    let s = json(d.path(), ".amp/settings.json");
    assert_eq!(s["amp.anthropic.thinking.enabled"], true);
    let perms = s["amp.permissions"].as_array().unwrap();
    assert_eq!(
        perms[0],
        serde_json::json!({"tool": "mermaid", "action": "allow"})
    );
    for e in perms {
        let keys: Vec<&str> = e.as_object().unwrap().keys().map(String::as_str).collect();
        assert!(
            keys.iter()
                .all(|k| ["tool", "matches", "action", "context", "to", "message"].contains(k)),
            "{e}"
        );
        assert!(matches!(
            e["action"].as_str(),
            Some("allow" | "reject" | "ask" | "delegate")
        ));
    }
    let force = perms
        .iter()
        .find(|e| {
            e["message"]
                .as_str()
                .is_some_and(|m| m.contains("no-force-push"))
        })
        .unwrap_or_else(|| panic!("no native reject for no-force-push: {perms:?}"));
    assert_eq!(force["tool"], "Bash");
    assert_eq!(force["action"], "reject");
    let cmd = force["matches"]["cmd"].as_array().unwrap();
    let hit = |line: &str| {
        cmd.iter().any(|re| {
            let re = re.as_str().unwrap();
            let body = re
                .strip_prefix('/')
                .and_then(|r| r.strip_suffix('/'))
                .unwrap();
            regex::Regex::new(body).unwrap().is_match(line)
        })
    };
    assert!(hit("git push --force origin main") && hit("git push -f"));
    assert!(!hit("git push origin main"));
    assert_eq!(
        perms.last().unwrap(),
        &serde_json::json!({"tool": "*", "action": "delegate", "to": "contextos"})
    );
    assert_eq!(
        s["amp.mcpServers"]["contextos"],
        serde_json::json!({"command": "contextos", "args": ["mcp"]})
    );
    assert!(std::fs::read_to_string(d.path().join("AGENTS.md"))
        .unwrap()
        .contains("contextos"));
    let (code, out) = compile(d.path(), "amp");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("in sync"), "{out}");
}

/// `--target amazonq`: the agent file in the CLI's documented agent format — the
/// example's `no-force-push` deny as a `deniedCommands` regex (anchored by the CLI), its
/// secret writes in `fs_write.deniedPaths`, the `preToolUse` hook, `AGENTS.md` as a
/// resource — and a second run in sync.
#[test]
fn amazonq_target_writes_its_agent() {
    let d = example_project();
    let (code, out) = compile(d.path(), "amazonq");
    assert_eq!(code, 0, "{out}");
    let a = json(d.path(), ".amazonq/cli-agents/contextos.json");
    assert_eq!(a["name"], "contextos");
    let denied = a["toolsSettings"]["execute_bash"]["deniedCommands"]
        .as_array()
        .unwrap();
    let blocked = |line: &str| {
        denied.iter().any(|re| {
            let re = format!(r"\A(?:{})\z", re.as_str().unwrap());
            regex::Regex::new(&re).unwrap().is_match(line)
        })
    };
    assert!(blocked("git push --force origin main") && blocked("git push -f"));
    assert!(!blocked("git push origin main") && !blocked("cargo test"));
    // `no-secret-writes` has an `unless`: left to the hook; the stdlib's exact
    // self-protection is native.
    let writes = a["toolsSettings"]["fs_write"]["deniedPaths"]
        .as_array()
        .unwrap();
    assert!(writes.iter().any(|p| p == "**/.contextos/**"), "{writes:?}");
    assert!(!writes.iter().any(|p| p == "**/.env"), "{writes:?}");
    assert_eq!(
        a["hooks"]["preToolUse"][0]["command"],
        "contextos hook amazonq"
    );
    assert_eq!(a["hooks"]["preToolUse"][0]["matcher"], "*");
    assert!(a["resources"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r == "file://AGENTS.md"));
    assert!(d.path().join("AGENTS.md").exists());
    let (code, out) = compile(d.path(), "amazonq");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("in sync"), "{out}");
}
