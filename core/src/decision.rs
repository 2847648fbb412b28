//! What the evaluator returns: the verdict, the rules that decided it, the obligations
//! an effect handler must honour, and — on request — the why-not trace.

use crate::ir::{CompiledRule, ObligationIr, Origin};
use crate::request::{Domain, Request};
use contextos_grammar::ast::Effect;
use serde::Serialize;

/// A rule as it appears in a decision.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleHit {
    /// The `@id`, or `FILE:LINE` of the rule's effect keyword when it has none; what tests,
    /// `disable` lists and reports name the rule by.
    pub id: String,
    /// The rule's own effect, which for an overruled rule is weaker than the verdict.
    pub effect: Effect,
    /// The rule's `because` reason, shown to the agent and the reviewer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub because: Option<String>,
    /// The rule's `@severity` (`error`, `warning`, `info`); for presentation, never for
    /// the verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    /// The `role` block the rule is defined in; `None` for a global rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Where the rule starts in its source (its first annotation).
    pub origin: Origin,
}

impl RuleHit {
    /// The decision-facing view of a compiled rule.
    pub fn of(r: &CompiledRule) -> Self {
        RuleHit {
            id: r.id.clone(),
            effect: r.effect,
            because: r.because.clone(),
            severity: r.severity.clone(),
            role: r.role.clone(),
            origin: r.origin.clone(),
        }
    }
}

/// A candidate rule whose head matched but which did not apply, and the clause that failed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhyNot {
    /// The candidate that did not apply.
    pub rule: RuleHit,
    /// `when …` that was false or `unless …` that was true; or the role mismatch.
    pub clause: String,
    /// The failing clause's location, or the rule's for a role mismatch.
    pub origin: Origin,
}

/// A condition that could not be evaluated; resolved to the stricter outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalError {
    /// Id of the rule whose condition failed.
    pub rule: String,
    /// What went wrong, from the script engine or the operand types.
    pub message: String,
    /// What the error was taken to mean: the rule applied (deny/ask) or did not (allow).
    pub resolved_as: &'static str,
}

/// A subject decided without rules because it failed a structural check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rejection {
    /// Stable reason code that hooks and tests match on: `path.*`, `exec.empty`, and for
    /// shell lines `exec.unparsable`, `exec.dynamic-program`, `exec.dynamic-target`,
    /// `exec.unknown-targets`.
    pub code: String,
    /// Human-readable explanation of the failed check.
    pub message: String,
}

/// The answer to one request: the strongest effect among the rules that apply, or the
/// domain's default when none does; a rejected request is `deny` without consulting rules.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    /// The request's domain.
    pub domain: Domain,
    /// The outcome the caller must enforce: `deny` > `ask` > `allow`.
    pub verdict: Effect,
    /// The request as decided, i.e. after canonicalisation (paths repository-relative and
    /// `/`-separated).
    pub request: Request,
    /// Matched rules carrying the winning effect.
    #[serde(rename = "decidedBy")]
    pub decided_by: Vec<RuleHit>,
    /// Matched rules overruled by a stronger effect.
    pub overruled: Vec<RuleHit>,
    /// No rule applied and the verdict is the domain's `default`; false for a rejection.
    #[serde(rename = "defaultApplied")]
    pub default_applied: bool,
    /// What an effect handler must honour to carry the action out (e.g. `sandbox`): those of
    /// every applying rule, so an approved `ask` still runs under an allow rule's sandbox;
    /// empty for `deny`. A handler that cannot honour one must not run the action.
    pub obligations: Vec<ObligationIr>,
    /// Set when the subject failed a structural check and no rule was consulted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejection: Option<Rejection>,
    /// Conditions that failed to evaluate, each resolved to the stricter outcome.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<EvalError>,
    /// Filled only when an explanation was asked for.
    #[serde(rename = "whyNot", skip_serializing_if = "Vec::is_empty")]
    pub why_not: Vec<WhyNot>,
}

impl Decision {
    /// Ids of the deciding rules; what test expectations such as `deny(id)` compare.
    pub fn rule_ids(&self) -> Vec<&str> {
        self.decided_by.iter().map(|r| r.id.as_str()).collect()
    }
}

/// The outcome of a shell line: one decision per simple command and per write
/// target it changes, and the strongest verdict over all of them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShellDecision {
    /// The shell line as given.
    pub line: String,
    /// The strongest verdict of all parts, raised to at least `ask` (`deny` when strict) when
    /// the line is rejected; the exec default when there is nothing to decide.
    pub verdict: Effect,
    /// In line order: an exec decision per simple command, then a path decision per file it
    /// writes or deletes (redirections and file effects such as `rm`, `sed -i`).
    pub parts: Vec<Decision>,
    /// Indices into `parts` of writes that only happen when a copy's destination is a
    /// directory (`cp a.txt dst` writes `dst/a.txt` only when `dst` is one); a caller that
    /// can look at the file system drops those whose destination is not.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub guesses: Vec<usize>,
    /// Set when the line could not be parsed or an argv is not knowable statically.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejection: Option<Rejection>,
}

impl ShellDecision {
    /// Deciding rules of every part that carries the overall verdict.
    pub fn decided_by(&self) -> Vec<&RuleHit> {
        self.parts
            .iter()
            .filter(|p| p.verdict == self.verdict)
            .flat_map(|p| p.decided_by.iter())
            .collect()
    }
}
