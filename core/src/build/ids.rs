//! Ids across the whole set: rule and detector ids are unique (stdlib included), and
//! `disable` drops the ids it names, warning about the ones no rule or detector has.

use super::context::Ctx;
use super::output::NO_FILE;
use crate::detector::CompiledDetector;
use crate::ir::{CompiledRule, Origin};
use contextos_grammar::ast::Span;
use contextos_grammar::Diagnostic;
use std::collections::{BTreeSet, HashMap};

/// Reports every rule or detector id used a second time.
pub(super) fn check_unique(
    ctx: &mut Ctx,
    rules: &[CompiledRule],
    detectors: &[(usize, CompiledDetector)],
) {
    let files = ctx.files;
    // Borrowed, and sized once: a cold build checks every rule, the stdlib's included.
    let mut seen: HashMap<&str, &Origin> = HashMap::with_capacity(rules.len());
    for r in rules {
        if let Some(prev) = seen.get(r.id.as_str()) {
            let fi = files
                .iter()
                .position(|f| f.name == r.origin.file)
                .unwrap_or(0);
            ctx.err(
                fi,
                Diagnostic::error(
                    "E0106",
                    Span::new(r.origin.start, r.origin.end),
                    format!("rule id `{}` is already used at {prev}", r.id),
                )
                .with_label("duplicate id")
                .with_help("rule ids must be unique across the policy set (stdlib included)"),
            );
        } else {
            seen.insert(&r.id, &r.origin);
        }
    }
    let mut seen_detectors: HashMap<&str, &Origin> = HashMap::new();
    for (fi, d) in detectors {
        match seen_detectors.get(d.id.as_str()) {
            Some(prev) => {
                let msg = format!("detector id `{}` is already used at {prev}", d.id);
                ctx.err(
                    *fi,
                    Diagnostic::error("E0128", Span::new(d.origin.start, d.origin.end), msg)
                        .with_label("duplicate id")
                        .with_help(
                            "detector ids must be unique across the policy set (stdlib included)",
                        ),
                );
            }
            None => {
                seen_detectors.insert(&d.id, &d.origin);
            }
        }
    }
}

/// Leaves out the rules and detectors `disable` names.
pub(super) fn drop_disabled(
    ctx: &mut Ctx,
    disabled_rules: &[String],
    mut rules: Vec<CompiledRule>,
    detectors: Vec<(usize, CompiledDetector)>,
) -> (Vec<CompiledRule>, Vec<CompiledDetector>) {
    let disabled: BTreeSet<&str> = disabled_rules.iter().map(String::as_str).collect();
    for id in &disabled {
        if !rules.iter().any(|r| r.id == *id) && !detectors.iter().any(|(_, d)| d.id == *id) {
            ctx.err(
                NO_FILE,
                Diagnostic::warning(
                    "W0205",
                    Span::new(0, 0),
                    format!("`disable` names unknown rule id `{id}`"),
                ),
            );
        }
    }
    rules.retain(|r| !disabled.contains(r.id.as_str()));
    let detectors: Vec<CompiledDetector> = detectors
        .into_iter()
        .map(|(_, d)| d)
        .filter(|d| !disabled.contains(d.id.as_str()))
        .collect();

    (rules, detectors)
}
