#![allow(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]
//! DESIGN §3 semantics, rule by rule: what the case corpus (`tests/cases/`, run by
//! `cases.rs`) cannot say — overruled rules, why-not entries, obligations, rejection codes,
//! compile options and diagnostics. The policies of the corpus are reused here.
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
fn paths_are_canonicalised_before_rules_see_them() {
    // Verdicts: cases/canonical_paths.policy. Here: the canonical form and the codes.
    let s = set(include_str!("cases/canonical_paths.policy"));
    let d = path(&s, PathOp::Write, "./src//a.rs", None);
    assert_eq!(
        d.request.kind,
        RequestKind::Path(PathRequest {
            op: PathOp::Write,
            path: "src/a.rs".into()
        })
    );
    for (p, code) in [
        ("/etc/passwd", "path.outside-project"),
        ("a/../../b", "path.traversal"),
        ("a\0b", "path.nul"),
        ("C:/x", "path.drive"),
        ("//server/share/x", "path.absolute"),
    ] {
        let d = path(&s, PathOp::Write, p, None);
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
fn a_role_rule_explains_why_it_did_not_apply() {
    // Verdicts: cases/roles.policy.
    let s = set(include_str!("cases/roles.policy"));
    let d = path(&s, PathOp::Write, "a.rs", None);
    assert_eq!(d.verdict, Effect::Allow);
    assert!(d
        .why_not
        .iter()
        .any(|w| w.rule.id == "rv" && w.clause.contains("role")));
}

#[test]
fn why_not_names_the_failing_clause() {
    let s = set(include_str!("cases/why_not.policy"));
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
fn obligations_come_from_deciding_allow_rules() {
    let s = set(include_str!("cases/sandbox_obligation.policy"));
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
fn disabled_rules_are_left_out() {
    let src = with_header("@id(\"x\") deny path write \"x\" because \"x\";");
    let out = build(
        &[PolicySource {
            name: "m.policy".into(),
            text: src.into(),
            layer: Layer::User,
        }],
        &BuildOptions {
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
fn a_commit_with_a_traversal_is_rejected() {
    // Verdicts: cases/plugin_and_commit.policy.
    let s = set(include_str!("cases/plugin_and_commit.policy"));
    let d = s.decide(
        &Request::new(RequestKind::Commit(CommitRequest {
            files: vec!["../x".into()],
            ..CommitRequest::default()
        })),
        EvalOptions::default(),
    );
    assert_eq!(d.verdict, Effect::Deny);
    assert_eq!(d.rejection.map(|r| r.code), Some("path.traversal".into()));
}

#[test]
fn an_ask_keeps_the_sandbox_obligation_of_a_matching_allow_rule() {
    // Verdicts: cases/ask_keeps_sandbox.policy and cases/deny_drops_sandbox.policy.
    let s = set(include_str!("cases/ask_keeps_sandbox.policy"));
    let d = exec(&s, &["cargo", "publish"]);
    assert_eq!(d.verdict, Effect::Ask);
    assert_eq!(d.rule_ids(), ["k"]);
    assert_eq!(
        d.obligations.len(),
        1,
        "approving the ask must not drop the sandbox"
    );
    let s = set(include_str!("cases/deny_drops_sandbox.policy"));
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
        text: text.to_string().into(),
        layer: Layer::Plugin,
    };
    let codes = |text: &str| -> Vec<&'static str> {
        build(&[base.clone(), pack(text)], &BuildOptions::default())
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

#[test]
fn argv_is_decided_as_words_with_wrappers_unwrapped() {
    let set = set(&with_header(
        "@id(\"no-rm\") deny exec \"rm *\" because \"r\";\n\
         @id(\"echo\") allow exec \"echo *\" because \"e\";\n\
         @id(\"hooks\") deny path write \".git/hooks/**\" because \"h\";\n",
    ));
    let opts = ShellOptions::default();
    let words = |w: &[&str]| w.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
    // A wrapped rm is found and denied, as in a line.
    let d = set.decide_argv(&words(&["sudo", "rm", "-rf", "/"]), None, opts);
    assert_eq!(d.verdict, Effect::Deny);
    assert_eq!(d.line, "sudo rm -rf /");
    // No shell runs between argv and execve: `$(…)` and `>` are text, so echo is all
    // that runs — while the same words as a line would run rm and write a hook.
    let literal = words(&["echo", "$(rm -rf ~)", ">", ".git/hooks/pre-commit"]);
    let d = set.decide_argv(&literal, None, opts);
    assert_eq!(d.verdict, Effect::Allow, "{d:?}");
    let as_line = set.decide_shell("echo $(rm -rf ~) > .git/hooks/pre-commit", None, opts);
    assert_eq!(as_line.verdict, Effect::Deny);
    // sh -c runs its argument as a line: analysed as one.
    let d = set.decide_argv(&words(&["sh", "-c", "echo hi; rm x"]), None, opts);
    assert_eq!(d.verdict, Effect::Deny);
}

#[test]
fn a_contained_base_judges_only_the_files_that_land_in_the_project() {
    let set = set(&with_header(
        "@id(\"sh\") allow exec \"sh *\" because \"s\";\n\
         @id(\"echo\") allow exec \"echo *\" because \"e\";\n\
         @id(\"cat\") allow exec \"cat *\" because \"c\";\n\
         @id(\"outside\") deny path write \"/**\" because \"host paths\";\n\
         @id(\"hooks\") deny path write \".git/hooks/**\" because \"h\";\n\
         @id(\"src\") allow path write \"src/**\" because \"w\";\n",
    ));
    let host = ShellBase {
        roots: vec!["/workspace".into()],
        cwd: String::new(),
        contained: false,
        home: None,
    };
    let sandbox = ShellBase {
        contained: true,
        ..host.clone()
    };
    let line = "echo hi > /tmp/x && cat /tmp/x";
    let on = |base: &ShellBase, line: &str| {
        set.decide_shell(
            line,
            None,
            ShellOptions {
                base: Some(base),
                ..ShellOptions::default()
            },
        )
        .verdict
    };
    // On the host `/tmp/x` is a host file; in the sandbox it is the container's own.
    assert_eq!(on(&host, line), Effect::Deny);
    assert_eq!(on(&sandbox, line), Effect::Allow);
    assert_eq!(on(&sandbox, "echo hi > ~/.bashrc"), Effect::Allow);
    // A file that lands in the project is still judged, by either spelling.
    assert_eq!(
        on(&sandbox, "echo x > /workspace/.git/hooks/pre-commit"),
        Effect::Deny
    );
    assert_eq!(on(&sandbox, "echo x > .git/hooks/pre-commit"), Effect::Deny);
    assert_eq!(on(&sandbox, "echo x > /workspace/src/a.rs"), Effect::Allow);
    // A target known only at run time is left to the changeset check in the sandbox,
    // and stays unknown (ask) on the host.
    assert_eq!(on(&sandbox, "echo x > \"$OUT\"/a"), Effect::Allow);
    assert_eq!(on(&host, "echo x > \"$OUT\"/a"), Effect::Ask);
}
