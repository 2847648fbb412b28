//! A compiled, checked policy set: the only input the evaluator needs besides a request.
//!
//! This module holds the data only, at the bottom of the crate; the set's methods live in
//! one place, `policy_impl.rs`, and delegate to the module that does each job.

use crate::index::Index;
use crate::ir::Origin;
use crate::request::Request;
use crate::rules::Rules;
use crate::script::ScriptHost;
use contextos_grammar::ast::Effect;
use std::collections::BTreeSet;

/// The `let`s whose values the runtime reads beside the rules: `untrusted_reads` (file
/// globs whose content taints the agent session that reads it), `trusted_fetch_hosts`
/// (host globs whose pages do not) and `secret_env_vars` (variable-name globs whose
/// expansion in a command line that reaches the network sends a secret).
pub const RUNTIME_LETS: &[&str] = &["untrusted_reads", "trusted_fetch_hosts", "secret_env_vars"];

/// Everything compiled from the policy sources (stdlib, plugins, project): rules, defaults,
/// guides, detectors and tests, plus the rule index and the compiled scripts that make
/// deciding a request fast. Immutable once built, by [`build`](crate::build()) or from a
/// snapshot.
#[derive(Debug)]
pub struct PolicySet {
    /// Every rule of every layer, in load order; order never affects a verdict.
    pub rules: Rules,
    /// Default effect per domain, indexed by [`Domain::index`](crate::request::Domain::index).
    pub defaults: [Effect; crate::request::Domain::COUNT],
    /// Advice for agents; never read by the evaluator, only by the emitters.
    pub guides: Vec<CompiledGuide>,
    /// What `scan --staged` looks for, in declaration order (stdlib first); from a
    /// snapshot, decoded on first read.
    pub detectors: crate::lazy_list::LazyList<crate::detector::CompiledDetector>,
    /// The `test` blocks, run by [`run_tests`](crate::testing::run_tests); not part of a snapshot.
    pub tests: Vec<CompiledTest>,
    /// Names of every `role` block, which test cases' `as role` are checked against.
    pub roles: BTreeSet<String>,
    /// The expanded values of the `let`s the runtime reads (see [`RUNTIME_LETS`]), for
    /// what the hook does outside a verdict (which reads taint a session).
    pub runtime_lets: std::collections::BTreeMap<String, Vec<String>>,
    pub(crate) index: Index,
    /// The roles the rules' conditions compare with, gathered on first use (a snapshot
    /// carries them, so a hook need not decode every rule to check its role).
    pub(crate) role_literals: std::sync::OnceLock<BTreeSet<String>>,
    pub(crate) scripts: ScriptHost,
}

/// Advisory text for agents, scoped by globs; consumed by the IDE emitters.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CompiledGuide {
    /// The `@id`, or `FILE:LINE` of the guide when it has none.
    pub id: String,
    /// The guide's title, by which an agent judges relevance for `@apply("agent")`.
    pub title: String,
    /// Path globs of its `for` clause; empty means the whole project.
    pub scope: Vec<String>,
    /// The body strings, joined with a blank line.
    pub text: String,
    /// The `role` block the guide is in: advice for that role only.
    pub role: Option<String>,
    /// When an agent should see the guide (`@apply("…")`, or derived from scope and role).
    pub apply: GuideApply,
    /// Where the guide starts in its source.
    pub origin: Origin,
}

/// When a guide reaches an agent: always, when a matching file is in play, when the
/// agent judges it relevant from its title, or only when a person names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GuideApply {
    /// Always loaded into the agent's context.
    Always,
    /// Loaded when a file its scope matches is in play.
    Auto,
    /// Offered by title; the agent pulls it in when it judges it relevant.
    Agent,
    /// Only when a person names it; kept out of the files agents always load.
    Manual,
}

impl GuideApply {
    /// The `@apply` values, as written in policy text.
    pub const NAMES: [&'static str; 4] = ["always", "auto", "agent", "manual"];
    /// The mode named by an `@apply` value; `None` for anything else (E0107).
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

/// One `test "NAME" { … }` block: cases that pin the set's decisions.
#[derive(Debug, Clone)]
pub struct CompiledTest {
    /// The block's name, which `contextos test --filter` matches by substring.
    pub name: String,
    /// Stdlib tests describe the stdlib alone; a project's own rules may change their outcome.
    pub layer: crate::ir::Layer,
    /// Where the block starts.
    pub origin: Origin,
    /// The block's cases, in source order.
    pub cases: Vec<CompiledCase>,
}

/// What a test case decides.
#[derive(Debug, Clone)]
pub enum TestSubject {
    /// A single request, decided like `contextos decide` (boxed: an exec request carries
    /// the whole shell model).
    Request(Box<Request>),
    /// A shell line, decided like `decide exec --shell`.
    Shell(String),
}

/// One `SUBJECT [as role "R"] => EFFECT[(ids…)]` line of a test block.
#[derive(Debug, Clone)]
pub struct CompiledCase {
    /// The request or shell line the case decides.
    pub subject: TestSubject,
    /// The role the case's request carries (`as role "…"`).
    pub role: Option<String>,
    /// `tainted`: the case is decided as from a session that has seen untrusted content.
    pub tainted: bool,
    /// The verdict the case expects.
    pub expect: Effect,
    /// Ids that must be among the deciding rules; other deciding rules do not fail the case.
    pub expect_rules: Vec<String>,
    /// The case's source text, used to name it in reports.
    pub text: String,
    /// Where the case is written.
    pub origin: Origin,
}
