//! One agent's hook wire format, as data: how its event is read, how a decision is
//! written back, and its blocking form. Each agent folder defines its `DIALECT`.

use super::answer::Decision;
use super::event::{HookEvent, ProtocolError};
use super::fields::Obj;

/// What a hook dialect translates.
pub(crate) struct Dialect {
    /// The event object (already checked to be a JSON object) as a [`HookEvent`].
    pub parse: fn(&Obj) -> Result<HookEvent, ProtocolError>,
    /// Stdout for a decision on the judged event named `event`, ending with a newline.
    pub answer: fn(event: &str, Decision, reason: &str) -> String,
    /// How a fail-closed answer blocks.
    pub failure: Failure,
    /// The verdict is the exit code alone (Windsurf's Cascade hooks): a deny is exit 2
    /// with the reason on stderr, an allow is exit 0 with nothing written; `answer` is
    /// not used.
    pub by_exit: bool,
}

/// [`Dialect::answer`] for the dialects whose verdict is the exit code alone
/// ([`Dialect::by_exit`]): they never read a document.
pub(crate) fn no_document(_event: &str, _decision: Decision, _reason: &str) -> String {
    String::new()
}

/// How an agent is made to block when ContextOS cannot decide.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Failure {
    /// Exit 2 with the reason on stderr, stdout empty (Claude Code, Codex: exit 2 is what
    /// blocks, and stdout is ignored then).
    ExitTwo,
    /// A deny [`Dialect::answer`] on stdout, the reason on stderr, and this exit code.
    /// The deny document of these dialects does not depend on the event.
    DenyAnswer { exit: u8 },
}
