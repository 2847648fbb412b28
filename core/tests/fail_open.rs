#![allow(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]
//! Mistakes that would make a policy fail open are refused or reported by the compiler:
//! an empty pattern list, a `let` that silently replaces an earlier layer's, and an
//! `override let` that drops entries a protection rule is built from.
use contextos_core::*;

fn compile(layers: &[(Layer, &str)]) -> BuildOutput {
    let sources: Vec<PolicySource> = layers
        .iter()
        .enumerate()
        .map(|(i, (layer, text))| PolicySource {
            name: format!("f{i}.policy"),
            text: (*text).to_string().into(),
            layer: *layer,
        })
        .collect();
    build(&sources, &BuildOptions::default())
}

fn with_stdlib(user: &str) -> BuildOutput {
    let mut sources: Vec<PolicySource> = contextos_stdlib::FILES
        .iter()
        .map(|(n, t)| PolicySource {
            name: (*n).into(),
            text: (*t).into(),
            layer: Layer::Stdlib,
        })
        .collect();
    sources.push(PolicySource {
        name: "project.policy".into(),
        text: user.to_string().into(),
        layer: Layer::User,
    });
    build(&sources, &BuildOptions::default())
}

/// Codes of every diagnostic but W0204 (a missing default, expected in a one-file layer).
fn codes(out: &BuildOutput) -> Vec<&'static str> {
    out.diagnostics
        .iter()
        .map(|d| d.diagnostic.code)
        .filter(|c| *c != "W0204")
        .collect()
}

fn message(out: &BuildOutput, code: &str) -> String {
    out.diagnostics
        .iter()
        .filter(|d| d.diagnostic.code == code)
        .map(|d| out.render(d))
        .collect::<Vec<_>>()
        .join("\n")
}

const HEADER: &str = "language 1;\ndefault path = allow;\ndefault exec = ask;\ndefault plugin = deny;\ndefault commit = allow;\n";

#[test]
fn an_empty_list_in_a_head_is_an_error_not_match_everything() {
    let via_let =
        format!("{HEADER}let trusted = [];\nallow exec $trusted because \"trusted tools\";\n");
    let out = compile(&[(Layer::User, &via_let)]);
    assert!(out.policy.is_none(), "an empty $trusted must not compile");
    assert_eq!(codes(&out), vec!["E0142"]);
    assert!(
        message(&out, "E0142").contains("f0.policy:7:12"),
        "{}",
        message(&out, "E0142")
    );

    let literal = format!("{HEADER}deny path write [] because \"nothing\";\n");
    assert_eq!(codes(&compile(&[(Layer::User, &literal)])), vec!["E0142"]);

    // Two empty lists are still empty; one non-empty element is a real head.
    let two = format!("{HEADER}let a = [];\nlet b = [$a];\nallow exec $a, $b because \"x\";\n");
    assert_eq!(codes(&compile(&[(Layer::User, &two)])), vec!["E0142"]);
    let mixed = format!("{HEADER}let a = [];\nallow exec $a, \"ls\" because \"x\";\n");
    let out = compile(&[(Layer::User, &mixed)]);
    assert!(out.policy.is_some(), "{:?}", codes(&out));

    // A rule with no patterns at all matches everything on purpose.
    let none = format!("{HEADER}deny exec because \"all\";\n");
    assert!(compile(&[(Layer::User, &none)]).policy.is_some());
}

#[test]
fn a_let_that_shadows_a_stdlib_name_needs_override() {
    let out = with_stdlib("language 1;\nlet governance = [\"ops/**\"];\n");
    assert!(out.policy.is_none());
    assert_eq!(codes(&out), vec!["E0140"]);
    let m = message(&out, "E0140");
    assert!(m.contains("standard library"), "{m}");
    assert!(m.contains("override let governance"), "{m}");

    let out = with_stdlib("language 1;\nlet shells = [\"zsh\"];\n");
    assert_eq!(codes(&out), vec!["E0140"]);
}

#[test]
fn an_override_that_drops_protected_entries_warns_with_the_rules_it_weakens() {
    let out = with_stdlib("language 1;\noverride let governance = [\"ops/**\"];\n");
    let set = out.policy.as_ref().expect("an override compiles");
    assert_eq!(codes(&out), vec!["W0240"], "{}", message(&out, "W0240"));
    let m = message(&out, "W0240");
    assert!(m.contains("std-self-protection"), "{m}");
    assert!(m.contains(".contextos/**"), "{m}");
    assert!(m.contains("std-self-protection-delete"), "{m}");
    // The override is what the stdlib rule now reads.
    let d = set.decide(
        &Request::path(PathOp::Write, "ops/x"),
        EvalOptions::default(),
    );
    assert_eq!(d.verdict, Effect::Deny);
}

#[test]
fn an_override_that_only_adds_to_a_deny_list_is_quiet() {
    let stdlib = format!("{HEADER}let protected = [\"a/**\"];\n@id(\"p\") deny path write $protected because \"p\";\n@id(\"ok\") allow path read $protected because \"r\";\n");
    let user = "language 1;\noverride let protected = [\"a/**\", \"b/**\"];\n";
    let out = compile(&[(Layer::Stdlib, &stdlib), (Layer::User, user)]);
    assert!(out.policy.is_some());
    // Adding to a deny head tightens it; adding to an allow head widens that allow.
    assert_eq!(codes(&out), vec!["W0240"]);
    let m = message(&out, "W0240");
    assert!(m.contains("`ok` (allow) now also covers \"b/**\""), "{m}");
    assert!(!m.contains("`p`"), "{m}");

    let deny_only = format!("{HEADER}let protected = [\"a/**\"];\n@id(\"p\") deny path write $protected because \"p\";\n");
    let out = compile(&[(Layer::Stdlib, &deny_only), (Layer::User, user)]);
    assert!(codes(&out).is_empty(), "{:?}", codes(&out));
}

