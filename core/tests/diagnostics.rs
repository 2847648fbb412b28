#![allow(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]
//! Every check-time error is located (file:line:col) and carries a stable code.
mod common;
use common::*;

fn one(src: &str) -> (&'static str, usize, usize) {
    let e = errors(src);
    assert_eq!(e.len(), 1, "expected exactly one error, got {e:?}");
    e[0]
}

#[test]
fn unknown_attribute_is_a_check_time_error_with_a_suggestion() {
    let src = "language 1;\ndeny path write \"x\"\n    when path.opp == \"write\" because \"x\";";
    assert_eq!(one(src), ("E0108", 3, 10));
    let out = compile_user(src);
    let d = out
        .diagnostics
        .iter()
        .find(|d| d.diagnostic.is_error())
        .map(|d| out.render(d))
        .unwrap_or_default();
    assert!(d.contains("did you mean `path.op`?"), "{d}");
    assert!(d.contains("main.policy:3:10"), "{d}");
}

#[test]
fn attributes_of_another_domain_are_rejected() {
    assert_eq!(
        one("language 1;\ndeny path write \"x\" when exec.argv contains \"a\" because \"x\";"),
        ("E0109", 2, 26)
    );
}

#[test]
fn type_mismatches_are_located_at_the_operator() {
    assert_eq!(
        one("language 1;\ndeny exec \"*\" when exec.argv == \"a\" because \"x\";"),
        ("E0110", 2, 30)
    );
    assert_eq!(
        one("language 1;\ndeny exec \"*\" when exec.program > 3 because \"x\";"),
        ("E0110", 2, 33)
    );
    assert_eq!(
        one("language 1;\ndeny exec \"*\" when exec.program because \"x\";"),
        ("E0110", 2, 20)
    );
    assert_eq!(
        one("language 1;\ndeny exec \"*\" when exec.program in \"a\" because \"x\";"),
        ("E0110", 2, 33)
    );
}

#[test]
fn unknown_domain_operation_method_annotation() {
    assert_eq!(
        one("language 1;\ndeny paht write \"x\" because \"x\";"),
        ("E0101", 2, 6)
    );
    assert_eq!(
        one("language 1;\ndeny path wrte \"x\" because \"x\";"),
        ("E0102", 2, 11)
    );
    assert_eq!(
        one("language 1;\ndeny exec run \"x\" because \"x\";"),
        ("E0102", 2, 11)
    );
    assert_eq!(
        one("language 1;\ndeny exec \"*\" when exec.argv.size() > 1 because \"x\";"),
        ("E0111", 2, 20)
    );
    assert_eq!(
        one("language 1;\n@owner(\"me\")\ndeny exec \"*\" because \"x\";"),
        ("E0107", 2, 2)
    );
    assert_eq!(
        one("language 1;\n@severity(fatal)\ndeny exec \"*\" because \"x\";"),
        ("E0107", 2, 11)
    );
}

#[test]
fn duplicates_and_undefined_names() {
    assert_eq!(
        one("language 1;\n@id(\"a\") deny exec \"x\" because \"x\";\n@id(\"a\") deny exec \"y\" because \"y\";"),
        ("E0106", 3, 1)
    );
    assert_eq!(
        one("language 1;\ndefault path = allow;\ndefault path = deny;"),
        ("E0103", 3, 1)
    );
    assert_eq!(
        one("language 1;\nlet a = [\"x\"];\nlet a = [\"y\"];"),
        ("E0104", 3, 5)
    );
    assert_eq!(
        one("language 1;\ndeny path write $nope because \"x\";"),
        ("E0105", 2, 17)
    );
    assert_eq!(one("language 1;\nlet a = [$b];\nlet b = [$a];").0, "E0118");
}

#[test]
fn obligations_are_checked() {
    assert_eq!(
        one("language 1;\ndeny exec \"x\" with sandbox { network: none } because \"x\";"),
        ("E0113", 2, 15)
    );
    assert_eq!(
        one("language 1;\nallow exec \"x\" with sandbox { netwrk: none } because \"x\";"),
        ("E0113", 2, 31)
    );
    assert_eq!(
        one("language 1;\nallow path write \"x\" with sandbox { network: none } because \"x\";"),
        ("E0113", 2, 27)
    );
}

#[test]
fn globs_versions_and_tests_are_checked() {
    assert_eq!(
        one("language 1;\ndeny path write \"src/[a\" because \"x\";"),
        ("E0112", 2, 17)
    );
    assert_eq!(one("language 2;"), ("E0116", 1, 1));
    assert_eq!(
        one("language 1;\n@id(\"r\") deny exec \"x\" because \"x\";\ntest \"t\" { exec \"x\" => deny(rr); }"),
        ("E0117", 3, 29)
    );
    assert_eq!(
        one("language 1;\ntest \"t\" { path wrte \"x\" => deny; }"),
        ("E0102", 2, 17)
    );
}

#[test]
fn script_errors_point_into_the_policy_file() {
    let src = "language 1;\ndeny exec \"*\" when script {\n    argv.len() > 1 && nosuchvar\n} because \"x\";";
    let (code, line, col) = one(src);
    assert_eq!((code, line), ("E0114", 3));
    assert!(col >= 23, "col {col}");
}

