//! The exit-code table of the book's CLI chapter (`### Exit codes by command`), run row by
//! row: each row's situation is built in a real temporary project, the command is run
//! through the built binary, and its exit status must be the one the row documents. A row
//! without a scenario here, or a scenario without its row, fails the test too, so the
//! table, the code and this test move together.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One row of the table.
#[derive(Debug)]
struct Row {
    command: String,
    situation: String,
    exit: i32,
}

fn table() -> Vec<Row> {
    let book = format!("{}/../book/src/cli.md", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(book).unwrap();
    let start = text
        .find("### Exit codes by command")
        .expect("the book's CLI chapter has the exit-code table");
    let rest = &text[start..];
    let section = &rest[..rest[4..].find("\n#").map_or(rest.len(), |i| i + 4)];
    let mut rows = Vec::new();
    for line in section.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() != 3 || cells[0] == "Command" || cells[0].starts_with("---") {
            continue;
        }
        rows.push(Row {
            command: cells[0].replace('`', ""),
            situation: cells[1].replace('`', ""),
            exit: cells[2]
                .parse()
                .unwrap_or_else(|_| panic!("exit code of {line:?}")),
        });
    }
    assert!(rows.len() > 40, "the table was not read: {rows:?}");
    rows
}

/// A temporary git repository with a state home of its own.
struct Proj {
    dir: tempfile::TempDir,
    state: tempfile::TempDir,
}

const GOOD: &str = "language 1;\n\n@id(\"docs\")\nallow path write \"docs/**\"\n    because \"Docs are free.\";\n\n@id(\"keys\")\ndeny path write \"**/*.pem\"\n    because \"Keys are provisioned.\";\n\n@id(\"lock\")\nask path write \"Cargo.lock\"\n    because \"Dependencies are reviewed.\";\n\ntest \"keys\" {\n    path write \"a.pem\" => deny(keys);\n}\n";
const BROKEN: &str = "language 1;\ndeny path write \"x\" when path.opp == \"w\" because \"x\";\n";

impl Proj {
    fn new(policy: &str) -> Proj {
        let p = Proj {
            dir: tempfile::tempdir().unwrap(),
            state: tempfile::tempdir().unwrap(),
        };
        p.git(&["init", "-q"]);
        p.git(&["config", "user.email", "t@example.com"]);
        p.git(&["config", "user.name", "t"]);
        std::fs::create_dir_all(p.root().join("docs")).unwrap();
        std::fs::write(p.root().join("docs/guide.md"), "# Guide\n").unwrap();
        p.policy(policy);
        p
    }
    fn root(&self) -> &Path {
        self.dir.path()
    }
    fn policy(&self, text: &str) {
        let d = self.root().join(".contextos/policies");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("main.policy"), text).unwrap();
    }
    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.root().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }
    fn git(&self, args: &[&str]) {
        let ok = Command::new("git")
            .args(args)
            .current_dir(self.root())
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(ok.success(), "git {args:?}");
    }
    fn commit_all(&self) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", "c", "--no-verify"]);
    }
    fn run(&self, args: &[&str], stdin: &[u8]) -> (i32, String) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_contextos"))
            .arg("--project")
            .arg(self.root())
            .args(args)
            .env("XDG_STATE_HOME", self.state.path())
            .current_dir(self.root())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let _ = std::io::Write::write_all(&mut child.stdin.take().unwrap(), stdin);
        let out = child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    }
    fn changeset(&self, json: &str) -> String {
        self.write("changes.json", json)
            .to_string_lossy()
            .into_owned()
    }
}

