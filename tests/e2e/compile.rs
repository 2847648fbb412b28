//! `contextos compile` and `contextos gate` end to end: native outputs for every target,
//! user content kept, refusal instead of clobbering, byte-identical runs, and the gate
//! catching each class of drift.

use std::path::Path;
use std::process::Command;

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(dir: &Path, args: &[&str]) -> Out {
    run_env(dir, args, &[])
}

fn run_env(dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> Out {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_contextos"));
    cmd.arg("--project").arg(dir).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

const EXAMPLE: &str = include_str!("../../examples/rust-service/.contextos/policies/main.policy");

fn project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join(".git")).unwrap();
    std::fs::create_dir_all(d.path().join(".contextos/policies")).unwrap();
    std::fs::write(d.path().join(".contextos/policies/main.policy"), EXAMPLE).unwrap();
    d
}

fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

const GENERATED: &[&str] = &[
    "AGENTS.md",
    "CLAUDE.md",
    ".claude/settings.json",
    ".claude/rules/ctx-layering.md",
    ".cursor/hooks.json",
    ".cursor/rules/ctx-layering.mdc",
    ".github/copilot-instructions.md",
    ".github/hooks/contextos.json",
    ".github/instructions/ctx-layering.instructions.md",
    ".github/workflows/copilot-setup-steps.yml",
    "src/api/AGENTS.md",
    ".contextos/ownership.json",
];

