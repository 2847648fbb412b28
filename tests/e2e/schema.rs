//! `contextos compile` output checked against the real Claude Code settings schema
//! (SchemaStore's `claude-code-settings.json`, vendored in `tests/e2e/schemas/`): what we
//! write into a user's `.claude/settings.json` must be a file Claude Code accepts, and the
//! user's own keys must survive next to ours.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

const SCHEMA: &str = include_str!("schemas/claude-code-settings.json");

/// The example project's policies, plus the shapes the Claude emitter must express
/// natively: a plain path deny, a read deny, an exec ask and a literal exec allow.
const EXAMPLE_POLICY: &str =
    include_str!("../../examples/rust-service/.contextos/policies/main.policy");
const EXTRA_RULES: &str = r#"
@id("no-env-reads")
deny path read "**/.env"
  because "Environment files hold credentials.";

@id("no-prod-infra-edits")
deny path write "infra/prod/**"
  because "Production infrastructure changes go through review.";

@id("release-asks")
ask exec "make release"
  because "Releases need a human.";

@id("fmt-allowed")
allow exec "cargo fmt *"
  because "Formatting is harmless.";
"#;

/// The user's own settings, written before the first compile.
const USER_SETTINGS: &str = r#"{"model":"opus","permissions":{"deny":["Bash(rm -rf /)"]}}"#;

/// The vendored schema with the one handler key it predates: `onFailure` (`"block"` or the
/// default `"continue"`, Claude Code 2.1.295, 2026-10-08) on command and HTTP hooks. The
/// vendored copy (SchemaStore, 2026-07) forbids unknown handler keys, and no newer copy
/// could be vendored here; the addition is made in code so the file stays verbatim, and
/// it adds only that key (see `schemas/README.md`).
pub(crate) fn claude_settings_schema() -> Value {
    let mut schema: Value =
        serde_json::from_str(SCHEMA).unwrap_or_else(|e| panic!("vendored schema is not JSON: {e}"));
    let handlers = schema
        .pointer_mut("/$defs/hookCommand/anyOf")
        .and_then(Value::as_array_mut)
        .unwrap_or_else(|| panic!("the schema has no hookCommand variants"));
    let mut amended = 0;
    for h in handlers {
        let kind = h.pointer("/properties/type/const").and_then(Value::as_str);
        if matches!(kind, Some("command" | "http")) {
            h["properties"]["onFailure"] =
                serde_json::json!({"type": "string", "enum": ["block", "continue"]});
            amended += 1;
        }
    }
    assert_eq!(
        amended, 2,
        "the schema's command and http hooks were not found"
    );
    schema
}

fn validator() -> jsonschema::Validator {
    let schema = claude_settings_schema();
    jsonschema::draft7::new(&schema)
        .unwrap_or_else(|e| panic!("vendored schema does not compile as draft-07: {e}"))
}

/// Every schema violation in `doc`, one line each (empty when valid).
fn violations(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc)
        .map(|e| format!("at {:?}: {e}", e.instance_path().as_str()))
        .collect()
}

fn compile(project: &Path, state_home: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_contextos"))
        .arg("--project")
        .arg(project)
        .arg("compile")
        .env("XDG_STATE_HOME", state_home)
        .env_remove("CLAUDE_PROJECT_DIR")
        .output()
        .unwrap_or_else(|e| panic!("cannot run contextos: {e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned()
            + String::from_utf8_lossy(&out.stderr).as_ref(),
    )
}

fn strings<'a>(doc: &'a Value, pointer: &str) -> Vec<&'a str> {
    doc.pointer(pointer)
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("{pointer} is not an array in {doc:#}"))
        .iter()
        .map(|s| {
            s.as_str()
                .unwrap_or_else(|| panic!("{pointer}: {s} is not a string"))
        })
        .collect()
}

/// The validator itself must reject what Claude Code rejects, or a pass means nothing.
#[test]
fn vendored_schema_rejects_bad_settings() {
    let v = validator();
    let good: Value = serde_json::from_str(USER_SETTINGS).unwrap();
    assert!(
        violations(&v, &good).is_empty(),
        "{:?}",
        violations(&v, &good)
    );
    for bad in [
        r#"{"permissions":{"deny":["NotATool(x)"]}}"#,
        r#"{"permissions":{"deny":"Bash(x)"}}"#,
        r#"{"permissions":{"bogus":[]}}"#,
        r#"{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command"}]}]}}"#,
        r#"{"hooks":{"NoSuchEvent":[]}}"#,
    ] {
        let doc: Value = serde_json::from_str(bad).unwrap();
        assert!(!violations(&v, &doc).is_empty(), "schema accepted {bad}");
    }
}

