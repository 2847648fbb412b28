//! `contextos diff` and `gate --no-widening` on real git repositories: a set of policy
//! edits kept aside, each committed against the same base. Every widening edit must be
//! reported with a witness; edits that only tighten must report no widening.

use super::{contextos, Run};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const BASE: &str = r#"language 1;

@id("no-secrets")
deny path write "secrets/**" because "Secrets never change through an agent.";

@id("lock-ask")
ask path write "Cargo.lock" because "Dependency changes need a human.";

@id("no-force")
deny exec "git push --force *" because "Force pushes rewrite history.";

@id("tf-plan")
allow exec "terraform plan *" because "Plans change nothing.";
"#;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A repository whose HEAD holds `BASE`.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q"]);
    write(dir.path(), BASE);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "base"]);
    dir
}

fn write(dir: &Path, policy: &str) {
    let pol = dir.join(".contextos/policies");
    std::fs::create_dir_all(&pol).unwrap();
    std::fs::write(pol.join("main.policy"), policy).unwrap();
}

fn diff(dir: &Path, extra: &[&str]) -> (Run, Vec<Value>) {
    let mut args = vec!["--format", "json", "diff"];
    args.extend_from_slice(extra);
    let r = contextos(dir, &args);
    assert!(r.code == 0 || r.code == 1, "{}{}", r.stdout, r.stderr);
    let changes = r.json()["sections"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["changes"].as_array().unwrap().clone())
        .collect();
    (r, changes)
}

fn widenings(changes: &[Value]) -> Vec<&Value> {
    changes
        .iter()
        .filter(|c| c["direction"] == "widening")
        .collect()
}

fn witnessed(c: &Value, subject: &str) -> bool {
    c["witnesses"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["subject"] == subject)
}

/// (name, expected: from verdict, to verdict, a witness subject); the edits are in `widened`.
const WIDENING: &[(&str, &str, &str, &str)] = &[
    ("removing a deny", "deny", "allow", "secrets/x"),
    ("deny to ask", "deny", "ask", "git push --force"),
    ("ask to allow", "ask", "allow", "Cargo.lock"),
    ("broadening an allow pattern", "ask", "allow", "terraform x"),
    (
        "adding unless to a deny",
        "deny",
        "allow",
        "secrets/public/x",
    ),
];

fn widened(name: &str, base: &str) -> String {
    match name {
        "removing a deny" => base.replace(
            "@id(\"no-secrets\")\ndeny path write \"secrets/**\" because \"Secrets never change through an agent.\";\n",
            "",
        ),
        "deny to ask" => base.replace(
            "deny exec \"git push --force *\"",
            "ask exec \"git push --force *\"",
        ),
        "ask to allow" => base.replace("ask path write \"Cargo.lock\"", "allow path write \"Cargo.lock\""),
        "broadening an allow pattern" => {
            base.replace("allow exec \"terraform plan *\"", "allow exec \"terraform *\"")
        }
        "adding unless to a deny" => base.replace(
            "deny path write \"secrets/**\" because",
            "deny path write \"secrets/**\" unless path matches \"secrets/public/**\" because",
        ),
        other => panic!("no edit {other}"),
    }
}

