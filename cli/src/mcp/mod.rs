//! `contextos mcp`: the boundary as an MCP server. An agent configured with it reads,
//! writes, edits and patches project files and runs commands through these tools
//! instead of its own, so every write goes through the policies, the project lock and
//! the journal, and every command through the sandbox.
//!
//! One job per file: [`server`] wires the protocol; [`tools`] holds one file per tool;
//! [`gate`] decides a call (with [`elicit`] for an `ask` and [`audit`] for the decision
//! log); [`edit`] and [`patch`] compute new file contents; [`commit`] is the only way
//! they reach the disk; [`limits`] says what a call may carry and how it fails; [`reply`] shapes a
//! successful result.

mod audit;
mod commit;
mod edit;
mod elicit;
mod gate;
pub(crate) mod limits;
// The applier lives outside the server so that it builds without `docker` (fuzzing).
pub(crate) use crate::support::patch;
mod reply;
mod server;
mod state;
mod tools;

pub use limits::{Limits, DEFAULT_MAX_FILE_BYTES};
pub use server::serve;
pub use state::State;
