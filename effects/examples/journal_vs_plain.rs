//! A journaled commit of N files against the same files written the plain durable way
//! (as in `benches/effects.rs`), alternating one round of each: on a machine whose disk
//! is shared with other work, the load drifts between criterion's two groups, while
//! rounds next to each other see the same load. Prints the medians and the median of the
//! per-round ratios.
//!
//! `cargo run --release -p contextos-effects --example journal_vs_plain -- 100 15`
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a measurement tool: it stops loudly at the first unexpected value"
)]
use contextos_effects::journal::{self, Change, Precondition, Step};
use contextos_effects::project_lock::{acquire, AcquireOptions};
use contextos_effects::safe_fs::SafeRoot;
use std::io::Write as _;
use std::time::{Duration, Instant};

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args[1].parse().unwrap();
    let rounds: usize = args[2].parse().unwrap();
    let opts = AcquireOptions {
        timeout: Duration::from_secs(5),
        command: "ab".into(),
    };
    let dir = tempfile::tempdir().unwrap();
    let steps: Vec<Step> = (0..n)
        .map(|i| Step {
            change: Change::Write {
                path: format!("src/m{}/f{i}.txt", i % 10),
                content: format!("content of file {i}\n").into_bytes(),
                mode: 0o644,
                exact_mode: false,
            },
            precondition: Precondition::Any,
        })
        .collect();
    let commit = || {
        let lock = acquire(dir.path(), &opts, &mut |_| {}).unwrap();
        let root = SafeRoot::open(dir.path()).unwrap();
        journal::commit(&root, &lock, &steps, &mut |_| {}).unwrap();
    };
    commit();
    let plain = tempfile::tempdir().unwrap();
    for i in 0..10 {
        std::fs::create_dir_all(plain.path().join(format!("src/m{i}"))).unwrap();
    }
    let write_plain = || {
        for (i, s) in steps.iter().enumerate() {
            let Change::Write { path, content, .. } = &s.change else {
                unreachable!()
            };
            let target = plain.path().join(path);
            let tmp = target.with_extension(format!("tmp{i}"));
            let mut f = std::fs::File::create(&tmp).unwrap();
            f.write_all(content).unwrap();
            f.sync_all().unwrap();
            std::fs::rename(&tmp, &target).unwrap();
            std::fs::File::open(target.parent().unwrap())
                .unwrap()
                .sync_all()
                .unwrap();
        }
    };
    write_plain();
    let (mut j, mut p, mut r) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        commit();
        let jt = t.elapsed().as_secs_f64();
        let t = Instant::now();
        write_plain();
        let pt = t.elapsed().as_secs_f64();
        j.push(jt);
        p.push(pt);
        r.push(jt / pt);
    }
    println!(
        "n={n} rounds={rounds} journal_median_ms={:.3} plain_median_ms={:.3} ratio_of_medians={:.2} median_ratio={:.2}",
        median(&mut j) * 1e3,
        median(&mut p) * 1e3,
        median(&mut j.clone()) / median(&mut p.clone()),
        median(&mut r)
    );
}
