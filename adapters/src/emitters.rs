//! Runs the chosen agents' emitters: one compiled policy set in, every output out.

use crate::{
    agents_md, aider, amazonq, amp, claude, cline, codex, continue_dev, copilot, cursor, gemini,
    junie, kiro, opencode, windsurf, wiring, zed,
};
use crate::{Agent, Emitted, Mode};
use contextos_core::policy::PolicySet;

/// What shapes the outputs beside the policies: the project's `contextos.toml`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EmitOptions {
    /// `[boundary] mode`: how far the agents are wired into ContextOS ([`wiring`]).
    pub mode: Mode,
    /// `[mcp] servers`: the MCP servers the project lists (pinned, decided by policy).
    /// Agents with a native allowlist get exactly these plus ContextOS's own server
    /// enabled; any other project server stays off natively, and the hook asks for it.
    pub mcp_servers: Vec<String>,
    /// `[compile.copilot] install`: the command the Copilot cloud agent's setup workflow
    /// runs to install `contextos`; unset, a default with a warning
    /// ([`crate::copilot::emit::DEFAULT_INSTALL`]).
    pub copilot_install: Option<String>,
    /// `[compile.claude] sandbox`: Claude Code's `sandbox.*` settings are written
    /// ([`crate::claude::sandbox::sandbox_parts`]).
    pub claude_sandbox: bool,
}

/// Runs the emitters of `targets` with `opts`; outputs are sorted by path (byte-wise) so
/// two runs on the same policies give the same bytes everywhere.
pub fn emit(set: &PolicySet, targets: &[Agent], opts: &EmitOptions) -> Emitted {
    let mut out = Emitted::default();
    for t in targets {
        let e = match t {
            Agent::AgentsMd => agents_md::emit::emit(set),
            Agent::Claude => claude::emit::emit(set, opts),
            Agent::Cursor => cursor::emit::emit(set, targets.contains(&Agent::AgentsMd)),
            Agent::Copilot => copilot::emit::emit(set, opts),
            Agent::Codex => codex::emit::emit(set),
            Agent::Gemini => gemini::emit::emit(set, opts),
            Agent::Windsurf => windsurf::emit::emit(set),
            Agent::Cline => cline::emit::emit(set),
            Agent::Zed => zed::emit::emit(set),
            Agent::Junie => junie::emit::emit(set),
            Agent::Kiro => kiro::emit::emit(set),
            Agent::Continue => continue_dev::emit::emit(set),
            Agent::Aider => aider::emit::emit(set),
            Agent::OpenCode => opencode::emit::emit(set),
            Agent::Amp => amp::emit::emit(set),
            Agent::AmazonQ => amazonq::emit::emit(set, opts),
        };
        out.outputs.extend(e.outputs);
        out.outputs.extend(wiring::registration(*t));
        out.lossy.extend(e.lossy);
        out.lossy
            .extend(wiring::allowlist_notes(*t, &opts.mcp_servers));
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
