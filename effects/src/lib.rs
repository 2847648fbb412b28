//! Effect handlers: the only place where verdicts touch the host. The evaluator never
//! does I/O; these modules do, and nothing else does.
//!
//! | module | its one job |
//! |---|---|
//! | [`atomic_write`] | the one way a file is replaced: temp in the same directory, fsync, rename, directory fsync, caller's mode |
//! | [`durable`] | grouped durability: files written first, fsynced together |
//! | [`safe_fs`] | file operations beneath a project root that cannot be redirected out of it (openat2, `O_NOFOLLOW`) |
//! | [`landing`] | where a path really lands once links are followed (for hook decisions) |
//! | [`project_lock`] | one writer per project: `flock` plus a fencing generation in `lock.json` |
//! | [`journal`] | all-or-nothing multi-file writes under the project lock that survive `kill -9` |
//! | [`decision_log`] | the hash-chained, HMAC-headed record of every hook verdict, masked |
//! | [`user_key`] | the per-user secret outside every repository (log head, policy cache) |
//! | [`clock`] | the wall clock: RFC 3339 times and today's UTC date |
//! | [`faults`] | the seams fault tests use: fsync, the clock's skew, recovery switches (feature `fault-injection`) |
//! | [`sandbox`] | commands in hardened containers (the runner behind feature `docker`) |

pub mod atomic_write;
pub mod clock;
mod home;
pub use home::home_dir;
pub mod decision_log;
pub mod durable;
pub mod faults;
pub mod journal;
pub mod landing;
pub mod project_lock;
pub mod safe_fs;
pub mod sandbox;
pub mod user_key;
