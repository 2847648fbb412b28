//! Kiro: its emitter (`.kiro/steering`, the CLI hook file) and its hook dialect.

pub mod emit;
pub(crate) mod hook;
