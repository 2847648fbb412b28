//! One verdict for every front end: every request of the adversarial path corpus and a
//! set of link tricks built in a real project — links out of it, onto `.git/hooks`,
//! chains, dangling links, loops, hard links, a FIFO, `/dev/null`, links inside linked
//! directories, case variants of the dot-directories — decided by `contextos decide`, by
//! the hook of every agent (each agent's own file-tool payload) and by `apply`'s plan
//! (`--dry-run`), which must all give the same verdict.
//!
//! Where a front end cannot express a verdict, the comparison is narrowed and says so:
//! Codex, Gemini CLI and Windsurf cannot ask (an ask reaches them as a block), so for them
//! only allow against not-allow is compared; a hook that stays silent (no rule spoke) lets
//! the agent go on, which is compared as allow. `apply` changes files and has no read, so
//! reads are compared between `decide` and the hooks.

use super::hooks::run_hook;
use serde_json::{json, Value};
use std::io::Write as _;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const POLICY: &str = r#"language 1;

@id("work")
allow path read, write, delete "**"
    because "The project is ours to change.";

@id("docs-reviewed")
ask path write, delete "docs/**"
    because "Docs are reviewed.";

@id("keys")
deny path write, delete "**/*.pem"
    because "Keys are provisioned, not written.";
"#;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Read,
    Write,
    Delete,
}

impl Op {
    fn word(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Delete => "delete",
        }
    }
}

/// A project beside an `outside` directory, with the link tricks in place.
struct Fixture {
    base: tempfile::TempDir,
    state: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let base = tempfile::tempdir().unwrap();
        let root = base.path().join("p");
        let outside = base.path().join("outside");
        for d in [".git/hooks", "src", "docs", ".claude", "keys"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("src/lib.rs"), "pub fn a() {}\n").unwrap();
        std::fs::write(root.join("docs/guide.md"), "# Guide\n").unwrap();
        std::fs::write(outside.join("secret.txt"), "secret\n").unwrap();
        let pol = root.join(".contextos/policies");
        std::fs::create_dir_all(&pol).unwrap();
        std::fs::write(pol.join("main.policy"), POLICY).unwrap();

