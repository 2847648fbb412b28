//! What the detector test files share: the stdlib's detectors, a changed file whose every
//! line counts as added, the rules a scan reports, and deterministic fake bodies.
#![allow(
    dead_code,
    clippy::expect_used,
    reason = "shared by several test crates, each using a part; tests fail loudly"
)]

use contextos_core::{build, BuildOptions, Layer, PolicySource};
use contextos_scan::detect::Detectors;
use contextos_scan::{self as scan, Added, ChangeStatus, ChangedFile, EntryKind};

/// The stdlib's detectors, every regex compiled.
pub fn stdlib_detectors() -> Detectors {
    let sources: Vec<PolicySource> = contextos_stdlib::FILES
        .iter()
        .map(|(name, text)| PolicySource {
            name: name.to_string(),
            text: text.to_string().into(),
            layer: Layer::Stdlib,
        })
        .collect();
    let policy = build(&sources, &BuildOptions::default())
        .policy
        .expect("stdlib compiles");
    let d = Detectors::new(policy.detectors.get().unwrap()).expect("detectors prepare");
    d.warm().expect("every detector regex compiles");
    d
}

/// A new file whose every line counts as added.
pub fn file(path: &str, text: &str) -> ChangedFile {
    ChangedFile {
        path: path.into(),
        status: ChangeStatus::Added,
        kind: EntryKind::File,
        size: text.len() as u64,
        content: Some(text.as_bytes().to_vec()),
        added: Added::All,
        oversize: false,
    }
}

/// `(rule, line)` of every finding in `text` as the file `path`.
pub fn rules(d: &Detectors, path: &str, text: &str) -> Vec<(String, Option<usize>)> {
    scan::find(d, &[file(path, text)], None)
        .expect("scan")
        .into_iter()
        .map(|f| (f.rule, f.line))
        .collect()
}

/// A deterministic xorshift run of `len` characters of `alphabet`.
pub fn rnd(seed: u64, len: usize, alphabet: &str) -> String {
    let a: Vec<char> = alphabet.chars().collect();
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            a[(x % a.len() as u64) as usize]
        })
        .collect()
}
