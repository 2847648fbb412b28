//! The sandbox effect handler: commands run in OCI containers through the Docker Engine
//! API, never on the host unless the user chose host-unsafe mode.
//!
//! One job per module:
//! - [`profile`] (pure): the stdlib floor, named profiles and `with sandbox { … }`
//!   obligations, merged so that a profile can only tighten;
//! - `spec` (pure, feature `docker`): the session container request with every
//!   hardening field;
//! - `runner` (I/O, feature `docker`): bollard — the engine check, image resolution,
//!   verified removal and the sweep of old one-shot leftovers;
//! - [`capture`] (pure): byte-capped output with a hash over everything;
//! - [`workspace`] (host files): what is never shown to a command (`.git`, the state
//!   directory), and for host-unsafe runs the snapshot, the output area and the results
//!   read back as changes for the journal;
//! - [`host`] (I/O): host-unsafe runs with a scrubbed environment;
//! - `session` (I/O, feature `docker`): warm containers with a writable workspace whose
//!   changes come back as an exact changeset (overlay upper or copy-and-diff).

pub mod capture;
pub mod host;
pub mod profile;
#[cfg(feature = "docker")]
pub mod runner;
#[cfg(feature = "docker")]
pub mod session;
#[cfg(feature = "docker")]
pub mod spec;
pub mod workspace;
