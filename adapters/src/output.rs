//! What the emitters produce: files, or ContextOS's parts of files, and the rules a target
//! could not express exactly.

use crate::Agent;
use contextos_core::ir::Origin;
use serde::Serialize;

/// One generated file, or ContextOS's part of one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Output {
    /// Project-relative, `/`-separated.
    pub path: String,
    pub target: Agent,
    pub content: Content,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Content {
    /// The whole file belongs to ContextOS (a generated `.mdc`, `.instructions.md`, the
    /// Copilot hooks file). An existing file ContextOS does not own is never overwritten.
    Whole { text: String },
    /// A whole file that is a program the agent runs (Cline's `.clinerules/hooks/PreToolUse`):
    /// owned like [`Content::Whole`], and written with the executable mode, since an agent
    /// does not run a hook file that is not executable.
    Script { text: String },
    /// A managed block inside a Markdown file people also write by hand (`AGENTS.md`,
    /// `CLAUDE.md`, `.github/copilot-instructions.md`): the text between
    /// [`crate::merge::BLOCK_BEGIN`] and [`crate::merge::BLOCK_END`]; the user's text around it is kept.
    Block { text: String },
    /// ContextOS's entries in a JSON file people also edit (`.claude/settings.json`,
    /// `.cursor/hooks.json`): user keys and entries are kept, in their order.
    Json { parts: Vec<JsonPart> },
    /// ContextOS's keys in a TOML file people also edit (`.codex/config.toml`): the user's
    /// tables, keys and comments are kept as written.
    Toml { keys: Vec<TomlKey> },
}

/// One owned key of a shared TOML file: the whole value at `pointer` (RFC 6901 syntax over
/// TOML's tables: `/mcp_servers/contextos` is `[mcp_servers.contextos]`) is ContextOS's.
/// Values are JSON data (strings, integers, booleans, arrays, objects as tables).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TomlKey {
    pub pointer: String,
    pub value: serde_json::Value,
}

/// One owned piece of a shared JSON file. Pointers are RFC 6901 JSON pointers.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum JsonPart {
    /// A key whose whole value is ContextOS's (`/$schema`, `/version`).
    Key {
        pointer: String,
        value: serde_json::Value,
    },
    /// Items ContextOS adds to an array the user may also fill
    /// (`/permissions/deny`): the user's items stay; ContextOS's earlier items (from the
    /// ownership record) are replaced by these.
    Items {
        pointer: String,
        items: Vec<serde_json::Value>,
    },
    /// A key holding one word of a ladder of verdicts, loosest first (`["allow", "ask",
    /// "deny"]`): ContextOS's `value` is written unless the file already holds a stricter
    /// word of the ladder there, which is the user's and is kept — compiling never loosens
    /// a value a person tightened by hand. Anything else there (a looser word, another
    /// value) is replaced, as by [`JsonPart::Key`].
    Strictest {
        pointer: String,
        value: serde_json::Value,
        ladder: Vec<serde_json::Value>,
    },
    /// ContextOS's entries in an array of hook registrations (`/hooks/PreToolUse`): any
    /// element whose serialised form contains `marker` is ContextOS's and is replaced by
    /// `items`; every other element is the user's and stays.
    Hooks {
        pointer: String,
        marker: String,
        items: Vec<serde_json::Value>,
    },
}

/// A rule a target cannot express exactly, and what was emitted instead.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Lossy {
    pub target: Agent,
    pub rule: String,
    pub origin: Origin,
    pub message: String,
}

/// Everything the emitters produced for the chosen targets.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Emitted {
    pub outputs: Vec<Output>,
    pub lossy: Vec<Lossy>,
}
