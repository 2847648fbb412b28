#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]
//! DESIGN §3 semantics, rule by rule.
mod common;
use common::*;
use contextos_core::*;

const HEADER: &str = "language 1;\ndefault path = allow;\ndefault exec = ask;\ndefault plugin = deny;\ndefault commit = allow;\n";

fn with_header(body: &str) -> String {
    format!("{HEADER}{body}")
}

#[test]
fn deny_beats_ask_beats_allow_in_any_order() {
    let rules = [
        "@id(\"a\") allow path write \"src/**\" because \"a\";",
        "@id(\"k\") ask path write \"src/**\" because \"k\";",
        "@id(\"d\") deny path write \"src/secret/**\" because \"d\";",
    ];
    // All 6 orders give the same verdicts.
    let orders = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    for order in orders {
        let body: Vec<&str> = order.iter().map(|&i| rules[i]).collect();
        let s = set(&with_header(&body.join("\n")));
        let d = path(&s, PathOp::Write, "src/secret/key", None);
        assert_eq!(d.verdict, Effect::Deny, "order {order:?}");
        assert_eq!(d.rule_ids(), ["d"]);
        let mut over: Vec<&str> = d.overruled.iter().map(|h| h.id.as_str()).collect();
        over.sort();
        assert_eq!(over, ["a", "k"]);
        let d = path(&s, PathOp::Write, "src/lib.rs", None);
        assert_eq!(d.verdict, Effect::Ask, "order {order:?}");
        assert_eq!(d.rule_ids(), ["k"]);
    }
}

#[test]
fn defaults_apply_per_domain_when_nothing_matches() {
    let s = set(&with_header(
        "@id(\"x\") deny path write \"x\" because \"x\";",
    ));
    let d = path(&s, PathOp::Write, "y", None);
    assert!(d.default_applied);
    assert_eq!(d.verdict, Effect::Allow);
    assert!(d.decided_by.is_empty());
    assert_eq!(exec(&s, &["make"]).verdict, Effect::Ask);
    let p = s.decide(
        &Request::new(RequestKind::Plugin(PluginRequest {
            name: "p".into(),
            ..Default::default()
        })),
        EvalOptions::default(),
    );
    assert_eq!(p.verdict, Effect::Deny);
}

#[test]
fn operations_scope_path_rules() {
    let s = set(&with_header(
        "@id(\"w\") deny path write, delete \"locked/**\" because \"w\";",
    ));
    assert_eq!(
        path(&s, PathOp::Write, "locked/a", None).verdict,
        Effect::Deny
    );
    assert_eq!(
        path(&s, PathOp::Delete, "locked/a", None).verdict,
        Effect::Deny
    );
    assert_eq!(
        path(&s, PathOp::Read, "locked/a", None).verdict,
        Effect::Allow
    );
}

#[test]
fn globs_are_segment_aware_and_case_sensitive() {
    let s = set(&with_header(
        "@id(\"g\") deny path write \"src/*.rs\", \"**/.env\" because \"g\";",
    ));
    assert_eq!(
        path(&s, PathOp::Write, "src/a.rs", None).verdict,
        Effect::Deny
    );
    assert_eq!(
        path(&s, PathOp::Write, "src/x/a.rs", None).verdict,
        Effect::Allow
    );
    assert_eq!(
        path(&s, PathOp::Write, "SRC/a.rs", None).verdict,
        Effect::Allow
    );
    assert_eq!(path(&s, PathOp::Write, ".env", None).verdict, Effect::Deny);
    assert_eq!(
        path(&s, PathOp::Write, "deep/er/.env", None).verdict,
        Effect::Deny
    );
    assert_eq!(
        path(&s, PathOp::Write, "deep/.envrc", None).verdict,
        Effect::Allow
    );
}

#[test]
fn paths_are_canonicalised_before_rules_see_them() {
    let s = set(&with_header("@id(\"g\") deny path write \"src/*.rs\" because \"g\";\n@id(\"all\") allow path write \"**\" because \"all\";"));
    // `./src//a.rs` is `src/a.rs`; the deny rule sees the canonical form.
    let d = path(&s, PathOp::Write, "./src//a.rs", None);
    assert_eq!(d.verdict, Effect::Deny);
    assert_eq!(
        d.request.kind,
        RequestKind::Path(PathRequest {
            op: PathOp::Write,
            path: "src/a.rs".into()
        })
    );
    for (p, code) in [
        ("/etc/passwd", "path.absolute"),
        ("a/../../b", "path.traversal"),
        ("a\0b", "path.nul"),
        ("C:/x", "path.drive"),
    ] {
        let d = path(&s, PathOp::Read, p, None);
        assert_eq!(d.verdict, Effect::Deny, "{p}");
        assert_eq!(
            d.rejection.as_ref().map(|r| r.code.as_str()),
            Some(code),
            "{p}"
        );
        assert!(d.decided_by.is_empty(), "no rule saw {p}");
    }
}