#[test]
fn diff_reports_every_widening_with_a_witness_and_the_rule_pair() {
    let dir = repo();
    for (name, from, to, witness) in WIDENING {
        let edited = widened(name, BASE);
        assert_ne!(edited, BASE, "{name}: the edit applies");
        write(dir.path(), &edited);
        let (r, changes) = diff(dir.path(), &[]);
        assert_eq!(r.code, 1, "{name}: a widening exits 1: {}", r.stdout);
        let w = widenings(&changes);
        assert!(
            w.iter().any(|c| c["from"]["verdict"] == *from
                && c["to"]["verdict"] == *to
                && witnessed(c, witness)),
            "{name}: expected {from} -> {to} on {witness}, got {}",
            serde_json::to_string_pretty(&changes).unwrap()
        );
        // The rule pair is named: the rule that decided before or after is the edited one.
        assert!(
            w.iter()
                .all(|c| !c["from"]["rules"].as_array().unwrap().is_empty()
                    || !c["to"]["rules"].as_array().unwrap().is_empty()),
            "{name}: {changes:?}"
        );
    }
    // The text report says the same.
    write(dir.path(), &widened("deny to ask", BASE));
    let r = contextos(dir.path(), &["diff"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout
            .contains("WIDENING   exec: deny (no-force) -> ask (no-force"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("e.g. git push --force"), "{}", r.stdout);
}

#[test]
fn diff_reports_no_widening_for_edits_that_only_tighten() {
    let dir = repo();
    let tightening = [
        (
            "adding a deny",
            format!("{BASE}\n@id(\"no-config\")\ndeny path write \"config/**\" because \"c\";\n"),
            "config/x",
        ),
        (
            "narrowing an allow",
            BASE.replace(
                "allow exec \"terraform plan *\"",
                "allow exec \"terraform plan\"",
            ),
            "terraform plan x",
        ),
        (
            "allow to ask",
            BASE.replace(
                "allow exec \"terraform plan *\"",
                "ask exec \"terraform plan *\"",
            ),
            "terraform plan",
        ),
    ];
    for (name, edited, witness) in &tightening {
        write(dir.path(), edited);
        let (r, changes) = diff(dir.path(), &[]);
        assert_eq!(r.code, 0, "{name}: {}", r.stdout);
        assert!(widenings(&changes).is_empty(), "{name}: {changes:?}");
        assert!(
            changes
                .iter()
                .any(|c| c["direction"] == "tightening" && witnessed(c, witness)),
            "{name}: expected a tightening on {witness}: {changes:?}"
        );
    }
    // No change at all: nothing to report.
    write(dir.path(), BASE);
    let (r, changes) = diff(dir.path(), &[]);
    assert_eq!(r.code, 0);
    assert!(changes.is_empty(), "{changes:?}");
}

#[test]
fn diff_between_revisions_and_over_a_corpus() {
    let dir = repo();
    write(dir.path(), &widened("deny to ask", BASE));
    git(dir.path(), &["commit", "-qam", "soften force push"]);
    // Working tree = HEAD: nothing; HEAD~1 -> HEAD: the widening.
    let (r, _) = diff(dir.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let (r, changes) = diff(dir.path(), &["--from", "HEAD~1", "--to", "HEAD"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["from"], "HEAD~1");
    assert_eq!(widenings(&changes).len(), 1, "{changes:?}");
    // A corpus of real requests, one per line, in the shape of `decide --request`.
    let corpus = dir.path().join("corpus.jsonl");
    std::fs::write(
        &corpus,
        concat!(
            "{\"domain\":\"exec\",\"shell\":\"git push --force origin main\"}\n",
            "{\"domain\":\"path\",\"op\":\"write\",\"path\":\"src/lib.rs\"}\n",
            "{\"domain\":\"exec\",\"argv\":[\"git\",\"push\",\"-f\"]}\n",
        ),
    )
    .unwrap();
    let r = contextos(
        dir.path(),
        &[
            "--format",
            "json",
            "diff",
            "--from",
            "HEAD~1",
            "--corpus",
            corpus.to_str().unwrap(),
        ],
    );
    let j = r.json();
    let corpus_section = j["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["source"] == "corpus")
        .unwrap()
        .clone();
    assert_eq!(corpus_section["requests"], 3);
    let changes = corpus_section["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert!(witnessed(&changes[0], "git push --force origin main"));
    // A bad corpus line is an error with its line number.
    std::fs::write(
        &corpus,
        "{\"domain\":\"path\",\"op\":\"write\",\"path\":\"a\"}\n{\"domain\":\"nope\"}\n",
    )
    .unwrap();
    let r = contextos(dir.path(), &["diff", "--corpus", corpus.to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("corpus.jsonl:2"), "{}", r.stderr);
    // An unknown revision could not be verified.
    let r = contextos(dir.path(), &["diff", "--from", "no-such-rev"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
}

fn gate_check(dir: &Path, extra: &[&str]) -> Option<Value> {
    let mut args = vec!["--format", "json", "gate"];
    args.extend_from_slice(extra);
    let r = contextos(dir, &args);
    r.json()["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "no verdict widened")
        .cloned()
}

#[test]
fn gate_no_widening_fails_unless_the_rule_accepts_it() {
    let dir = repo();
    // Without the switch, no such check.
    assert!(gate_check(dir.path(), &[]).is_none());
    write(dir.path(), &widened("deny to ask", BASE));
    let c = gate_check(dir.path(), &["--no-widening", "--from", "HEAD"]).unwrap();
    assert_eq!(c["exitCode"], 1, "{c}");
    assert!(c["details"].to_string().contains("git push --force"), "{c}");
    // The changed rule accepts the widening: passes.
    let accepted = widened("deny to ask", BASE).replace(
        "@id(\"no-force\")",
        "@id(\"no-force\")\n@accept(\"widening\")",
    );
    write(dir.path(), &accepted);
    let c = gate_check(dir.path(), &["--no-widening", "--from", "HEAD"]).unwrap();
    assert_eq!(c["exitCode"], 0, "{c}");
    // The configuration switch, against the default base (HEAD~1 without an upstream).
    write(dir.path(), &widened("ask to allow", BASE));
    std::fs::write(
        dir.path().join("contextos.toml"),
        "[gate]\nno_widening = true\n",
    )
    .unwrap();
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "widen"]);
    let c = gate_check(dir.path(), &[]).unwrap();
    assert_eq!(c["exitCode"], 1, "{c}");
    assert!(c["details"].to_string().contains("HEAD~1"), "{c}");
    // A tightening passes.
    write(
        dir.path(),
        &BASE.replace(
            "allow exec \"terraform plan *\"",
            "ask exec \"terraform plan *\"",
        ),
    );
    let c = gate_check(dir.path(), &["--from", "HEAD~1"]).unwrap();
    assert_eq!(c["exitCode"], 0, "{c}");
}

#[test]
fn accept_annotation_is_checked() {
    let dir = repo();
    write(
        dir.path(),
        &BASE.replace(
            "@id(\"no-force\")",
            "@id(\"no-force\")\n@accept(\"widenin\")",
        ),
    );
    let r = contextos(dir.path(), &["check"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let all = format!("{}{}", r.stdout, r.stderr);
    assert!(all.contains("E0107"), "{all}");
    assert!(
        all.contains("did you mean `@accept(\"widening\")`"),
        "{all}"
    );
}

#[test]
fn diff_log_replays_what_the_hook_recorded() {
    use std::io::Write as _;
    let dir = repo();
    // An agent session under the base policy: a force push (denied) and a lockfile write.
    for (tool, input) in [
        (
            "Bash",
            serde_json::json!({"command": "git push --force origin main"}),
        ),
        (
            "Write",
            serde_json::json!({"file_path": "Cargo.lock", "content": "x"}),
        ),
    ] {
        let ev = serde_json::json!({
            "session_id": "s1", "transcript_path": "/tmp/t.jsonl",
            "cwd": dir.path(), "permission_mode": "default",
            "hook_event_name": "PreToolUse", "tool_name": tool,
            "tool_input": input, "tool_use_id": "toolu_1"
        });
        let mut child = Command::new(env!("CARGO_BIN_EXE_contextos"))
            .arg("--project")
            .arg(dir.path())
            .args(["hook", "claude"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(ev.to_string().as_bytes())
            .unwrap();
        assert_eq!(child.wait_with_output().unwrap().status.code(), Some(0));
    }
    // The force push would now be asked instead of denied.
    write(dir.path(), &widened("deny to ask", BASE));
    let r = contextos(dir.path(), &["--format", "json", "diff", "--log"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let j = r.json();
    let log = j["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["source"] == "log")
        .unwrap()
        .clone();
    assert_eq!(log["requests"], 2, "{log}");
    assert!(log["note"].as_str().unwrap().contains("masked"), "{log}");
    let changes = log["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0]["direction"], "widening");
    assert!(
        witnessed(&changes[0], "git push --force origin main"),
        "{changes:?}"
    );
}
