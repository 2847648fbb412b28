//! Effect-handler costs: uncontended project-lock acquire + release (which includes the
//! fsynced state write that advances the fencing generation).
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use contextos_engine::effects::lock::{acquire, AcquireOptions};
use criterion::{criterion_group, criterion_main, Criterion};
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

criterion_group!(benches, lock_uncontended);
criterion_main!(benches);
