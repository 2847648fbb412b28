#![allow(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]
//! Inputs the fuzz targets (`fuzz/`, book: fuzzing.md) found, replayed on stable, and
//! hand-written variants of them.
//!
//! `apply_patch`: the hooks' path extractor must name every file the MCP applier
//! (`support/patch.rs` in the cli crate) changes. That applier splits a unified diff at each
//! `---`/`+++` pair, skips what comes before the first pair, takes the first `---` and
//! `+++` names of a pair with trailing blanks trimmed and `a/`/`b/` dropped, and ignores
//! `copy to` lines; git instead believes the `rename`/`copy` lines. A name from any of
//! these places must therefore be in the extractor's answer.

use contextos_adapters::protocol::patch::patch_paths;
use contextos_core::PathOp::{self, Delete, Write};

fn paths(body: &str) -> Vec<(PathOp, String)> {
    patch_paths(body).unwrap_or_else(|e| panic!("{e}\n---\n{body}"))
}

fn names(body: &str) -> Vec<String> {
    paths(body).into_iter().map(|(_, p)| p).collect()
}

/// The answer in a fixed order (the tests judge which files, not in which order).
fn sorted(body: &str) -> Vec<(PathOp, String)> {
    let mut all = paths(body);
    all.sort_by(|a, b| {
        a.1.cmp(&b.1)
            .then(format!("{:?}", a.0).cmp(&format!("{:?}", b.0)))
    });
    all
}

fn has(body: &str, op: PathOp, path: &str) -> bool {
    paths(body).iter().any(|(o, p)| *o == op && p == path)
}

/// `fuzz/artifacts/apply_patch/crash-59276e2b…`: the `copy to` line (garbage bytes) took
/// the place of the `+++` name, so the extractor answered only with the garbage while the
/// MCP applier, skipping everything before its first `---`/`+++` pair, rewrote `a.txt`.
#[test]
fn apply_patch_copy_to_does_not_hide_the_patched_file() {
    let body = "diff --git a/a.txt b a/a.txt\n+++ b/a.t1xt\n+++ b/a.txt\n\
                copy to \x01\x00\x00[\x00\x00\x00\x00\x19+1,34\n\
                --- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n";
    assert!(has(body, Write, "a.txt"), "{:?}", paths(body));
    // The stray `+++` names are reported as well: some applier may believe them.
    assert!(has(body, Write, "a.t1xt"), "{:?}", paths(body));
}

#[test]
fn copy_to_alone_adds_a_name_and_replaces_none() {
    let body = "diff --git a/a.txt b/a.txt\ncopy to x.txt\n--- a/a.txt\n+++ b/a.txt\n\
                @@ -1 +1 @@\n-one\n+ONE\n";
    assert_eq!(
        sorted(body),
        [(Write, "a.txt".to_owned()), (Write, "x.txt".to_owned())]
    );
}

#[test]
fn copy_from_and_copy_to_report_both_files() {
    // git writes only the copy; an applier that ignores the copy lines patches
    // whichever of the two names exists, so the source is reported written too.
    let body = "diff --git a/src/a.rs b/src/b.rs\nsimilarity index 90%\n\
                copy from src/a.rs\ncopy to src/b.rs\nindex 1..2 100644\n\
                --- a/src/a.rs\n+++ b/src/b.rs\n@@ -1 +1 @@\n-x\n+y\n";
    assert_eq!(
        sorted(body),
        [
            (Write, "src/a.rs".to_owned()),
            (Write, "src/b.rs".to_owned())
        ]
    );
}

#[test]
fn rename_lines_that_contradict_the_headers_report_every_name() {
    let body = "diff --git a/old.rs b/new.rs\nrename from old.rs\nrename to new.rs\n\
                --- a/secret.rs\n+++ b/secret.rs\n@@ -1 +1 @@\n-x\n+y\n";
    let got = paths(body);
    for (op, p) in [(Delete, "old.rs"), (Write, "new.rs"), (Write, "secret.rs")] {
        assert!(got.contains(&(op, p.to_owned())), "{p}: {got:?}");
    }
    // An honest rename still reads as a delete of the source and a write of the target.
    let body = "diff --git a/old.rs b/new.rs\nsimilarity index 100%\n\
                rename from old.rs\nrename to new.rs\n";
    assert_eq!(
        paths(body),
        [(Delete, "old.rs".to_owned()), (Write, "new.rs".to_owned())]
    );
}

#[test]
fn repeated_headers_each_name_a_file() {
    // A second `+++` right after a pair (diffy refuses it, another applier may take it).
    let body = "--- a/a.txt\n+++ b/a.txt\n+++ b/.env\n@@ -1 +1 @@\n-x\n+y\n";
    assert_eq!(names(body), ["a.txt", ".env"]);
    // A `+++` without a `---` inside a git block.
    let body = "diff --git a/a.txt b/a.txt\n+++ b/.env\n--- a/a.txt\n+++ b/a.txt\n\
                @@ -1 +1 @@\n-x\n+y\n";
    assert!(
        names(body).contains(&".env".to_owned()),
        "{:?}",
        names(body)
    );
    // Two `---`/`+++` pairs in one git block are two files.
    let body = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n--- a/b.txt\n+++ b/b.txt\n\
                @@ -1 +1 @@\n-x\n+y\n";
    assert_eq!(names(body), ["a.txt", "b.txt"]);
    // A `+++` before any file block is preamble, as the applier treats it.
    let body = "+++ b/notes.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\n";
    assert_eq!(names(body), ["a.txt"]);
}

#[test]
fn a_name_with_trailing_blanks_is_also_reported_trimmed() {
    // The applier trims the header, so `.env ` writes `.env`.
    let body = "--- a/.env \n+++ b/.env \n@@ -1 +1 @@\n-x\n+y\n";
    assert!(
        names(body).contains(&".env".to_owned()),
        "{:?}",
        names(body)
    );
    // `a/ ` is an empty name once trimmed: refused, not guessed.
    let err = patch_paths("--- a/ \n+++ b/ \n@@ -1 +1 @@\n-x\n+y\n").unwrap_err();
    assert!(err.to_string().contains("blank"), "{err}");
}

#[test]
fn a_nul_escape_in_a_quoted_name_is_refused() {
    // diffy reads `\0` as NUL and `12` as text, git reads `\012` as a newline.
    let body = "--- \"a/x\\012\"\n+++ \"b/x\\012\"\n@@ -1 +1 @@\n-x\n+y\n";
    assert!(patch_paths(body).is_err(), "{:?}", patch_paths(body));
    // Other octal escapes (UTF-8 bytes, as git writes them) still read.
    let body = "--- \"a/caf\\303\\251\"\n+++ \"b/caf\\303\\251\"\n@@ -1 +1 @@\n-x\n+y\n";
    assert_eq!(names(body), ["café"]);
}