#[test]
fn exec_patterns_match_argv_prefixes_on_word_boundaries() {
    let s = set(&with_header(
        "@id(\"fp\") deny exec \"git push --force *\" because \"f\";\n@id(\"ct\") allow exec \"cargo test *\" because \"t\";\n@id(\"exact\") allow exec \"make\" because \"m\";",
    ));
    assert_eq!(
        exec(&s, &["git", "push", "--force", "origin"]).verdict,
        Effect::Deny
    );
    assert_eq!(
        exec(&s, &["git", "push", "--force"]).verdict,
        Effect::Deny,
        "trailing * matches zero words"
    );
    assert_eq!(exec(&s, &["git", "push", "--forcex"]).verdict, Effect::Ask);
    assert_eq!(exec(&s, &["git", "pushx", "--force"]).verdict, Effect::Ask);
    assert_eq!(
        exec(&s, &["/usr/bin/git", "push", "--force"]).verdict,
        Effect::Deny,
        "argv[0] by basename"
    );
    assert_eq!(
        exec(&s, &["cargo", "test", "-p", "core"]).verdict,
        Effect::Allow
    );
    assert_eq!(exec(&s, &["make"]).verdict, Effect::Allow);
    assert_eq!(
        exec(&s, &["make", "all"]).verdict,
        Effect::Ask,
        "no trailing * means exact length"
    );
}

#[test]
fn exec_word_globs() {
    let s = set(&with_header(
        "@id(\"py\") deny exec \"python* -c *\" because \"p\";",
    ));
    assert_eq!(exec(&s, &["python3.12", "-c", "x"]).verdict, Effect::Deny);
    assert_eq!(exec(&s, &["python3", "x.py"]).verdict, Effect::Ask);
}

#[test]
fn roles_apply_only_to_requests_carrying_them() {
    let s = set(&with_header(
        "role reviewer {\n  @id(\"rv\") deny path write \"**\" because \"Reviewers never edit.\";\n}\n@id(\"lock\") ask path write \"Cargo.lock\" when role != \"maintainer\" because \"review\";",
    ));
    assert_eq!(
        path(&s, PathOp::Write, "a.rs", Some("reviewer")).verdict,
        Effect::Deny
    );
    let d = path(&s, PathOp::Write, "a.rs", None);
    assert_eq!(d.verdict, Effect::Allow);
    assert!(d
        .why_not
        .iter()
        .any(|w| w.rule.id == "rv" && w.clause.contains("role")));
    assert_eq!(
        path(&s, PathOp::Write, "Cargo.lock", None).verdict,
        Effect::Ask
    );
    assert_eq!(
        path(&s, PathOp::Write, "Cargo.lock", Some("maintainer")).verdict,
        Effect::Allow
    );
}

#[test]
fn why_not_names_the_failing_clause() {
    let s = set(&with_header(
        "@id(\"env\") deny path write \"**/.env*\"\n  unless path matches \"**/.env.example\"\n  because \"secrets\";",
    ));
    let d = path(&s, PathOp::Write, "app/.env.example", None);
    assert_eq!(d.verdict, Effect::Allow);
    assert_eq!(d.why_not.len(), 1);
    let w = &d.why_not[0];
    assert_eq!(w.rule.id, "env");
    assert_eq!(w.clause, "unless path matches \"**/.env.example\" held");
    assert_eq!((w.origin.line, w.origin.col), (7, 10));
    // Not collected unless asked.
    let quiet = s.decide(
        &Request::path(PathOp::Write, "app/.env.example"),
        EvalOptions::default(),
    );
    assert!(quiet.why_not.is_empty());
}

#[test]
fn conditions_cover_every_operator() {
    let s = set(&with_header(
        r#"
@id("len") deny exec "*" when exec.argv.len() > 5 because "long";
@id("in") ask exec "*" when exec.program in ["npm", "pnpm"] because "js";
@id("contains") deny exec "git *" when exec.args contains "--no-verify" because "nv";
@id("starts") ask exec "*" when exec.line.starts_with("docker") && !(exec.args contains "ps") because "d";
@id("substr") deny exec "*" when exec.line contains "rm -rf" || exec.line.ends_with("--yes-really") because "s";
@id("eqint") allow exec "echo *" when exec.args.len() == 1 and exec.program == "echo" because "e";
"#,
    ));
    assert_eq!(
        exec(&s, &["a", "1", "2", "3", "4", "5"]).rule_ids(),
        ["len"]
    );
    assert_eq!(exec(&s, &["npm", "i"]).rule_ids(), ["in"]);
    assert_eq!(
        exec(&s, &["git", "commit", "--no-verify"]).rule_ids(),
        ["contains"]
    );
    assert_eq!(exec(&s, &["docker", "run"]).rule_ids(), ["starts"]);
    assert_eq!(exec(&s, &["docker", "ps"]).verdict, Effect::Ask, "default");
    assert!(exec(&s, &["docker", "ps"]).decided_by.is_empty());
    assert_eq!(exec(&s, &["x", "--yes-really"]).rule_ids(), ["substr"]);
    assert_eq!(exec(&s, &["echo", "hi"]).rule_ids(), ["eqint"]);
    assert_eq!(exec(&s, &["echo", "hi", "there"]).verdict, Effect::Ask);
}