/// A plugin pack pinned in the project, then changed after pinning: refused.
fn refused_pack(p: &Proj) {
    let publisher = tempfile::tempdir().unwrap();
    let key = publisher.path().join("acme.key");
    let (code, out) = p.run(
        &[
            "--format",
            "json",
            "plugin",
            "keygen",
            "--out",
            key.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(code, 0, "{out}");
    let id = serde_json::from_str::<serde_json::Value>(&out).unwrap()["keyId"]
        .as_str()
        .unwrap()
        .to_string();
    let public = std::fs::read_to_string(format!("{}.pub", key.display())).unwrap();
    p.write(
        ".contextos/trusted-keys.toml",
        &format!(
            "[[key]]\nid = \"{id}\"\npublic_key = \"\"\"\n{public}\"\"\"\nscopes = [\"acme-*\"]\n"
        ),
    );
    let pack = publisher.path().join("acme-guard");
    std::fs::create_dir_all(pack.join("policies")).unwrap();
    std::fs::write(
        pack.join("plugin.toml"),
        "name = \"acme-guard\"\nversion = \"1.0.0\"\ndescription = \"test pack\"\n",
    )
    .unwrap();
    std::fs::write(
        pack.join("policies/main.policy"),
        "language 1;\n\n@id(\"acme-gen\")\ndeny path write \"generated/**\"\n    because \"Generated.\";\n",
    )
    .unwrap();
    let (code, out) = p.run(
        &[
            "plugin",
            "sign",
            pack.to_str().unwrap(),
            "--key",
            key.to_str().unwrap(),
            "--sequence",
            "1",
        ],
        b"",
    );
    assert_eq!(code, 0, "{out}");
    let (code, out) = p.run(
        &[
            "plugin",
            "add",
            pack.to_str().unwrap(),
            "--version",
            "=1.0.0",
        ],
        b"",
    );
    assert_eq!(code, 0, "{out}");
    p.write(
        ".contextos/plugins/acme-guard/policies/main.policy",
        "language 1;\n",
    );
}

/// A project with a decision log: one hook answer logged.
fn logged(p: &Proj) {
    let payload = serde_json::json!({"session_id": "s", "cwd": p.root(), "hook_event_name": "PreToolUse",
        "tool_name": "Write", "tool_input": {"file_path": format!("{}/a.pem", p.root().display()), "content": "x"}});
    let (code, out) = p.run(&["hook", "claude"], payload.to_string().as_bytes());
    assert_eq!(code, 0, "{out}");
    let dir = p.root().join(".contextos/state");
    let has_log = std::fs::read_dir(&dir)
        .unwrap()
        .any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".jsonl"));
    assert!(has_log, "the hook wrote no decision log");
}

/// The decision log's first segment with one byte of a record changed.
fn tamper_log(p: &Proj) {
    let dir = p.root().join(".contextos/state");
    let mut files: Vec<PathBuf> = Vec::new();
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "jsonl") {
                files.push(path);
            }
        }
    }
    let seg = files.first().expect("a log segment");
    let text = std::fs::read_to_string(seg).unwrap();
    std::fs::write(seg, text.replacen("deny", "allo", 1)).unwrap();
}

