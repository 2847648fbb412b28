//! A compiled, checked policy set: the only input the evaluator needs besides a request.
//!
//! This module holds the data only, at the bottom of the crate; the set's methods live in
//! one place, `policy_impl.rs`, and delegate to the module that does each job.

use crate::index::Index;
use crate::ir::{CompiledRule, Origin};
use crate::request::Request;
use crate::script::ScriptHost;
use contextos_grammar::ast::Effect;
use std::collections::BTreeSet;

#[derive(Debug)]
pub struct PolicySet {
    pub rules: Vec<CompiledRule>,
    /// Default effect per domain, indexed by [`Domain::index`](crate::request::Domain::index).
    pub defaults: [Effect; 4],
    pub guides: Vec<CompiledGuide>,
    /// What `scan --staged` looks for, in declaration order (stdlib first).
    pub detectors: Vec<crate::detector::CompiledDetector>,
    pub tests: Vec<CompiledTest>,
    pub roles: BTreeSet<String>,
    pub(crate) index: Index,
    pub(crate) scripts: ScriptHost,
}

/// Advisory text for agents, scoped by globs; consumed by the IDE emitters.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CompiledGuide {
    pub id: String,
    pub title: String,
    pub scope: Vec<String>,
    pub text: String,
    pub role: Option<String>,
    /// When an agent should see the guide (`@apply("…")`, or derived from scope and role).
    pub apply: GuideApply,
    pub origin: Origin,
}

/// When a guide reaches an agent: always, when a matching file is in play, when the
/// agent judges it relevant from its title, or only when a person names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GuideApply {
    Always,
    Auto,
    Agent,
    Manual,
}

impl GuideApply {
    pub const NAMES: [&'static str; 4] = ["always", "auto", "agent", "manual"];
    pub fn parse(s: &str) -> Option<GuideApply> {
        match s {
            "always" => Some(GuideApply::Always),
            "auto" => Some(GuideApply::Auto),
            "agent" => Some(GuideApply::Agent),
            "manual" => Some(GuideApply::Manual),
            _ => None,
        }
    }
    /// The default: a role's guide is pulled in on relevance (agents have no roles to
    /// attach it to), a scoped guide with its files, any other guide always.
    pub fn derived(scoped: bool, role: bool) -> GuideApply {
        match (role, scoped) {
            (true, _) => GuideApply::Agent,
            (false, true) => GuideApply::Auto,
            (false, false) => GuideApply::Always,
        }
    }
}

#[derive(Debug, Clone)]
pub struct CompiledTest {
    pub name: String,
    /// Stdlib tests describe the stdlib alone; a project's own rules may change their outcome.
    pub layer: crate::ir::Layer,
    pub origin: Origin,
    pub cases: Vec<CompiledCase>,
}

#[derive(Debug, Clone)]
pub enum TestSubject {
    Request(Request),
    /// A shell line, decided like `decide exec --shell`.
    Shell(String),
}

#[derive(Debug, Clone)]
pub struct CompiledCase {
    pub subject: TestSubject,
    pub role: Option<String>,
    pub expect: Effect,
    pub expect_rules: Vec<String>,
    pub text: String,
    pub origin: Origin,
}
