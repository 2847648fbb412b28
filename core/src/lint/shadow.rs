//! W0303: a rule that can never decide, because a stronger rule without conditions matches
//! every request it matches (an `allow` under a broader `deny`, a role's `allow` under a
//! global `ask`). Coverage is decided exactly on the forms it recognises — equal patterns,
//! `**`, `DIR/**` over anything below `DIR`, `**/NAME` over any `…/NAME`, a glob over a
//! literal path, and argv prefixes word by word — and otherwise assumed absent, so every
//! report is true. A covering rule with conditions or scripts is never reported (whether it
//! always applies is undecidable here); its `when` may well leave room.

use super::Finding;
use crate::glob::{has_glob_meta, path_glob};
use crate::ir::{CompiledRule, ExecPattern, Word};
use crate::request::Domain;
use contextos_grammar::ast::Effect;

/// For every rule that can never decide: its index and the finding naming the first rule
/// that covers it; only rules `report` accepts are reported (all may cover).
pub fn check(
    rules: &[CompiledRule],
    report: impl Fn(&CompiledRule) -> bool,
) -> Vec<(usize, Finding)> {
    let mut out = Vec::new();
    // Only unconditional rules can cover; there are few, so this stays linear in practice.
    let unconditional: Vec<(usize, &CompiledRule)> = rules
        .iter()
        .enumerate()
        .filter(|(_, b)| b.clauses.is_empty() && b.analyzable && b.effect != Effect::Allow)
        .collect();
    for (ai, a) in rules.iter().enumerate() {
        if !report(a) {
            continue;
        }
        let cover = unconditional
            .iter()
            .find(|(bi, b)| *bi != ai && covers(b, a));
        if let Some((_, b)) = cover {
            let whom = match &b.role {
                Some(r) => format!("role `{r}`'s "),
                None => String::new(),
            };
            out.push((
                ai,
                Finding::new(
                    "W0303",
                    format!(
                        "rule `{}` ({}) can never decide: {whom}`{}` ({}, {}) matches every request it matches and always wins",
                        a.id, a.effect, b.id, b.effect, b.origin
                    ),
                    format!(
                        "remove `{}`, narrow `{}`, or give `{}` a condition that leaves these requests to `{}`",
                        a.id, b.id, b.id, a.id
                    ),
                ),
            ));
        }
    }
    out
}

/// `b` overrules `a` on every request `a` matches.
pub(crate) fn covers(b: &CompiledRule, a: &CompiledRule) -> bool {
    if b.domain != a.domain || b.effect <= a.effect || !b.clauses.is_empty() || !b.analyzable {
        return false;
    }
    if b.role.is_some() && b.role != a.role {
        return false;
    }
    if a.ops & !b.ops != 0 {
        return false;
    }
    if b.patterns.is_empty() {
        return true;
    }
    if a.patterns.is_empty() {
        return false;
    }
    match a.domain {
        Domain::Path => a
            .patterns
            .iter()
            .all(|ap| b.patterns.iter().any(|bp| path_covers(bp, ap))),
        Domain::Exec => a
            .exec_patterns
            .iter()
            .all(|ap| b.exec_patterns.iter().any(|bp| exec_covers(bp, ap))),
        _ => false,
    }
}

fn is_outside(p: &str) -> bool {
    p.starts_with('/') || p.starts_with('~')
}

/// Every path `a` matches, `b` matches.
pub fn path_covers(b: &str, a: &str) -> bool {
    if a == b {
        return true;
    }
    if b == "**" {
        return !is_outside(a);
    }
    if !has_glob_meta(a) {
        return path_glob(b).is_ok_and(|g| g.compile_matcher().is_match(a));
    }
    if let Some(dir) = b.strip_suffix("/**") {
        if !has_glob_meta(dir) && a.starts_with(&format!("{dir}/")) {
            return true;
        }
    }
    if let Some(name) = b.strip_prefix("**/") {
        if !name.contains('/') && !is_outside(a) {
            let last = a.rsplit('/').next().unwrap_or(a);
            return last == name;
        }
    }
    false
}

/// Every argv `a` matches, `b` matches.
fn exec_covers(b: &ExecPattern, a: &ExecPattern) -> bool {
    if b.words.len() > a.words.len() {
        return false;
    }
    if !b.rest && (a.rest || a.words.len() != b.words.len()) {
        return false;
    }
    b.words
        .iter()
        .zip(&a.words)
        .enumerate()
        .all(|(i, (bw, aw))| word_covers(bw, aw, i == 0))
}

fn word_covers(b: &Word, a: &Word, program: bool) -> bool {
    match (b, a) {
        (Word::Literal(x), Word::Literal(y)) => {
            x == y || (program && contextos_shell::basename(y) == x)
        }
        (Word::Glob(g), Word::Literal(y)) => {
            g.is_match(y).unwrap_or(false)
                || (program && g.is_match(contextos_shell::basename(y)).unwrap_or(false))
        }
        (Word::Glob(g), Word::Glob(h)) => g.pattern() == h.pattern() || g.pattern() == "*",
        (Word::Literal(_), Word::Glob(_)) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::path_covers;

    #[test]
    fn path_coverage_is_exact_on_the_forms_it_knows() {
        assert!(path_covers("**", "src/a.rs"));
        assert!(!path_covers("**", "~/.ssh/id"));
        assert!(path_covers("src/**", "src/**/*.rs"));
        assert!(path_covers("**/*.pem", "certs/*.pem"));
        assert!(path_covers("*.lock", "Cargo.lock"));
        assert!(!path_covers("*.lock", "a/Cargo.lock"));
        assert!(!path_covers("src/*", "src/**"));
        assert!(!path_covers("**/*.pem", "certs/**"));
    }
}
