//! ContextOS, the public crate: a map from each job to the crate that does it.
//!
//! | job | crate | entry point |
//! |---|---|---|
//! | policy text → AST, diagnostics, formatter | [`grammar`] (`contextos-grammar`) | [`grammar::parse`], [`grammar::format_source`] |
//! | what a shell line runs and touches | [`shell`] (`contextos-shell`) | [`shell::split`], [`shell::split_argv`], [`shell::file_effects`] |
//! | requests, checker/compiler, IR, index, the pure evaluator | [`core`] (`contextos-core`) | [`build()`], [`PolicySet::decide`], [`PolicySet::decide_shell`], [`PolicySet::decide_argv`] |
//! | each agent's emitter and hook protocol | [`emit`] (`contextos-adapters`) | [`emit::emit`], [`emit::parse_event`] |
//! | the staged scan and the only git reader | [`scan`] (`contextos-scan`, feature `scan`) | `scan::staged`, `scan::repo` |
//! | effect handlers: atomic writes, safe paths, project lock, journal, decision log, sandbox | [`effects`] (`contextos-effects`) | [`effects::journal`], [`effects::project_lock`], [`effects::sandbox`] |
//! | signed, pinned policy packs | [`plugins`] (`contextos-plugins`) | [`plugins::admission`], [`plugins::verify`] |
//! | the standard library, written as policies | [`stdlib`] (`contextos-stdlib`) | [`stdlib::FILES`] |
//!
//! A request flows canonicalise → index → conditions → decision → effect handler, and
//! never back: `shell` ← `core` ← {`adapters`, `scan`, `effects`} ← `plugins` ← `engine`.

#![warn(missing_docs)]

pub use contextos_adapters as emit;
pub use contextos_core as core;
pub use contextos_core::{
    build, canon, decision, detector, eval, glob, ir, policy, request, schema, script,
    shell_decide, snapshot, testing,
};
pub use contextos_core::{
    BuildOptions, BuildOutput, CommitRequest, Decision, Domain, Effect, EvalOptions, ExecRequest,
    FileDiagnostic, GuideApply, Layer, McpRequest, NetOp, NetRequest, PathOp, PathRequest,
    PluginRequest, PolicySet, PolicySource, Request, RequestKind, RuleHit, Session, ShellBase,
    ShellDecision, ShellOptions, WhyNot, NO_FILE,
};
pub use contextos_effects as effects;
pub use contextos_grammar as grammar;
pub use contextos_plugins as plugins;
#[cfg(feature = "scan")]
pub use contextos_scan as scan;
pub use contextos_shell as shell;
pub use contextos_stdlib as stdlib;

/// The embedded standard library's files as compiler sources, in load order: what every
/// command puts before a project's own policies.
pub fn stdlib_sources() -> Vec<PolicySource> {
    stdlib::FILES
        .iter()
        .map(|(name, text)| PolicySource::embedded_stdlib(name, text))
        .collect()
}
