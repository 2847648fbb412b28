//! One agent's hook wire format, as data: how its event is read, how a decision is
//! written back, and its blocking form. Each agent folder defines its `DIALECT`.

use super::answer::{Decision, Rendered};
use super::event::{HookEvent, ProtocolError};
use super::fields::Obj;

/// The three translations a hook dialect provides.
pub(crate) struct Dialect {
    /// The event object (already checked to be a JSON object) as a [`HookEvent`].
    pub parse: fn(&Obj) -> Result<HookEvent, ProtocolError>,
    /// Stdout for a decision on a judged event, ending with a newline.
    pub answer: fn(&HookEvent, Decision, &str) -> String,
    /// The fail-closed answer carrying `reason`.
    pub failure: fn(&str) -> Rendered,
}