#[test]
fn compile_writes_native_files_for_every_target_and_is_byte_identical() {
    let a = project();
    let b = project();
    for p in [&a, &b] {
        let o = run(p.path(), &["compile"]);
        assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
        // Lossy translations of the project's own rules cite the rule's source location,
        // each target's note under it; the standard library's are summed up in one line.
        assert!(
            o.stderr.contains(
                "warning[lossy]: rule `lockfiles-need-review` (.contextos/policies/main.policy:"
            ) && o.stderr.contains("\n  claude: condition not expressible"),
            "{}",
            o.stderr
        );
        assert!(!o.stderr.contains("`std-"), "{}", o.stderr);
        let summary: Vec<&str> = o
            .stderr
            .lines()
            .filter(|l| l.starts_with("note[lossy]: "))
            .collect();
        assert_eq!(summary.len(), 1, "{}", o.stderr);
        assert!(summary[0].contains("--verbose"), "{}", summary[0]);
    }
    for f in GENERATED {
        assert_eq!(
            read(a.path(), f),
            read(b.path(), f),
            "{f} differs between two runs"
        );
    }
    // A second run writes nothing; --verbose lists the standard library's notes too.
    let o = run(a.path(), &["compile", "--verbose"]);
    assert_eq!(o.code, 0);
    assert!(o.stdout.contains("in sync"), "{}", o.stdout);
    assert!(
        o.stderr
            .contains("rule `std-secret-read` (standard library or plugin)"),
        "{}",
        o.stderr
    );
    assert!(!o.stderr.contains("note[lossy]"), "{}", o.stderr);
    // The formats are the targets' own.
    let settings: serde_json::Value =
        serde_json::from_str(&read(a.path(), ".claude/settings.json")).unwrap();
    let deny: Vec<&str> = settings["permissions"]["deny"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert!(deny.contains(&"Bash(git push --force *)"), "{deny:?}");
    assert!(deny.contains(&"Edit(/.claude/settings*.json)"), "{deny:?}");
    // Never a native allow: one would outlive the conditions and sibling rules the hook
    // evaluates (here `cargo test` is allowed only inside the sandbox).
    assert!(
        settings["permissions"]["allow"]
            .as_array()
            .is_none_or(|a| a.is_empty()),
        "{settings}"
    );
    assert!(read(a.path(), ".claude/settings.json").contains("contextos hook claude"));
    let mdc = read(a.path(), ".cursor/rules/ctx-layering.mdc");
    assert!(
        mdc.starts_with("---\n")
            && mdc.contains("globs: src/api/**")
            && mdc.contains("alwaysApply: false"),
        "{mdc}"
    );
    let hooks: serde_json::Value =
        serde_json::from_str(&read(a.path(), ".cursor/hooks.json")).unwrap();
    assert_eq!(
        hooks["hooks"]["beforeShellExecution"][0]["failClosed"],
        true
    );
    let instr = read(
        a.path(),
        ".github/instructions/ctx-layering.instructions.md",
    );
    assert!(instr.contains("applyTo: \"src/api/**\""), "{instr}");
    let copilot: serde_json::Value =
        serde_json::from_str(&read(a.path(), ".github/hooks/contextos.json")).unwrap();
    assert_eq!(
        copilot["hooks"]["preToolUse"][0]["bash"],
        "contextos hook copilot"
    );
    assert!(read(a.path(), "CLAUDE.md").contains("@AGENTS.md"));
}

#[test]
fn a_deny_is_enforced_natively_and_by_the_hook() {
    let p = project();
    assert_eq!(run(p.path(), &["compile"]).code, 0);
    let settings = read(p.path(), ".claude/settings.json");
    let state = tempfile::tempdir().unwrap();
    for (native, cmd) in [
        ("Bash(git push --force *)", "git push --force origin main"),
        ("Bash(git push -f *)", "git push -f origin main"),
    ] {
        assert!(settings.contains(native), "{native} missing");
        let payload = serde_json::json!({
            "hook_event_name": "PreToolUse", "cwd": p.path(), "tool_name": "Bash",
            "tool_input": {"command": cmd}, "session_id": "s", "tool_use_id": "t"
        })
        .to_string();
        let text = crate::hooks::run_hook(
            p.path(),
            state.path(),
            "claude",
            &[],
            payload.as_bytes(),
            true,
        )
        .stdout;
        assert!(
            text.contains("\"deny\"") && text.contains("no-force-push"),
            "{cmd}: {text}"
        );
    }
}

#[test]
fn user_content_survives_and_foreign_files_are_never_clobbered() {
    let p = project();
    let root = p.path();
    std::fs::write(root.join("AGENTS.md"), "# Team notes\r\n\r\nBe kind.\r\n").unwrap();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(
        root.join(".claude/settings.json"),
        "{\"model\": \"opus\", \"permissions\": {\"deny\": [\"Bash(rm -rf /)\"]}, \"env\": {\"A\": \"1\"}}",
    )
    .unwrap();
    let o = run(root, &["compile"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let agents = read(root, "AGENTS.md");
    assert!(
        agents.starts_with("# Team notes\r\n\r\nBe kind.\r\n"),
        "{agents:?}"
    );
    assert!(agents.contains("<!-- contextos:begin -->"));
    let settings: serde_json::Value =
        serde_json::from_str(&read(root, ".claude/settings.json")).unwrap();
    assert_eq!(settings["model"], "opus");
    assert_eq!(settings["env"]["A"], "1");
    let keys: Vec<&String> = settings.as_object().unwrap().keys().collect();
    assert_eq!(keys[0], "model", "user keys keep their order: {keys:?}");
    assert!(settings["permissions"]["deny"]
        .as_array()
        .unwrap()
        .contains(&"Bash(rm -rf /)".into()));
    // Removing a rule retracts ContextOS's entries and keeps the user's.
    let without = EXAMPLE.replace(
        "@id(\"no-force-push\")\ndeny exec \"git push --force *\", \"git push -f *\"\n  because \"Force pushes rewrite shared history.\";\n",
        "",
    );
    assert_ne!(without, EXAMPLE);
    std::fs::write(root.join(".contextos/policies/main.policy"), &without).unwrap();
    assert_eq!(run(root, &["compile"]).code, 0);
    let s = read(root, ".claude/settings.json");
    assert!(
        !s.contains("git push --force") && s.contains("Bash(rm -rf /)"),
        "{s}"
    );

    // A file ContextOS would own whole that someone else wrote: refuse, write nothing.
    let q = project();
    std::fs::create_dir_all(q.path().join(".cursor/rules")).unwrap();
    std::fs::write(q.path().join(".cursor/rules/ctx-layering.mdc"), "mine\n").unwrap();
    let o = run(q.path(), &["compile"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains("unmanaged") && o.stderr.contains("ctx-layering.mdc"),
        "{}",
        o.stderr
    );
    assert!(
        !q.path().join("AGENTS.md").exists(),
        "nothing at all was written"
    );
    assert!(!q.path().join(".contextos/ownership.json").exists());
    assert_eq!(read(q.path(), ".cursor/rules/ctx-layering.mdc"), "mine\n");
    // Malformed managed-block markers: refuse, write nothing.
    let r = project();
    std::fs::write(
        r.path().join("AGENTS.md"),
        "<!-- contextos:begin -->\nx\n<!-- contextos:begin -->\n",
    )
    .unwrap();
    let o = run(r.path(), &["compile"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(!r.path().join(".contextos/ownership.json").exists());
}

#[test]
fn a_project_compiled_before_the_ownership_rename_keeps_its_ownership() {
    let p = project();
    let root = p.path();
    assert_eq!(run(root, &["compile"]).code, 0);
    // What an older ContextOS left: the record at `.contextos/lock.json`.
    std::fs::rename(
        root.join(".contextos/ownership.json"),
        root.join(".contextos/lock.json"),
    )
    .unwrap();
    let before: Vec<String> = GENERATED[..GENERATED.len() - 1]
        .iter()
        .map(|f| read(root, f))
        .collect();
    // The old record is honoured: in sync for the gate, no file is refused as unmanaged.
    let o = run(root, &["compile", "--check"]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    // The next compile moves it to the new path and rewrites nothing else.
    let o = run(root, &["compile"]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(
        o.stdout.contains("deleted .contextos/lock.json")
            && o.stdout.contains("updated .contextos/ownership.json"),
        "{}",
        o.stdout
    );
    assert!(!root.join(".contextos/lock.json").exists());
    let after: Vec<String> = GENERATED[..GENERATED.len() - 1]
        .iter()
        .map(|f| read(root, f))
        .collect();
    assert_eq!(before, after);
    assert!(run(root, &["compile"]).stdout.contains("in sync"));
}

#[test]
fn the_gate_reports_each_drift_class_and_is_silent_in_sync() {
    let p = project();
    let root = p.path();
    assert_eq!(run(root, &["compile"]).code, 0);
    let gate = |p: &Path| run(p, &["gate"]);
    let o = gate(root);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let expect = |class: &str| {
        let o = gate(root);
        assert_eq!(o.code, 1, "{class}: {}", o.stdout);
        assert!(
            o.stdout.contains(&format!("{class}:")),
            "{class}: {}",
            o.stdout
        );
        assert_eq!(run(root, &["compile", "--check"]).code, 1);
    };
    // Missing.
    std::fs::remove_file(root.join(".github/hooks/contextos.json")).unwrap();
    expect("missing");
    assert_eq!(run(root, &["compile"]).code, 0);
    assert_eq!(gate(root).code, 0);
    // Modified: ContextOS's own entry edited out of a shared file.
    let s = read(root, ".claude/settings.json").replace("\"Bash(git push --force *)\",", "");
    std::fs::write(root.join(".claude/settings.json"), s).unwrap();
    expect("modified");
    assert_eq!(run(root, &["compile"]).code, 0);
    // A user's own key in a shared file is not drift.
    let s = read(root, ".claude/settings.json").replacen('{', "{\n  \"model\": \"opus\",", 1);
    std::fs::write(root.join(".claude/settings.json"), s).unwrap();
    assert_eq!(gate(root).code, 0, "{}", gate(root).stdout);
    // Unmanaged: a generated whole file edited by hand.
    std::fs::write(root.join(".cursor/rules/ctx-layering.mdc"), "edited\n").unwrap();
    expect("unmanaged");
    std::fs::remove_file(root.join(".cursor/rules/ctx-layering.mdc")).unwrap();
    assert_eq!(run(root, &["compile"]).code, 0);
    // Stale input: the policies changed in a way no output shows.
    let policy = root.join(".contextos/policies/main.policy");
    let text = read(root, ".contextos/policies/main.policy");
    std::fs::write(&policy, format!("{text}\n// a comment\n")).unwrap();
    expect("stale-input");
    assert_eq!(run(root, &["compile"]).code, 0);
    // Orphaned: a guide removed leaves its generated files behind.
    let guide = "@id(\"layering\")\nguide \"Service layering\" for \"src/api/**\" {\n  \"\"\"\n  Handlers call services; services never import handlers.\n  \"\"\"\n}\n";
    let text = read(root, ".contextos/policies/main.policy");
    assert!(text.contains(guide), "the example's guide moved");
    std::fs::write(&policy, text.replace(guide, "")).unwrap();
    let o = gate(root);
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(o.stdout.contains("orphaned:"), "{}", o.stdout);
    assert_eq!(run(root, &["compile"]).code, 0);
    assert!(
        !root.join(".cursor/rules/ctx-layering.mdc").exists(),
        "the orphan was removed"
    );
    assert_eq!(gate(root).code, 0, "{}", gate(root).stdout);
}

#[test]
fn the_gate_speaks_github_and_writes_a_step_summary() {
    let p = project();
    let root = p.path();
    let summary = tempfile::NamedTempFile::new().unwrap();
    let o = run_env(
        root,
        &["--format", "github", "gate"],
        &[("GITHUB_STEP_SUMMARY", summary.path())],
    );
    assert_eq!(
        o.code, 1,
        "never compiled: outputs are missing: {}",
        o.stdout
    );
    assert!(
        o.stdout
            .contains("::error file=AGENTS.md,title=contextos drift: missing::"),
        "{}",
        o.stdout
    );
    let s = std::fs::read_to_string(summary.path()).unwrap();
    assert!(
        s.contains("## ContextOS gate: failed")
            && s.contains("| generated outputs in sync | **failed** |"),
        "{s}"
    );
    // Failing policy tests and a broken policy: exit 1 and exit 2.
    std::fs::write(
        root.join(".contextos/policies/t.policy"),
        "language 1;\ntest \"t\" { path write \"src/a.rs\" => deny; }\n",
    )
    .unwrap();
    assert_eq!(run(root, &["compile"]).code, 0);
    let o = run(root, &["--format", "github", "gate"]);
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(o.stdout.contains("title=contextos test::"), "{}", o.stdout);
    std::fs::write(
        root.join(".contextos/policies/t.policy"),
        "language 1;\ndeny path write \"[\";\n",
    )
    .unwrap();
    let o = run(root, &["--format", "json", "gate"]);
    assert_eq!(o.code, 2, "{}", o.stdout);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["exitCode"], 2);
}

/// Every native deny entry names something the hook denies too: the two layers agree.
#[test]
fn every_native_deny_is_also_a_hook_deny() {
    let p = project();
    assert_eq!(run(p.path(), &["compile"]).code, 0);
    let settings: serde_json::Value =
        serde_json::from_str(&read(p.path(), ".claude/settings.json")).unwrap();
    let state = tempfile::tempdir().unwrap();
    let root = p.path().to_string_lossy().into_owned();
    let mut checked = 0;
    for entry in settings["permissions"]["deny"].as_array().unwrap() {
        let entry = entry.as_str().unwrap();
        // A concrete instance of the entry: the words of a Bash rule (plus an argument for
        // `… *`), or a path with `**`/`*` filled in.
        let (tool, input) = if let Some(cmd) = entry
            .strip_prefix("Bash(")
            .and_then(|s| s.strip_suffix(')'))
        {
            let cmd = cmd.replace(" *", " origin");
            ("Bash", serde_json::json!({"command": cmd}))
        } else if let Some(pat) = entry
            .strip_prefix("Edit(")
            .and_then(|s| s.strip_suffix(')'))
        {
            let sample = |p: &str| {
                p.replace("**/", "a/")
                    .replace("/**", "/x")
                    .replace('*', "x")
            };
            // Claude's anchors: `//` is an absolute path, `~/` the home directory, `/`
            // the project root.
            let file = if let Some(abs) = pat.strip_prefix("//") {
                format!("/{}", sample(abs))
            } else if pat.starts_with("~/") {
                sample(pat)
            } else {
                format!("{root}/{}", sample(pat.trim_start_matches('/')))
            };
            (
                "Write",
                serde_json::json!({"file_path": file, "content": "x"}),
            )
        } else {
            continue;
        };
        let payload = serde_json::json!({
            "hook_event_name": "PreToolUse", "cwd": root, "tool_name": tool,
            "tool_input": input, "session_id": "s", "tool_use_id": "t"
        })
        .to_string();
        let text = crate::hooks::run_hook(
            p.path(),
            state.path(),
            "claude",
            &["--no-log"],
            payload.as_bytes(),
            true,
        )
        .stdout;
        assert!(
            text.contains("\"permissionDecision\":\"deny\""),
            "{entry} ({input}): {text}"
        );
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} deny entries checked");
}

/// `--target gemini`: Gemini CLI's files in their documented formats (settings JSON with
/// `context.fileName`, the `BeforeTool` hook with a millisecond timeout and the MCP
/// server; policy-engine TOML `[[rule]]`s; a gitignore-syntax `.geminiignore`), the
/// user's own settings, hooks and ignore lines kept, `AGENTS.md` compiled along, and a
/// second run in sync.
#[test]
fn gemini_target_writes_its_documented_files_and_keeps_the_users() {
    let d = project();
    std::fs::create_dir_all(d.path().join(".gemini")).unwrap();
    std::fs::write(
        d.path().join(".gemini/settings.json"),
        r#"{"model": {"name": "gemini-2.5-pro"}, "context": {"fileName": ["NOTES.md"]},
            "hooks": {"BeforeTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "./lint.sh"}]}]}}"#,
    )
    .unwrap();
    std::fs::write(d.path().join(".geminiignore"), "node_modules/\n").unwrap();
    let o = run(d.path(), &["compile", "--target", "gemini"]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);

    let s: serde_json::Value =
        serde_json::from_str(&read(d.path(), ".gemini/settings.json")).unwrap();
    assert_eq!(s["model"]["name"], "gemini-2.5-pro");
    assert_eq!(
        s["context"]["fileName"],
        serde_json::json!(["NOTES.md", "AGENTS.md", "GEMINI.md"])
    );
    let before = s["hooks"]["BeforeTool"].as_array().unwrap();
    assert_eq!(before[0]["hooks"][0]["command"], "./lint.sh");
    let ours = &before[1]["hooks"][0];
    assert_eq!(ours["type"], "command");
    assert_eq!(ours["command"], "contextos hook gemini");
    assert!(ours["timeout"].as_u64().unwrap() >= 1000, "milliseconds");
    assert_eq!(
        s["hooks"]["AfterTool"][0]["hooks"][0]["command"],
        "contextos hook gemini"
    );
    assert_eq!(s["mcpServers"]["contextos"]["command"], "contextos");
    assert_eq!(s["mcp"]["allowed"], serde_json::json!(["contextos"]));

    let policy: toml::Value =
        toml::from_str(&read(d.path(), ".gemini/policies/contextos.toml")).unwrap();
    let rules = policy["rule"].as_array().unwrap();
    assert!(!rules.is_empty());
    for r in rules {
        let t = r.as_table().unwrap();
        let mut keys: Vec<&str> = t.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["commandPrefix", "decision", "priority", "toolName"]);
        assert_eq!(t["toolName"].as_str(), Some("run_shell_command"));
        assert!(matches!(t["decision"].as_str(), Some("deny" | "ask_user")));
        assert!((0..=999).contains(&t["priority"].as_integer().unwrap()));
    }
    assert!(rules
        .iter()
        .any(|r| r["commandPrefix"].as_str() == Some("git push --force")
            && r["decision"].as_str() == Some("deny")));

    let ignore = read(d.path(), ".geminiignore");
    assert!(ignore.starts_with("node_modules/\n"), "{ignore}");
    assert!(ignore.lines().any(|l| l == "**/.env"), "{ignore}");
    assert!(read(d.path(), "AGENTS.md").contains("contextos"));
    assert!(!d.path().join("GEMINI.md").exists());

    let o = run(d.path(), &["compile", "--target", "gemini"]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("in sync"), "{}", o.stdout);
}

/// `--target windsurf`: glob rules with YAML front matter (`trigger: glob`, one `globs`
/// pattern), Cascade hooks in `.windsurf/hooks.json` next to the user's own, and the
/// user's `.codeiumignore` lines kept.
#[test]
fn windsurf_target_writes_its_documented_files_and_keeps_the_users() {
    let d = project();
    std::fs::create_dir_all(d.path().join(".windsurf")).unwrap();
    std::fs::write(
        d.path().join(".windsurf/hooks.json"),
        r#"{"hooks": {"post_write_code": [{"command": "./fmt.sh"}], "pre_run_command": [{"command": "./audit.sh", "show_output": false}]}}"#,
    )
    .unwrap();
    std::fs::write(d.path().join(".codeiumignore"), "dist/\n").unwrap();
    let o = run(d.path(), &["compile", "--target", "windsurf"]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);

    let rule = read(d.path(), ".windsurf/rules/ctx-layering.md");
    let (front, body) = rule
        .strip_prefix("---\n")
        .and_then(|r| r.split_once("\n---\n"))
        .unwrap_or_else(|| panic!("no front matter: {rule}"));
    let keys: Vec<(&str, &str)> = front
        .lines()
        .map(|l| l.split_once(": ").unwrap_or_else(|| panic!("{l}")))
        .collect();
    assert_eq!(keys, [("trigger", "glob"), ("globs", "\"src/api/**\"")]);
    assert!(body.contains("# Service layering"), "{body}");

    let hooks: serde_json::Value =
        serde_json::from_str(&read(d.path(), ".windsurf/hooks.json")).unwrap();
    assert_eq!(hooks["hooks"]["post_write_code"][0]["command"], "./fmt.sh");
    let run_cmd = hooks["hooks"]["pre_run_command"].as_array().unwrap();
    assert_eq!(run_cmd[0]["command"], "./audit.sh");
    for event in [
        "pre_read_code",
        "pre_write_code",
        "pre_run_command",
        "pre_mcp_tool_use",
    ] {
        let ours = hooks["hooks"][event]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["command"] == "contextos hook windsurf")
            .unwrap_or_else(|| panic!("{event}: {hooks}"));
        assert_eq!(ours["show_output"], true);
    }
    let ignore = read(d.path(), ".codeiumignore");
    assert!(
        ignore.starts_with("dist/\n") && ignore.contains("\n**/.env\n"),
        "{ignore}"
    );
    assert!(read(d.path(), "AGENTS.md").contains("contextos"));
    let o = run(d.path(), &["compile", "--target", "windsurf"]);
    assert!(o.stdout.contains("in sync"), "{}", o.stdout);
}

/// `--target cline,zed`: Cline's rule files carry `paths:` as a YAML list; Zed's `.rules`
/// (the first file Zed reads, before `.github/copilot-instructions.md`) carries the full
/// project instructions, not the Copilot pointer, and keeps the user's own text.
#[test]
fn cline_rules_and_zed_rules_file() {
    let d = project();
    std::fs::write(d.path().join(".rules"), "Team note: be kind.\n").unwrap();
    std::fs::create_dir_all(d.path().join(".zed")).unwrap();
    std::fs::write(
        d.path().join(".zed/settings.json"),
        r#"{"tab_size": 2, "agent": {"tool_permissions": {"tools": {"terminal": {"always_deny": [{"pattern": "^sudo\\b"}]}}}}}"#,
    )
    .unwrap();
    let o = run(d.path(), &["compile", "--target", "cline,zed,copilot"]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    // Cline's hook program is written executable, and hands the event to ContextOS.
    let hook = d.path().join(".clinerules/hooks/PreToolUse");
    assert!(read(d.path(), ".clinerules/hooks/PreToolUse").contains("exec contextos hook cline"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&hook).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755, "{mode:o}");
    }
    // Zed's tool permissions: the user's key and pattern stay; the policies' own denies
    // (the standard library's `rm -rf /`, the project's force push) are added.
    let zed: serde_json::Value =
        serde_json::from_str(&read(d.path(), ".zed/settings.json")).unwrap();
    assert_eq!(zed["tab_size"], 2);
    let deny = zed["agent"]["tool_permissions"]["tools"]["terminal"]["always_deny"]
        .as_array()
        .unwrap();
    assert_eq!(deny[0]["pattern"], "^sudo\\b");
    assert!(deny.len() > 1, "{zed}");
    let cline = read(d.path(), ".clinerules/ctx-layering.md");
    assert!(
        cline.starts_with("---\npaths:\n  - \"src/api/**\"\n---\n"),
        "{cline}"
    );
    let rules = read(d.path(), ".rules");
    assert!(rules.starts_with("Team note: be kind.\n"), "{rules}");
    assert!(rules.contains("## Project rules (ContextOS)"), "{rules}");
    assert!(
        rules.contains("no-force-push") || rules.contains("git push --force"),
        "{rules}"
    );
    let o = run(d.path(), &["compile", "--target", "cline,zed,copilot"]);
    assert!(o.stdout.contains("in sync"), "{}", o.stdout);
}

/// Cursor CLI's `.cursor/cli.json` (only `permissions`, deny entries of the documented
/// `Read(…)`/`Write(…)`/`Shell(…)` forms, the user's own kept), `.cursorignore`, Junie's
/// guidelines and Kiro's `fileMatch` steering.
#[test]
fn cursor_cli_junie_and_kiro_files() {
    let d = project();
    std::fs::create_dir_all(d.path().join(".cursor")).unwrap();
    std::fs::write(
        d.path().join(".cursor/cli.json"),
        r#"{"permissions": {"allow": ["Shell(ls)"], "deny": ["Shell(curl)"]}}"#,
    )
    .unwrap();
    let o = run(d.path(), &["compile", "--target", "cursor,junie,kiro"]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let cli: serde_json::Value = serde_json::from_str(&read(d.path(), ".cursor/cli.json")).unwrap();
    assert_eq!(
        cli["permissions"]["allow"],
        serde_json::json!(["Shell(ls)"])
    );
    let deny: Vec<&str> = cli["permissions"]["deny"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(deny[0], "Shell(curl)");
    assert!(deny.contains(&"Write(.cursor/hooks.json)"), "{deny:?}");
    for d in &deny {
        assert!(
            ["Read(", "Write(", "Shell("]
                .iter()
                .any(|p| d.starts_with(p))
                && d.ends_with(')'),
            "{d}"
        );
    }
    assert!(read(d.path(), ".cursorignore").contains("\n**/.env\n"));
    assert!(read(d.path(), ".junie/guidelines.md").contains("## Project rules (ContextOS)"));
    let kiro = read(d.path(), ".kiro/steering/ctx-layering.md");
    assert!(
        kiro.starts_with("---\ninclusion: fileMatch\nfileMatchPattern: \"src/api/**\"\n---\n"),
        "{kiro}"
    );
    assert!(read(d.path(), "AGENTS.md").contains("contextos"));
    let o = run(d.path(), &["compile", "--target", "cursor,junie,kiro"]);
    assert!(o.stdout.contains("in sync"), "{}", o.stdout);
}

/// `--target continue`: one `.continue/rules/ctx-*.md` per guide, YAML front matter with
/// `name`, `globs` (a list) and `alwaysApply: false` for a scoped guide; a second run is in
/// sync.
#[test]
fn continue_rules_carry_name_globs_and_always_apply() {
    let d = project();
    let o = run(d.path(), &["compile", "--target", "continue"]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let rule = read(d.path(), ".continue/rules/ctx-layering.md");
    assert!(
        rule.starts_with(
            "---\nname: Service layering\nglobs:\n  - \"src/api/**\"\nalwaysApply: false\n---\n"
        ),
        "{rule}"
    );
    assert!(rule.contains("\n# Service layering\n"), "{rule}");
    let o = run(d.path(), &["compile", "--target", "continue"]);
    assert!(o.stdout.contains("in sync"), "{}", o.stdout);
}

/// `--target aider`: `.aider.conf.yml` reads `AGENTS.md` (compiled along) and
/// `.aiderignore` lists the read denies; a `.aider.conf.yml` the user wrote is kept byte
/// for byte with a note saying what to add.
#[test]
fn aider_reads_agents_md_and_keeps_the_users_conf() {
    let d = project();
    let o = run(d.path(), &["compile", "--target", "aider"]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let conf = read(d.path(), ".aider.conf.yml");
    assert!(conf.ends_with("\nread:\n  - AGENTS.md\n"), "{conf}");
    for line in conf.lines() {
        assert!(
            line.starts_with('#') || line == "read:" || line == "  - AGENTS.md",
            "{line}"
        );
    }
    assert!(read(d.path(), ".aiderignore").contains("\n**/.env\n"));
    assert!(read(d.path(), "AGENTS.md").contains("## Project rules (ContextOS)"));
    let o = run(d.path(), &["compile", "--target", "aider"]);
    assert!(o.stdout.contains("in sync"), "{}", o.stdout);

    let users = project();
    let own = "model: sonnet\nauto-commits: false\n";
    std::fs::write(users.path().join(".aider.conf.yml"), own).unwrap();
    let o = run(users.path(), &["compile", "--target", "aider", "--verbose"]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert_eq!(read(users.path(), ".aider.conf.yml"), own);
    let all = format!("{}{}", o.stdout, o.stderr);
    assert!(all.contains("add `read: [AGENTS.md]`"), "{all}");
}

/// `--target opencode`: `opencode.json` keeps the user's keys and `permission.bash`
/// entries, adds the documented `$schema` and `permission` keys only (`bash` patterns
/// mapped to `ask`/`deny`, the catch-all first and denies last), no `instructions` (OpenCode
/// reads `AGENTS.md`, compiled along); a second run is in sync.
#[test]
fn opencode_permission_block_keeps_the_users_keys() {
    let d = project();
    std::fs::write(
        d.path().join("opencode.json"),
        r#"{"model": "anthropic/claude", "permission": {"bash": {"ls *": "allow"}}}"#,
    )
    .unwrap();
    let o = run(d.path(), &["compile", "--target", "opencode"]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let text = read(d.path(), "opencode.json");
    let conf: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(conf["$schema"], "https://opencode.ai/config.json");
    assert_eq!(conf["model"], "anthropic/claude");
    assert!(conf.get("instructions").is_none(), "{conf}");
    let top: Vec<&String> = conf.as_object().unwrap().keys().collect();
    for k in &top {
        assert!(
            ["$schema", "model", "permission"].contains(&k.as_str()),
            "{k}"
        );
    }
    for k in conf["permission"].as_object().unwrap().keys() {
        assert!(["bash", "edit", "webfetch"].contains(&k.as_str()), "{k}");
    }
    let bash = conf["permission"]["bash"].as_object().unwrap();
    assert_eq!(bash["ls *"], "allow");
    assert_eq!(bash["*"], "ask");
    for (k, v) in bash {
        assert!(
            ["allow", "ask", "deny"].contains(&v.as_str().unwrap()),
            "{k}: {v}"
        );
    }
    // Order: the user's entry, the catch-all, then asks, then denies.
    let values: Vec<&str> = bash.values().map(|v| v.as_str().unwrap()).collect();
    let first_deny = values.iter().position(|v| *v == "deny");
    let last_ask = values.iter().rposition(|v| *v == "ask");
    if let (Some(d), Some(a)) = (first_deny, last_ask) {
        assert!(a < d, "{values:?}");
    }
    assert!(
        bash.iter()
            .any(|(k, v)| k.starts_with("git push") && v == "deny"),
        "{bash:?}"
    );
    assert!(read(d.path(), "AGENTS.md").contains("## Project rules (ContextOS)"));
    let o = run(d.path(), &["compile", "--target", "opencode"]);
    assert!(o.stdout.contains("in sync"), "{}", o.stdout);
}
