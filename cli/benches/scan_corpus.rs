//! Accuracy of `contextos scan --staged` against other secret scanners, on the labelled
//! corpus of `tests/corpus/generator.rs`, all on the same staged index.
//!
//! ```text
//! cargo bench -p contextos --bench scan_corpus                     # compare (medium corpus)
//! cargo bench -p contextos --bench scan_corpus -- --profile small  # smaller, faster
//! cargo bench -p contextos --bench scan_corpus -- --write DIR      # just write the corpus
//! ```
//! Options: `--profile small|medium|large`, `--seed N`, `--write DIR` (writes the corpus and
//! `DIR.labels.tsv`, no scan), `--keep DIR` (scan in DIR and keep it), `--tools a,b,…`
//! (default: contextos and every external tool found; see `tests/corpus/tools.rs`),
//! `--details` (missed items and false-positive examples per tool).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail loudly at the first unexpected value"
)]

#[path = "../../tests/corpus/mod.rs"]
mod corpus;

use corpus::generator::{self, Class, Options};
use corpus::score;
use corpus::tools::{self, Tool};
use std::collections::BTreeSet;
use std::path::PathBuf;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn profile(name: &str, seed: u64) -> Options {
    match name {
        "small" => Options::small(seed),
        "large" => Options::large(seed),
        _ => Options::medium(seed),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seed: u64 = arg(&args, "--seed")
        .and_then(|s| s.parse().ok())
        .unwrap_or(4);
    let prof = arg(&args, "--profile").unwrap_or_else(|| "medium".into());
    let opts = profile(&prof, seed);
    let t = std::time::Instant::now();
    let corpus = generator::generate(&opts);
    eprintln!(
        "corpus `{prof}` seed {seed}: {} files, {:.1} MB, {} secrets, {} blocked files, {} stubs, {} decoys, {} stub decoys (generated in {:.2} s)",
        corpus.files.len(),
        corpus.bytes() as f64 / 1e6,
        corpus.count(Class::Secret),
        corpus.count(Class::BlockedFile),
        corpus.count(Class::Stub),
        corpus.count(Class::Decoy),
        corpus.count(Class::StubDecoy),
        t.elapsed().as_secs_f64()
    );

    if let Some(dir) = arg(&args, "--write") {
        let dir = PathBuf::from(dir);
        if let Err(e) = corpus.write_to(&dir) {
            eprintln!("cannot write {}: {e}", dir.display());
            std::process::exit(2);
        }
        let manifest = PathBuf::from(format!("{}.labels.tsv", dir.display()));
        if let Err(e) = std::fs::write(&manifest, corpus.manifest_tsv()) {
            eprintln!("cannot write {}: {e}", manifest.display());
            std::process::exit(2);
        }
        println!("wrote {} and {}", dir.display(), manifest.display());
        return;
    }

    // Compare: one repository, an empty root commit (so every tool has a HEAD), all staged.
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = arg(&args, "--keep").map_or_else(|| tmp.path().join("repo"), PathBuf::from);
    std::fs::create_dir_all(&repo).expect("repo dir");
    let reports = tmp.path().join("reports");
    std::fs::create_dir_all(&reports).expect("reports dir");
    if let Err(e) = tools::init_repo(&repo, true).and_then(|()| tools::stage(&repo, &corpus)) {
        eprintln!("{e}");
        std::process::exit(2);
    }
    let wanted: Option<BTreeSet<String>> =
        arg(&args, "--tools").map(|s| s.split(',').map(str::to_string).collect());
    let mut list: Vec<(Tool, PathBuf)> = Vec::new();
    let ctx = std::env::var_os("CONTEXTOS").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_contextos")),
        PathBuf::from,
    );
    list.push((Tool::Contextos, ctx));
    for &t in tools::EXTERNAL {
        match tools::find(t) {
            Some(p) => list.push((t, p)),
            None => eprintln!("note: {} not found; skipped", t.name()),
        }
    }
    list.retain(|(t, _)| wanted.as_ref().is_none_or(|w| w.contains(t.name())));

    let details = args.iter().any(|a| a == "--details");
    let mut rows = Vec::new();
    for (tool, bin) in &list {
        let out = reports.join(format!("{}.json", tool.name()));
        let r = match tools::run(*tool, bin, &repo, &out) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{}: {e}", tool.name());
                continue;
            }
        };
        if !tools::exit_ok(*tool, r.code) {
            eprintln!(
                "{}: exit {} — not scored\n{}",
                tool.name(),
                r.code,
                r.stderr.chars().take(2000).collect::<String>()
            );
            continue;
        }
        let findings = match tools::findings(*tool, &out) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("{}: {e}", tool.name());
                continue;
            }
        };
        let positives: &[Class] = if *tool == Tool::Contextos {
            &[Class::Secret, Class::BlockedFile, Class::Stub]
        } else {
            &[Class::Secret]
        };
        let sc = score::score(&corpus.labels, &findings, positives);
        rows.push((
            *tool,
            tools::version(*tool, bin),
            r.code,
            r.elapsed.as_secs_f64(),
            sc,
        ));
    }

    println!(
        "\nAccuracy on the staged `{prof}` corpus (seed {seed}): {} files, {:.1} MB; {} secrets, {} blocked files, {} stubs; {} decoys, {} stub decoys\n",
        corpus.files.len(),
        corpus.bytes() as f64 / 1e6,
        corpus.count(Class::Secret),
        corpus.count(Class::BlockedFile),
        corpus.count(Class::Stub),
        corpus.count(Class::Decoy),
        corpus.count(Class::StubDecoy),
    );
    println!("| tool | version | exit | secrets recall | blocked files | stubs | precision (locations) | TP / FP locations | decoys flagged | raw findings | wall s |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for (tool, ver, code, secs, sc) in &rows {
        let opt = |c: Class| {
            sc.recall
                .get(&c)
                .map_or_else(|| "—".to_string(), |r| format!("{r}"))
        };
        let flagged: usize = sc.flagged.values().map(|r| r.hit).sum();
        let negatives: usize = sc.flagged.values().map(|r| r.total).sum();
        println!(
            "| {} | {ver} | {code} | {} | {} | {} | {:.3} | {} / {} | {flagged}/{negatives} | {} | {secs:.2} |",
            tool.name(),
            sc.recall_of(&[Class::Secret]),
            opt(Class::BlockedFile),
            opt(Class::Stub),
            sc.precision(),
            sc.tp_locations,
            sc.fp_locations,
            sc.raw_findings,
        );
    }

    // Per secret kind.
    println!("\nSecrets found per kind:\n");
    print!("| kind |");
    for (tool, ..) in &rows {
        print!(" {} |", tool.name());
    }
    println!();
    print!("|---|");
    for _ in &rows {
        print!("---|");
    }
    println!();
    let kinds: BTreeSet<String> = rows
        .iter()
        .flat_map(|r| r.4.by_kind.keys().cloned())
        .collect();
    for k in &kinds {
        print!("| {k} |");
        for (.., sc) in &rows {
            let r = sc.by_kind.get(k).copied().unwrap_or_default();
            print!(" {}/{} |", r.hit, r.total);
        }
        println!();
    }

    // Negatives flagged per kind.
    println!("\nDecoys flagged per kind (must be 0):\n");
    print!("| class | kind |");
    for (tool, ..) in &rows {
        print!(" {} |", tool.name());
    }
    println!();
    print!("|---|---|");
    for _ in &rows {
        print!("---|");
    }
    println!();
    let neg: BTreeSet<(Class, String)> = rows
        .iter()
        .flat_map(|r| r.4.flagged.keys().cloned())
        .collect();
    for (c, k) in &neg {
        print!("| {} | {k} |", c.as_str());
        for (.., sc) in &rows {
            let r = sc
                .flagged
                .get(&(*c, k.clone()))
                .copied()
                .unwrap_or_default();
            print!(" {}/{} |", r.hit, r.total);
        }
        println!();
    }

    if details {
        for (tool, _, _, _, sc) in &rows {
            println!("\n## {}: missed", tool.name());
            for l in &sc.missed {
                println!(
                    "  {}:{}-{} {} {} ({})",
                    l.path,
                    l.first,
                    l.last,
                    l.class.as_str(),
                    l.kind,
                    l.context
                );
            }
            println!("## {}: false-positive locations per rule", tool.name());
            for (rule, n) in &sc.fp_by_rule {
                println!("  {n:>6} {rule}");
            }
            println!("## {}: false-positive locations (first 40)", tool.name());
            for e in &sc.fp_examples {
                println!("  {e}");
            }
        }
    }
    println!("\nCommands (run in the repository root):");
    for (tool, ..) in &rows {
        println!("  {:<15} {}", tool.name(), tool.command());
    }
}
