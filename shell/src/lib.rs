//! What a shell command line runs and which files it touches.
//!
//! [`split`] parses a line into [`SimpleCommand`]s (pipelines, lists, subshells, command
//! substitutions and wrappers unwrapped); [`file_effects`] tells which files one simple
//! command reads, writes or deletes. Nothing here decides anything: the policy core turns
//! what this crate finds into requests.

mod line;
mod touches;

pub use line::{split, ShellError, SimpleCommand, MAX_DEPTH, MAX_INPUT_LEN};
pub use touches::{file_effects, FileEffect, FileEffects};

/// What a command does to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileOp {
    Read,
    Write,
    Delete,
}

/// The last `/`-separated component of a program path.
pub fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}
