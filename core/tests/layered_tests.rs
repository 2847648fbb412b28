#![allow(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]
//! Each layer's tests run against that layer: the stdlib's cannot be hidden by the
//! project's tests nor broken by a stricter project rule, and a failing case says which
//! rule overruled the one it expected.
use contextos_core::testing::run_layered;
use contextos_core::*;

const STDLIB: &str = r#"language 1;
default path = allow;
default exec = allow;
default plugin = deny;
default commit = allow;
default net = allow;
default mcp = allow;
@id("force-push") ask exec "git push --force *" because "rewrites history";
@id("rm-root") deny exec "rm -rf /" because "wipes the machine";
test "stdlib" {
    exec "git push --force origin" => ask(force-push);
    exec "rm -rf /" => deny(rm-root);
}
"#;

fn sources(stdlib: &str, user: &str) -> Vec<PolicySource> {
    vec![
        PolicySource {
            name: "stdlib/x.policy".into(),
            text: stdlib.to_string().into(),
            layer: Layer::Stdlib,
        },
        PolicySource {
            name: "project.policy".into(),
            text: user.to_string().into(),
            layer: Layer::User,
        },
    ]
}

fn run(stdlib: &str, user: &str) -> Vec<contextos_core::testing::LayerRun> {
    let src = sources(stdlib, user);
    let out = build(&src, &BuildOptions::default());
    let set = out.policy.expect("compiles");
    run_layered(&src, &set, &BuildOptions::default(), None)
}

#[test]
fn a_stricter_project_rule_keeps_the_stdlib_tests_green() {
    let user =
        "language 1;\n@id(\"no-force\") deny exec \"git push --force *\" because \"never\";\n";
    let runs = run(STDLIB, user);
    assert_eq!(runs.len(), 1, "a project without tests has no project run");
    assert_eq!(runs[0].label, "stdlib");
    assert!(runs[0].ok(), "{:?}", runs[0].report.cases);
    assert_eq!(runs[0].report.passed, 2);
}

#[test]
fn a_broken_stdlib_expectation_fails_even_when_the_project_has_tests() {
    let broken = STDLIB.replace("=> deny(rm-root)", "=> allow");
    let user = "language 1;\ntest \"mine\" { path read \"a\" => allow; }\n";
    let runs = run(&broken, user);
    let labels: Vec<&str> = runs.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(labels, ["stdlib", "project"]);
    assert_eq!(runs[0].report.failed, 1);
    assert!(runs[1].ok());
}

#[test]
fn a_failing_case_names_the_rule_that_overruled_the_expected_one() {
    let user = r#"language 1;
@id("push-needs-human") ask exec "git push *" because "a human pushes";
role bot {
    @id("bot-push") allow exec "git push origin *" because "bots push feature branches";
}
test "bot" {
    exec "git push origin main" as role "bot" => allow(bot-push);
}
"#;
    let runs = run(STDLIB, user);
    let project = runs.iter().find(|r| r.label == "project").unwrap();
    let case = &project.report.cases[0];
    assert!(!case.passed);
    assert_eq!(case.missing_rules, ["bot-push"]);
    assert_eq!(case.overruled.len(), 1);
    assert_eq!(case.overruled[0].rule, "bot-push");
    assert_eq!(case.overruled[0].by, ["push-needs-human"]);
}

#[test]
fn a_missing_rule_that_never_matched_is_not_called_overruled() {
    let user = r#"language 1;
@id("other") allow exec "ls" because "listing";
@id("mine") allow exec "make" because "building";
test "t" { exec "ls" => allow(mine); }
"#;
    let runs = run(STDLIB, user);
    let case = &runs
        .iter()
        .find(|r| r.label == "project")
        .unwrap()
        .report
        .cases[0];
    assert_eq!(case.missing_rules, ["mine"]);
    assert!(case.overruled.is_empty());
}
