//! Rules in plain words, as the instruction files list them.

use super::markdown::{glob_list, md_code, md_inline, readable_glob};
use contextos_core::ir::{CompiledRule, Cond, ExecPattern, Word, ALL_OPS};
use contextos_core::policy::PolicySet;
use contextos_core::request::{Domain, PathOp};

/// Whether a rule holds for every request its head matches — no condition, no script, no
/// role — so a target's static list can carry it exactly; any other rule is left to the
/// hook (or made stricter with a `lossy` note).
pub(crate) fn unconditioned(r: &CompiledRule) -> bool {
    r.clauses.is_empty() && r.analyzable && r.role.is_none()
}

/// `` `id` (severity): deny path write `x` — because `` — one list item; with `with_role`,
/// the role joins the severity in the parentheses.
pub(crate) fn rule_line(r: &CompiledRule, with_role: bool) -> String {
    let mut tags = Vec::new();
    if let Some(s) = &r.severity {
        tags.push(md_inline(s));
    }
    if let (true, Some(role)) = (with_role, &r.role) {
        tags.push(format!("role {}", md_code(role)));
    }
    if tags.is_empty() {
        format!("{}: {}", md_code(&r.id), describe(r))
    } else {
        format!("{} ({}): {}", md_code(&r.id), tags.join(", "), describe(r))
    }
}

/// Rules sorted by id, byte-wise.
pub(crate) fn sorted_rules(set: &PolicySet) -> Vec<&CompiledRule> {
    let mut v: Vec<&CompiledRule> = set.rules.iter().collect();
    v.sort_by(|a, b| a.id.as_bytes().cmp(b.id.as_bytes()));
    v
}

/// The head of a rule in plain words: `` deny path write, delete `a`, `b` when `cond` ``.
pub(crate) fn describe_head(r: &CompiledRule) -> String {
    let mut s = format!("{} {}", r.effect.as_str(), r.domain.as_str());
    if r.domain == Domain::Path {
        s.push(' ');
        s.push_str(&ops_names(r.ops).join(", "));
    }
    if r.patterns.is_empty() {
        s.push_str(" (any)");
    } else {
        s.push(' ');
        s.push_str(&glob_list(&r.patterns));
    }
    if !r.obligations.is_empty() {
        let names: Vec<String> = r.obligations.iter().map(|o| md_code(&o.name)).collect();
        s.push_str(&format!(" with {}", names.join(", ")));
    }
    for c in &r.clauses {
        let (kw, rest) = match c.text.split_once(' ') {
            Some((kw @ ("when" | "unless"), rest)) => (kw, rest),
            _ => (if c.negated { "unless" } else { "when" }, c.text.as_str()),
        };
        if cond_has_script(&c.cond) {
            s.push_str(&format!(", {kw} a script condition holds"));
        } else {
            // Letter-by-letter case classes read as the name they spell.
            s.push_str(&format!(", {kw} {}", readable_glob(rest)));
        }
    }
    s
}

/// A rule as one plain-English line: `` deny path write, delete `.contextos/**` — Agents
/// must not change … ``.
pub(crate) fn describe(r: &CompiledRule) -> String {
    let head = describe_head(r);
    match &r.because {
        Some(b) if !b.trim().is_empty() => format!("{head} — {}", md_inline(b)),
        _ => head,
    }
}

/// Operation names of a path rule's bit set, in `read, write, delete` order.
pub(crate) fn ops_names(ops: u8) -> Vec<&'static str> {
    let ops = if ops == 0 { ALL_OPS } else { ops };
    PathOp::ALL
        .iter()
        .enumerate()
        .filter(|(i, _)| ops & (1 << i) != 0)
        .map(|(_, o)| o.as_str())
        .collect()
}

pub(crate) fn cond_has_script(c: &Cond) -> bool {
    match c {
        Cond::Script(_) => true,
        Cond::Or(v) | Cond::And(v) => v.iter().any(cond_has_script),
        Cond::Not(inner) => cond_has_script(inner),
        Cond::Cmp(..) | Cond::Matches(..) | Cond::Truthy(_) => false,
    }
}

/// The words of an exec pattern made only of literal words (`None` when one is a glob).
pub(crate) fn literal_words(ep: &ExecPattern) -> Option<Vec<&str>> {
    ep.words
        .iter()
        .map(|w| match w {
            Word::Literal(l) => Some(l.as_str()),
            Word::Glob(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::policies::full;
    use crate::text::globs::is_match_all_path;

    #[test]
    fn describe_reads_plainly() {
        let set = full();
        let r = set.rule("std-self-protection").unwrap();
        assert!(describe(r)
            .starts_with("deny path write `contextos.toml`, `contextos.lock`, `.contextos/**`"));
        assert!(describe(r).ends_with(
            "— Agents must not change the files that govern them (policies, enforcement config, git hooks, .git)."
        ));
        let r = set.rule("std-plugin-unsigned").unwrap();
        assert_eq!(
            describe(r),
            "deny plugin (any), when `plugin.findings contains \"signature-missing\"` — A plugin must carry its publisher's signature."
        );
        assert_eq!(ops_names(ALL_OPS), vec!["read", "write", "delete"]);
        assert!(is_match_all_path("**") && is_match_all_path("**/*"));
        assert!(!is_match_all_path("**/.env"));
    }
}
