//! `AGENTS.md`: the instruction file every agent reads (Codex, Cursor, Copilot, Windsurf,
//! Zed, Gemini, … and Claude Code through `@AGENTS.md`).
//!
//! One managed block: the project-wide guides, every rule restated in plain words (the
//! enforced boundaries first, so an agent does not waste turns running into them), the
//! glob-scoped guides under "Applies to" headings and each role's rules and guides under
//! its own heading. Advisory only: what enforces the rules is the hook and the native
//! permission files the other emitters write.
//!
//! AGENTS.md is read, never run: it has an emitter and no hook protocol.

pub mod emit;
