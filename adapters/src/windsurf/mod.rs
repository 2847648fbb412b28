//! Windsurf (Devin Desktop): its emitter (`.windsurf/rules/*.md`, `.windsurf/hooks.json`,
//! `.codeiumignore`) and its Cascade hook dialect (verdict by exit code).

pub mod emit;
pub(crate) mod hook;
