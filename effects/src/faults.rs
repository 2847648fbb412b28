//! The seams the fault tests use: every fsync of the effect handlers, the wall clock and
//! each recovery step pass through here.
//!
//! Without the cargo feature `fault-injection` (off by default; only this crate's own
//! dev-dependency on itself turns it on, so no release build contains it) these are the
//! plain calls and [`disabled`] is always false. With it, a plan read once per process
//! from the environment — so a test can hand it to a child process — can:
//!
//! * `CTX_FAULT_FSYNC_EIO=n`: make the n-th fsync of the process (counted from 1) fail
//!   with `EIO`, as a failing disk does;
//! * `CTX_FAULT_FSYNC_KILL=m`: SIGKILL the process when it reaches its m-th fsync;
//! * `CTX_FAULT_CLOCK_SKEW_SECS=s`: read the wall clock `s` seconds off (negative: back);
//! * `CTX_FAULT_DISABLE=name,…`: switch off recovery steps ([`Recovery`]), so a test can
//!   show that the fault test protecting a step fails without it.
//!
//! A malformed plan makes every fsync fail, naming the variable: a test that meant to
//! inject a fault must not silently run without it.

use rustix::fd::AsFd;

/// A recovery step a fault test protects; `CTX_FAULT_DISABLE` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    /// `journal::commit` undoing a transaction that failed before its commit point.
    CommitUndo,
    /// `journal::commit` removing a commit record whose write failed, before undoing.
    CommitRetract,
    /// `journal::recover` rolling back a prepared transaction.
    RecoverUndo,
    /// `project_lock::acquire` releasing the lock when the state write fails.
    LockRelease,
    /// `decision_log::append` taking back a record it could not finish.
    LogCut,
}

impl Recovery {
    pub const ALL: [Recovery; 5] = [
        Recovery::CommitUndo,
        Recovery::CommitRetract,
        Recovery::RecoverUndo,
        Recovery::LockRelease,
        Recovery::LogCut,
    ];

    /// The name `CTX_FAULT_DISABLE` uses.
    pub fn name(self) -> &'static str {
        match self {
            Recovery::CommitUndo => "commit-undo",
            Recovery::CommitRetract => "commit-retract",
            Recovery::RecoverUndo => "recover-undo",
            Recovery::LockRelease => "lock-release",
            Recovery::LogCut => "log-cut",
        }
    }
}

/// `fsync(2)`, the one way the effect handlers make a file or directory durable.
pub fn fsync(fd: impl AsFd) -> std::io::Result<()> {
    plan::before_sync()?;
    rustix::fs::fsync(fd).map_err(Into::into)
}

/// `fdatasync(2)`, for data whose metadata does not change (the fixed-size log head).
pub fn fdatasync(fd: impl AsFd) -> std::io::Result<()> {
    plan::before_sync()?;
    rustix::fs::fdatasync(fd).map_err(Into::into)
}

/// Whether a test switched `step` off.
pub fn disabled(step: Recovery) -> bool {
    plan::disabled(step)
}

/// Seconds the wall clock is skewed by (0 outside fault tests).
pub(crate) fn clock_skew_secs() -> i64 {
    plan::clock_skew_secs()
}

/// How many fsyncs this process has made so far.
#[cfg(feature = "fault-injection")]
pub fn fsync_calls() -> u64 {
    plan::CALLS.load(std::sync::atomic::Ordering::SeqCst)
}

#[cfg(feature = "fault-injection")]
mod plan {
    use super::Recovery;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;

    pub(super) static CALLS: AtomicU64 = AtomicU64::new(0);

    struct Plan {
        eio_at: Option<u64>,
        kill_at: Option<u64>,
        skew_secs: i64,
        disabled: Vec<String>,
        malformed: Option<String>,
    }

    fn plan() -> &'static Plan {
        static PLAN: OnceLock<Plan> = OnceLock::new();
        PLAN.get_or_init(|| {
            let mut malformed = None;
            let mut number = |var: &str| -> Option<i64> {
                let text = std::env::var(var).ok()?;
                match text.trim().parse() {
                    Ok(n) => Some(n),
                    Err(_) => {
                        malformed = Some(format!("{var}={text} is not a number"));
                        None
                    }
                }
            };
            let eio_at = number("CTX_FAULT_FSYNC_EIO").and_then(|n| u64::try_from(n).ok());
            let kill_at = number("CTX_FAULT_FSYNC_KILL").and_then(|n| u64::try_from(n).ok());
            let skew_secs = number("CTX_FAULT_CLOCK_SKEW_SECS").unwrap_or(0);
            let disabled: Vec<String> = std::env::var("CTX_FAULT_DISABLE")
                .unwrap_or_default()
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            if let Some(bad) = disabled
                .iter()
                .find(|d| !Recovery::ALL.iter().any(|r| r.name() == d.as_str()))
            {
                malformed = Some(format!("CTX_FAULT_DISABLE names no recovery step `{bad}`"));
            }
            Plan {
                eio_at,
                kill_at,
                skew_secs,
                disabled,
                malformed,
            }
        })
    }

    pub(super) fn before_sync() -> std::io::Result<()> {
        let plan = plan();
        if let Some(why) = &plan.malformed {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("fault injection: {why}"),
            ));
        }
        let n = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
        if plan.kill_at == Some(n) {
            let _ = rustix::process::kill_process(
                rustix::process::getpid(),
                rustix::process::Signal::KILL,
            );
        }
        if plan.eio_at == Some(n) {
            return Err(rustix::io::Errno::IO.into());
        }
        Ok(())
    }

    pub(super) fn disabled(step: Recovery) -> bool {
        plan().disabled.iter().any(|d| d == step.name())
    }

    pub(super) fn clock_skew_secs() -> i64 {
        plan().skew_secs
    }
}

#[cfg(not(feature = "fault-injection"))]
mod plan {
    use super::Recovery;

    #[inline]
    pub(super) fn before_sync() -> std::io::Result<()> {
        Ok(())
    }

    #[inline]
    pub(super) fn disabled(_step: Recovery) -> bool {
        false
    }

    #[inline]
    pub(super) fn clock_skew_secs() -> i64 {
        0
    }
}
