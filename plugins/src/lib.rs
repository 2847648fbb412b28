//! Plugin packs: pinning, signing and verifying them, so the policy can judge a plugin by
//! facts rather than by what its files or its lock entry claim.
//!
//! Threat model. The agent (or anyone who can write the repository) may edit a pack's
//! files, `contextos.lock` and any signature shipped inside the pack; it may plant
//! symlinks, special files or huge trees; it may replay an older signed release or
//! swap metadata (name, version) between signed releases. It does not hold a trusted
//! secret key, and it cannot write the trusted keys file or the high-water state through
//! its tools (`.contextos/**` is protected by the stdlib's self-protection rule) — but
//! both live in the repository checkout, so anyone who can commit can change the trust
//! root, and a fresh clone starts without high-water marks. So: the tree digest
//! covers every byte, name, kind and exec bit of the pack; the signature covers a
//! domain-separated payload binding name, version, digest and sequence; keys are looked
//! up by a recomputed id only; and every failure becomes a finding the policy sees.

pub mod digest;
pub mod keys;
pub mod lockfile;
pub mod signature;
pub mod verify;

pub use digest::{tree_digest, DigestError, SIGNATURE_FILE};
pub use keys::{KeysError, TrustedKey, TrustedKeys};
pub use lockfile::{LockEntry, LockError, Lockfile, LOCK_FILE};
pub use signature::{KeyFormatError, PublicKey, SecretKey, SigError};
pub use verify::{is_exact_semver, Facts, VerifyInput};

/// `file:line:col` for a byte span of `text` (columns count characters, from 1), or just
/// `file` when the parser gave no span, so every error points where a human can look.
pub(crate) fn locate(file: &str, text: &str, span: Option<std::ops::Range<usize>>) -> String {
    let Some(span) = span else {
        return file.to_string();
    };
    let before = text.get(..span.start).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let col = match before.rfind('\n') {
        Some(nl) => before.get(nl + 1..).map_or(0, |l| l.chars().count()) + 1,
        None => before.chars().count() + 1,
    };
    format!("{file}:{line}:{col}")
}
