//! How many line breaks one match of a regex can hold: the bound that keeps a multi-line
//! detector's search near the line its keyword is on.
//!
//! A `multiline` detector's regex is searched from a keyword's line to the end of the
//! added block, and only a match that starts on that line counts. When no match contains
//! more than `n` newlines, every match starting on line `l` ends by the start of line
//! `l + n + 1`, so the search can stop one line later (one more line keeps the byte after
//! such a match, which `\b` or `$` look at, the same as in the full text) and finds the
//! same matches. Without the bound, a common keyword (`key` wakes the XML-element rule)
//! made every such line search the rest of its file: quadratic in the file's length.

use regex_syntax::hir::{Class, Hir, HirKind};

/// The most `\n` bytes one match of `pattern` can contain; `None` when unbounded (`\s+`)
/// or when the pattern does not parse (the regex compiler reports that separately).
pub fn max_newlines(pattern: &str) -> Option<usize> {
    let hir = regex_syntax::parse(pattern).ok()?;
    newlines(&hir)
}

fn newlines(h: &Hir) -> Option<usize> {
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => Some(0),
        HirKind::Literal(l) => Some(l.0.iter().filter(|b| **b == b'\n').count()),
        HirKind::Class(Class::Unicode(c)) => Some(usize::from(
            c.ranges()
                .iter()
                .any(|r| r.start() <= '\n' && '\n' <= r.end()),
        )),
        HirKind::Class(Class::Bytes(c)) => Some(usize::from(
            c.ranges()
                .iter()
                .any(|r| r.start() <= b'\n' && b'\n' <= r.end()),
        )),
        HirKind::Repetition(r) => match newlines(&r.sub)? {
            0 => Some(0),
            n => n.checked_mul(usize::try_from(r.max?).ok()?),
        },
        HirKind::Capture(c) => newlines(&c.sub),
        HirKind::Concat(xs) => xs
            .iter()
            .try_fold(0usize, |acc, x| acc.checked_add(newlines(x)?)),
        HirKind::Alternation(xs) => xs
            .iter()
            .try_fold(0usize, |acc, x| Some(acc.max(newlines(x)?))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_newlines_a_match_can_hold() {
        assert_eq!(max_newlines("abc"), Some(0));
        assert_eq!(max_newlines(r"[^\n]+"), Some(0));
        assert_eq!(max_newlines(r"a\r?\n?b\n"), Some(2));
        assert_eq!(max_newlines(r"(?:x|\n\n)y{0,3}"), Some(2));
        assert_eq!(max_newlines(r"(?:\n){2,3}"), Some(3));
        assert_eq!(max_newlines(r"a\s+b"), None);
        assert_eq!(max_newlines(r"(?s)a.*b"), None);
        assert_eq!(max_newlines(r"a.*b"), Some(0));
        assert_eq!(max_newlines(r"[^a]{0,4}"), Some(4));
        assert_eq!(max_newlines("("), None);
    }

    #[test]
    fn the_stdlib_xml_element_rule_spans_at_most_three_lines() {
        let xml = r#"(?i)<[A-Za-z0-9_.:-]{0,40}(?:password|secret)[A-Za-z0-9_.-]{0,20}>[ \t]*\r?\n?[ \t]*([^\s<>"']{8,128})[ \t]*\r?\n?[ \t]*</"#;
        assert_eq!(max_newlines(xml), Some(2));
    }
}
