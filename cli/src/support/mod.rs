//! What more than one command needs: the invocation context, the output format, exit
//! codes and errors, and the pieces of one command's work another command reuses (the
//! changeset path of `apply` that `run` brings its results back through, the output
//! planning of `compile` that `gate` checks, the run records `decide` and `scan` consult,
//! the physical stage of a path decision every front end goes through).
//! Commands depend on `support`, never on each other.

pub mod binaries;
pub mod changeset;
pub mod companion;
pub mod context;
pub mod error;
pub mod exit;
pub mod format;
pub mod jsonc;
pub mod mcp_pins;
pub mod outputs;
pub mod patch;
pub mod physical;
pub mod policy_diff;
pub mod requests;
pub mod run_records;
pub mod tool_error;
pub mod user_config;

pub use context::Context;
pub use error::CliError;
pub use exit::Exit;
pub use format::Format;
