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

/// A snapshot in "a file": reads are counted, and can be refused from some point on (as
/// the policy cache refuses a read once the file changed in place).
#[derive(Debug)]
struct Stored {
    bytes: Vec<u8>,
    reads: std::sync::atomic::AtomicUsize,
    read_bytes: std::sync::atomic::AtomicUsize,
    refuse: std::sync::atomic::AtomicBool,
}

impl Stored {
    fn new(bytes: Vec<u8>) -> std::sync::Arc<Stored> {
        std::sync::Arc::new(Stored {
            bytes,
            reads: 0.into(),
            read_bytes: 0.into(),
            refuse: false.into(),
        })
    }
}

impl ReadAt for Stored {
    fn read_at(&self, at: u64, buf: &mut [u8]) -> Result<(), String> {
        use std::sync::atomic::Ordering::SeqCst;
        if self.refuse.load(SeqCst) {
            return Err("changed".into());
        }
        self.reads.fetch_add(1, SeqCst);
        self.read_bytes.fetch_add(buf.len(), SeqCst);
        let at = usize::try_from(at).unwrap();
        buf.copy_from_slice(self.bytes.get(at..at + buf.len()).ok_or("short read")?);
        Ok(())
    }
}

#[test]
fn a_snapshot_read_in_place_decides_like_one_in_memory() {
    let set = common::set(POLICY);
    let bytes = set.to_snapshot().unwrap();
    // Behind a header of 7 bytes, as the policy cache stores it.
    let mut file = b"HEADER!".to_vec();
    file.extend_from_slice(&bytes);
    let total = file.len() as u64;
    let restored = PolicySet::from_snapshot_reader(Stored::new(file), 7, total, None).unwrap();
    for r in requests() {
        let a = set.decide(&r, EvalOptions { explain: true });
        let b = restored.decide(&r, EvalOptions { explain: true });
        assert_eq!(a, b, "request {r:?}");
    }
    assert_eq!(
        set.detectors.get().unwrap(),
        restored.detectors.get().unwrap()
    );
    // Every strict prefix is refused at load, as from memory.
    for cut in 0..bytes.len() {
        let short = Stored::new(bytes[..cut].to_vec());
        assert!(
            PolicySet::from_snapshot_reader(short, 0, cut as u64, None).is_err(),
            "prefix of {cut} bytes loaded"
        );
    }
}

#[test]
fn one_exec_decision_reads_a_fraction_of_a_large_snapshot() {
    use std::sync::atomic::Ordering::SeqCst;
    let mut src = String::from("language 1;\n");
    for i in 0..2_000 {
        src.push_str(&format!(
            "@id(\"p{i}\") deny path write \"gen{i}/**/*.rs\";\n@id(\"e{i}\") deny exec \"danger{i} *\";\n"
        ));
    }
    let bytes = common::set(&src).to_snapshot().unwrap();
    let stored = Stored::new(bytes.clone());
    let set = PolicySet::from_snapshot_reader(stored.clone(), 0, bytes.len() as u64, None).unwrap();
    let d = set.decide(&Request::exec(["danger7", "x"]), EvalOptions::default());
    assert_eq!(d.rule_ids(), vec!["e7"]);
    let read = stored.read_bytes.load(SeqCst);
    // The head, the rule table, the exec trie and one rule: not the path trie, not the
    // other rules.
    assert!(
        read < bytes.len() / 2,
        "read {read} of {} bytes for one decision",
        bytes.len()
    );
}

#[test]
fn reads_refused_after_loading_deny_never_allow() {
    use std::sync::atomic::Ordering::SeqCst;
    let src = r#"language 1;
default exec = allow;
default path = allow;
@id("no-push") deny exec "git push *";
@id("no-env") deny path write "**/.env";
"#;
    let bytes = common::set(src).to_snapshot().unwrap();
    let stored = Stored::new(bytes.clone());
    let set = PolicySet::from_snapshot_reader(stored.clone(), 0, bytes.len() as u64, None).unwrap();
    // The file "changes" after the head was read: nothing read later may be trusted.
    stored.refuse.store(true, SeqCst);
    for r in [
        Request::exec(["git", "push", "origin"]),
        Request::exec(["ls"]),
        Request::path(PathOp::Write, "a/.env"),
        Request::path(PathOp::Write, "src/lib.rs"),
    ] {
        let d = set.decide(&r, EvalOptions::default());
        assert_eq!(d.verdict, Effect::Deny, "{r:?}: {d:?}");
        assert!(
            d.rule_ids().contains(&rules::DAMAGED_RULE_ID),
            "{r:?}: {:?}",
            d.rule_ids()
        );
    }
    assert!(
        set.detectors.get().is_err(),
        "detectors must not read as none"
    );
}
