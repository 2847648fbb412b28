//! Unified diffs given to `contextos apply`, against a real project directory: any text
//! is turned into changes or rejected without a panic; reading the diff writes nothing;
//! an accepted diff's changes carry the right preconditions (the sha256 of the file they
//! were computed from, or "must not exist" for a creation).
#![no_main]

use contextos::fuzzing::changeset_diff;
use libfuzzer_sys::fuzz_target;
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::sync::OnceLock;

const FILES: [(&str, &str); 3] = [
    ("a.txt", "one\ntwo\nthree\n"),
    ("src/lib.rs", "pub fn f() {}\n\nfn g() {}\n"),
    ("README.md", "# Project\n\nText.\n"),
];

fn root() -> &'static PathBuf {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let dir = tempfile::tempdir()
            .map(|d| d.keep())
            .unwrap_or_else(|e| panic!("{e}"));
        for (name, text) in FILES {
            let path = dir.join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
            }
            std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
        }
        dir
    })
}

fn sha(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let root = root();
    let result = changeset_diff(text, root);
    for (name, text) in FILES {
        let now = std::fs::read_to_string(root.join(name)).unwrap_or_default();
        assert_eq!(now, text, "reading a diff changed {name}");
    }
    let Ok(changes) = result else {
        return;
    };
    assert!(!changes.is_empty(), "an accepted diff changes nothing");
    for c in changes {
        match (c.must_not_exist, &c.expect_sha256) {
            (true, None) => {
                assert!(!c.delete, "a creation deletes: {c:?}");
                assert!(
                    !FILES.iter().any(|(n, _)| *n == c.path),
                    "a creation of an existing file: {c:?}"
                );
            }
            (false, Some(expect)) => {
                let Some((_, text)) = FILES.iter().find(|(n, _)| *n == c.path) else {
                    // Read under another spelling of the path (`./a.txt`); the planner
                    // canonicalises it before deciding.
                    continue;
                };
                assert_eq!(*expect, sha(text), "precondition of {} is wrong", c.path);
            }
            _ => panic!("a change without a precondition: {c:?}"),
        }
        assert_eq!(
            c.delete,
            c.content.is_none(),
            "content and operation disagree: {c:?}"
        );
    }
});
