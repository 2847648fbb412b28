//! GitHub Copilot: its emitter (`.github/copilot-instructions.md`,
//! `.github/instructions/`, `.github/hooks/contextos.json`) and its hook dialect.

pub mod emit;
pub(crate) mod hook;