/// Builds the row's situation and runs its command: the exit status.
fn scenario(command: &str, situation: &str) -> Option<(i32, String)> {
    let key = format!("{command} | {situation}");
    let good = || Proj::new(GOOD);
    let broken = || Proj::new(BROKEN);
    let hook_payload = |p: &Proj, rel: &str| {
        serde_json::json!({"session_id": "s", "cwd": p.root(), "hook_event_name": "PreToolUse",
            "tool_name": "Write", "tool_input": {"file_path": format!("{}/{rel}", p.root().display()), "content": "x"}})
        .to_string()
    };
    Some(match key.as_str() {
        "check | the policies compile without errors" => good().run(&["check"], b""),
        "check | a policy has an error" => broken().run(&["check"], b""),
        "check --strict | a policy has a warning" => {
            // An allow with no `because` is linted, not refused.
            let p = Proj::new("language 1;\nallow path write \"docs/**\";\n");
            let (code, out) = p.run(&["check"], b"");
            assert_eq!(code, 0, "the warning alone passes without --strict: {out}");
            assert!(
                out.contains("warning"),
                "no warning to be strict about: {out}"
            );
            p.run(&["check", "--strict"], b"")
        }
        "check | contextos.toml is invalid" => {
            let p = good();
            p.write("contextos.toml", "[policies]\nstdlb = false\n");
            p.run(&["check"], b"")
        }
        "check | a pinned plugin pack is refused" => {
            let p = good();
            refused_pack(&p);
            p.run(&["check"], b"")
        }
        "fmt | the files are formatted (rewritten where needed)" => {
            let p =
                Proj::new("language 1;\n@id(\"a\")   deny   path write \"x\"   because \"y\" ;\n");
            p.run(&["fmt"], b"")
        }
        "fmt --check | a file would be reformatted" => {
            let p =
                Proj::new("language 1;\n@id(\"a\")   deny   path write \"x\"   because \"y\" ;\n");
            p.run(&["fmt", "--check"], b"")
        }
        "fmt | a policy file does not parse" => {
            Proj::new("language 1;\ndeny path write \"x\" because;\n").run(&["fmt"], b"")
        }
        "test | every case passed" => good().run(&["test"], b""),
        "test | a case failed" => {
            let p = Proj::new(&GOOD.replace("=> deny(keys)", "=> allow"));
            p.run(&["test"], b"")
        }
        "test | no case ran" => good().run(&["test", "--filter", "no-such-test"], b""),
        "test | the policies do not compile" => broken().run(&["test"], b""),
        "decide | allow" => good().run(&["decide", "path", "--op", "write", "docs/a.md"], b""),
        "decide | deny by a rule" => {
            good().run(&["decide", "path", "--op", "write", "infra/prod.pem"], b"")
        }
        "decide | deny by the physical stage (a symbolic link out of the project)" => {
            let p = good();
            let outside = tempfile::tempdir().unwrap();
            std::os::unix::fs::symlink(outside.path(), p.root().join("docs/out")).unwrap();
            p.run(&["decide", "path", "--op", "write", "docs/out/x.md"], b"")
        }
        "decide | ask" => good().run(&["decide", "path", "--op", "write", "Cargo.lock"], b""),
        "decide | the policies do not compile" => {
            broken().run(&["decide", "path", "--op", "write", "docs/a.md"], b"")
        }
        "decide | an unknown role" => good().run(
            &[
                "decide",
                "path",
                "--op",
                "write",
                "docs/a.md",
                "--role",
                "nobody",
            ],
            b"",
        ),
        "decide | a pinned plugin pack is refused" => {
            let p = good();
            refused_pack(&p);
            p.run(&["decide", "path", "--op", "write", "docs/a.md"], b"")
        }
        "explain | allow" => good().run(&["explain", "path", "--op", "write", "docs/a.md"], b""),
        "explain | deny" => good().run(&["explain", "path", "--op", "write", "a.pem"], b""),
        "explain | ask" => good().run(&["explain", "path", "--op", "write", "Cargo.lock"], b""),
        "explain | an unknown rule id" => good().run(
            &[
                "explain",
                "--rule",
                "no-such-rule",
                "path",
                "--op",
                "write",
                "docs/a.md",
            ],
            b"",
        ),
        "query | answered" => good().run(&["query", "path", "write"], b""),
        "query | the policies do not compile" => broken().run(&["query", "path", "write"], b""),
        "diff | nothing widened" => {
            let p = good();
            p.commit_all();
            p.run(&["diff"], b"")
        }
        "diff | a widening no @accept(\"widening\") covers" => {
            let p = good();
            p.commit_all();
            p.policy(&GOOD.replace(
                "deny path write \"**/*.pem\"",
                "allow path write \"**/*.pem\"",
            ));
            p.run(&["diff"], b"")
        }
        "diff | the policies do not compile" => {
            let p = good();
            p.commit_all();
            p.policy(BROKEN);
            p.run(&["diff"], b"")
        }
        "apply | applied" => {
            let p = good();
            let cs = p.changeset(
                r#"{"changes": [{"op": "write", "path": "docs/a.md", "content": "x"}]}"#,
            );
            p.run(&["apply", &cs], b"")
        }
        "apply --dry-run | every change allowed" => {
            let p = good();
            let cs = p.changeset(
                r#"{"changes": [{"op": "write", "path": "docs/a.md", "content": "x"}]}"#,
            );
            p.run(&["apply", "--dry-run", &cs], b"")
        }
        "apply | a change is denied" => {
            let p = good();
            let cs =
                p.changeset(r#"{"changes": [{"op": "write", "path": "k.pem", "content": "x"}]}"#);
            p.run(&["apply", &cs], b"")
        }
        "apply | a change is asked, without --yes" => {
            let p = good();
            let cs = p.changeset(
                r#"{"changes": [{"op": "write", "path": "Cargo.lock", "content": "x"}]}"#,
            );
            p.run(&["apply", &cs], b"")
        }
        "apply | a malformed changeset" => {
            let p = good();
            let cs = p.changeset(r#"{"changes": [{"op": "chmod", "path": "x"}]}"#);
            p.run(&["apply", &cs], b"")
        }
        "apply | the policies do not compile" => {
            let p = broken();
            let cs = p.changeset(
                r#"{"changes": [{"op": "write", "path": "docs/a.md", "content": "x"}]}"#,
            );
            p.run(&["apply", &cs], b"")
        }
        "lock status | the state is read" => good().run(&["lock", "status"], b""),
        "lock status | lock.json is corrupt" => {
            // The lock is taken once (an apply), then its record is damaged.
            let p = good();
            let cs = p.changeset(
                r#"{"changes": [{"op": "write", "path": "docs/a.md", "content": "x"}]}"#,
            );
            let (code, out) = p.run(&["apply", &cs], b"");
            assert_eq!(code, 0, "{out}");
            p.write(".contextos/state/lock.json", "{not json");
            p.run(&["lock", "status"], b"")
        }
        "journal status | the journal is read" => good().run(&["journal", "status"], b""),
        "log verify | the log is intact" => {
            let p = good();
            logged(&p);
            p.run(&["log", "verify"], b"")
        }
        "log verify | a record was changed" => {
            let p = good();
            logged(&p);
            tamper_log(&p);
            p.run(&["log", "verify"], b"")
        }
        "log verify | a malformed anchor" => {
            let p = good();
            logged(&p);
            p.run(&["log", "verify", "--anchor", "not-an-anchor"], b"")
        }
        "log tail | the records are read" => {
            let p = good();
            logged(&p);
            p.run(&["log", "tail"], b"")
        }
        "compile | written or in sync" => good().run(&["compile", "--target", "agents"], b""),
        "compile --check | an output drifted" => {
            good().run(&["compile", "--target", "agents", "--check"], b"")
        }
        "compile | the policies do not compile" => {
            broken().run(&["compile", "--target", "agents"], b"")
        }
        "gate | every check passed" => {
            let p = good();
            let (code, out) = p.run(&["compile", "--target", "agents"], b"");
            assert_eq!(code, 0, "{out}");
            p.run(&["gate", "--target", "agents"], b"")
        }
        "gate | a policy test failed" => {
            let p = Proj::new(&GOOD.replace("=> deny(keys)", "=> allow"));
            let (code, out) = p.run(&["compile", "--target", "agents"], b"");
            assert_eq!(code, 0, "{out}");
            p.run(&["gate", "--target", "agents"], b"")
        }
        "gate | the policies do not compile" => broken().run(&["gate", "--target", "agents"], b""),
        "plugin verify | no pack is pinned" => good().run(&["plugin", "verify"], b""),
        "plugin verify | a pinned pack is refused" => {
            let p = good();
            refused_pack(&p);
            p.run(&["plugin", "verify"], b"")
        }
        "plugin add | a source that does not exist" => good().run(
            &["plugin", "add", "/nonexistent/pack", "--version", "=1.0.0"],
            b"",
        ),
        "hook claude | a deny answer" => {
            let p = good();
            let payload = hook_payload(&p, "a.pem");
            let (code, out) = p.run(&["hook", "claude"], payload.as_bytes());
            assert!(out.contains("\"deny\""), "{out}");
            (code, out)
        }
        "hook claude | input that is not JSON" => good().run(&["hook", "claude"], b"not json"),
        "hook claude | the policies do not compile" => {
            let p = broken();
            let payload = hook_payload(&p, "docs/a.md");
            p.run(&["hook", "claude"], payload.as_bytes())
        }
        "hook windsurf | a deny answer" => {
            let p = good();
            let payload = serde_json::json!({"agent_action_name": "pre_write_code", "trajectory_id": "t",
                "execution_id": "e", "tool_info": {"file_path": format!("{}/a.pem", p.root().display()),
                "edits": [{"old_string": "", "new_string": "x"}]}});
            p.run(&["hook", "windsurf"], payload.to_string().as_bytes())
        }
        "scan --staged | a clean index" => {
            let p = good();
            p.commit_all();
            p.write("docs/b.md", "fine\n");
            p.git(&["add", "docs/b.md"]);
            p.run(&["scan", "--staged"], b"")
        }
        "scan --staged --enforce | a denied finding" => {
            let p = good();
            p.commit_all();
            p.write(
                "src/cfg.rs",
                "const KEY: &str = \"AKIAIOSFODNN7EXAMPLF\";\nconst SECRET: &str = \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEZ\";\n",
            );
            p.git(&["add", "src/cfg.rs"]);
            p.run(&["scan", "--staged", "--enforce"], b"")
        }
        "scan --staged | not a git repository" => {
            let p = good();
            std::fs::remove_dir_all(p.root().join(".git")).unwrap();
            p.run(&["scan", "--staged"], b"")
        }
        "run | the command is denied (nothing runs)" => {
            good().run(&["run", "--", "sh", "-c", "rm -rf /"], b"")
        }
        "run | the command is asked, without --yes (nothing runs)" => {
            good().run(&["run", "--", "make", "deploy"], b"")
        }
        "run | the policies do not compile" => broken().run(&["run", "--", "true"], b""),
        "completions | printed" => good().run(&["completions", "bash"], b""),
        "any command | bad usage (an unknown option or value)" => {
            let p = good();
            let (a, out_a) = p.run(&["decide", "path", "--op", "chmod", "x"], b"");
            let (b, out_b) = p.run(&["check", "--no-such-option"], b"");
            assert_eq!(a, b, "{out_a}{out_b}");
            (a, out_a)
        }
        _ => return None,
    })
}

#[test]
fn every_command_exits_as_the_books_table_says() {
    let mut failures = Vec::new();
    for row in table() {
        match scenario(&row.command, &row.situation) {
            None => failures.push(format!(
                "no scenario for the row `{} | {}`",
                row.command, row.situation
            )),
            Some((code, out)) if code != row.exit => failures.push(format!(
                "`{} | {}`: exit {code}, the book says {}\n{out}",
                row.command, row.situation, row.exit
            )),
            Some(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_readme_gives_the_same_codes_and_points_to_the_table() {
    let readme =
        std::fs::read_to_string(format!("{}/../README.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let line = readme
        .lines()
        .position(|l| l.starts_with("Exit codes:"))
        .map(|i| readme.lines().skip(i).take(6).collect::<Vec<_>>().join(" "))
        .expect("the README states the exit codes");
    for needle in [
        "`0`",
        "`1`",
        "`2`",
        "`3`",
        "book/src/cli.md#exit-codes-by-command",
    ] {
        assert!(
            line.contains(needle),
            "README exit codes lack {needle}: {line}"
        );
    }
    // Every code the README names is one the book's table uses.
    let codes: Vec<i32> = table().iter().map(|r| r.exit).collect();
    for c in 0..=3 {
        assert!(codes.contains(&c), "the table never uses {c}");
    }
}