#[test]
fn an_override_reaches_rules_through_other_lets_and_conditions() {
    let stdlib = format!("{HEADER}let inner = [\"a/**\", \"k/**\"];\nlet outer = [$inner];\n@id(\"p\") deny path write $outer because \"p\";\n@id(\"c\") deny path read \"**\" when path.path matches $inner because \"c\";\n");
    let user = "language 1;\noverride let inner = [\"a/**\"];\n";
    let out = compile(&[(Layer::Stdlib, &stdlib), (Layer::User, user)]);
    let m = message(&out, "W0240");
    assert!(m.contains("`p` (deny) no longer covers \"k/**\""), "{m}");
    assert!(m.contains("`c` (deny) no longer covers \"k/**\""), "{m}");
}

#[test]
fn override_of_nothing_and_plugin_overrides_are_refused() {
    let out = compile(&[(Layer::User, "language 1;\noverride let x = [\"a\"];\n")]);
    assert_eq!(codes(&out), vec!["E0141"]);
    let stdlib = format!("{HEADER}let x = [\"a\"];\n");
    let out = compile(&[
        (Layer::Stdlib, &stdlib),
        (Layer::Plugin, "language 1;\noverride let x = [\"b\"];\n"),
    ]);
    assert_eq!(codes(&out), vec!["E0120"]);
}

#[test]
fn an_override_can_extend_the_list_it_replaces() {
    let out = with_stdlib("language 1;\noverride let governance = [$governance, \"ops/**\"];\n");
    assert!(codes(&out).is_empty(), "{:?}", codes(&out));
    let set = out.policy.unwrap();
    for p in ["ops/deploy.sh", ".contextos/policies/main.policy"] {
        let d = set.decide(&Request::path(PathOp::Write, p), EvalOptions::default());
        assert_eq!(d.verdict, Effect::Deny, "{p}");
    }
    // Outside an override, naming yourself is still a cycle.
    let out = compile(&[(Layer::User, "language 1;\nlet x = [$x];\n")]);
    assert_eq!(codes(&out), vec!["E0118"]);
}

#[test]
fn condition_lists_are_judged_by_their_polarity() {
    let stdlib = format!("{HEADER}let roots = [\"/\", \"~\"];\n@id(\"rm\") deny exec \"rm *\" when exec.args matches $roots because \"r\";\n@id(\"u\") deny exec \"cp *\" unless exec.args matches $roots because \"u\";\n");
    // Adding a root tightens `rm` (its `when` holds more often) and loosens `u`.
    let out = compile(&[
        (Layer::Stdlib, &stdlib),
        (
            Layer::User,
            "language 1;\noverride let roots = [$roots, \"/srv\"];\n",
        ),
    ]);
    let m = message(&out, "W0240");
    assert!(m.contains("a condition of `u`"), "{m}");
    assert!(!m.contains("`rm`"), "{m}");
    // Dropping one loosens `rm`.
    let out = compile(&[
        (Layer::Stdlib, &stdlib),
        (Layer::User, "language 1;\noverride let roots = [\"/\"];\n"),
    ]);
    let m = message(&out, "W0240");
    assert!(m.contains("`rm`"), "{m}");
    assert!(!m.contains("`u`"), "{m}");
}

/// A lazy build (the policy cache's) does not ask globset about the stdlib's globs. A
/// broken one there must still fail closed where it is used, and every other layer's
/// globs are checked as before.
#[test]
fn a_lazy_build_trusts_only_the_stdlib_globs_and_a_broken_one_still_denies() {
    let text = format!(
        "{HEADER}deny path write \"src/[z-a]*.rs\" because \"Generated.\";\n\
         deny path write \"cfg/**\" when path matches [\"cfg/[z-a]*\"] because \"Frozen.\";\n"
    );
    let build_as = |layer: Layer, lazy: bool| {
        let sources = [PolicySource {
            name: "f.policy".into(),
            text: text.clone().into(),
            layer,
        }];
        build(
            &sources,
            &BuildOptions {
                lazy,
                ..BuildOptions::default()
            },
        )
    };
    for (layer, lazy) in [
        (Layer::User, true),
        (Layer::User, false),
        (Layer::Stdlib, false),
    ] {
        let out = build_as(layer, lazy);
        assert!(
            codes(&out).contains(&"E0112"),
            "{layer:?} lazy={lazy}: {:?}",
            codes(&out)
        );
    }
    let trusted = build_as(Layer::Stdlib, true);
    assert!(codes(&trusted).is_empty(), "{:?}", codes(&trusted));
    let set = trusted
        .policy
        .expect("a lazy build does not check the stdlib's globs");
    for p in ["src/main.rs", "cfg/app.toml"] {
        let d = set.decide(
            &Request::path(PathOp::Write, p),
            EvalOptions { explain: true },
        );
        assert_eq!(d.verdict, Effect::Deny, "{p}: {d:?}");
    }
}
