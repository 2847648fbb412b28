//! ContextOS's agent adapters: for each agent, the emitter that compiles the policies into
//! its native configuration and the hook protocol that answers its tool calls.
//!
//! | where | what |
//! |---|---|
//! | [`agent`] | [`Agent`], the one agent enum (every agent is a compile target; [`Agent::has_hook`] tells which run a hook) |
//! | [`output`] | what emitters produce: [`Output`], [`Content`], [`JsonPart`], [`Lossy`] |
//! | `agents_md/`, `claude/`, `codex/`, `copilot/`, `cursor/`, `gemini/`, `windsurf/`, `cline/`, `zed/`, `junie/`, `kiro/`, `continue_dev/`, `aider/`, `opencode/`, `amp/`, `amazonq/` | one folder per agent: `emit.rs` (its files) and `hook.rs` (its hook dialect; `AGENTS.md` has none) |
//! | [`emit()`] | runs the chosen agents' emitters |
//! | [`parse_event`], [`render`], [`render_failure`] | an agent's hook in its own dialect |
//! | [`protocol`] | what every hook dialect shares: [`HookEvent`], [`Action`], [`Answer`], the JSON field readers, `apply_patch` bodies |
//! | `text/` | what every emitter shares: Markdown, YAML front matter, globs, rules in plain words, guide files |
//! | [`merge`] | writing outputs into files people also edit: managed blocks, owned JSON and TOML, the ownership record, drift |
//! | [`wiring`] | the boundary wiring: the MCP server registered with every agent, boundary [`Mode`] |
//!
//! Emitters are pure: a [`contextos_core::PolicySet`] in, [`Output`]s out — no file system.
//! What a target can only be advised of (guides, scoped conventions) becomes instruction
//! text; what it can enforce (permissions, hook wiring) becomes native configuration.
//! Compilation never widens: a rule a target cannot express exactly becomes the stricter
//! native verdict (or nothing, where the hook still decides), with a [`Lossy`] warning
//! citing the rule. The hook protocols are pure too: bytes in, bytes and an exit code out.

pub mod agent;
pub mod agents_md;
pub mod aider;
pub mod amazonq;
pub mod amp;
pub mod claude;
pub mod cline;
pub mod codex;
pub mod continue_dev;
pub mod copilot;
pub mod cursor;
mod emitters;
pub mod gemini;
mod hooks;
pub mod junie;
pub mod kiro;
pub mod merge;
pub mod opencode;
pub mod output;
pub mod protocol;
mod text;
pub mod windsurf;
pub mod wiring;
pub mod zed;

#[cfg(test)]
mod test_support;

pub use agent::Agent;
pub use emitters::{emit, EmitOptions};
pub use hooks::{parse_event, render, render_failure};
pub use output::{Content, Emitted, JsonPart, Lossy, Output, TomlKey};
pub use protocol::{
    can_rewrite, render_routed, routed_argv, routed_command, Action, Answer, Edit, HookEvent,
    McpEndpoint, ProtocolError, Rendered, Route,
};
pub use wiring::Mode;
