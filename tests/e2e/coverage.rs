//! `test --coverage --threshold`: rule and clause coverage of the project's own rules.

use super::{contextos, project};

const POLICY: &str = r#"language 1;
@id("lock") ask path write "Cargo.lock" when role != "maintainer" because "l";
@id("docs") allow path write "docs/**" unless path matches "docs/secret/**" because "d";
@id("nothing") deny path write "never/**" because "n";
test "t" {
    path write "Cargo.lock" => ask(lock);
    path write "Cargo.lock" as role "maintainer" => allow;
    path write "docs/a.md" => allow;
}
"#;

#[test]
fn clause_coverage_names_each_clause_outcome_never_seen_and_the_threshold_fails() {
    let p = project(Some(POLICY));
    let r = contextos(p.path(), &["test", "--coverage"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains(
            "project coverage: 2/3 rule(s) exercised (67%), 1/2 clause(s) seen both ways (50%)"
        ),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("clause unless path matches \"docs/secret/**\" of docs")
            && r.stdout.contains("never seen holding"),
        "{}",
        r.stdout
    );
    let r = contextos(p.path(), &["test", "--coverage", "--threshold", "60"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("coverage below the threshold of 60%"));
    let r = contextos(
        p.path(),
        &[
            "--format",
            "json",
            "test",
            "--coverage",
            "--threshold",
            "50",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
    let j = r.json();
    assert_eq!(j["coverage"]["clausePercent"], 50.0);
    assert_eq!(j["coverage"]["clauses"][0]["seenTrue"], true);
    assert_eq!(j["coverage"]["clauses"][0]["seenFalse"], true);
    // A case that reaches the unless covers it: 100% of clauses.
    let covered = POLICY.replace(
        "    path write \"docs/a.md\" => allow;\n",
        "    path write \"docs/a.md\" => allow;\n    path write \"docs/secret/a.md\" => allow;\n    path write \"never/x\" => deny(nothing);\n",
    );
    let p = project(Some(&covered));
    let r = contextos(p.path(), &["test", "--coverage", "--threshold", "100"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    // --threshold needs --coverage.
    assert_eq!(contextos(p.path(), &["test", "--threshold", "10"]).code, 2);
}

#[test]
fn test_reports_junit_and_github_annotations() {
    let failing = POLICY.replace("=> ask(lock);", "=> deny(lock);");
    let p = project(Some(&failing));
    let r = contextos(p.path(), &["--format", "junit", "test"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.starts_with("<?xml"), "{}", r.stdout);
    assert!(r.stdout.trim_end().ends_with("</testsuites>"));
    assert_eq!(
        r.stdout.matches("<testsuite ").count(),
        r.stdout.matches("</testsuite>").count()
    );
    assert!(
        r.stdout
            .contains("<testsuite name=\"project\" tests=\"3\" failures=\"1\""),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("name=\"t: path write &quot;Cargo.lock&quot; =&gt; deny(lock);\""),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("<failure message=\"expected: deny(lock)\">"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("actual:   ask(lock)</failure>"),
        "{}",
        r.stdout
    );
    let r = contextos(p.path(), &["--format", "github", "test"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.contains(
            "::error file=.contextos/policies/main.policy,line=6,col=5,title=contextos test::"
        ),
        "{}",
        r.stdout
    );
}

#[test]
fn test_watch_runs_again_when_a_policy_changes() {
    use std::io::BufRead as _;
    use std::time::{Duration, Instant};
    let p = project(Some(POLICY));
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_contextos"))
        .arg("--project")
        .arg(p.path())
        .args(["test", "--watch"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let wait_for = |what: &str| {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut seen = Vec::new();
        while Instant::now() < deadline {
            if let Ok(l) = rx.recv_timeout(Duration::from_millis(200)) {
                if l.contains(what) {
                    return seen;
                }
                seen.push(l);
            }
        }
        panic!("no line containing {what:?} within 60 s; saw {seen:?}");
    };
    let first = wait_for("watching the policies");
    assert!(
        first.iter().any(|l| l.contains(" passed, 0 failed")),
        "{first:?}"
    );
    // Break a case: the next run fails it.
    std::fs::write(
        p.path().join(".contextos/policies/main.policy"),
        POLICY.replace("=> ask(lock);", "=> deny(lock);"),
    )
    .unwrap();
    wait_for("policies changed");
    let second = wait_for("watching the policies");
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        second.iter().any(|l| l.contains(" passed, 1 failed")),
        "{second:?}"
    );
}