#[test]
fn obligations_come_from_deciding_allow_rules() {
    let s = set(&with_header(
        "@id(\"t\") allow exec \"cargo test *\" with sandbox { network: none, memory: \"2GiB\", timeout: \"10m\" } because \"sandboxed\";",
    ));
    let d = exec(&s, &["cargo", "test"]);
    assert_eq!(d.verdict, Effect::Allow);
    assert_eq!(d.obligations.len(), 1);
    let o = &d.obligations[0];
    assert_eq!(o.name, "sandbox");
    assert_eq!(
        o.entries,
        vec![
            ("network".to_string(), serde_json::json!("none")),
            ("memory".to_string(), serde_json::json!("2GiB")),
            ("timeout".to_string(), serde_json::json!("10m")),
        ]
    );
}

#[test]
fn lets_splice_and_user_lets_override_stdlib_lets() {
    let stdlib = "language 1;\ndefault path = allow;\ndefault exec = ask;\ndefault plugin = deny;\ndefault commit = allow;\nlet protected = [\"a/**\"];\n@id(\"p\") deny path write $protected because \"p\";";
    let user = "language 1;\nlet protected = [\"b/**\", $extra];\nlet extra = \"c/**\";";
    let out = compile(
        &[
            PolicySource {
                name: "std.policy".into(),
                text: stdlib.into(),
                layer: Layer::Stdlib,
            },
            PolicySource {
                name: "user.policy".into(),
                text: user.into(),
                layer: Layer::User,
            },
        ],
        &CompileOptions::default(),
    );
    let s = out
        .policy
        .unwrap_or_else(|| panic!("{:?}", out.diagnostics));
    assert_eq!(path(&s, PathOp::Write, "a/x", None).verdict, Effect::Allow);
    assert_eq!(path(&s, PathOp::Write, "b/x", None).verdict, Effect::Deny);
    assert_eq!(path(&s, PathOp::Write, "c/x", None).verdict, Effect::Deny);
}

#[test]
fn disabled_rules_are_left_out() {
    let src = with_header("@id(\"x\") deny path write \"x\" because \"x\";");
    let out = compile(
        &[PolicySource {
            name: "m.policy".into(),
            text: src,
            layer: Layer::User,
        }],
        &CompileOptions {
            disabled_rules: vec!["x".into()],
            ..Default::default()
        },
    );
    let s = out
        .policy
        .unwrap_or_else(|| panic!("{:?}", out.diagnostics));
    assert_eq!(path(&s, PathOp::Write, "x", None).verdict, Effect::Allow);
}

#[test]
fn rule_ids_default_to_file_and_line() {
    let s = set(&with_header("deny path write \"x\" because \"x\";"));
    assert_eq!(
        path(&s, PathOp::Write, "x", None).rule_ids(),
        ["main.policy:6"]
    );
}

#[test]
fn plugin_and_commit_domains() {
    let s = set(&with_header(
        r#"
@id("acme") allow plugin "github.com/acme/*" when plugin.signed_by("acme-release") because "signed";
@id("floating") deny plugin "**" when plugin.version in ["latest", "*"] because "pin it";
@id("no-env") deny commit "**/.env" because "env";
@id("secret") deny commit when commit.findings contains "aws-key" because "leak";
"#,
    ));
    let plugin = |name: &str, version: &str, signer: Option<&str>| {
        s.decide(
            &Request::new(RequestKind::Plugin(PluginRequest {
                name: name.into(),
                version: version.into(),
                signer: signer.map(String::from),
                ..Default::default()
            })),
            EvalOptions::default(),
        )
        .verdict
    };
    assert_eq!(
        plugin("github.com/acme/pack", "=1.0.0", Some("acme-release")),
        Effect::Allow
    );
    assert_eq!(
        plugin("github.com/acme/pack", "=1.0.0", Some("mallory")),
        Effect::Deny
    );
    assert_eq!(
        plugin(
            "github.com/acme/nested/pack",
            "=1.0.0",
            Some("acme-release")
        ),
        Effect::Deny,
        "* stays in a segment"
    );
    assert_eq!(
        plugin("github.com/acme/pack", "latest", Some("acme-release")),
        Effect::Deny
    );
    let commit = |files: &[&str], findings: &[&str]| {
        s.decide(
            &Request::new(RequestKind::Commit(CommitRequest {
                files: files.iter().map(|f| f.to_string()).collect(),
                findings: findings.iter().map(|f| f.to_string()).collect(),
                message: String::new(),
                ..CommitRequest::default()
            })),
            EvalOptions::default(),
        )
    };
    assert_eq!(commit(&["src/a.rs"], &[]).verdict, Effect::Allow);
    assert_eq!(
        commit(&["src/a.rs", "app/.env"], &[]).rule_ids(),
        ["no-env"]
    );
    assert_eq!(commit(&["src/a.rs"], &["aws-key"]).rule_ids(), ["secret"]);
    assert_eq!(
        commit(&["../x"], &[]).rejection.map(|r| r.code),
        Some("path.traversal".into())
    );
}

