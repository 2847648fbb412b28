//! What a shell command line runs and which files it touches.
//!
//! [`split`] parses a line into [`SimpleCommand`]s (pipelines, lists, subshells, command
//! substitutions and wrappers unwrapped), [`split_argv`] does the same for a command
//! given as argv; [`file_effects`] tells which files one simple
//! command writes or deletes. Nothing here decides anything: the policy core turns
//! what this crate finds into requests.
//!
//! One model serves both: the parser (`parser`, building the tree of `ast`), the
//! `walker` that turns the tree into simple commands, one wrapper table (`wrappers`),
//! one option parser (`options`) and the per-program file models (`touches`). Small
//! shared pieces have files of their own (`names`, `file_op`, `limits`, `error`,
//! `command`) so that no two files import each other.

#![warn(missing_docs)]

mod ast;
mod command;
mod error;
mod file_op;
mod limits;
mod names;
mod options;
mod parser;
mod quote;
mod shell_args;
#[cfg(test)]
mod test_support;
mod touches;
mod walker;
mod wrappers;

pub use command::SimpleCommand;
pub use error::ShellError;
pub use file_op::FileOp;
pub use limits::{MAX_DEPTH, MAX_INPUT_LEN};
pub use names::{basename, normalise_path};
pub use quote::quote;
pub use touches::{file_effects, FileEffect, FileEffects, LinkMade};
pub use walker::{split, split_argv};