        // Out of the project: a directory, /etc, /dev/null, a dangling target.
        symlink(&outside, root.join("outlink")).unwrap();
        symlink("/etc", root.join("etclink")).unwrap();
        symlink("/dev/null", root.join("devnull")).unwrap();
        symlink(base.path().join("nowhere/file.txt"), root.join("dangling")).unwrap();
        // Onto what governs the agent.
        symlink("../.git/hooks", root.join("src/hooks")).unwrap();
        symlink(".git", root.join("casey")).unwrap();
        // Chains: one that ends outside, one that ends inside.
        symlink("c2", root.join("c1")).unwrap();
        symlink("c3", root.join("c2")).unwrap();
        symlink(&outside, root.join("c3")).unwrap();
        symlink("d2", root.join("d1")).unwrap();
        symlink("src", root.join("d2")).unwrap();
        // Loops.
        symlink("loop", root.join("loop")).unwrap();
        symlink("lb", root.join("la")).unwrap();
        symlink("la", root.join("lb")).unwrap();
        // A link inside a linked directory.
        symlink("src", root.join("dl")).unwrap();
        symlink("../.git/hooks", root.join("src/inner")).unwrap();
        symlink(&outside, root.join("src/out2")).unwrap();
        // Inside links onto an asked and a denied region, and onto a file.
        symlink("docs", root.join("notes")).unwrap();
        symlink("keys", root.join("vault")).unwrap();
        symlink("src/lib.rs", root.join("alias.rs")).unwrap();
        // Hard links: to a file outside, and two names inside.
        std::fs::hard_link(outside.join("secret.txt"), root.join("src/hard.rs")).unwrap();
        std::fs::write(root.join("src/twin-a.txt"), "t\n").unwrap();
        std::fs::hard_link(root.join("src/twin-a.txt"), root.join("src/twin-b.txt")).unwrap();
        // A FIFO, and a link onto it.
        let made = Command::new("mkfifo")
            .arg(root.join("src/fifo"))
            .status()
            .unwrap();
        assert!(made.success(), "mkfifo");
        symlink("src/fifo", root.join("pipe")).unwrap();
        // Case variants of the dot-directories (the file system here is case-sensitive).
        std::fs::create_dir_all(root.join(".Git/hooks")).unwrap();
        std::fs::create_dir_all(root.join(".CLAUDE")).unwrap();
        Fixture {
            base,
            state: tempfile::tempdir().unwrap(),
        }
    }

    fn root(&self) -> PathBuf {
        self.base.path().join("p")
    }

    fn cli(&self, args: &[&str], stdin: Option<&[u8]>) -> (i32, String, String) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_contextos"))
            .arg("--project")
            .arg(self.root())
            .args(args)
            .env("XDG_STATE_HOME", self.state.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let _ = child.stdin.take().unwrap().write_all(stdin.unwrap_or(b""));
        let out = child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

/// The link tricks: (operation, path) pairs decided through the links built above.
fn tricks() -> Vec<(Op, String)> {
    let writes = [
        "outlink/passwd",
        "outlink/secret.txt",
        "etclink/passwd",
        "devnull",
        "dangling",
        "src/hooks/pre-commit",
        "casey/config",
        "casey/hooks/pre-commit",
        "c1/x.txt",
        "d1/new.rs",
        "loop",
        "loop/x",
        "la/x",
        "dl/inner/pre-commit",
        "dl/out2/x",
        "dl/lib.rs",
        "notes/a.md",
        "vault/prod.pem",
        "vault/readme.txt",
        "alias.rs",
        "src/hard.rs",
        "src/twin-a.txt",
        "src/fifo",
        "pipe",
        ".GIT/hooks/pre-commit",
        ".Git/hooks/pre-commit",
        ".CLAUDE/settings.json",
        ".Claude/settings.json",
        ".CONTEXTOS/policies/main.policy",
        "src/new.rs",
        "docs/guide.md",
    ];
    let mut out = Vec::new();
    for p in writes {
        for op in [Op::Write, Op::Delete, Op::Read] {
            out.push((op, p.to_string()));
        }
    }
    out
}

/// Every string literal of the lexical path corpus (core/tests/path_corpus.rs), read at
/// run time so a class added there is compared here too.
fn corpus() -> Vec<String> {
    let file = format!(
        "{}/../core/tests/path_corpus.rs",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&file).unwrap();
    let mut out: Vec<String> = Vec::new();
    let mut chars = text.chars().peekable();
    let mut in_comment = false;
    let mut prev = '\0';
    while let Some(c) = chars.next() {
        if in_comment {
            in_comment = c != '\n';
            prev = c;
            continue;
        }
        if c == '/' && prev == '/' {
            in_comment = true;
            continue;
        }
        if c == '\'' {
            // A char literal such as '/' or '\\': skipped whole.
            for d in chars.by_ref() {
                if d == '\'' {
                    break;
                }
            }
            prev = '\'';
            continue;
        }
        prev = c;
        if c != '"' {
            continue;
        }
        let mut s = String::new();
        while let Some(d) = chars.next() {
            match d {
                '"' => break,
                '\\' => match chars.next() {
                    Some('n') => s.push('\n'),
                    Some('r') => s.push('\r'),
                    Some('t') => s.push('\t'),
                    Some('0') => s.push('\0'),
                    Some('u') => {
                        let hex: String = chars
                            .by_ref()
                            .skip_while(|h| *h == '{')
                            .take_while(|h| *h != '}')
                            .collect();
                        s.push(char::from_u32(u32::from_str_radix(&hex, 16).unwrap()).unwrap());
                    }
                    Some(other) => s.push(other),
                    None => {}
                },
                other => s.push(other),
            }
        }
        // The class names ("path.traversal") and messages are not requests.
        if !s.starts_with("path.") && !s.contains("{p:?}") && !out.contains(&s) {
            out.push(s);
        }
    }
    assert!(out.len() > 100, "the corpus was not read: {out:?}");
    out
}

/// The path as an agent's tool names it: beneath the project's absolute spelling, unless
/// it is already absolute (or a Windows spelling of it).
fn agent_path(root: &Path, p: &str) -> String {
    if p.starts_with('/') || p.starts_with('\\') || p.as_bytes().get(1) == Some(&b':') {
        p.to_string()
    } else {
        format!("{}/{p}", root.display())
    }
}

/// Each agent's file-tool payload for `op` on `path` (`None`: the agent has no such tool).
fn payload(agent: &str, root: &Path, op: Op, rel: &str) -> Option<Value> {
    let path = agent_path(root, rel);
    let cwd = root.display().to_string();
    Some(match (agent, op) {
        ("claude", Op::Write) => json!({"session_id": "s", "transcript_path": "/t", "cwd": cwd,
            "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Write",
            "tool_input": {"file_path": path, "content": "x"}}),
        ("claude", Op::Read) => json!({"session_id": "s", "transcript_path": "/t", "cwd": cwd,
            "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Read",
            "tool_input": {"file_path": path}}),
        ("cursor", _) => {
            let (tool, input) = match op {
                Op::Write => ("Write", json!({"file_path": path, "contents": "x"})),
                Op::Delete => ("Delete", json!({"path": path})),
                Op::Read => ("Read", json!({"target_file": path})),
            };
            json!({"conversation_id": "c", "generation_id": "g", "hook_event_name": "preToolUse",
                "workspace_roots": [cwd], "tool_name": tool, "tool_input": input, "cwd": cwd})
        }
        ("copilot", Op::Write) => json!({"sessionId": "s", "timestamp": 1, "cwd": cwd,
            "toolName": "create", "toolArgs": json!({"path": path, "file_text": "x"}).to_string()}),
        ("copilot", Op::Read) => json!({"sessionId": "s", "timestamp": 1, "cwd": cwd,
            "toolName": "view", "toolArgs": {"path": path}}),
        // apply_patch names paths relative to the working directory, one per line.
        ("codex", Op::Write | Op::Delete) if !rel.contains(['\n', '\r']) => {
            let body = match op {
                Op::Delete => format!("*** Begin Patch\n*** Delete File: {rel}\n*** End Patch\n"),
                _ => format!("*** Begin Patch\n*** Add File: {rel}\n+x\n*** End Patch\n"),
            };
            json!({"session_id": "s", "transcript_path": "/t", "cwd": cwd,
                "hook_event_name": "PreToolUse", "permission_mode": "default",
                "tool_name": "apply_patch", "tool_input": {"command": body}})
        }
        ("gemini", Op::Write) => {
            json!({"session_id": "s", "cwd": cwd, "hook_event_name": "BeforeTool",
            "tool_name": "write_file", "tool_input": {"file_path": path, "content": "x"}})
        }
        ("gemini", Op::Read) => {
            json!({"session_id": "s", "cwd": cwd, "hook_event_name": "BeforeTool",
            "tool_name": "read_file", "tool_input": {"file_path": path}})
        }
        ("windsurf", Op::Write) => {
            json!({"agent_action_name": "pre_write_code", "trajectory_id": "t",
            "execution_id": "e", "tool_info": {"file_path": path,
            "edits": [{"old_string": "", "new_string": "x"}]}})
        }
        ("windsurf", Op::Read) => {
            json!({"agent_action_name": "pre_read_code", "trajectory_id": "t",
            "execution_id": "e", "tool_info": {"file_path": path}})
        }
        _ => return None,
    })
}

const AGENTS: [&str; 6] = ["claude", "cursor", "copilot", "codex", "gemini", "windsurf"];

/// Agents whose protocol (for these events) cannot ask: compared as allow against
/// not-allow. Cursor's `preToolUse` answers an ask with a deny.
fn cannot_ask(agent: &str) -> bool {
    matches!(agent, "cursor" | "codex" | "gemini" | "windsurf")
}

/// Whether an agent's spelling of the corpus entry names the same file as the entry does.
/// Agents send absolute paths, which the OS normalises (`ROOT/a/../b` is `ROOT/b`, a
/// different request from the repository-relative `a/../b` that `path.traversal`
/// rejects), and `apply_patch` trims the names in its headers; such entries are compared
/// between `decide` and `apply` only.
fn same_file_for_agents(p: &str) -> bool {
    let unix = p.replace('\\', "/");
    !p.is_empty() && p.trim() == p && !unix.split('/').any(|s| s == "..")
}

/// The verdict an agent reads from the hook's answer.
fn hook_verdict(agent: &str, root: &Path, state: &Path, payload: &Value) -> String {
    let h = run_hook(
        root,
        state,
        agent,
        &["--no-log"],
        payload.to_string().as_bytes(),
        true,
    );
    if agent == "windsurf" {
        // Windsurf reads the exit code alone: 2 blocks, 0 lets the action run.
        return match h.code {
            0 => "allow".into(),
            2 => "deny".into(),
            c => format!("exit {c}: {}", h.stderr),
        };
    }
    if h.code != 0 {
        return format!("exit {}: {}", h.code, h.stderr);
    }
    match h.verdict().as_str() {
        // Silence: no rule spoke, the agent goes on.
        "pass" => "allow".into(),
        v => v.to_string(),
    }
}

/// What a front end that cannot ask can be compared on.
fn narrowed(v: &str) -> &'static str {
    if v == "allow" {
        "allow"
    } else {
        "not-allow"
    }
}

