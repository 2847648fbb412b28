//! The staged scanner behind `contextos scan --staged`, and the workspace's only git
//! reader (gix): no other crate opens a repository.
//!
//! [`staged`] reads what a commit would record (the git index against HEAD) into
//! [`change::ChangedFile`]s; [`inspect`] checks them against the task [`scope`], the
//! blocked-file list and the size limit, and runs the [`detect`]ors (secrets and stubs
//! only in the lines the change adds), producing [`finding::Finding`]s; [`suppress`]
//! applies inline `contextos:allow` markers and the baseline; [`run`] drives one staged
//! scan over worker threads; [`verdict`] asks the policy set's `commit` rules what each
//! finding means. [`repo`] finds the repository and the directory git runs hooks from,
//! for `contextos hook install`. [`text`] holds the byte-level helpers (lines, binary
//! sniffing, fingerprints). Only `staged` and `repo` read the host (through gix); the
//! clock is the caller's (baseline expiry takes today's date as an argument), and
//! everything else works on the bytes it is given.
//!
//! This file only declares modules and re-exports the names callers use most.

pub mod change;
pub mod checksum;
pub mod decode;
pub mod detect;
pub mod finding;
pub mod inspect;
pub mod keywords;
mod loose;
mod modal;
pub mod reach;
pub mod repo;
pub mod run;
pub mod scope;
pub mod staged;
pub mod suppress;
pub mod text;
pub mod verdict;

pub use change::{Added, ChangeStatus, ChangedFile, EntryKind};
pub use finding::{Finding, FindingKind, OVERSIZE_RULE, SCOPE_RULE};
pub use inspect::{find, InspectError};
pub use run::{scan_staged, ScanError, Scanned};
