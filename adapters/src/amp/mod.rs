//! Amp: its emitter (`.amp/settings.json`: `amp.permissions`, `amp.mcpServers`) and its
//! hook dialect (a `delegate` permission rule: the tool's arguments on stdin, the verdict
//! by exit code).

pub mod emit;
pub mod hook;
