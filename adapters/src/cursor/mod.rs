//! Cursor: its emitter (`.cursor/rules/*.mdc`, `.cursor/hooks.json`) and its hook dialect.

pub mod emit;
pub(crate) mod hook;
