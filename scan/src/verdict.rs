//! The commit verdict: the policy set's `commit` rules decide what each finding means.
//!
//! Each finding is decided as its own commit request (`commit.files` = its paths,
//! `commit.findings` = its rule id, `commit.kind`, `commit.severity`), so a rule can treat
//! a stub differently from a secret, or a path differently from another. Then the change
//! as a whole is decided once (`commit.kind == "change"`, every path, every standing
//! finding id), for rules about the change rather than a finding. The verdict is the
//! strongest of them all: `deny` blocks, `ask` needs review, `allow` is advisory.

use crate::finding::Finding;
use contextos_core::decision::Decision;
use contextos_core::eval::EvalOptions;
use contextos_core::policy::PolicySet;
use contextos_core::request::{CommitRequest, Request, RequestKind};
use contextos_grammar::ast::Effect;

/// A finding with the decision about it.
#[derive(Debug, Clone)]
pub struct Judged {
    pub finding: Finding,
    pub decision: Decision,
}

/// The commit verdict on a change.
#[derive(Debug, Clone)]
pub struct CommitVerdict {
    pub verdict: Effect,
    pub findings: Vec<Judged>,
    /// The decision on the change as a whole.
    pub change: Decision,
}

/// Facts about the change that hold for every request made about it.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChangeFacts<'a> {
    pub role: Option<&'a str>,
    /// Some staged path was last written by a host-unsafe `contextos run`.
    pub host_unsafe: bool,
}

fn request(
    files: Vec<String>,
    findings: Vec<String>,
    kind: &str,
    severity: &str,
    facts: ChangeFacts<'_>,
) -> Request {
    Request::new(RequestKind::Commit(CommitRequest {
        files,
        findings,
        message: String::new(),
        kind: kind.to_string(),
        severity: severity.to_string(),
        host_unsafe: facts.host_unsafe,
        // A commit is not a merge: auto-merge is decided where merges happen.
        auto_merge: false,
    }))
    .with_role(facts.role.map(str::to_string))
}

/// Decides every finding and the change; evaluation errors resolve stricter inside
/// the evaluator, so a broken rule can only make the verdict stronger.
pub fn decide(
    policy: &PolicySet,
    paths: &[String],
    findings: Vec<Finding>,
    facts: ChangeFacts<'_>,
) -> CommitVerdict {
    let opts = EvalOptions::default();
    let mut verdict = Effect::Allow;
    let mut judged = Vec::with_capacity(findings.len());
    for f in findings {
        let req = request(
            vec![f.file.clone()],
            vec![f.rule.clone()],
            f.kind.as_str(),
            f.severity.as_str(),
            facts,
        );
        let decision = policy.decide(&req, opts);
        verdict = verdict.max(decision.verdict);
        judged.push(Judged {
            finding: f,
            decision,
        });
    }
    let mut ids: Vec<String> = judged.iter().map(|j| j.finding.rule.clone()).collect();
    ids.sort();
    ids.dedup();
    let severity = judged
        .iter()
        .map(|j| j.finding.severity)
        .max()
        .map_or("", |s| s.as_str());
    let change = policy.decide(
        &request(paths.to_vec(), ids, "change", severity, facts),
        opts,
    );
    verdict = verdict.max(change.verdict);
    CommitVerdict {
        verdict,
        findings: judged,
        change,
    }
}
