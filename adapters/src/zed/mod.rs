//! Zed: its emitter (`.rules`, and `agent.tool_permissions` in `.zed/settings.json`).

pub mod emit;
pub mod permissions;