#[test]
fn an_ask_keeps_the_sandbox_obligation_of_a_matching_allow_rule() {
    let s = set(&with_header(
        "@id(\"t\") allow exec \"cargo *\" with sandbox { network: none } because \"sandboxed\";\n@id(\"k\") ask exec \"cargo publish *\" because \"publishing needs a human\";",
    ));
    let d = exec(&s, &["cargo", "publish"]);
    assert_eq!(d.verdict, Effect::Ask);
    assert_eq!(d.rule_ids(), ["k"]);
    assert_eq!(
        d.obligations.len(),
        1,
        "approving the ask must not drop the sandbox"
    );
    let s = set(&with_header(
        "@id(\"t\") allow exec \"cargo *\" with sandbox { network: none } because \"s\";\n@id(\"d\") deny exec \"cargo publish *\" because \"no\";",
    ));
    assert!(
        exec(&s, &["cargo", "publish"]).obligations.is_empty(),
        "a deny carries no obligations"
    );
}

/// A plugin pack only adds rules and guides: it cannot loosen what admitted it.
#[test]
fn plugin_packs_cannot_change_defaults_lets_or_plugin_verdicts() {
    let base = PolicySource {
        name: "base.policy".into(),
        text:
            "language 1;\nlet shells = [\"sh\"];\n@id(\"p\") deny plugin when not plugin.signed;\n"
                .into(),
        layer: Layer::Stdlib,
    };
    let pack = |text: &str| PolicySource {
        name: "plugin/acme/main.policy".into(),
        text: text.into(),
        layer: Layer::Plugin,
    };
    let codes = |text: &str| -> Vec<&'static str> {
        compile(&[base.clone(), pack(text)], &CompileOptions::default())
            .diagnostics
            .iter()
            .filter(|d| d.diagnostic.is_error())
            .map(|d| d.diagnostic.code)
            .collect()
    };
    assert_eq!(codes("language 1;\ndefault plugin = allow;\n"), ["E0120"]);
    assert_eq!(codes("language 1;\ndefault exec = allow;\n"), ["E0120"]);
    assert_eq!(codes("language 1;\nlet shells = [];\n"), ["E0120"]);
    assert_eq!(
        codes("language 1;\n@id(\"x\") allow plugin \"*\";\n"),
        ["E0120"]
    );
    assert_eq!(
        codes("language 1;\nrole r { @id(\"x\") allow plugin \"*\"; }\n"),
        ["E0120"]
    );
    // Adding rules of other domains, and lets of its own, is what packs are for.
    assert!(codes(
        "language 1;\nlet mine = [\"gen/**\"];\n@id(\"acme-gen\") deny path write $mine because \"generated\";\n"
    )
    .is_empty());
}

#[test]
fn guides_take_apply_with_four_values() {
    let errs = common::errors(
        "language 1;\n@apply(\"sometimes\") guide \"g\" { \"x\" }\n@apply(\"manual\") guide \"h\" { \"y\" }\n",
    );
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].0, "E0107");
    assert_eq!(errs[0].1, 2);
    let set = common::set(
        "language 1;\nguide \"a\" { \"x\" }\nguide \"b\" for \"src/**\" { \"x\" }\nrole r { guide \"c\" { \"x\" } }\n@apply(\"manual\") guide \"d\" for \"src/**\" { \"x\" }\n",
    );
    let applies: Vec<GuideApply> = set.guides.iter().map(|g| g.apply).collect();
    assert_eq!(
        applies,
        [
            GuideApply::Always,
            GuideApply::Auto,
            GuideApply::Agent,
            GuideApply::Manual
        ]
    );
}
