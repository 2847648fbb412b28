//! Runs the chosen agents' emitters: one compiled policy set in, every output out.

use crate::{agents_md, claude, codex, copilot, cursor, wiring};
use crate::{Agent, Emitted, Mode};
use contextos_core::policy::PolicySet;

/// Runs the emitters of `targets`, with the boundary wiring of `mode` ([`wiring`]); outputs
/// are sorted by path (byte-wise) so two runs on the same policies give the same bytes
/// everywhere.
pub fn emit(set: &PolicySet, targets: &[Agent], mode: Mode) -> Emitted {
    let mut out = Emitted::default();
    for t in targets {
        let e = match t {
            Agent::AgentsMd => agents_md::emit::emit(set),
            Agent::Claude => claude::emit::emit(set, mode),
            Agent::Cursor => cursor::emit::emit(set),
            Agent::Copilot => copilot::emit::emit(set),
            Agent::Codex => codex::emit::emit(set),
        };
        out.outputs.extend(e.outputs);
        out.outputs.extend(wiring::registration(*t));
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
