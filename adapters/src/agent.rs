//! The agents ContextOS works with: one enum for compiling their configuration and for
//! answering their hooks.

use serde::Serialize;

/// An agent ContextOS writes configuration for. Every agent is a compile target; the
/// ones [`Agent::has_hook`] names also run `contextos hook <name>` before a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Agent {
    /// `AGENTS.md`, read by Codex, Cursor, Copilot, Windsurf, Zed, Gemini and others. An
    /// instruction file, not a program: it has no hook.
    #[serde(rename = "agents")]
    AgentsMd,
    /// Claude Code.
    Claude,
    /// Cursor.
    Cursor,
    /// GitHub Copilot (CLI and cloud agent).
    Copilot,
    /// OpenAI Codex: exec-policy rules and the hook (instructions come from `AGENTS.md`).
    /// Its hook sends Claude's PreToolUse shape (`Bash`, `apply_patch`, `mcp__…`), but it
    /// cannot ask, and its output schema allows no field beyond the decision.
    Codex,
    /// Gemini CLI: `.gemini/settings.json` (`context.fileName` so it reads `AGENTS.md`, the
    /// `BeforeTool` hook, MCP), policy-engine TOML for literal exec rules, `.geminiignore`.
    /// Its hook answers `decision`/`reason` and cannot ask.
    Gemini,
    /// Windsurf (Devin Desktop): `.windsurf/rules` glob rules, Cascade hooks in
    /// `.windsurf/hooks.json` (verdict by exit code; no ask), `.codeiumignore`.
    Windsurf,
    /// Cline: `.clinerules/ctx-*.md` rules with `paths:`, and the `PreToolUse` hook
    /// program in `.clinerules/hooks/` (a `cancel` document; no ask).
    Cline,
    /// Zed: `.rules` with the full `AGENTS.md` text, and `agent.tool_permissions` in
    /// `.zed/settings.json` (no hook).
    Zed,
    /// JetBrains Junie: `.junie/guidelines.md` (instructions only, no hook).
    Junie,
    /// Kiro: `.kiro/steering` files with `inclusion: fileMatch`, and the CLI's
    /// `PreToolUse` command hook in `.kiro/hooks/contextos.json` (exit code; no ask).
    Kiro,
    /// Continue: `.continue/rules/ctx-*.md` with `name`, `globs` and `alwaysApply` front
    /// matter (instructions only, no hook).
    Continue,
    /// Aider: `.aider.conf.yml` with `read: [AGENTS.md]` and `.aiderignore` (instructions
    /// only, no hook).
    Aider,
    /// OpenCode: `opencode.json` `permission` (`bash` patterns, `edit`, `webfetch`); it
    /// reads `AGENTS.md` itself (no hook).
    #[serde(rename = "opencode")]
    OpenCode,
    /// Amp: `.amp/settings.json` `amp.permissions` (native rejects, then every other tool
    /// call delegated to `contextos`, which answers by exit code and can ask for `Bash`)
    /// and `amp.mcpServers`; it reads `AGENTS.md` itself.
    Amp,
    /// Amazon Q Developer CLI: the custom agent `.amazonq/cli-agents/contextos.json`
    /// (`deniedCommands`/`deniedPaths`, the `preToolUse` hook — verdict by exit code, no
    /// ask — MCP, `AGENTS.md` as a resource); used when started with `--agent contextos`.
    #[serde(rename = "amazonq")]
    AmazonQ,
}

impl Agent {
    /// Every compile target, in the order outputs and warnings are sorted by.
    pub const ALL: [Agent; 16] = [
        Agent::AgentsMd,
        Agent::Claude,
        Agent::Cursor,
        Agent::Copilot,
        Agent::Codex,
        Agent::Gemini,
        Agent::Windsurf,
        Agent::Cline,
        Agent::Zed,
        Agent::Junie,
        Agent::Kiro,
        Agent::Continue,
        Agent::Aider,
        Agent::OpenCode,
        Agent::Amp,
        Agent::AmazonQ,
    ];

    /// The name used on the command line (`--target`, `contextos hook <name>`), in the
    /// ownership record and in the decision log.
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::AgentsMd => "agents",
            Agent::Claude => "claude",
            Agent::Cursor => "cursor",
            Agent::Copilot => "copilot",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Windsurf => "windsurf",
            Agent::Cline => "cline",
            Agent::Zed => "zed",
            Agent::Junie => "junie",
            Agent::Kiro => "kiro",
            Agent::Continue => "continue",
            Agent::Aider => "aider",
            Agent::OpenCode => "opencode",
            Agent::Amp => "amp",
            Agent::AmazonQ => "amazonq",
        }
    }

    /// The agent named `s` (see [`Agent::as_str`]).
    pub fn parse(s: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// Whether the agent runs ContextOS's hook before its tool calls, so that
    /// [`crate::parse_event`] can read what it sends.
    pub fn has_hook(self) -> bool {
        !matches!(
            self,
            Agent::AgentsMd
                | Agent::Zed
                | Agent::Junie
                | Agent::Continue
                | Agent::Aider
                | Agent::OpenCode
        )
    }

    /// Whether the agent's instructions come from `AGENTS.md`, so compiling for it
    /// compiles `AGENTS.md` too (`CLAUDE.md` imports it; Gemini CLI is pointed at it;
    /// Windsurf and Kiro read it for the project-wide guides; Aider is told to read it; Amp
    /// reads it; the Amazon Q agent lists it as a resource).
    pub fn needs_agents_md(self) -> bool {
        matches!(
            self,
            Agent::Claude
                | Agent::Gemini
                | Agent::Windsurf
                | Agent::Kiro
                | Agent::Aider
                | Agent::OpenCode
                | Agent::Amp
                | Agent::AmazonQ
        )
    }
}
