//! Boundary mode end to end: `compile` registers the MCP server with every agent and
//! denies Claude Code's native write tools; the Claude Code hook routes Bash into the
//! sandbox session (and what it must not route, it does not); the other agents are sent
//! to the MCP `run` tool; `with host` is the project's alone; host-unsafe user
//! configuration turns routing off. Files are parsed (JSON, TOML), never grepped.

use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

const SESSION: &str = "5b1e7a52-8c3f-4d0e-9a6b-2f4c1d7e9a30";

struct Proj {
    dir: tempfile::TempDir,
    /// XDG_STATE_HOME and XDG_CONFIG_HOME: never the real user's.
    home: tempfile::TempDir,
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Proj {
    fn new(toml: &str, policy: &str) -> Proj {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join(".contextos/policies")).unwrap();
        std::fs::write(root.join(".contextos/policies/main.policy"), policy).unwrap();
        std::fs::write(root.join("contextos.toml"), toml).unwrap();
        Proj {
            dir,
            home: tempfile::tempdir().unwrap(),
        }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn run(&self, args: &[&str], stdin: &[u8]) -> Out {
        let mut child = Command::new(env!("CARGO_BIN_EXE_contextos"))
            .arg("--project")
            .arg(self.root())
            .args(args)
            .env("XDG_STATE_HOME", self.home.path().join("state"))
            .env("XDG_CONFIG_HOME", self.home.path().join("config"))
            .env_remove("CLAUDE_PROJECT_DIR")
            .current_dir(self.root())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let _ = child.stdin.take().unwrap().write_all(stdin);
        let out = child.wait_with_output().unwrap();
        Out {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    fn json(&self, rel: &str) -> Value {
        let text =
            std::fs::read_to_string(self.root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{rel} is not JSON ({e}): {text}"))
    }

    /// Claude Code's PreToolUse payload for a Bash call, with the fields it sends.
    fn bash(&self, command: &str) -> Out {
        let payload = json!({
            "session_id": SESSION,
            "transcript_path": format!("/home/dev/.claude/projects/-repo/{SESSION}.jsonl"),
            "cwd": self.root(),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {
                "command": command,
                "description": "Run it",
                "timeout": 120000
            }
        });
        self.run(&["hook", "claude"], payload.to_string().as_bytes())
    }

    fn user_config(&self, text: &str) {
        let d = self.home.path().join("config/contextos");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("config.toml"), text).unwrap();
    }
}

const BOUNDARY: &str =
    "[boundary]\nmode = \"boundary\"\n\n[sandbox]\nimage = \"debian:stable-slim\"\n";
const POLICY: &str = r#"language 1;
default exec = allow;
@id("no-force") deny exec "git push --force *" because "force pushes rewrite history";
@id("rel") ask exec "make release *" because "releases are published";
@id("gc") allow exec "git commit *" with host {} because "commits need the host's keys";
"#;

fn decision(o: &Out) -> Value {
    let v: Value = serde_json::from_str(&o.stdout)
        .unwrap_or_else(|e| panic!("hook output is not JSON ({e}): {} {}", o.stdout, o.stderr));
    v["hookSpecificOutput"].clone()
}

/// The words a real `/bin/sh` hands the first program of `command`.
fn sh_words(command: &str) -> Vec<String> {
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("printf '%s\\0' {command}"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut w: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .split('\0')
        .map(str::to_owned)
        .collect();
    assert_eq!(w.pop().as_deref(), Some(""));
    w
}

#[test]
fn compile_in_boundary_mode_registers_the_server_and_denies_native_writes() {
    let p = Proj::new(BOUNDARY, POLICY);
    // A user's own MCP servers and Codex settings survive.
    std::fs::write(
        p.root().join(".mcp.json"),
        r#"{"mcpServers": {"db": {"command": "db-mcp"}}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(p.root().join(".codex")).unwrap();
    std::fs::write(
        p.root().join(".codex/config.toml"),
        "# mine\nmodel = \"o3\"\n",
    )
    .unwrap();
    let o = p.run(&["compile"], b"");
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);

    let server = json!({"command": "contextos", "args": ["mcp"]});
    let typed = json!({"args": ["mcp"], "command": "contextos", "type": "stdio"});
    let mcp = p.json(".mcp.json");
    assert_eq!(mcp["mcpServers"]["contextos"], typed);
    assert_eq!(mcp["mcpServers"]["db"], json!({"command": "db-mcp"}));
    assert_eq!(
        p.json(".cursor/mcp.json")["mcpServers"]["contextos"],
        server
    );
    assert_eq!(p.json(".vscode/mcp.json")["servers"]["contextos"], typed);
    assert_eq!(
        p.json(".gemini/settings.json")["mcpServers"]["contextos"],
        server
    );
    let codex_text = std::fs::read_to_string(p.root().join(".codex/config.toml")).unwrap();
    assert!(
        codex_text.starts_with("# mine\nmodel = \"o3\"\n"),
        "{codex_text}"
    );
    let codex: toml::Value = toml::from_str(&codex_text).unwrap();
    assert_eq!(codex["model"].as_str(), Some("o3"));
    let c = &codex["mcp_servers"]["contextos"];
    assert_eq!(c["command"].as_str(), Some("contextos"));
    assert_eq!(
        c["args"].as_array().unwrap(),
        &vec![toml::Value::String("mcp".into())]
    );

    let settings = p.json(".claude/settings.json");
    assert_eq!(settings["enabledMcpjsonServers"], json!(["contextos"]));
    let deny: Vec<&str> = settings["permissions"]["deny"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for tool in ["Write", "Edit", "MultiEdit", "NotebookEdit"] {
        assert!(deny.contains(&tool), "{tool} not denied: {deny:?}");
    }
    // The same hook as in guard mode: routing is the hook's answer, not its registration.
    assert_eq!(
        settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "contextos hook claude"
    );
    let schema = crate::schema::claude_settings_schema();
    let v = jsonschema::draft7::new(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(&settings).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}\n{settings:#}");

    // Idempotent: a second compile writes nothing.
    let again = p.run(&["compile"], b"");
    assert_eq!(again.code, 0);
    assert!(again.stdout.contains("in sync"), "{}", again.stdout);

    // Back to guard mode: the native denies go, the registration stays, user entries too.
    std::fs::write(
        p.root().join("contextos.toml"),
        "[boundary]\nmode = \"guard\"\n",
    )
    .unwrap();
    assert_eq!(p.run(&["compile"], b"").code, 0);
    let settings = p.json(".claude/settings.json");
    let deny = settings["permissions"]["deny"].as_array().unwrap();
    assert!(!deny.contains(&json!("Write")) && !deny.contains(&json!("Edit")));
    assert_eq!(p.json(".mcp.json")["mcpServers"]["contextos"], typed);
    assert_eq!(
        p.json(".mcp.json")["mcpServers"]["db"],
        json!({"command": "db-mcp"})
    );
}

#[test]
fn boundary_mode_needs_an_image_and_unknown_modes_are_located() {
    let p = Proj::new("[boundary]\nmode = \"boundary\"\n", POLICY);
    for cmd in [&["check"][..], &["compile"][..]] {
        let o = p.run(cmd, b"");
        assert_eq!(o.code, 2, "{cmd:?}: {}{}", o.stdout, o.stderr);
        assert!(o.stderr.contains("contextos.toml:2:8"), "{}", o.stderr);
        assert!(o.stderr.contains("[sandbox] image = "), "{}", o.stderr);
        assert!(o.stderr.contains("docker build -t"), "{}", o.stderr);
    }
    assert!(!p.root().join(".mcp.json").exists());
    let p = Proj::new("[boundary]\nmode = \"fortress\"\n", POLICY);
    let o = p.run(&["check"], b"");
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("contextos.toml:2:8"), "{}", o.stderr);
    assert!(
        o.stderr.contains("guard") && o.stderr.contains("boundary"),
        "{}",
        o.stderr
    );
}

#[test]
fn the_claude_hook_routes_bash_into_the_session() {
    let p = Proj::new(BOUNDARY, POLICY);
    let line = "echo 'it''s' \"$HOME\" > out.txt\nprintf '%s\\n' é";
    let o = p.bash(line);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let h = decision(&o);
    assert_eq!(h["permissionDecision"], "allow", "{h}");
    let input = &h["updatedInput"];
    assert_eq!(input["description"], "Run it");
    assert_eq!(input["timeout"], 120000);
    let command = input["command"].as_str().unwrap();
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_contextos")).unwrap();
    assert_eq!(
        sh_words(command),
        vec![
            exe.to_str().unwrap(),
            "run",
            "--session",
            SESSION,
            "--",
            "/bin/sh",
            "-c",
            line
        ]
    );
    // (The last word is the original line byte for byte, so the sandbox's `/bin/sh -c`
    // runs the same argv the agent's own shell would have.)

    // Ask stays ask, and the person approves the routed command.
    let h = decision(&p.bash("make release v1"));
    assert_eq!(h["permissionDecision"], "ask");
    assert!(h["updatedInput"]["command"]
        .as_str()
        .unwrap()
        .ends_with("-- /bin/sh -c 'make release v1'"));
}

#[test]
fn denied_and_host_lines_are_not_rewritten() {
    let p = Proj::new(BOUNDARY, POLICY);
    let h = decision(&p.bash("git push --force origin main"));
    assert_eq!(h["permissionDecision"], "deny");
    assert!(h.get("updatedInput").is_none(), "{h}");
    // Every part decided by `with host`: runs on the host as asked.
    let h = decision(&p.bash("git commit -m wip"));
    assert_eq!(h["permissionDecision"], "allow");
    assert!(h.get("updatedInput").is_none(), "{h}");
    // A host rule next to an ordinary part: the line is routed as a whole.
    let h = decision(&p.bash("git commit -m wip && ls"));
    assert!(h["updatedInput"]["command"].is_string(), "{h}");
}

#[test]
fn with_host_in_a_plugin_pack_fails_to_build() {
    // The layer is what decides; a pack's policy file as the core sees it.
    let out = contextos_engine::build(
        &[contextos_engine::PolicySource {
            name: ".contextos/plugins/pack/policies/p.policy".into(),
            text: "language 1;\nallow exec \"git *\" with host {} because \"x\";\n".into(),
            layer: contextos_engine::Layer::Plugin,
        }],
        &contextos_engine::BuildOptions::default(),
    );
    assert!(out.policy.is_none());
    let rendered: Vec<String> = out
        .diagnostics
        .iter()
        .filter(|d| d.diagnostic.is_error())
        .map(|d| out.render(d))
        .collect();
    assert_eq!(rendered.len(), 1, "{rendered:?}");
    assert!(rendered[0].contains("E0113"), "{}", rendered[0]);
    assert!(rendered[0].contains("a plugin pack may not send commands to the host"));
    assert!(rendered[0].contains("p.policy:2:20"), "{}", rendered[0]);
}

#[test]
fn host_unsafe_user_config_turns_routing_off() {
    let p = Proj::new(BOUNDARY, POLICY);
    p.user_config("[run]\nhost_unsafe = true\n");
    // The stdlib's read-only rule allows `ls`: allowed as in guard mode, not rewritten.
    let h = decision(&p.bash("ls"));
    assert_eq!(h["permissionDecision"], "allow", "{h}");
    assert!(h.get("updatedInput").is_none(), "{h}");
    // The repository cannot choose it: contextos.toml has no such switch for the hook.
    let q = Proj::new(&format!("{BOUNDARY}host_unsafe = true\n"), POLICY);
    let h = decision(&q.bash("ls"));
    assert!(h["updatedInput"]["command"].is_string(), "{h}");
}

#[test]
fn guard_mode_answers_as_before_and_other_agents_are_sent_to_the_run_tool() {
    let guard = Proj::new("", POLICY);
    let h = decision(&guard.bash("ls"));
    assert_eq!(h["permissionDecision"], "allow", "{h}");
    assert!(h.get("updatedInput").is_none(), "{h}");
    let h = decision(&guard.bash("git push --force x"));
    assert_eq!(h["permissionDecision"], "deny");

    let p = Proj::new(BOUNDARY, POLICY);
    let cursor = json!({
        "hook_event_name": "beforeShellExecution",
        "conversation_id": SESSION,
        "command": "ls",
        "cwd": p.root(),
        "workspace_roots": [p.root()]
    });
    let o = p.run(&["hook", "cursor"], cursor.to_string().as_bytes());
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["permission"], "deny");
    assert!(v["agent_message"]
        .as_str()
        .unwrap()
        .contains("`run` tool of the `contextos` MCP server"));
    // A native write in boundary mode goes to the MCP write tools.
    let write = json!({
        "session_id": SESSION,
        "cwd": p.root(),
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": p.root().join("src/a.rs"), "content": "x"}
    });
    let h = decision(&p.run(&["hook", "claude"], write.to_string().as_bytes()));
    assert_eq!(h["permissionDecision"], "deny");
    assert!(h["permissionDecisionReason"]
        .as_str()
        .unwrap()
        .contains("`write_file`"));
}
