//! Gemini CLI: its emitter (`.gemini/settings.json`, `.gemini/policies/contextos.toml`,
//! `.geminiignore`) and its hook dialect (`BeforeTool` / `AfterTool`).

pub mod emit;
pub(crate) mod hook;
