#![allow(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]
//! The indexed evaluator agrees with a naive evaluate-every-rule evaluator, and nothing
//! in the checker or evaluator panics on arbitrary input.
#![expect(
    clippy::disallowed_methods,
    reason = "the test reads its cases from the book and the stdlib; the purity boundary is for the library"
)]
mod common;
use contextos_core::eval::decide_naive;
use contextos_core::*;
use proptest::prelude::*;

const SEGS: &[&str] = &[
    "src",
    "lib",
    "a",
    "b",
    ".env",
    "x.rs",
    "y.pem",
    "docs",
    "Cargo.lock",
];
const WORDS: &[&str] = &[
    "git", "push", "--force", "cargo", "test", "rm", "-rf", "/", "origin", "x",
];

fn glob_seg() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => proptest::sample::select(SEGS).prop_map(String::from),
        1 => Just("*".to_string()),
        1 => Just("**".to_string()),
        1 => Just("*.rs".to_string()),
        1 => Just("{a,b}".to_string()),
    ]
}

fn path_pattern() -> impl Strategy<Value = String> {
    proptest::collection::vec(glob_seg(), 1..4).prop_map(|v| v.join("/"))
}

fn exec_pattern() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec(
            prop_oneof![4 => proptest::sample::select(WORDS).prop_map(String::from), 1 => Just("-*".to_string()), 1 => Just("g*".to_string())],
            0..3,
        ),
        any::<bool>(),
    )
        .prop_map(|(mut w, rest)| {
            if rest || w.is_empty() {
                w.push("*".into());
            }
            w.join(" ")
        })
}

fn effect() -> impl Strategy<Value = &'static str> {
    proptest::sample::select(&["allow", "ask", "deny"][..])
}

fn path_cond() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just(" when role != \"maintainer\"".to_string()),
        Just(" when role == \"reviewer\"".to_string()),
        Just(" unless path matches \"**/*.rs\"".to_string()),
        Just(" when path.ext == \"pem\" or path.name.starts_with(\"C\")".to_string()),
        Just(" when script { path.len() > 5 }".to_string()),
    ]
}

fn exec_cond() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just(" when exec.args contains \"--force\"".to_string()),
        Just(" unless exec.argv.len() > 3".to_string()),
        Just(
            " when exec.program in [\"git\", \"rm\"] and not (role == \"maintainer\")".to_string()
        ),
        Just(" when script { argv.contains(\"-rf\") }".to_string()),
    ]
}

fn policy() -> impl Strategy<Value = String> {
    let path_rule = (
        effect(),
        proptest::sample::subsequence(vec!["read", "write", "delete"], 0..=3),
        proptest::collection::vec(path_pattern(), 0..3),
        path_cond(),
    )
        .prop_map(|(e, ops, pats, cond)| {
            let pats: Vec<String> = pats.iter().map(|p| format!("\"{p}\"")).collect();
            format!(
                "{e} path {} {}{cond} because \"r\";",
                ops.join(", "),
                pats.join(", ")
            )
        });
    let exec_rule = (
        effect(),
        proptest::collection::vec(exec_pattern(), 0..3),
        exec_cond(),
    )
        .prop_map(|(e, pats, cond)| {
            let pats: Vec<String> = pats.iter().map(|p| format!("\"{p}\"")).collect();
            format!("{e} exec {}{cond} because \"r\";", pats.join(", "))
        });
    let plugin_rule = (
        effect(),
        proptest::collection::vec(path_pattern(), 0..3),
        proptest::sample::select(
            &[
                "",
                " when plugin.signed_by(\"acme\")",
                " when plugin.version in [\"latest\", \"*\"]",
                " unless plugin.digest.starts_with(\"sha256:\")",
            ][..],
        ),
    )
        .prop_map(|(e, pats, cond)| {
            let pats: Vec<String> = pats.iter().map(|p| format!("\"{p}\"")).collect();
            format!("{e} plugin {}{cond} because \"r\";", pats.join(", "))
        });
    let commit_rule = (
        effect(),
        proptest::collection::vec(path_pattern(), 0..3),
        proptest::sample::select(
            &[
                "",
                " when commit.findings contains \"aws-key\"",
                " when commit.files.len() > 2",
                " unless commit.message.starts_with(\"wip\")",
            ][..],
        ),
    )
        .prop_map(|(e, pats, cond)| {
            let pats: Vec<String> = pats.iter().map(|p| format!("\"{p}\"")).collect();
            format!("{e} commit {}{cond} because \"r\";", pats.join(", "))
        });
    let rule = prop_oneof![3 => path_rule, 3 => exec_rule, 1 => plugin_rule, 1 => commit_rule];
    (proptest::collection::vec((rule, any::<bool>()), 0..24), effect(), effect()).prop_map(|(rules, dp, de)| {
        let mut src = format!("language 1;\ndefault path = {dp};\ndefault exec = {de};\ndefault plugin = deny;\ndefault commit = allow;\n");
        for (i, (r, in_role)) in rules.iter().enumerate() {
            if *in_role {
                src.push_str(&format!("role reviewer {{ @id(\"r{i}\") {r} }}\n"));
            } else {
                src.push_str(&format!("@id(\"r{i}\") {r}\n"));
            }
        }
        src
    })
}

