#![allow(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]
//! The Rhai escape hatch: locked down, limited, and failing to the stricter outcome.
//! What a script sees of the request is in the case corpus (`tests/cases/script_*.policy`).
mod common;
use common::*;
use contextos_core::*;

const H: &str = "language 1;\ndefault path = allow;\ndefault exec = allow;\ndefault plugin = deny;\ndefault commit = allow;\n";

fn rule(effect: &str, body: &str) -> PolicySet {
    set(&format!(
        "{H}@id(\"s\") {effect} exec \"*\" when script {{ {body} }} because \"script\";"
    ))
}

fn assert_errors_to(effect: &str, body: &str, want: Effect, needle: &str) {
    let s = rule(effect, body);
    let d = exec(&s, &["anything"]);
    assert_eq!(d.verdict, want, "{effect} with {body}");
    assert_eq!(d.errors.len(), 1, "{:?}", d.errors);
    assert!(
        d.errors[0].message.contains(needle),
        "{:?} should mention {needle}",
        d.errors[0].message
    );
}

#[test]
fn an_infinite_loop_hits_the_operation_limit_and_fails_closed() {
    assert_errors_to("deny", "loop { } true", Effect::Deny, "operations");
    assert_errors_to(
        "ask",
        "let x = 0; while true { x += 1; } true",
        Effect::Ask,
        "operations",
    );
    // An allow rule whose script errors does not apply: the default (allow here) decides,
    // and a deny default would deny. Never does an error *grant* anything.
    let s = set(&format!(
        "{}@id(\"s\") allow exec \"*\" when script {{ loop {{ }} true }} because \"x\";",
        H.replace("default exec = allow", "default exec = deny")
    ));
    let d = exec(&s, &["x"]);
    assert_eq!(d.verdict, Effect::Deny);
    assert_eq!(d.errors[0].resolved_as, "not applied");
}

#[test]
fn deep_recursion_hits_the_call_limit() {
    assert_errors_to("deny", "fn f(n) { f(n + 1) } f(0)", Effect::Deny, "");
}

#[test]
fn huge_allocations_hit_the_size_limits() {
    assert_errors_to(
        "deny",
        "let s = \"x\"; loop { s += s; } true",
        Effect::Deny,
        "",
    );
    assert_errors_to(
        "deny",
        "let a = [1]; loop { a += a; } true",
        Effect::Deny,
        "",
    );
}

#[test]
fn a_non_boolean_result_is_an_error() {
    assert_errors_to("deny", "42", Effect::Deny, "boolean");
}

#[test]
fn no_io_no_modules_no_print_no_eval() {
    for body in [
        "import \"x\" as y; true",
        "eval(\"true\")",
        "print(\"x\"); true",
    ] {
        let out = compile_user(&format!(
            "{H}deny exec \"*\" when script {{ {body} }} because \"x\";"
        ));
        let codes: Vec<&str> = out
            .diagnostics
            .iter()
            .filter(|d| d.diagnostic.is_error())
            .map(|d| d.diagnostic.code)
            .collect();
        assert_eq!(codes, ["E0114"], "{body} must not compile");
    }
    // No clock: the function does not exist, the call fails, the deny rule applies.
    assert_errors_to("deny", "timestamp() != 0", Effect::Deny, "timestamp");
}

#[test]
fn hostile_script_nesting_is_a_check_time_error() {
    let src = format!(
        "{H}deny exec \"*\" when script {{ {}true{} }} because \"x\";",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    let out = common::compile_user(&src);
    let codes: Vec<&str> = out
        .diagnostics
        .iter()
        .filter(|d| d.diagnostic.is_error())
        .map(|d| d.diagnostic.code)
        .collect();
    assert_eq!(codes, ["E0114"]);
}

/// A set restored from a snapshot compiles its scripts at the first evaluation; the
/// decisions are the compiler's, and the limits hold there too.
#[test]
fn a_restored_set_compiles_its_scripts_on_first_use_with_the_same_limits() {
    let s = rule("deny", "program == \"make\" && argv.len() > 2");
    let restored = PolicySet::from_snapshot(&s.to_snapshot().unwrap()).unwrap();
    for argv in [&["make", "a", "b"][..], &["make"], &["cargo", "a", "b"]] {
        assert_eq!(
            exec(&restored, argv).verdict,
            exec(&s, argv).verdict,
            "{argv:?}"
        );
    }
    assert_eq!(exec(&restored, &["make", "a", "b"]).verdict, Effect::Deny);
    let looping = rule("deny", "loop { } true");
    let restored = PolicySet::from_snapshot(&looping.to_snapshot().unwrap()).unwrap();
    let d = exec(&restored, &["anything"]);
    assert_eq!(d.verdict, Effect::Deny);
    assert!(d.errors[0].message.contains("operations"), "{:?}", d.errors);
}

/// A deferred script that does not compile is an error at every evaluation, never a
/// condition that silently holds or fails.
#[test]
fn a_deferred_script_that_does_not_compile_errors_at_every_use() {
    let host = script::ScriptHost::deferred(vec![
        (Domain::Exec, "program == \"make\"".into()),
        (Domain::Exec, "this is ( not rhai".into()),
    ]);
    let req = Request::exec(["make"]);
    for i in [0, 1, 0] {
        let e = host.eval(i, &req).unwrap_err();
        assert!(e.contains("does not compile"), "{e}");
    }
    let host = script::ScriptHost::deferred(vec![(Domain::Exec, "program == \"make\"".into())]);
    assert_eq!(host.eval(0, &req), Ok(true));
    assert!(host.eval(1, &req).is_err());
}
