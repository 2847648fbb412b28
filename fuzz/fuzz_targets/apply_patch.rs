//! `apply_patch` bodies (unified diffs and Codex's `*** Begin Patch` envelope) applied
//! in memory: no panic; an applied patch changes each file once, only creates files that
//! are absent and only updates or deletes files that exist; and every file it changes is
//! among the paths the hooks' liberal extractor finds when it reads the body at all, so
//! a hook judging the same body sees every file the applier would touch.
#![no_main]

use contextos::fuzzing::apply_patch;
use contextos_adapters::protocol::patch::patch_paths;
use contextos_shell::normalise_path;
use libfuzzer_sys::fuzz_target;

const FILES: [(&str, &str); 3] = [
    ("a.txt", "one\ntwo\nthree\n"),
    ("src/lib.rs", "pub fn f() {}\n\nfn g() {}\n"),
    ("README.md", "# Project\n\nText.\n"),
];

fn spelled(path: &str) -> String {
    // The hooks normalise a path before judging it; the spelling is otherwise exact (the
    // extractor reports the applier's trimmed, unprefixed name beside its own reading).
    normalise_path(path)
}

fuzz_target!(|data: &[u8]| {
    let Ok(body) = std::str::from_utf8(data) else {
        return;
    };
    let mut read = |path: &str| {
        FILES
            .iter()
            .find(|(n, _)| *n == path)
            .map(|(_, t)| t.to_string())
    };
    let Ok(changes) = apply_patch(body, &mut read) else {
        return;
    };
    assert!(!changes.is_empty(), "an applied patch changes nothing");
    // A body the extractor cannot read is refused by the MCP tool and blocked by the
    // hooks (both fail closed), so only an accepted body must name every changed file.
    let Ok(extracted) = patch_paths(body) else {
        return;
    };
    let seen: Vec<String> = extracted.iter().map(|(_, p)| spelled(p)).collect();
    for (i, (path, content)) in changes.iter().enumerate() {
        assert!(
            !changes[..i].iter().any(|(p, _)| p == path),
            "{path} changed twice"
        );
        if content.is_none() {
            assert!(read(path).is_some(), "deletes {path}, which does not exist");
        }
        assert!(
            seen.contains(&spelled(path)),
            "the applier changes {path}; the hook extractor sees only {extracted:?}"
        );
    }
});
