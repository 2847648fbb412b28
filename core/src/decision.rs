//! What the evaluator returns: the verdict, the rules that decided it, the obligations
//! an effect handler must honour, and — on request — the why-not trace.

use crate::ir::{CompiledRule, ObligationIr, Origin};
use crate::request::{Domain, Request};
use contextos_grammar::ast::Effect;
use serde::Serialize;

/// A rule as it appears in a decision.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleHit {
    pub id: String,
    pub effect: Effect,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub because: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    pub origin: Origin,
}

impl RuleHit {
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
    pub rule: RuleHit,
    /// `when …` that was false or `unless …` that was true; or the role mismatch.
    pub clause: String,
    pub origin: Origin,
}

/// A condition that could not be evaluated; resolved to the stricter outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalError {
    pub rule: String,
    pub message: String,
    /// What the error was taken to mean: the rule applied (deny/ask) or did not (allow).
    pub resolved_as: &'static str,
}

/// A subject decided without rules because it failed a structural check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rejection {
    pub code: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    pub domain: Domain,
    pub verdict: Effect,
    pub request: Request,
    /// Matched rules carrying the winning effect.
    #[serde(rename = "decidedBy")]
    pub decided_by: Vec<RuleHit>,
    /// Matched rules overruled by a stronger effect.
    pub overruled: Vec<RuleHit>,
    #[serde(rename = "defaultApplied")]
    pub default_applied: bool,
    pub obligations: Vec<ObligationIr>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejection: Option<Rejection>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<EvalError>,
    /// Filled only when an explanation was asked for.
    #[serde(rename = "whyNot", skip_serializing_if = "Vec::is_empty")]
    pub why_not: Vec<WhyNot>,
}

impl Decision {
    pub fn rule_ids(&self) -> Vec<&str> {
        self.decided_by.iter().map(|r| r.id.as_str()).collect()
    }
}

/// The outcome of a shell line: one decision per simple command and per write
/// redirection, and the strongest verdict over all of them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShellDecision {
    pub line: String,
    pub verdict: Effect,
    pub parts: Vec<Decision>,
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
