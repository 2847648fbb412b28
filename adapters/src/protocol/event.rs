//! A hook invocation, decoded: what the agent is about to do, in policy terms.

use crate::Agent;
use contextos_core::PathOp;

/// What the agent is about to do, in policy terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// A shell command line (Claude Bash, Cursor beforeShellExecution/Shell tool, Copilot bash).
    Shell { line: String },
    /// A PowerShell command line: its syntax is not analysed, so the hook asks rather than
    /// judging it with POSIX shell rules (which would mangle `C:\…` paths and miss cmdlets).
    PowerShell { line: String },
    /// A file operation; `path` exactly as the agent sent it (often absolute).
    Path { op: PathOp, path: String },
    /// A web fetch (Claude WebFetch, Copilot web_fetch): a `net fetch` request.
    Fetch { url: String },
    /// A web search (Claude WebSearch): the query goes to the agent's search provider.
    Search { query: String },
    /// An MCP tool call: an `mcp` request. `args` is the call's input as sent.
    Mcp {
        server: Option<String>,
        tool: String,
        args: Option<serde_json::Value>,
        /// How the server can be told when the payload does not name it.
        endpoint: McpEndpoint,
    },
}

/// What an MCP call's payload says about its server beside (or instead of) a name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum McpEndpoint {
    /// Nothing beside `server` (which may be missing: the server is then unknown).
    #[default]
    Named,
    /// The server is a program started with this command line (Cursor
    /// `beforeMCPExecution` `command`): the project's definitions say which one it is.
    Command(String),
    /// The server is reached at this URL (Cursor `beforeMCPExecution` `url`).
    Url(String),
    /// The tool name is the server's name, `-`, and the tool's (GitHub Copilot CLI:
    /// `github-mcp-server-get_issue`); server names may hold `-` too, so the hook splits it
    /// at the longest server name it knows.
    Prefixed,
    /// The event names no server, and another event of the same call does (Cursor
    /// `preToolUse` `MCP:<tool>`, judged again in `beforeMCPExecution`): only what does not
    /// depend on the server is judged here.
    JudgedElsewhere,
}

/// One hook invocation, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookEvent {
    pub agent: Agent,
    /// `hook_event_name` as sent (`PreToolUse`, `beforeShellExecution`, `preToolUse`…);
    /// inferred as `preToolUse`/`postToolUse` for Copilot's camelCase dialect, which has none.
    pub event: String,
    /// Tool name, or the event name for tool-less events.
    pub tool: String,
    /// Empty = nothing ContextOS can judge (answer: pass).
    pub actions: Vec<Action>,
    /// The agent's working directory if sent.
    pub cwd: Option<String>,
    /// Project roots if sent (Cursor `workspace_roots`; Claude's `cwd` is not a root).
    pub roots: Vec<String>,
    pub session: Option<String>,
    /// The tool's input object as sent, for the dialects whose answer can replace it
    /// (Claude Code's `updatedInput` replaces the whole input, so a rewrite keeps every
    /// other field); `None` for the others.
    pub tool_input: Option<serde_json::Map<String, serde_json::Value>>,
    /// Whether this event/target honours "ask".
    pub can_ask: bool,
    /// True when the event cannot veto at all (afterFileEdit, postToolUse…): answer nothing.
    /// `actions` is then filled on a best-effort basis, for the log only.
    pub observe_only: bool,
    /// The agent's permission mode as it names it (Claude Code and Codex `permission_mode`:
    /// `default`, `plan`, `acceptEdits`, `auto`, `dontAsk`, `bypassPermissions`); `None`
    /// where the agent sends none (Cursor, Copilot). Outside `default` and `plan` silence
    /// runs the action, so the hook answers what only a default decided.
    pub permission_mode: Option<String>,
    /// The text the file tools of this event write, where the payload carries it (Claude
    /// Write/Edit/MultiEdit, Codex and Copilot `apply_patch`, Copilot create/edit, Cursor
    /// write/edit tools): what an edit adds is judged too, not only where it lands.
    pub edits: Vec<Edit>,
}

/// The text one file tool call removes from and adds to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// The file, exactly as the agent sent it (often absolute).
    pub path: String,
    /// Text the edit replaces (Edit `old_string`, a patch's `-` lines); empty for a whole
    /// new file.
    pub removed: String,
    /// Text the edit puts in (Write `content`, Edit `new_string`, a patch's `+` lines).
    pub added: String,
    /// `added` is the file's whole new content (Write, create, a patch's `Add File`), not
    /// a fragment of it.
    pub whole: bool,
}

/// Hook input ContextOS cannot read. The caller must answer with [`crate::render_failure`].
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ProtocolError(pub String);
