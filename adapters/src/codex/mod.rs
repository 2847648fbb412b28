//! OpenAI Codex: its emitter (`.codex/rules/contextos.rules`, `.codex/hooks.json`) and its
//! hook dialect (Claude's envelope, no ask).

pub mod emit;
pub(crate) mod hook;
