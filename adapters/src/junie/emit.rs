//! The Junie emitter: a managed block in `.junie/guidelines.md`, the project guidelines
//! file Junie reads, with the same text as `AGENTS.md`'s block. Instructions only: Junie
//! runs no ContextOS hook and has no permission file ContextOS writes.

use crate::agents_md::emit::agents_md;
use crate::{Agent, Content, Emitted, Output};
use contextos_core::policy::PolicySet;

pub fn emit(set: &PolicySet) -> Emitted {
    Emitted {
        outputs: vec![Output {
            path: ".junie/guidelines.md".into(),
            target: Agent::Junie,
            content: Content::Block {
                text: agents_md(set),
            },
        }],
        lossy: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::policies::{block_text, full};

    #[test]
    fn guidelines_carry_the_agents_md_text() {
        let set = full();
        let agents = crate::agents_md::emit::emit(&set);
        assert_eq!(
            block_text(&emit(&set), ".junie/guidelines.md"),
            block_text(&agents, "AGENTS.md")
        );
    }
}
