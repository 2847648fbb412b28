//! Ids across the whole set: rule and detector ids are unique (stdlib included), and
//! `disable` drops the ids it names, warning about the ones no rule or detector has.

use super::context::Ctx;
use super::output::NO_FILE;
use crate::detector::CompiledDetector;
use crate::ir::{CompiledRule, Origin};
use crate::rules::EncodedRules;
use contextos_grammar::ast::Span;
use contextos_grammar::Diagnostic;
use std::collections::{BTreeSet, HashMap};

/// Reports every rule or detector id used a second time. `encoded` (a precompiled
/// stdlib's rules, which come first) are unique among themselves: only their ids are read,
/// and the rule a later one repeats is decoded to say where it is.
pub(super) fn check_unique(
    ctx: &mut Ctx,
    encoded: Option<&EncodedRules>,
    rules: &[CompiledRule],
    detectors: &[(usize, CompiledDetector)],
) {
    let files = ctx.files;
    // Borrowed, and sized once: a cold build checks every rule, the stdlib's included.
    let below = encoded.map_or(0, EncodedRules::len);
    let mut seen: HashMap<&str, Prev> = HashMap::with_capacity(below + rules.len());
    for (i, id) in encoded.iter().flat_map(|e| e.ids()).enumerate() {
        seen.insert(id, Prev::Encoded(i));
    }
    for r in rules {
        if let Some(prev) = seen.get(r.id.as_str()) {
            let prev = match prev {
                Prev::Rule(o) => (*o).to_string(),
                Prev::Encoded(i) => encoded.and_then(|e| e.get(*i)).map_or_else(
                    || "the standard library".to_string(),
                    |r| r.origin.to_string(),
                ),
            };
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
            seen.insert(&r.id, Prev::Rule(&r.origin));
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

/// Where an id was first seen.
enum Prev<'a> {
    Rule(&'a Origin),
    Encoded(usize),
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
