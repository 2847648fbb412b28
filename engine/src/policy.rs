//! A compiled, checked policy set: the only input the evaluator needs besides a request.

use crate::index::Index;
use crate::ir::{CompiledRule, Origin};
use crate::request::{Domain, Request};
use crate::script::ScriptHost;
use contextos_grammar::ast::Effect;
use std::collections::BTreeSet;

#[derive(Debug)]
pub struct PolicySet {
    pub rules: Vec<CompiledRule>,
    /// Default effect per domain, indexed by [`Domain::index`].
    pub defaults: [Effect; 4],
    pub guides: Vec<CompiledGuide>,
    pub tests: Vec<CompiledTest>,
    pub roles: BTreeSet<String>,
    pub(crate) index: Index,
    pub(crate) scripts: ScriptHost,
}

impl PolicySet {
    pub fn default_for(&self, d: Domain) -> Effect {
        self.defaults[d.index()]
    }
    pub fn rule(&self, id: &str) -> Option<&CompiledRule> {
        self.rules.iter().find(|r| r.id == id)
    }
}

/// Advisory text for agents, scoped by globs; consumed by the IDE emitters.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CompiledGuide {
    pub id: String,
    pub title: String,
    pub scope: Vec<String>,
    pub text: String,
    pub role: Option<String>,
    pub origin: Origin,
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
