//! ContextOS engine: compiles policies into an indexed policy set and decides requests.
//!
//! A request flows canonicalise → index → conditions → decision:
//! - [`compile`] turns policy sources into a checked [`PolicySet`] (or located diagnostics);
//! - [`PolicySet::decide`] is the one, pure decision path ([`eval`]);
//! - [`PolicySet::decide_shell`] splits a shell line and decides every command ([`exec`]);
//! - [`testing`] runs the policies' own `test` blocks;
//! - [`effects`] holds the effect handlers, the only modules that touch the host:
//!   safe paths, the project lock, the journal, the decision log and the sandbox
//!   ([`effects::sandbox`]; its Docker runner is behind the `sandbox` feature).

pub mod canon;
pub mod compile;
pub mod decision;
pub mod detector;
pub mod effects;
pub mod emit;
pub mod eval;
pub mod exec;
pub mod glob;
mod index;
pub mod ir;
pub mod plugins;
pub mod policy;
pub mod request;
pub mod scan;
pub mod schema;
pub mod script;
pub mod snapshot;
pub mod testing;

pub use compile::{compile, CompileOptions, CompileOutput, FileDiagnostic, PolicySource, NO_FILE};
pub use contextos_grammar::ast::Effect;
pub use decision::{Decision, RuleHit, ShellDecision, WhyNot};
pub use eval::EvalOptions;
pub use exec::ShellOptions;
pub use ir::Layer;
pub use policy::{GuideApply, PolicySet};
pub use request::{
    CommitRequest, Domain, ExecRequest, PathOp, PathRequest, PluginRequest, Request, RequestKind,
};
