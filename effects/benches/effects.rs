//! Effect-handler costs: uncontended project-lock acquire + release (which includes the
//! fsynced state write that advances the fencing generation).
#![allow(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly at the first unexpected value"
)]

use contextos_effects::journal::{self, Change, Precondition, Step};
use contextos_effects::project_lock::{acquire, AcquireOptions};
use contextos_effects::safe_fs::SafeRoot;
use criterion::{criterion_group, criterion_main, Criterion};
use std::io::Write as _;
use std::time::Duration;

fn lock_uncontended(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let opts = AcquireOptions {
        timeout: Duration::from_secs(5),
        command: "bench".into(),
    };
    let first = acquire(dir.path(), &opts, &mut |_| {})
        .unwrap()
        .generation();
    let mut g = c.benchmark_group("lock");
    g.bench_function("acquire_release", |b| {
        b.iter(|| drop(acquire(dir.path(), &opts, &mut |_| {}).unwrap()))
    });
    g.finish();
    let last = acquire(dir.path(), &opts, &mut |_| {})
        .unwrap()
        .generation();
    assert!(last > first, "every acquisition advances the generation");
}

/// A journaled commit of N small files against the same files written the plain durable
/// way (temp file, fsync, rename, directory fsync each), as the budget compares.
fn journal_vs_plain(c: &mut Criterion) {
    let opts = AcquireOptions {
        timeout: Duration::from_secs(5),
        command: "bench".into(),
    };
    let mut g = c.benchmark_group("journal");
    g.sample_size(10);
    for n in [1usize, 100, 1000] {
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
        {
            let lock = acquire(dir.path(), &opts, &mut |_| {}).unwrap();
            let root = SafeRoot::open(dir.path()).unwrap();
            let done = journal::commit(&root, &lock, &steps, &mut |_| {}).unwrap();
            assert_eq!(done.files, n);
        }
        g.bench_function(format!("commit/{n}"), |b| {
            b.iter(|| {
                let lock = acquire(dir.path(), &opts, &mut |_| {}).unwrap();
                let root = SafeRoot::open(dir.path()).unwrap();
                journal::commit(&root, &lock, &steps, &mut |_| {}).unwrap()
            })
        });
        let plain = tempfile::tempdir().unwrap();
        for i in 0..10 {
            std::fs::create_dir_all(plain.path().join(format!("src/m{i}"))).unwrap();
        }
        g.bench_function(format!("plain/{n}"), |b| {
            b.iter(|| {
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
            })
        });
    }
    g.finish();
}

criterion_group!(benches, lock_uncontended, journal_vs_plain);
criterion_main!(benches);
