//! The decision log: every verdict `contextos hook …` gives, appended to a hash chain
//! whose tail is pinned by an HMAC-signed head, so edits, deletions, reordering and
//! truncation are detectable afterwards.
//!
//! # Files (all in the state directory the caller passes, normally `.contextos/state`)
//!
//! * `decisions.jsonl` — the active segment: one record per line, `\n`-terminated.
//! * `decisions.<seq>.jsonl` — sealed segments; `<seq>` is the segment's first `seq`,
//!   zero-padded to 12 digits, so names sort in log order.
//! * `decisions.head` — `{"seq":N,"hash":"<64 hex>","mac":"<64 hex or empty>"}` + `\n`:
//!   the last record's `seq` and `hash`, padded to a fixed size. Created whole through
//!   [`crate::atomic_write`], then overwritten in place after every append (see `head`).
//! * `decisions.lock` — the append guard: empty; `flock`ed exclusively around every
//!   append (and shared by [`verify`] and [`tail`], so they never see half an append).
//!   Never renamed or deleted, so every process locks the same inode.
//!
//! Files are created `0600`.
//!
//! # Record line
//!
//! Members in exactly this order, compact JSON (serde_json, no whitespace):
//! `seq, time, agent, event, tool, request, verdict, rules, durationUs, prev, hash`.
//!
//! * `hash` = lowercase hex sha256 of the **body**: the line's bytes with the final
//!   `,"hash":"<64 hex>"` member removed — i.e. the same object serialised without
//!   `hash`, ending `…,"prev":"<64 hex>"}`. A verifier strips the 75-byte suffix
//!   `,"hash":"<64 hex>"}`, appends `}`, and hashes; it never re-serialises, so
//!   number formatting or key order inside `request` cannot cause false alarms.
//!   A line whose `hash` member is not last, byte for byte, is malformed.
//! * `prev` = the previous record's `hash` (64 zeros for `seq` 1). The line is a
//!   function of its body, so this commits to every byte of the previous line.
//! * `seq` starts at 1 and is contiguous across segments; the first record of a new
//!   segment chains to the last record of the sealed one.
//!
//! # Head MAC
//!
//! `mac` = lowercase hex HMAC-SHA256, keyed with a per-user key kept outside the
//! repository ([`crate::user_key`]), over `seq` as 8 bytes big-endian followed by the
//! 64 ASCII bytes of `hash`. The key file holds 64 lowercase hex characters (32 random
//! bytes) and a newline, mode `0600`. Without a key the head is unsigned (`mac` empty):
//! anyone who can truncate the log can rewrite the head to match.
//!
//! # Appends stay O(1)
//!
//! Under the lock an append reads the head and the last line of the newest file (never
//! the whole log), checks they agree, writes one line with `O_APPEND`, fsyncs, and
//! replaces the head. It refuses (fails closed) when the tail cannot be trusted — bad
//! or missing MAC while a key is given, a signed head while none is, head and last line
//! disagreeing, the head missing from a signed log of more than one record — because
//! extending the log would re-sign, and so launder, the tampering. [`reseal`] is the
//! deliberate way out once a human has looked. The crash windows are repaired
//! silently: an unterminated last line is cut (or, if it is a whole record, given its
//! newline), a record whose head update was lost is adopted if it chains onto the head,
//! and a first record without any head is adopted.
//!
//! # Masking
//!
//!
//! # Modules
//!
//! `record` (a line and its hash), `segments` (the files), `head` (the signed
//! tail), `append_guard` (the log's own `flock`), `append` (writing), `verify`
//! (checking), `tail` (reading back), `mask` with its table `secret_patterns`.

mod append;
mod append_guard;
mod error;
mod head;
mod mask;
mod record;
mod report;
mod secret_patterns;
mod segments;
mod tail;
#[cfg(test)]
mod tests;
mod verify;

pub use append::{append, reseal, LogOptions, DEFAULT_ROTATE_BYTES};
pub use append_guard::GUARD_FILE;
pub use error::LogError;
pub use head::HEAD_FILE;
pub use mask::{mask_secrets, mask_value};
pub use record::{DecisionRecord, LoggedRecord, GENESIS};
pub use report::{Problem, ProblemKind, VerifyReport};
pub use segments::ACTIVE_FILE;
pub use tail::tail;
pub use verify::verify;
