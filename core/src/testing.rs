//! Runs the `test` blocks of a policy set: each case is decided through the same
//! evaluator as everything else and compared with its expected verdict and rule ids.
//!
//! [`run_layered`] is what `contextos test` and `gate` run: each layer's tests describe
//! that layer, so the stdlib's run against the stdlib alone and each plugin pack's against
//! the stdlib and that pack, while the project's run against the merged set. A project
//! rule stricter than the stdlib then cannot turn a stdlib test red, and a project test
//! cannot hide a stdlib test that fails.

use crate::build::{build, BuildOptions, PolicySource};
use crate::decision::RuleHit;
use crate::eval::EvalOptions;
use crate::ir::{Layer, Origin};
use crate::policy::{PolicySet, TestSubject};
use crate::request::Request;
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
    /// Of the missing rules, those that applied but were overruled, each with the deciding
    /// rules that overruled it: the usual reason an expectation fails once a stricter rule
    /// is added.
    #[serde(rename = "overruled", skip_serializing_if = "Vec::is_empty")]
    pub overruled: Vec<Overruled>,
}

/// An expected rule that applied but lost to a stronger one.
#[derive(Debug, Clone, Serialize)]
pub struct Overruled {
    /// The expected rule's id.
    pub rule: String,
    /// Ids of the rules that decided instead.
    pub by: Vec<String>,
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

/// Runs every test of `set` whose name contains `filter` (all when `None`) against `set`.
pub fn run_tests(set: &PolicySet, filter: Option<&str>) -> TestReport {
    run_tests_of(set, |_| true, filter)
}

/// Runs the tests of `set` whose layer `layer` accepts and whose name contains `filter`.
pub fn run_tests_of(
    set: &PolicySet,
    layer: impl Fn(Layer) -> bool,
    filter: Option<&str>,
) -> TestReport {
    let mut cases = Vec::new();
    let mut exercised = BTreeSet::new();
    for t in &set.tests {
        if !layer(t.layer) {
            continue;
        }
        if filter.is_some_and(|f| !t.name.contains(f)) {
            continue;
        }
        for c in &t.cases {
            let session = c.tainted.then(crate::request::Session::tainted_for_tests);
            let (actual, hits, overruled): (Effect, Vec<RuleHit>, Vec<RuleHit>) = match &c.subject {
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
                    (d.verdict, d.decided_by, d.overruled)
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
                    let mut overruled = Vec::new();
                    for p in &d.parts {
                        exercised.extend(
                            p.decided_by
                                .iter()
                                .chain(&p.overruled)
                                .map(|h| h.id.clone()),
                        );
                        overruled.extend(p.overruled.iter().cloned());
                        // A part decided more leniently than the line is overruled too.
                        if p.verdict != d.verdict {
                            overruled.extend(p.decided_by.iter().cloned());
                        }
                    }
                    let hits = d.decided_by().into_iter().cloned().collect();
                    (d.verdict, hits, overruled)
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
            let overruled = missing
                .iter()
                .filter(|m| overruled.iter().any(|h| &h.id == *m))
                .map(|m| Overruled {
                    rule: m.clone(),
                    by: actual_rules.clone(),
                })
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
                overruled,
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

/// The tests of one layer, run against the rules that layer is written for.
#[derive(Debug, Clone, Serialize)]
pub struct LayerRun {
    /// `stdlib`, `plugin NAME` or `project`.
    pub label: String,
    /// The layer whose tests ran.
    pub layer: Layer,
    /// Number of rules the tests ran against.
    pub rules: usize,
    /// The outcome; empty when the layer could not be compiled on its own.
    pub report: TestReport,
    /// Why the layer could not be compiled on its own (its tests count as failed then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl LayerRun {
    /// The layer's tests all passed (and it compiled on its own).
    pub fn ok(&self) -> bool {
        self.error.is_none() && self.report.failed == 0
    }
}

/// Runs each layer's tests against that layer (see the module docs). `merged` is the set
/// compiled from all of `sources` with `options`; the isolated layers are compiled here,
/// without `options.disabled_rules` (a project's `disable` list is the project's business,
/// not a reason for the stdlib's own tests to fail). Layers without tests are left out.
pub fn run_layered(
    sources: &[PolicySource],
    merged: &PolicySet,
    options: &BuildOptions,
    filter: Option<&str>,
) -> Vec<LayerRun> {
    let mut runs = Vec::new();
    let stdlib: Vec<PolicySource> = sources
        .iter()
        .filter(|s| s.layer == Layer::Stdlib)
        .cloned()
        .collect();
    let isolated = BuildOptions {
        disabled_rules: Vec::new(),
        lazy: options.lazy,
    };
    if merged.tests.iter().any(|t| t.layer == Layer::Stdlib) {
        runs.push(isolated_run(
            "stdlib".into(),
            Layer::Stdlib,
            &stdlib,
            &isolated,
            filter,
        ));
    }
    let mut packs: Vec<(String, Vec<PolicySource>)> = Vec::new();
    for s in sources.iter().filter(|s| s.layer == Layer::Plugin) {
        let name = pack_name(&s.name);
        match packs.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.push(s.clone()),
            None => packs.push((name, vec![s.clone()])),
        }
    }
    for (name, files) in packs {
        let mut layer_sources = stdlib.clone();
        layer_sources.extend(files);
        let out = build(&layer_sources, &isolated);
        if out
            .policy
            .as_ref()
            .is_some_and(|p| p.tests.iter().all(|t| t.layer != Layer::Plugin))
        {
            continue;
        }
        runs.push(from_output(
            format!("plugin {name}"),
            Layer::Plugin,
            out,
            filter,
        ));
    }
    if merged.tests.iter().any(|t| t.layer == Layer::User) {
        runs.push(LayerRun {
            label: "project".into(),
            layer: Layer::User,
            rules: merged.rules.len(),
            report: run_tests_of(merged, |l| l == Layer::User, filter),
            error: None,
        });
    }
    runs
}

/// `plugin/NAME/…` (how installed packs are named) → `NAME`; any other name is one pack.
fn pack_name(source: &str) -> String {
    source
        .strip_prefix("plugin/")
        .and_then(|r| r.split('/').next())
        .unwrap_or(source)
        .to_string()
}

fn isolated_run(
    label: String,
    layer: Layer,
    sources: &[PolicySource],
    options: &BuildOptions,
    filter: Option<&str>,
) -> LayerRun {
    from_output(label, layer, build(sources, options), filter)
}

fn from_output(
    label: String,
    layer: Layer,
    out: crate::build::BuildOutput,
    filter: Option<&str>,
) -> LayerRun {
    match &out.policy {
        Some(set) => LayerRun {
            label,
            layer,
            rules: set.rules.len(),
            report: run_tests_of(set, |l| l == layer, filter),
            error: None,
        },
        None => {
            let errors: Vec<String> = out
                .diagnostics
                .iter()
                .filter(|d| d.diagnostic.is_error())
                .map(|d| out.render(d))
                .collect();
            LayerRun {
                label,
                layer,
                rules: 0,
                report: TestReport {
                    cases: Vec::new(),
                    passed: 0,
                    failed: 0,
                    exercised: BTreeSet::new(),
                },
                error: Some(format!(
                    "the layer does not compile on its own:\n{}",
                    errors.join("\n")
                )),
            }
        }
    }
}

/// One `when`/`unless` clause and the outcomes the test cases gave it.
#[derive(Debug, Clone, Serialize)]
pub struct ClauseCoverage {
    /// The rule the clause belongs to.
    pub rule: String,
    /// The clause as written.
    pub clause: String,
    /// Where the clause is written.
    pub origin: crate::ir::Origin,
    /// Some case reached the rule's head with the condition holding.
    #[serde(rename = "seenTrue")]
    pub seen_true: bool,
    /// Some case reached the rule's head with the condition not holding.
    #[serde(rename = "seenFalse")]
    pub seen_false: bool,
}

impl ClauseCoverage {
    /// Both outcomes were seen: the tests show what the clause changes.
    pub fn covered(&self) -> bool {
        self.seen_true && self.seen_false
    }
}

/// Clause coverage of the rules `rules` accepts: for every clause, whether the test cases
/// of `set` (every layer's, decided against `set`) made its condition both hold and fail on
/// a request that reached the rule's head. A script clause that errors counts as neither.
pub fn clause_coverage(
    set: &PolicySet,
    rules: impl Fn(&crate::ir::CompiledRule) -> bool,
) -> Vec<ClauseCoverage> {
    let mut out: Vec<(usize, usize, ClauseCoverage)> = Vec::new();
    for (ri, r) in set.rules.iter().enumerate() {
        if !rules(r) {
            continue;
        }
        for (ci, c) in r.clauses.iter().enumerate() {
            out.push((
                ri,
                ci,
                ClauseCoverage {
                    rule: r.id.clone(),
                    clause: c.text.clone(),
                    origin: c.origin.clone(),
                    seen_true: false,
                    seen_false: false,
                },
            ));
        }
    }
    if out.is_empty() {
        return Vec::new();
    }
    for t in &set.tests {
        for c in &t.cases {
            let session = c.tainted.then(crate::request::Session::tainted_for_tests);
            let requests: Vec<Request> = match &c.subject {
                TestSubject::Request(r) => {
                    let req = (**r)
                        .clone()
                        .with_role(c.role.clone())
                        .with_session(session.clone());
                    match &req.kind {
                        crate::request::RequestKind::Exec(e) if crate::diff::is_argv_only(e) => set
                            .decide_argv(
                                &e.argv,
                                c.role.as_deref(),
                                ShellOptions {
                                    session: session.as_ref(),
                                    ..ShellOptions::default()
                                },
                            )
                            .parts
                            .into_iter()
                            .map(|p| p.request)
                            .collect(),
                        _ => {
                            let mut req = req;
                            let _ = crate::eval::canonicalise(&mut req);
                            vec![req]
                        }
                    }
                }
                TestSubject::Shell(line) => set
                    .decide_shell(
                        line,
                        c.role.as_deref(),
                        ShellOptions {
                            session: session.as_ref(),
                            ..ShellOptions::default()
                        },
                    )
                    .parts
                    .into_iter()
                    .map(|p| p.request)
                    .collect(),
            };
            for req in &requests {
                let candidates = set.index.candidates(&set.rules, req);
                for (ri, ci, cov) in out.iter_mut() {
                    if !candidates.contains(ri) {
                        continue;
                    }
                    let Some(rule) = set.rules.get(*ri) else {
                        continue;
                    };
                    if !crate::eval::head_matches(rule, req) {
                        continue;
                    }
                    if rule
                        .role
                        .as_deref()
                        .is_some_and(|r| req.role.as_deref() != Some(r))
                    {
                        continue;
                    }
                    let Some(clause) = rule.clauses.get(*ci) else {
                        continue;
                    };
                    if let Ok(lets_apply) = crate::eval::clause_holds(&set.scripts, clause, req) {
                        if lets_apply != clause.negated {
                            cov.seen_true = true;
                        } else {
                            cov.seen_false = true;
                        }
                    }
                }
            }
        }
    }
    out.into_iter().map(|(_, _, c)| c).collect()
}
