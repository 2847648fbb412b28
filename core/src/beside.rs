//! Two independent pieces of one compilation on two cores: a cold hook call compiles and
//! encodes a project's policies while an agent waits, on machines that mostly have a
//! second core idle.

/// Runs `there` on a second (scoped) thread while `here` runs on the calling thread, and
/// returns both results. A `there` whose thread could not finish (it panicked) is run
/// again on the calling thread, so the outcome is what one thread would have produced.
pub(crate) fn both<A: Send, B>(there: impl Fn() -> A + Sync, here: impl FnOnce() -> B) -> (A, B) {
    std::thread::scope(|scope| {
        let spawned = scope.spawn(&there);
        let b = here();
        let a = spawned.join().unwrap_or_else(|_| there());
        (a, b)
    })
}

#[cfg(test)]
#[allow(clippy::panic, reason = "the test makes the spawned side fail")]
mod tests {
    use super::both;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn both_sides_come_back_in_order() {
        let (a, b) = both(|| (1..=100).sum::<u32>(), || "here");
        assert_eq!((a, b), (5050, "here"));
    }

    #[test]
    fn work_whose_thread_panicked_is_done_again_here() {
        let calls = AtomicUsize::new(0);
        let spawned = std::thread::current().id();
        let (a, b) = both(
            || {
                if calls.fetch_add(1, Ordering::SeqCst) == 0 {
                    panic!("the spawned side fails once");
                }
                std::thread::current().id()
            },
            || 7,
        );
        assert_eq!(b, 7);
        assert_eq!(calls.load(Ordering::SeqCst), 2, "run once there, once here");
        assert_eq!(a, spawned, "the second run is on the calling thread");
    }
}