fn request() -> impl Strategy<Value = Request> {
    let role = proptest::option::of(
        proptest::sample::select(&["maintainer", "reviewer"][..]).prop_map(String::from),
    );
    let path = (
        proptest::sample::select(&[PathOp::Read, PathOp::Write, PathOp::Delete][..]),
        proptest::collection::vec(proptest::sample::select(SEGS), 1..4),
    )
        .prop_map(|(op, segs)| Request::path(op, segs.join("/")));
    let exec =
        proptest::collection::vec(proptest::sample::select(WORDS), 1..5).prop_map(Request::exec);
    let seg_path = || {
        proptest::collection::vec(proptest::sample::select(SEGS), 1..4).prop_map(|s| s.join("/"))
    };
    let plugin = (
        seg_path(),
        proptest::sample::select(&["=1.0.0", "latest", "*"][..]),
        proptest::option::of(proptest::sample::select(&["acme", "mallory"][..])),
        proptest::sample::select(&["", "sha256:ab"][..]),
    )
        .prop_map(|(name, version, signer, digest)| {
            Request::new(RequestKind::Plugin(PluginRequest {
                name,
                source: String::new(),
                version: version.into(),
                digest: digest.into(),
                signer: signer.map(String::from),
                findings: Vec::new(),
            }))
        });
    let commit = (
        proptest::collection::vec(seg_path(), 0..4),
        proptest::collection::vec(
            proptest::sample::select(&["aws-key", "stub"][..]).prop_map(String::from),
            0..2,
        ),
        proptest::sample::select(&["", "wip: x", "feat"][..]),
    )
        .prop_map(|(files, findings, message)| {
            Request::new(RequestKind::Commit(CommitRequest {
                files,
                findings,
                message: message.into(),
                ..CommitRequest::default()
            }))
        });
    (
        prop_oneof![3 => path, 3 => exec, 1 => plugin, 1 => commit],
        role,
    )
        .prop_map(|(r, role)| r.with_role(role))
}

fn summary(d: &Decision) -> (Effect, Vec<String>, Vec<String>, usize) {
    let mut by: Vec<String> = d.decided_by.iter().map(|h| h.id.clone()).collect();
    let mut over: Vec<String> = d.overruled.iter().map(|h| h.id.clone()).collect();
    by.sort();
    over.sort();
    (d.verdict, by, over, d.errors.len())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn indexed_and_naive_evaluators_agree(src in policy(), reqs in proptest::collection::vec(request(), 1..12)) {
        let out = common::compile_user(&src);
        let errs: Vec<String> = out.diagnostics.iter().filter(|d| d.diagnostic.is_error()).map(|d| out.render(d)).collect();
        prop_assert!(errs.is_empty(), "generated policy must compile:\n{}\n{}", src, errs.join("\n"));
        let Some(set) = out.policy else { return Err(TestCaseError::fail("no policy")) };
        for r in &reqs {
            let fast = set.decide(r, EvalOptions::default());
            let slow = decide_naive(&set, r);
            prop_assert_eq!(summary(&fast), summary(&slow), "request {:?}\npolicy:\n{}", r, src);
        }
    }

    /// The policy cache's path: a snapshot reloaded with lazily built glob sets decides
    /// exactly like the eagerly compiled set it was taken from.
    #[test]
    fn snapshot_reload_decides_like_the_compiled_set(src in policy(), reqs in proptest::collection::vec(request(), 1..12)) {
        let set = common::set(&src);
        let bytes = set.to_snapshot().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let restored = PolicySet::from_snapshot(&bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
        for r in &reqs {
            let a = set.decide(r, EvalOptions { explain: true });
            let b = restored.decide(r, EvalOptions { explain: true });
            prop_assert_eq!(summary(&a), summary(&b), "request {:?}\npolicy:\n{}", r, src);
            prop_assert_eq!(&a.obligations, &b.obligations);
            prop_assert_eq!(a.why_not.len(), b.why_not.len());
        }
    }

    #[test]
    fn compiling_arbitrary_text_never_panics(src in "\\PC{0,300}") {
        let _ = common::compile_user(&src);
    }

    #[test]
    fn compiling_policy_shaped_noise_never_panics(
        parts in proptest::collection::vec(proptest::sample::select(&[
            "language 1;", "deny", "allow", "ask", "path", "exec", "write", "\"a/**\"", ",", ";", "when", "unless",
            "(", ")", "[", "]", "{", "}", "role", "test", "guide", "script", "=>", "$x", "let x =", "@id(\"a\")",
            "and", "or", "not", "==", "matches", "\"\"\"", "//", "\n", "because", "with sandbox", "exec.argv", ".len()",
        ][..]), 0..60)
    ) {
        let _ = common::compile_user(&parts.join(" "));
    }

    #[test]
    fn deciding_arbitrary_requests_never_panics(path in "\\PC{0,80}", argv in proptest::collection::vec("\\PC{0,12}", 0..6), line in "\\PC{0,80}") {
        let set = stdlib();
        for op in [PathOp::Read, PathOp::Write, PathOp::Delete] {
            let _ = set.decide(&Request::path(op, path.clone()), EvalOptions { explain: true });
        }
        let _ = set.decide(&Request::exec(argv.clone()), EvalOptions { explain: true });
        let d = set.decide_shell(&line, None, ShellOptions::default());
        prop_assert!(d.verdict != Effect::Allow || d.rejection.is_none());
    }
}

fn stdlib() -> PolicySet {
    let sources: Vec<PolicySource> = ["defaults", "exec-baseline", "self-protection"]
        .iter()
        .map(|n| {
            let path = format!(
                "{}/../stdlib-policies/policies/{n}.policy",
                env!("CARGO_MANIFEST_DIR")
            );
            PolicySource {
                name: n.to_string(),
                text: std::fs::read_to_string(&path).unwrap_or_default().into(),
                layer: Layer::Stdlib,
            }
        })
        .collect();
    build(&sources, &BuildOptions::default())
        .policy
        .unwrap_or_else(|| panic!("stdlib must compile"))
}
