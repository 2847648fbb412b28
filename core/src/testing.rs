//! Runs the `test` blocks of a policy set: each case is decided through the same
//! evaluator as everything else and compared with its expected verdict and rule ids.

use crate::decision::RuleHit;
use crate::eval::EvalOptions;
use crate::ir::{Layer, Origin};
use crate::policy::{PolicySet, TestSubject};
use crate::shell_decide::ShellOptions;
use contextos_grammar::ast::Effect;
use serde::Serialize;
use std::collections::BTreeSet;

/// The outcome of one test case.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    /// Name of the test block the case is in.
    pub test: String,
    /// The case's source text.
    pub case: String,
    /// Where the case is written.
    pub origin: Origin,
    /// The verdict is the expected one and every expected rule id is among the deciding rules.
    pub passed: bool,
    /// The verdict the case expects.
    pub expected: Effect,
    /// Rule ids the case names; empty when it names none.
    #[serde(rename = "expectedRules")]
    pub expected_rules: Vec<String>,
    /// The verdict the set gave.
    pub actual: Effect,
    /// Ids of the deciding rules, sorted and deduplicated.
    #[serde(rename = "actualRules")]
    pub actual_rules: Vec<String>,
    /// Expected ids that were not among the deciding rules.
    #[serde(rename = "missingRules", skip_serializing_if = "Vec::is_empty")]
    pub missing_rules: Vec<String>,
}

/// The outcome of a test run.
#[derive(Debug, Clone, Serialize)]
pub struct TestReport {
    /// Every case run, in set order.
    pub cases: Vec<CaseResult>,
    /// Number of passing cases.
    pub passed: usize,
    /// Number of failing cases.
    pub failed: usize,
    /// Rules that matched in at least one case (deciding or overruled).
    #[serde(skip)]
    pub exercised: BTreeSet<String>,
}

impl TestReport {
    /// Rules no test case exercised (neither deciding nor overruled), in policy order.
    pub fn uncovered<'a>(&self, set: &'a PolicySet) -> Vec<&'a crate::ir::CompiledRule> {
        set.rules
            .iter()
            .filter(|r| !self.exercised.contains(&r.id))
            .collect()
    }
}

/// Runs every test whose name contains `filter` (all when `None`).
pub fn run_tests(set: &PolicySet, filter: Option<&str>) -> TestReport {
    let mut cases = Vec::new();
    let mut exercised = BTreeSet::new();
    // A project's tests describe the project's policy set. The stdlib's own tests describe
    // the stdlib alone, so they run only when the project has no tests of its own.
    let own = set.tests.iter().any(|t| t.layer != Layer::Stdlib);
    for t in &set.tests {
        if own && t.layer == Layer::Stdlib {
            continue;
        }
        if filter.is_some_and(|f| !t.name.contains(f)) {
            continue;
        }
        for c in &t.cases {
            let session = c.tainted.then(crate::request::Session::tainted_for_tests);
            let (actual, hits): (Effect, Vec<RuleHit>) = match &c.subject {
                TestSubject::Request(r) => {
                    let d = set.decide(
                        &(**r)
                            .clone()
                            .with_role(c.role.clone())
                            .with_session(session.clone()),
                        EvalOptions::default(),
                    );
                    exercised.extend(
                        d.decided_by
                            .iter()
                            .chain(&d.overruled)
                            .map(|h| h.id.clone()),
                    );
                    (d.verdict, d.decided_by)
                }
                TestSubject::Shell(line) => {
                    let d = set.decide_shell(
                        line,
                        c.role.as_deref(),
                        ShellOptions {
                            session: session.as_ref(),
                            ..ShellOptions::default()
                        },
                    );
                    for p in &d.parts {
                        exercised.extend(
                            p.decided_by
                                .iter()
                                .chain(&p.overruled)
                                .map(|h| h.id.clone()),
                        );
                    }
                    let hits = d.decided_by().into_iter().cloned().collect();
                    (d.verdict, hits)
                }
            };
            let mut actual_rules: Vec<String> = hits.into_iter().map(|h| h.id).collect();
            actual_rules.sort();
            actual_rules.dedup();
            let missing: Vec<String> = c
                .expect_rules
                .iter()
                .filter(|r| !actual_rules.contains(r))
                .cloned()
                .collect();
            cases.push(CaseResult {
                test: t.name.clone(),
                case: c.text.clone(),
                origin: c.origin.clone(),
                passed: actual == c.expect && missing.is_empty(),
                expected: c.expect,
                expected_rules: c.expect_rules.clone(),
                actual,
                actual_rules,
                missing_rules: missing,
            });
        }
    }
    let passed = cases.iter().filter(|c| c.passed).count();
    TestReport {
        failed: cases.len() - passed,
        passed,
        cases,
        exercised,
    }
}
