//! Amazon Q Developer CLI: its emitter (the custom agent
//! `.amazonq/cli-agents/contextos.json`) and its hook dialect (`preToolUse` /
//! `postToolUse`, the verdict by exit code).

pub mod emit;
pub(crate) mod hook;
