//! The last step: the rule index, the glob warm-up and the assembled [`PolicySet`], made
//! only when no pass found an error (callers fail closed).

use super::context::Ctx;
use super::output::FileDiagnostic;
use crate::detector::CompiledDetector;
use crate::index::Index;
use crate::ir::{CompiledRule, Cond, Word};
use crate::policy::{CompiledGuide, CompiledTest, PolicySet};
use crate::rules::Rules;
use contextos_grammar::ast::{Effect, Span};
use contextos_grammar::Diagnostic;
use std::collections::BTreeSet;

/// Everything the passes produced, ready to be assembled.
pub(super) struct Lowered {
    pub(super) rules: Vec<CompiledRule>,
    /// A precompiled stdlib's rules, still encoded, which come before `rules`.
    pub(super) encoded_rules: Option<crate::rules::EncodedRules>,
    pub(super) defaults: [Effect; crate::request::Domain::COUNT],
    pub(super) guides: Vec<CompiledGuide>,
    pub(super) detectors: crate::lazy_list::LazyList<CompiledDetector>,
    pub(super) tests: Vec<CompiledTest>,
    pub(super) roles: BTreeSet<String>,
    pub(super) runtime_lets: std::collections::BTreeMap<String, Vec<String>>,
}

/// Builds the index (and, unless lazy, compiles every glob now) and assembles the set; the
/// diagnostics come back with it, plus E0119 when the index cannot be built.
pub(super) fn policy_set(
    ctx: Ctx,
    lazy: bool,
    lowered: Lowered,
) -> (Option<PolicySet>, Vec<FileDiagnostic>) {
    let Lowered {
        rules,
        encoded_rules,
        defaults: default_effects,
        guides,
        detectors,
        tests,
        roles,
        runtime_lets,
    } = lowered;
    let Ctx {
        mut diags, scripts, ..
    } = ctx;
    let has_errors = diags.iter().any(|d| d.diagnostic.is_error());
    let rules = match encoded_rules {
        Some(below) => Rules::layered(below, rules),
        None => Rules::from(rules),
    };
    let index = if has_errors {
        None
    } else {
        let index = Index::lazy();
        let warmed = if lazy {
            Ok(())
        } else {
            index.warm(&rules).and_then(|()| warm_rules(&rules))
        };
        match warmed.map(|()| index) {
            Ok(i) => Some(i),
            Err(e) => {
                diags.push(FileDiagnostic {
                    file: 0,
                    diagnostic: Diagnostic::error(
                        "E0119",
                        Span::new(0, 0),
                        format!("the rule index cannot be built: {e}"),
                    )
                    .with_help("reduce the number or complexity of glob patterns"),
                });
                None
            }
        }
    };
    let policy = index.map(|index| PolicySet {
        rules,
        defaults: default_effects,
        guides,
        detectors,
        tests,
        roles,
        runtime_lets,
        index,
        role_literals: std::sync::OnceLock::new(),
        scripts,
    });
    (policy, diags)
}

/// Compiles the globs inside conditions and exec heads now (see [`BuildOptions::lazy`]).
fn warm_rules(rules: &Rules) -> Result<(), String> {
    fn cond(c: &Cond) -> Result<(), String> {
        match c {
            Cond::Or(v) | Cond::And(v) => v.iter().try_for_each(cond),
            Cond::Not(inner) => cond(inner),
            Cond::Matches(_, globs) => globs.warm(),
            Cond::Cmp(..) | Cond::Truthy(_) | Cond::Script(_) => Ok(()),
        }
    }
    for r in rules {
        for c in &r.clauses {
            cond(&c.cond)?;
        }
        for p in &r.exec_patterns {
            for w in &p.words {
                if let Word::Glob(g) = w {
                    g.is_match("")?;
                }
            }
        }
    }
    Ok(())
}
