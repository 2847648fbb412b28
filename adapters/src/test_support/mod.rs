//! Helpers shared by the unit tests of several modules.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub(crate) mod hooks;
pub(crate) mod policies;
