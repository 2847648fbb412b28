//! In-process throughput of the detectors over added text: the part of `scan --staged`
//! that is ContextOS's own (the rest is git reading and inflating blobs).
//!
//! ```text
//! cargo bench -p contextos-scan --bench detect
//! ```
//! The text is the `medium` profile of the project's generated corpus
//! (`tests/corpus/generator.rs`: source in 20 file types, lockfiles, minified bundles,
//! planted secrets), every line added, with the stdlib's detectors. Throughput is MB of
//! text per second on one thread. `keywords` measures the keyword
//! search alone (gate and walks), `decode_view` the decoding layer alone.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a bench fails loudly at the first unexpected value"
)]

#[path = "../../tests/corpus/generator.rs"]
mod generator;

use contextos_core::detector::DetectorKind;
use contextos_core::{build, BuildOptions, Layer, PolicySource};
use contextos_scan::change::{Added, ChangeStatus, ChangedFile, EntryKind};
use contextos_scan::detect::Detectors;
use contextos_scan::keywords::{Keywords, KeywordsBuilder};
use contextos_scan::text::{self, Lines};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn stdlib() -> contextos_core::PolicySet {
    let sources: Vec<PolicySource> = contextos_stdlib::FILES
        .iter()
        .map(|(name, text)| PolicySource {
            name: name.to_string(),
            text: text.to_string().into(),
            layer: Layer::Stdlib,
        })
        .collect();
    build(&sources, &BuildOptions::default())
        .policy
        .expect("the stdlib compiles")
}

fn detectors() -> Detectors {
    let policy = stdlib();
    let d = Detectors::new(policy.detectors.get().unwrap()).expect("detectors prepare");
    d.warm().expect("every detector regex compiles");
    d
}

/// The stdlib detectors' keywords alone: the gate and the anchored walks, without the
/// regexes they wake.
fn keywords() -> Keywords {
    let policy = stdlib();
    let mut b = KeywordsBuilder::default();
    for (i, d) in policy.detectors.get().unwrap().iter().enumerate() {
        let as_written = d.kind == DetectorKind::Secret && d.case_sensitive;
        for k in &d.keywords {
            b.add(k, i, as_written);
        }
    }
    b.build().unwrap().expect("the stdlib has keywords")
}

/// The corpus's text files as changed files with every line added.
fn text_files() -> Vec<ChangedFile> {
    let corpus = generator::generate(&generator::Options::medium(7));
    corpus
        .files
        .into_iter()
        .filter(|f| !text::is_binary(&f.data))
        .map(|f| ChangedFile {
            path: f.path,
            status: ChangeStatus::Added,
            kind: EntryKind::File,
            size: f.data.len() as u64,
            content: Some(f.data),
            added: Added::All,
            oversize: false,
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let d = detectors();
    let files = text_files();
    let bytes: u64 = files.iter().map(|f| f.size).sum();
    let mut g = c.benchmark_group("detect");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes));
    g.bench_function("added_text_medium_corpus", |b| {
        b.iter(|| {
            let mut out = Vec::new();
            for f in &files {
                let content = f.content.as_deref().unwrap_or_default();
                let whole = 0..Lines::new(content).count();
                let all = std::slice::from_ref(&whole);
                d.added_text(f, content, all, &mut out).expect("scan");
            }
            out.len()
        });
    });
    let keywords = keywords();
    g.bench_function("keywords_medium_corpus", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for f in &files {
                keywords.for_each_hit(f.content.as_deref().unwrap_or_default(), |_| n += 1);
            }
            n
        });
    });
    g.bench_function("decode_view_medium_corpus", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for f in &files {
                let content = f.content.as_deref().unwrap_or_default();
                let lines = Lines::new(content);
                let whole = 0..lines.count();
                let all = std::slice::from_ref(&whole);
                n += contextos_scan::decode::view(content, &lines, all).map_or(0, |v| v.text.len());
            }
            n
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
