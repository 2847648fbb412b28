//! Writing emitter [`crate::Output`]s into files people also edit — pure functions, no
//! file system. One file per job:
//!
//! - [`block`]: managed blocks ([`apply_block`], [`read_block`], [`remove_block`]) in
//!   Markdown files.
//! - [`strict_json`]: JSON parsed strictly (syntax errors, duplicate keys and a
//!   non-object root are refused).
//! - [`owned_json`]: ContextOS's keys, array items and hook registrations in a JSON file
//!   ([`apply_json`]), recorded in [`OwnedJson`] so entries of removed rules are retracted.
//! - `owned_toml`: ContextOS's keys in a TOML file, edited in place (comments kept),
//!   recorded like owned JSON.
//! - [`ownership`]: the ownership record `.contextos/ownership.json` ([`OwnershipRecord`],
//!   [`render_record`], [`parse_record`], [`StoredRecord`]): which files (or parts)
//!   ContextOS owns and the hashes of the bytes it wrote.
//! - [`plan`](mod@plan): the writes, deletes and next record of a compile, and the
//!   [`Drift`] between disk and what would be written ([`plan()`], [`plan_targets`]).
//! - [`error`]: [`MergeError`], the file and [`MergeErrorKind`]; [`markers`]: the block
//!   markers.

pub mod block;
pub mod error;
pub mod markers;
pub mod owned_json;
mod owned_toml;
pub mod ownership;
pub mod plan;
pub mod strict_json;
mod text;

pub use block::{apply_block, read_block, remove_block};
pub use error::{MergeError, MergeErrorKind};
pub use markers::{BLOCK_BEGIN, BLOCK_END};
pub use owned_json::{apply_json, OwnedJson};
pub use ownership::{
    parse_record, render_record, FileKind, OwnershipRecord, RecordedFile, StoredRecord,
    LEGACY_RECORD_PATH, RECORD_PATH, RECORD_VERSION,
};
pub use plan::{plan, plan_targets, Current, Drift, DriftClass, Plan};
pub use text::{normalize, sha256_hex};
