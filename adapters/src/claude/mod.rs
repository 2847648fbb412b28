//! Claude Code: its emitter (`CLAUDE.md`, `.claude/rules/`, `.claude/settings.json`) and
//! its hook dialect.

pub mod emit;
pub(crate) mod hook;
pub mod sandbox;
pub(crate) mod vscode;
