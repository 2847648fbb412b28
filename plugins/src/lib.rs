//! Plugin packs: pinning, signing and verifying them, so the policy can judge a plugin by
//! facts rather than by what its files or its pin in `contextos.lock` claim.
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
//!
//! The modules, bottom up: [`digest`] hashes a pack's tree; [`signature`] signs and
//! checks the release payload; [`keys`] parses the trusted keys; [`pins`] parses and
//! renders `contextos.lock`; [`verify`] turns one pin and its pack into [`Facts`];
//! [`installed`] reads a project's packs and plugin files from disk; [`admission`] has the
//! policy set decide each pack. This file only declares modules and re-exports.

pub mod admission;
pub mod digest;
pub mod installed;
pub mod keys;
pub mod pins;
mod position;
pub mod signature;
pub mod verify;

pub use admission::{check, check_installed, describe_denials, Checked};
pub use digest::{tree_digest, DigestError, SIGNATURE_FILE};
pub use installed::{InstalledError, PACKS_DIR, SEEN_FILE};
pub use keys::{KeysError, TrustedKey, TrustedKeys};
pub use pins::{Pin, Pins, PinsError, PINS_FILE};
pub use signature::{KeyFormatError, PublicKey, SecretKey, SigError};
pub use verify::{is_exact_semver, Facts, VerifyInput};
