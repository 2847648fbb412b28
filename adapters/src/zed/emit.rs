//! The Zed emitter: a managed block in `.rules` with the same text as `AGENTS.md`'s.
//!
//! Zed's agent reads one project rules file, the first that exists of `.rules`,
//! `.cursorrules`, `.windsurfrules`, `.clinerules`, `.github/copilot-instructions.md`,
//! `AGENT.md`, `AGENTS.md`, `CLAUDE.md`, `GEMINI.md`. With the Copilot target compiled,
//! `.github/copilot-instructions.md` (a short pointer) would come before `AGENTS.md`;
//! `.rules` comes first of all, so Zed gets the full project instructions. Guides confined
//! to a directory (the nested `AGENTS.md` files) do not reach Zed, which reads no nested
//! file.
//!
//! Enforcement: ContextOS's entries in `.zed/settings.json` `agent.tool_permissions`
//! ([`super::permissions`]). Zed runs no hook.

use super::permissions::{parts, SETTINGS_PATH};
use crate::agents_md::emit::agents_md;
use crate::{Agent, Content, Emitted, Output};
use contextos_core::policy::PolicySet;

pub fn emit(set: &PolicySet) -> Emitted {
    let (parts, lossy) = parts(set);
    let mut outputs = vec![Output {
        path: ".rules".into(),
        target: Agent::Zed,
        content: Content::Block {
            text: agents_md(set),
        },
    }];
    if !parts.is_empty() {
        outputs.push(Output {
            path: SETTINGS_PATH.into(),
            target: Agent::Zed,
            content: Content::Json { parts },
        });
    }
    Emitted { outputs, lossy }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::policies::{block_text, full};

    #[test]
    fn rules_carry_the_full_agents_md_text() {
        let set = full();
        let e = emit(&set);
        let agents = crate::agents_md::emit::emit(&set);
        assert_eq!(block_text(&e, ".rules"), block_text(&agents, "AGENTS.md"));
        assert!(block_text(&e, ".rules").contains("no-force-push"));
    }
}
