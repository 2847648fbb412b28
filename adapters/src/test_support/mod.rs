//! Helpers shared by the unit tests of several modules.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail loudly at the first unexpected value"
)]

pub(crate) mod hooks;
pub(crate) mod policies;