#[test]
fn compiled_claude_settings_match_the_schemastore_schema() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let pol = root.join(".contextos/policies");
    std::fs::create_dir_all(&pol).unwrap();
    std::fs::write(
        pol.join("main.policy"),
        format!("{EXAMPLE_POLICY}\n{EXTRA_RULES}"),
    )
    .unwrap();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(root.join(".claude/settings.json"), USER_SETTINGS).unwrap();

    let (code, out) = compile(root, home.path());
    assert_eq!(code, 0, "compile failed:\n{out}");

    let text = std::fs::read_to_string(root.join(".claude/settings.json"))
        .unwrap_or_else(|e| panic!(".claude/settings.json after compile: {e}\n{out}"));
    let doc: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!(".claude/settings.json is not JSON ({e}):\n{text}"));

    let errors = violations(&validator(), &doc);
    assert!(
        errors.is_empty(),
        "{} schema violation(s) in .claude/settings.json:\n{}\n--- file ---\n{text}",
        errors.len(),
        errors.join("\n")
    );

    // The user's own key and deny entry survive the compile.
    assert_eq!(doc.get("model"), Some(&Value::from("opus")), "{text}");
    let deny = strings(&doc, "/permissions/deny");
    assert!(deny.contains(&"Bash(rm -rf /)"), "user deny lost: {deny:?}");

    // Ours: native denies for commands and for files.
    assert!(
        deny.iter()
            .any(|d| d.starts_with("Bash(") && *d != "Bash(rm -rf /)"),
        "no compiled Bash( deny: {deny:?}"
    );
    assert!(
        deny.iter()
            .any(|d| d.starts_with("Read(") || d.starts_with("Edit(")),
        "no Read(/Edit( deny: {deny:?}"
    );

    // And the hook registration.
    let pre = doc
        .pointer("/hooks/PreToolUse")
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("no hooks.PreToolUse array:\n{text}"));
    let registered = pre.iter().any(|m| {
        m.get("hooks").and_then(Value::as_array).is_some_and(|hs| {
            hs.iter()
                .any(|h| h.get("command").and_then(Value::as_str) == Some("contextos hook claude"))
        })
    });
    assert!(
        registered,
        "no `contextos hook claude` in hooks.PreToolUse:\n{text}"
    );
}

/// `[compile.claude] sandbox = true`: the sandbox keys Claude Code documents, accepted by
/// the vendored schema, next to the user's own `sandbox` settings.
#[test]
fn the_opt_in_sandbox_settings_match_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let pol = root.join(".contextos/policies");
    std::fs::create_dir_all(&pol).unwrap();
    std::fs::write(pol.join("main.policy"), EXAMPLE_POLICY).unwrap();
    std::fs::write(
        root.join("contextos.toml"),
        "[compile]\ntargets = [\"claude\"]\n\n[compile.claude]\nsandbox = true\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(
        root.join(".claude/settings.json"),
        r#"{"sandbox":{"excludedCommands":["docker"]}}"#,
    )
    .unwrap();
    let (code, out) = compile(root, home.path());
    assert_eq!(code, 0, "compile failed:\n{out}");
    let text = std::fs::read_to_string(root.join(".claude/settings.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let errors = violations(&validator(), &doc);
    assert!(errors.is_empty(), "{}\n{text}", errors.join("\n"));
    let sandbox = &doc["sandbox"];
    assert_eq!(sandbox["excludedCommands"], serde_json::json!(["docker"]));
    assert_eq!(
        (
            &sandbox["enabled"],
            &sandbox["autoAllowBashIfSandboxed"],
            &sandbox["allowUnsandboxedCommands"]
        ),
        (&Value::Bool(true), &Value::Bool(false), &Value::Bool(false))
    );
    // The lists, in the sandbox's own anchors: the self-protected files are not
    // writable, the metadata service and paste sites not reachable.
    let list = |p: &str| -> Vec<&str> {
        sandbox
            .pointer(p)
            .and_then(Value::as_array)
            .unwrap_or_else(|| panic!("no {p}:\n{text}"))
            .iter()
            .filter_map(Value::as_str)
            .collect()
    };
    let deny_write = list("/filesystem/denyWrite");
    assert!(deny_write.contains(&"./contextos.toml"), "{deny_write:?}");
    assert!(deny_write.contains(&"./.github/hooks/**"), "{deny_write:?}");
    // `deny path delete ".github"` is the hook's: a sandbox write deny would bar the tree.
    assert!(!deny_write.contains(&"./.github"), "{deny_write:?}");
    let denied = list("/network/deniedDomains");
    assert!(denied.contains(&"169.254.169.254"), "{denied:?}");
    assert!(denied.contains(&"*.pastebin.com"), "{denied:?}");
}
