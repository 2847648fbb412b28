#![allow(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]
//! Policy snapshots (the hook's policy cache): a faithful round trip for every construct,
//! and damaged bytes are refused, never half-loaded.
mod common;
use contextos_core::snapshot::SnapshotError;
use contextos_core::*;

const POLICY: &str = r#"language 1;
default exec = deny;
let secrets = ["**/.env", "**/*.pem"];
@id("no-secrets") @severity(error)
deny path read, write $secrets because "secrets stay out";
@id("gen") ask path write "src/gen/**" when path.ext == "rs" and not path.name.starts_with("keep");
@id("tests") allow exec "cargo test *" with sandbox { network: "none", memory: "1g" };
@id("force") deny exec "git push *" when exec.args matches ["--force", "-f"];
@id("glob-word") ask exec "py*" when exec.args.len() > 2;
@id("scripted") deny exec "make *" when script { argv.len() > 3 && program == "make" };
role reviewer {
    @id("rev-ro") deny path write "**";
    guide "Review only" { "Reviewers read and comment." }
}
guide "Style" for "src/**" { "Keep functions small." }
"#;

fn requests() -> Vec<Request> {
    vec![
        Request::path(PathOp::Read, ".env"),
        Request::path(PathOp::Write, "a/b/key.pem"),
        Request::path(PathOp::Write, "src/gen/x.rs"),
        Request::path(PathOp::Write, "src/gen/keep.rs"),
        Request::path(PathOp::Write, "src/lib.rs").with_role(Some("reviewer".into())),
        Request::exec(["cargo", "test", "--all"]),
        Request::exec(["git", "push", "-f", "origin"]),
        Request::exec(["python3", "a", "b"]),
        Request::exec(["make", "a", "b", "c"]),
        Request::exec(["make", "a"]),
        Request::exec(["ls"]),
    ]
}

#[test]
fn every_construct_survives_the_round_trip() {
    let set = common::set(POLICY);
    let restored = PolicySet::from_snapshot(&set.to_snapshot().unwrap()).unwrap();
    for r in requests() {
        let a = set.decide(&r, EvalOptions { explain: true });
        let b = restored.decide(&r, EvalOptions { explain: true });
        assert_eq!(a, b, "request {r:?}");
    }
    assert_eq!(set.defaults, restored.defaults);
    assert_eq!(set.roles, restored.roles);
    assert_eq!(set.guides.len(), restored.guides.len());
    assert!(restored.tests.is_empty(), "tests are not cached");
    // The restored set decides what the policy says, not merely what the original does.
    let d = restored.decide(
        &Request::exec(["make", "a", "b", "c"]),
        EvalOptions::default(),
    );
    assert_eq!(d.verdict, Effect::Deny);
    assert_eq!(d.rule_ids(), vec!["scripted"]);
    let d = restored.decide(&Request::exec(["cargo", "test"]), EvalOptions::default());
    assert_eq!(d.obligations[0].name, "sandbox");
}

#[test]
fn damaged_snapshots_are_refused() {
    let set = common::set(POLICY);
    let bytes = set.to_snapshot().unwrap();
    // Every strict prefix fails to decode (no partial policy set).
    for cut in 0..bytes.len() {
        assert!(
            PolicySet::from_snapshot(&bytes[..cut]).is_err(),
            "prefix of {cut} bytes loaded"
        );
    }
    // Another format version is named as such.
    let mut other = bytes.clone();
    other[0] = other[0].wrapping_add(1);
    assert!(matches!(
        PolicySet::from_snapshot(&other),
        Err(SnapshotError::Format { .. })
    ));
    // Flipping any single byte never panics, neither on load nor when requests reach the
    // damaged rule or index node (both are decoded on first use).
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 0x5a;
        if let Ok(restored) = PolicySet::from_snapshot(&b) {
            // A path, an exec and a role request reach every kind of lazily read part;
            // every third byte keeps the debug-build run short.
            if i % 3 != 0 {
                continue;
            }
            for r in [0, 4, 7].map(|k| requests().swap_remove(k)) {
                let _ = restored.decide(&r, EvalOptions::default());
            }
            let _ = restored.known_roles();
        }
    }
}

#[test]
fn an_invalid_glob_cannot_be_smuggled_in() {
    let set = common::set(r#"language 1; @id("x") ask exec "py* *";"#);
    let bytes = set.to_snapshot().unwrap();
    let needle = b"py*";
    let mut bad = bytes.clone();
    let hits: Vec<usize> = bytes
        .windows(3)
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect();
    assert!(!hits.is_empty());
    for at in hits {
        bad[at + 2] = b'[';
    }
    // Rules are decoded on first use, so the damage shows when a request reaches the
    // rule: it reads as a deny (never as a missing rule, and never as the ask it was).
    match PolicySet::from_snapshot(&bad) {
        Err(SnapshotError::Decode(_)) => {}
        Ok(restored) => {
            let d = restored.decide(&Request::exec(["python", "x"]), EvalOptions::default());
            assert_eq!(d.verdict, Effect::Deny);
            assert_eq!(d.rule_ids(), vec![contextos_core::rules::DAMAGED_RULE_ID]);
        }
        Err(e) => panic!("unexpected error: {e}"),
    }
}
