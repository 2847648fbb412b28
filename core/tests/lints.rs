#![allow(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]
//! The lints: each dead or suspicious construct the issue lists compiles with a warning that
//! has a stable code, a location and a fix hint; the corrected policy compiles clean.
mod common;
use common::compile_user;

const HEADER: &str = "language 1;\ndefault path = allow;\ndefault exec = ask;\ndefault plugin = deny;\ndefault commit = allow; default net = allow; default mcp = allow;\n";

/// (code, line, col, rendered) of every warning of a one-file project policy.
fn warnings(body: &str) -> Vec<(&'static str, usize, usize, String)> {
    let out = compile_user(&format!("{HEADER}{body}"));
    assert!(!out.has_errors(), "compiles");
    out.diagnostics
        .iter()
        .filter(|d| !d.diagnostic.is_error() && d.diagnostic.code != "W0201")
        .map(|d| {
            let lc = out.files[d.file].line_col(d.diagnostic.span.start);
            (d.diagnostic.code, lc.line, lc.col, out.render(d))
        })
        .collect()
}

fn one(body: &str) -> (&'static str, usize, usize, String) {
    let w = warnings(body);
    assert_eq!(w.len(), 1, "{w:#?}");
    w.into_iter().next().unwrap()
}

#[test]
fn dead_head_patterns_are_located_with_a_fix() {
    for (pat, hint) in [
        ("./src/**", "write \"src/**\""),
        ("../**", "`~/`"),
        ("src\\\\main.rs", "write \"src/main.rs\""),
        ("^secrets/.*$", "\"secrets/**\""),
        ("", "remove it"),
    ] {
        let (code, line, col, text) = one(&format!("deny path write \"{pat}\" because \"x\";\n"));
        assert_eq!((code, line, col), ("W0301", 6, 17), "{pat}: {text}");
        assert!(text.contains(hint), "{pat}: {text}");
    }
    assert!(warnings("deny path write \"src/**\", \"/etc/**\" because \"x\";\n").is_empty());
}

#[test]
fn impossible_conditions_are_reported() {
    let (code, line, _, text) =
        one("deny path write \"**\" when path.ext == \".rs\" because \"x\";\n");
    assert_eq!((code, line), ("W0302", 6));
    assert!(text.contains("write \"rs\""), "{text}");

    let (code, _, _, text) =
        one("deny path write \"**\" when path.op == \"read\" because \"x\";\n");
    assert_eq!(code, "W0302");
    assert!(text.contains("covers only write"), "{text}");

    let (code, _, _, text) = one(
        "role admin { allow path write \"ops/**\" because \"a\"; }\ndeny path write \"ops/**\" when role == \"admn\" because \"x\";\n",
    );
    assert_eq!(code, "W0302");
    assert!(text.contains("did you mean \"admin\""), "{text}");
    // A role only a test uses is known.
    assert!(warnings(
        "deny path write \"ops/**\" when role != \"ci\" because \"x\";\ntest \"t\" { path write \"ops/a\" as role \"ci\" => allow; }\n"
    )
    .iter()
    .all(|w| w.0 != "W0302"));
    assert!(warnings("deny path write \"**\" when path.ext == \"rs\" because \"x\";\n").is_empty());
}

#[test]
fn shadowed_and_always_overruled_rules_are_reported() {
    let (code, line, _, text) = one(
        "@id(\"no-src\") deny path write \"src/**\" because \"d\";\n@id(\"gen\") allow path write \"src/gen/*.rs\" because \"a\";\n",
    );
    assert_eq!((code, line), ("W0303", 7));
    assert!(text.contains("`gen` (allow) can never decide"), "{text}");
    assert!(text.contains("`no-src`"), "{text}");

    let (code, _, _, text) = one(
        "@id(\"push-needs-human\") ask exec \"git push *\" because \"h\";\nrole bot {\n    @id(\"bot-push\") allow exec \"git push origin *\" because \"b\";\n}\n",
    );
    assert_eq!(code, "W0303");
    assert!(
        text.contains("`bot-push`") && text.contains("push-needs-human"),
        "{text}"
    );

    // A covering rule with a condition may leave room: not reported.
    assert!(warnings(
        "@id(\"d\") deny path write \"src/**\" when role != \"ci\" because \"d\";\n@id(\"a\") allow path write \"src/x.rs\" because \"a\";\ntest \"t\" { path write \"src/x.rs\" as role \"ci\" => allow; }\n"
    )
    .iter()
    .all(|w| w.0 != "W0303"));
    // A narrower deny does not cover a broader allow.
    assert!(warnings(
        "@id(\"d\") deny path write \"src/x.rs\" because \"d\";\n@id(\"a\") allow path write \"src/**\" because \"a\";\n"
    )
    .is_empty());
}

#[test]
fn a_script_that_returns_no_boolean_is_reported() {
    let (code, line, _, text) =
        one("allow exec \"make *\" when script { argv.len() } because \"x\";\n");
    assert_eq!((code, line), ("W0305", 6));
    assert!(text.contains("returns i64"), "{text}");
    let (code, _, _, text) = one("deny path write \"**\" when script { \"yes\" } because \"x\";\n");
    assert_eq!(code, "W0305");
    assert!(text.contains("string"), "{text}");
    // A boolean, and a script whose type only shows on real requests, are quiet.
    assert!(
        warnings("allow exec \"make *\" when script { argv.len() < 64 } because \"x\";\n")
            .is_empty()
    );
    assert!(
        warnings("allow exec \"make *\" when script { argv[0] == \"make\" } because \"x\";\n")
            .is_empty()
    );
}

#[test]
fn a_lazy_build_leaves_out_the_head_lint_and_nothing_else() {
    let text = "language 1;\ndeny path write \"./src/**\" because \"x\";\n";
    let source = [contextos_core::build::PolicySource {
        name: "p.policy".into(),
        text: text.to_string().into(),
        layer: contextos_core::ir::Layer::User,
    }];
    let full = contextos_core::build::build(&source, &Default::default());
    let lazy = contextos_core::build::build(
        &source,
        &contextos_core::build::BuildOptions {
            lazy: true,
            ..Default::default()
        },
    );
    let codes = |o: &contextos_core::build::BuildOutput| -> Vec<&str> {
        o.diagnostics.iter().map(|d| d.diagnostic.code).collect()
    };
    let full_codes = codes(&full);
    assert!(full_codes.contains(&"W0301"), "{full_codes:?}");
    let without: Vec<&str> = full_codes.into_iter().filter(|c| *c != "W0301").collect();
    assert_eq!(codes(&lazy), without);
    let snapshot = |o: &contextos_core::build::BuildOutput| {
        o.policy.as_ref().map(|p| p.to_snapshot().expect("encodes"))
    };
    assert_eq!(snapshot(&full), snapshot(&lazy));
}