#[test]
fn warnings_do_not_block_compilation() {
    let out = compile_user("deny exec \"x\";");
    assert!(out.policy.is_some());
    let codes: Vec<&str> = out.diagnostics.iter().map(|d| d.diagnostic.code).collect();
    assert!(codes.contains(&"W0201"), "missing because: {codes:?}");
    assert!(codes.contains(&"W0202"), "missing language: {codes:?}");
    assert!(codes.contains(&"W0204"), "missing defaults: {codes:?}");
}

#[test]
fn a_policy_with_errors_is_never_produced() {
    let out = compile_user(
        "language 1;\ndeny path wrte \"x\" because \"x\";\nallow exec \"*\" because \"y\";",
    );
    assert!(
        out.policy.is_none(),
        "fail closed: no policy set when any error exists"
    );
}

#[test]
fn several_errors_in_one_file_are_all_reported() {
    let src = "language 1;\ndeny paht write \"x\" because \"x\";\ndeny exec \"*\" when exec.nope because \"x\";\nallow exec \"x\" with sandbox { bad: 1 } because \"x\";";
    let codes: Vec<&str> = errors(src).into_iter().map(|e| e.0).collect();
    assert_eq!(codes, ["E0101", "E0108", "E0113"]);
}

/// The lists the runtime matches as globs are checked as globs: an invalid one would
/// otherwise match nothing when the hook reads it (no taint, no carried secret).
#[test]
fn runtime_glob_lists_with_an_invalid_glob_are_refused() {
    for (name, glob) in [
        ("untrusted_reads", "docs/[a"),
        ("trusted_fetch_hosts", "*.example.[com"),
        ("secret_env_vars", "*_TOKEN[x"),
    ] {
        let src = format!("language 1;\nlet {name} = [\"ok/*\", \"{glob}\"];\n");
        assert_eq!(one(&src), ("E0112", 2, 1), "{name}");
    }
    // Valid lists pass.
    assert!(errors("language 1;\nlet secret_env_vars = [\"*_TOKEN\", \"AWS_*\"];\n").is_empty());
}

/// A lazy build (a hook's) leaves the stdlib's own runtime lists to the full build that
/// checks them, but still checks a list a project overrides, stdlib items and all.
#[test]
fn a_lazy_build_checks_a_runtime_list_a_project_overrides() {
    use contextos_core::{build, BuildOptions, Layer, PolicySource};
    let with = |text: &str| {
        let mut sources = common::stdlib_sources();
        sources.push(PolicySource {
            name: ".contextos/policies/main.policy".into(),
            text: text.to_string().into(),
            layer: Layer::User,
        });
        let out = build(
            &sources,
            &BuildOptions {
                lazy: true,
                ..BuildOptions::default()
            },
        );
        out.diagnostics
            .iter()
            .filter(|d| d.diagnostic.is_error())
            .map(|d| d.diagnostic.code)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        with("language 1;\noverride let untrusted_reads = [$untrusted_reads, \"docs/[a\"];\n"),
        ["E0112"]
    );
    assert_eq!(
        with("language 1;\noverride let untrusted_reads = [$untrusted_reads, \"docs/**\"];\n"),
        Vec::<&str>::new()
    );
}

/// Enough policy text is parsed on two threads; every file's syntax errors must still be
/// reported against that file, in the sources' order, as when each file is parsed alone.
#[test]
fn syntax_errors_stay_with_their_files_when_parsing_is_split() {
    use contextos_core::{build, BuildOptions, Layer, PolicySource};
    let filler = "allow path read \"docs/**\" because \"Reading docs is routine.\";\n".repeat(400);
    let sources: Vec<PolicySource> = (0..8)
        .map(|i| {
            // Files 1, 4 and 6 are broken, each at a line of its own.
            let broken = if [1, 4, 6].contains(&i) {
                format!("{}deny path write because;\n", "\n".repeat(i))
            } else {
                String::new()
            };
            PolicySource {
                name: format!("f{i}.policy"),
                text: format!("language 1;\n{broken}{filler}").into(),
                layer: Layer::User,
            }
        })
        .collect();
    let total: usize = sources.iter().map(|s| s.text.len()).sum();
    assert!(
        total > 128 * 1024,
        "too little text to take two threads: {total}"
    );
    let out = build(&sources, &BuildOptions::default());
    let errors: Vec<(usize, usize)> = out
        .diagnostics
        .iter()
        .filter(|d| d.diagnostic.is_error())
        .map(|d| {
            let line = out.files[d.file].line_col(d.diagnostic.span.start).line;
            (d.file, line)
        })
        .collect();
    let expected: Vec<(usize, usize)> = [1, 4, 6]
        .iter()
        .map(|&i| {
            let alone = contextos_grammar::parse(&sources[i].text);
            assert_eq!(alone.diagnostics.len(), 1, "{:?}", alone.diagnostics);
            (i, i + 2)
        })
        .collect();
    assert_eq!(errors, expected);
}
