//! ContextOS policy core: compiles policies into an indexed policy set and decides requests.
//!
//! A request flows canonicalise → index → conditions → decision:
//! - [`build()`] turns policy sources into a checked [`PolicySet`] (or located diagnostics);
//! - [`PolicySet::decide`] is the one, pure decision path ([`eval`]);
//! - [`PolicySet::decide_shell`] splits a shell line and decides every command
//!   ([`shell_decide`], on the `contextos-shell` model);
//! - [`testing`] runs the policies' own `test` blocks;
//! - [`snapshot`] serialises a compiled set so a hook can load it without compiling.
//!
//! [`policy`] holds the set's data at the bottom of the crate; its methods are one
//! `impl PolicySet` block (`policy_impl.rs`) that calls [`eval`], [`shell_decide`] and
//! [`snapshot`], so none of them depends on another through the set.
//!
//! This crate does no I/O: no file system, no environment, no clock, no process, no
//! network. That is a boundary, not a habit: `core/clippy.toml` lists the calls and types
//! as `disallowed-methods` and `disallowed-types`, and `cargo clippy -- -D warnings` fails
//! on any of them. Reading files, the environment or the clock belongs to the callers
//! (effects, scan, adapters, the CLI), which pass what the core needs as values.

#![warn(missing_docs)]

mod beside;
pub mod build;
pub mod canon;
pub mod decision;
pub mod detector;
pub mod diff;
pub mod eval;
pub mod explain;
mod frozen;
pub mod glob;
mod index;
pub mod ir;
pub mod lazy_list;
pub mod lint;
pub mod net;
pub mod outside;
pub mod policy;
mod policy_impl;
pub mod query;
pub mod request;
mod rule_head;
pub mod rules;
pub mod schema;
pub mod script;
mod section;
pub mod shell_decide;
mod shell_env;
mod shell_net;
pub mod shell_place;
mod simple_glob;
pub mod snapshot;
pub mod testing;

pub use build::{build, BuildOptions, BuildOutput, FileDiagnostic, PolicySource, NO_FILE};
pub use contextos_grammar::ast::Effect;
pub use decision::{Decision, RuleHit, ShellDecision, WhyNot};
pub use eval::EvalOptions;
pub use ir::Layer;
pub use policy::{GuideApply, PolicySet};
pub use request::{
    CommitRequest, Domain, ExecRequest, McpRequest, NetOp, NetRequest, PathOp, PathRequest,
    PluginRequest, Request, RequestKind, Session,
};
pub use section::ReadAt;
pub use shell_decide::{ShellBase, ShellOptions};
