//! The sandbox effect handler: commands run in OCI containers through the Docker Engine
//! API, never on the host unless the user chose host-unsafe mode.
//!
//! One job per module:
//! - [`profile`] (pure): the stdlib floor, named profiles and `with sandbox { … }`
//!   obligations, merged so that a profile can only tighten;
//! - `spec` (pure, feature `docker`): the container request with every hardening field;
//! - `runner` (I/O, feature `docker`): bollard — image resolution, create, attach,
//!   stream, wait, kill and remove;
//! - [`capture`] (pure): byte-capped output with a hash over everything;
//! - [`workspace`] (host files): the per-run snapshot, the output area and the results
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
