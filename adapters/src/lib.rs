//! Emitters: one compiled policy set → every agent's native configuration.
//!
//! Pure functions: a [`PolicySet`] in, [`Output`]s out — no file system. What a target can
//! only be advised of (guides, scoped conventions) becomes instruction text; what it can
//! enforce (permissions, hook wiring) becomes native configuration. Compilation never
//! widens: a rule a target cannot express exactly becomes the stricter native verdict (or
//! nothing, where the hook still decides), with a [`Lossy`] warning citing the rule.
//!
//! Writing the outputs into files people also edit — managed blocks, owned JSON entries,
//! the ownership lock and the drift check — is [`merge`]'s job, not the emitters'.

pub mod agents;
pub mod claude;
pub mod codex;
pub mod copilot;
pub mod cursor;
pub mod merge;
pub mod patch;
pub mod protocol;

use contextos_core::ir::Origin;
use contextos_core::policy::PolicySet;
use serde::Serialize;

/// The agents ContextOS compiles for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    /// `AGENTS.md`, read by Codex, Cursor, Copilot, Windsurf, Zed, Gemini and others.
    Agents,
    Claude,
    Cursor,
    Copilot,
    /// OpenAI Codex: exec-policy rules and the hook (instructions come from `AGENTS.md`).
    Codex,
}

impl Target {
    pub const ALL: [Target; 5] = [
        Target::Agents,
        Target::Claude,
        Target::Cursor,
        Target::Copilot,
        Target::Codex,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Target::Agents => "agents",
            Target::Claude => "claude",
            Target::Cursor => "cursor",
            Target::Copilot => "copilot",
            Target::Codex => "codex",
        }
    }
    pub fn parse(s: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// One generated file, or ContextOS's part of one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Output {
    /// Project-relative, `/`-separated.
    pub path: String,
    pub target: Target,
    pub content: Content,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Content {
    /// The whole file belongs to ContextOS (a generated `.mdc`, `.instructions.md`, the
    /// Copilot hooks file). An existing file ContextOS does not own is never overwritten.
    Whole { text: String },
    /// A managed block inside a Markdown file people also write by hand (`AGENTS.md`,
    /// `CLAUDE.md`, `.github/copilot-instructions.md`): the text between
    /// [`merge::BLOCK_BEGIN`] and [`merge::BLOCK_END`]; the user's text around it is kept.
    Block { text: String },
    /// ContextOS's entries in a JSON file people also edit (`.claude/settings.json`,
    /// `.cursor/hooks.json`): user keys and entries are kept, in their order.
    Json { parts: Vec<JsonPart> },
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
    /// ownership lock) are replaced by these.
    Items {
        pointer: String,
        items: Vec<serde_json::Value>,
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
    pub target: Target,
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

/// Runs the emitters of `targets`; outputs are sorted by path (byte-wise) so two runs on
/// the same policies give the same bytes everywhere.
pub fn emit(set: &PolicySet, targets: &[Target]) -> Emitted {
    let mut out = Emitted::default();
    for t in targets {
        let e = match t {
            Target::Agents => agents::emit(set),
            Target::Claude => claude::emit(set),
            Target::Cursor => cursor::emit(set),
            Target::Copilot => copilot::emit(set),
            Target::Codex => codex::emit(set),
        };
        out.outputs.extend(e.outputs);
        out.lossy.extend(e.lossy);
    }
    out.outputs
        .sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    out.lossy.sort_by(|a, b| {
        (a.target, a.rule.as_bytes(), a.message.as_bytes()).cmp(&(
            b.target,
            b.rule.as_bytes(),
            b.message.as_bytes(),
        ))
    });
    out
}