/// `decide` for every request at once (`--request -`, one JSON line each): the same
/// front end as `decide path`, which is checked request by request for the link tricks.
fn decide_batch(f: &Fixture, reqs: &[(Op, String)]) -> Vec<String> {
    let lines: String = reqs
        .iter()
        .map(|(op, p)| json!({"domain": "path", "op": op.word(), "path": p}).to_string() + "\n")
        .collect();
    let (code, out, err) = f.cli(
        &["--format", "json", "decide", "--request", "-"],
        Some(lines.as_bytes()),
    );
    assert!([0, 1, 3].contains(&code), "decide --request: {code} {err}");
    let verdicts: Vec<String> = out
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["verdict"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(verdicts.len(), reqs.len(), "{out}");
    verdicts
}

/// `apply --dry-run` of one changeset holding every write and delete: the plan's verdict
/// for each change (the plan refuses the whole changeset on the strongest).
fn apply_plan(f: &Fixture, reqs: &[(Op, String)]) -> Vec<Option<String>> {
    let changes: Vec<Value> = reqs
        .iter()
        .filter(|(op, _)| *op != Op::Read)
        .map(|(op, p)| match op {
            Op::Delete => json!({"op": "delete", "path": p}),
            _ => json!({"op": "write", "path": p, "content": "x"}),
        })
        .collect();
    let cs = f.base.path().join("changes.json");
    std::fs::write(&cs, json!({ "changes": changes }).to_string()).unwrap();
    let (code, out, err) = f.cli(
        &[
            "--format",
            "json",
            "apply",
            "--dry-run",
            cs.to_str().unwrap(),
        ],
        None,
    );
    assert!([0, 1, 3].contains(&code), "apply --dry-run: {code} {err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let mut decided = doc["decisions"].as_array().unwrap().iter();
    reqs.iter()
        .map(|(op, _)| {
            (*op != Op::Read).then(|| {
                decided.next().unwrap()["verdict"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
        })
        .collect()
}

/// Runs every request through every front end; returns each disagreement.
fn compare(f: &Fixture, reqs: &[(Op, String)], hooks: fn(&str) -> bool) -> Vec<String> {
    let root = f.root();
    let decided = decide_batch(f, reqs);
    let planned = apply_plan(f, reqs);
    let mut problems = Vec::new();
    for (((op, path), want), plan) in reqs.iter().zip(&decided).zip(&planned) {
        let name = format!("{} {path:?}", op.word());
        if let Some(plan) = plan {
            if plan != want {
                problems.push(format!("{name}: decide {want}, apply's plan {plan}"));
            }
        }
        for agent in AGENTS.iter().copied().filter(|_| hooks(path)) {
            let Some(p) = payload(agent, &root, *op, path) else {
                continue;
            };
            let got = hook_verdict(agent, &root, f.state.path(), &p);
            let same = if cannot_ask(agent) {
                narrowed(&got) == narrowed(want) && !got.starts_with("exit")
            } else {
                &got == want
            };
            if !same {
                problems.push(format!("{name}: decide {want}, hook {agent} {got}"));
            }
        }
    }
    problems
}

#[test]
fn link_tricks_get_one_verdict_from_decide_every_hook_and_apply() {
    let f = Fixture::new();
    let reqs = tricks();
    let problems = compare(&f, &reqs, |_| true);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // `decide path` itself (not only the batch) and the reason codes the hook gives.
    let expect = [
        ("write", "outlink/passwd", 1, "path.symlink-escape"),
        ("write", "etclink/passwd", 1, "path.symlink-escape"),
        ("write", "dangling", 1, "path.symlink-escape"),
        ("write", "devnull", 1, "path.symlink-escape"),
        ("write", "loop/x", 1, "path.unresolvable"),
        ("write", "src/hard.rs", 1, "path.hardlink"),
        ("delete", "src/twin-a.txt", 1, "path.hardlink"),
        ("read", "src/hard.rs", 0, ""),
        ("read", "pipe", 1, "path.special-file"),
        ("write", "dl/inner/pre-commit", 1, "std-self-protection"),
        ("write", "notes/a.md", 3, "docs-reviewed"),
        ("write", "d1/new.rs", 0, "work"),
    ];
    for (op, path, code, names) in expect {
        let (got, out, err) = f.cli(
            &["--format", "json", "decide", "path", "--op", op, path],
            None,
        );
        assert_eq!(got, code, "decide {op} {path}: {out}{err}");
        assert!(out.contains(names), "decide {op} {path}: {out}");
        let claude = payload("claude", &f.root(), Op::Write, path).unwrap();
        if op == "write" && code == 1 {
            let h = run_hook(
                &f.root(),
                f.state.path(),
                "claude",
                &["--no-log"],
                claude.to_string().as_bytes(),
                true,
            );
            assert!(h.stdout.contains(names), "hook {path}: {}", h.stdout);
        }
    }
    // A landing elsewhere in the project is shown beside the named path.
    let (_, out, _) = f.cli(
        &[
            "--format",
            "json",
            "decide",
            "path",
            "--op",
            "write",
            "notes/a.md",
        ],
        None,
    );
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["landing"]["request"]["path"], "docs/a.md", "{doc}");
    assert_eq!(doc["verdict"], "ask");
}

#[test]
fn the_lexical_corpus_gets_one_verdict_from_decide_every_hook_and_apply() {
    let f = Fixture::new();
    let reqs: Vec<(Op, String)> = corpus()
        .into_iter()
        .flat_map(|p| [(Op::Write, p.clone()), (Op::Delete, p)])
        .collect();
    let problems = compare(&f, &reqs, same_file_for_agents);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
