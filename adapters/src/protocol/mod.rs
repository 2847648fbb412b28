//! What every agent's hook dialect shares.
//!
//! `contextos hook claude|cursor|copilot|codex` is started by the agent before a tool call,
//! gets the call as JSON on stdin and must answer in the agent's own format on stdout and
//! exit code. The dialects (`claude/hook.rs`, `cursor/hook.rs`, …) only translate: the
//! agent's bytes into a [`HookEvent`] (what is about to happen, in policy terms), and a
//! verdict back into bytes and an exit code. No file system, environment or clock — the
//! caller does the I/O, evaluates the actions and writes the log.
//!
//! Fail-closed rules that shape the code:
//! - Input that is not JSON, or an event ContextOS must judge but whose required fields are
//!   missing or mistyped, is a [`ProtocolError`]; the caller answers
//!   [`crate::render_failure`]. Silently mapping it to "no action" would let the call
//!   through unjudged.
//! - Where a tool could carry its path in several fields, every distinct one becomes an
//!   action, so a decoy field cannot hide the real target.
//! - "No decision" is [`Answer::Pass`] (empty stdout), never an `allow`: in Claude Code an
//!   `allow` skips the user's own permission prompt.
//! - `ask` is only emitted where the event honours it; elsewhere it degrades to a deny that
//!   says so.
//!
//! Protocol references: `ide-targets.md` §1.1.3 (Claude Code), §1.2.2 (Cursor), §1.3.2
//! (Copilot), §1.5 (`apply_patch`), §4.4 (verdict → wire format).

pub mod answer;
pub(crate) mod apply_patch;
pub(crate) mod dialect;
pub mod event;
pub(crate) mod fields;
pub mod patch;
pub mod route;

pub use answer::{Answer, Rendered};
pub use event::{Action, Edit, HookEvent, McpEndpoint, ProtocolError};
pub use route::{can_rewrite, render_routed, routed_argv, routed_command, Route};
