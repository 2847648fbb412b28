//! Cline: its emitter (`.clinerules/ctx-<guide>.md`, the `PreToolUse` hook program) and
//! its hook dialect.

pub mod emit;
pub(crate) mod hook;
