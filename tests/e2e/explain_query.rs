//! `explain --rule`, why-nots for pattern mismatches, and `query`.

use super::{contextos, project};

const POLICY: &str = r#"language 1;

let keys = ["*.pem"];

@id("no-pem")
deny path write $keys because "Key material.";

@id("no-force")
deny exec "git push --force *" because "Force pushes rewrite history.";

@id("lock-ask")
ask path write "Cargo.lock" when role != "maintainer" because "Dependencies.";

@id("docs-ok")
allow path write "docs/**" unless path matches $keys because "Docs are free.";

@id("secret-docs")
allow path write "docs/secret/*.md" because "Covered by the deny below.";

@id("no-secret-docs")
deny path write "docs/secret/**" because "Secret docs.";

role reviewer {
  @id("reviewer-reads")
  deny path write "**" because "Reviewers never edit.";
}
"#;

#[test]
fn why_not_names_pattern_mismatches_with_a_fix() {
    let p = project(Some(POLICY));
    let r = contextos(
        p.path(),
        &["explain", "path", "--op", "write", "certs/a.pem"],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("why not deny no-pem")
            && r.stdout
                .contains("`*` does not cross `/`; did you mean \"**/*.pem\"?"),
        "{}",
        r.stdout
    );
    let r = contextos(
        p.path(),
        &["explain", "exec", "--", "git", "push", "origin", "--force"],
    );
    assert!(
        r.stdout.contains("why not deny no-force")
            && r.stdout.contains("options are matched in order")
            && r.stdout.contains("exec.options contains \"--force\""),
        "{}",
        r.stdout
    );
    // decide keeps its short answer.
    let r = contextos(
        p.path(),
        &["decide", "path", "--op", "write", "certs/a.pem"],
    );
    assert!(!r.stdout.contains("why not"), "{}", r.stdout);
}

#[test]
fn explain_rule_shows_head_resolved_conditions_and_the_outcome() {
    let p = project(Some(POLICY));
    let r = contextos(
        p.path(),
        &[
            "explain",
            "--rule",
            "docs-ok",
            "path",
            "--op",
            "write",
            "docs/key.pem",
        ],
    );
    // `*.pem` does not reach into docs/: the unless does not hold, the allow applies.
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.contains("rule docs-ok"), "{}", r.stdout);
    assert!(r.stdout.contains("APPLIED"), "{}", r.stdout);
    assert!(
        r.stdout.contains("head: allow path write \"docs/**\""),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("unless path matches $keys: did not hold")
            && r.stdout
                .contains("resolved: unless path.path matches [\"*.pem\"]"),
        "{}",
        r.stdout
    );
    let r = contextos(
        p.path(),
        &[
            "--format",
            "json",
            "explain",
            "--rule",
            "lock-ask",
            "path",
            "--op",
            "write",
            "Cargo.lock",
            "--role",
            "maintainer",
        ],
    );
    let j = r.json();
    assert_eq!(j["rule"]["headMatched"], true);
    assert_eq!(j["rule"]["applied"], false);
    assert_eq!(j["rule"]["clauses"][0]["held"], false);
    let r = contextos(
        p.path(),
        &[
            "--format",
            "json",
            "explain",
            "--rule",
            "no-pem",
            "path",
            "--op",
            "write",
            "certs/a.pem",
        ],
    );
    let j = r.json();
    assert_eq!(j["rule"]["headMatched"], false);
    assert!(
        j["rule"]["hint"].as_str().unwrap().contains("**/*.pem"),
        "{j}"
    );
    // An unknown id is an error with a suggestion; --rule belongs to explain.
    let r = contextos(
        p.path(),
        &["explain", "--rule", "no-pen", "path", "--op", "read", "a"],
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("did you mean `no-pem`?"), "{}", r.stderr);
    let r = contextos(
        p.path(),
        &["decide", "--rule", "no-pem", "path", "--op", "read", "a"],
    );
    assert_eq!(r.code, 2);
}

#[test]
fn query_lists_regions_strongest_first_per_role() {
    let p = project(Some(POLICY));
    let r = contextos(p.path(), &["--format", "json", "query", "path", "write"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let j = r.json();
    let regions = j["regions"].as_array().unwrap();
    let effects: Vec<&str> = regions
        .iter()
        .map(|r| r["effect"].as_str().unwrap())
        .collect();
    let mut sorted = effects.clone();
    sorted.sort_by_key(|e| match *e {
        "deny" => 0,
        "ask" => 1,
        _ => 2,
    });
    assert_eq!(effects, sorted, "strongest first");
    let find = |id: &str| regions.iter().find(|r| r["rule"]["id"] == id).cloned();
    assert!(find("no-pem").is_some());
    assert!(
        find("reviewer-reads").is_none(),
        "a role's rules only for that role"
    );
    assert_eq!(
        find("lock-ask").unwrap()["conditional"],
        false,
        "role clause decided"
    );
    assert_eq!(find("docs-ok").unwrap()["conditional"], true);
    assert_eq!(
        find("secret-docs").unwrap()["overruledBy"],
        "no-secret-docs"
    );
    // As the maintainer, the lockfile ask is gone; as a reviewer, everything is denied.
    let r = contextos(
        p.path(),
        &[
            "--format",
            "json",
            "query",
            "--role",
            "maintainer",
            "path",
            "write",
        ],
    );
    let j = r.json();
    assert!(j["regions"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["rule"]["id"] != "lock-ask"));
    let r = contextos(p.path(), &["query", "--role", "reviewer", "path", "write"]);
    assert!(r.stdout.contains("reviewer-reads"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("never decides: always overruled by reviewer-reads"),
        "{}",
        r.stdout
    );
    // Exec, and bad input.
    let r = contextos(p.path(), &["query", "exec"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("\"git push --force *\""), "{}", r.stdout);
    assert_eq!(contextos(p.path(), &["query", "path"]).code, 2);
    assert_eq!(
        contextos(p.path(), &["query", "--role", "ghost", "exec"]).code,
        2
    );
}
