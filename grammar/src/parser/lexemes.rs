//! Tokens and the small rules built from them: identifiers, effects, integers,
//! booleans, strings, `$variables`, lists, patterns and `{ key: value }` obligations.

use super::state::{is_ident_start, is_word, Entries, Entry, Parser};
use crate::ast::*;
use crate::attempts::Production as R;
use crate::diagnostic::Diagnostic;
use crate::literal::{dedent, unescape};

/// Reserved words of the `kw` rule.
const KEYWORDS: [&str; 13] = [
    "when", "unless", "because", "with", "and", "or", "not", "script", "in", "matches", "contains",
    "true", "false",
];

impl<'a, const TRACK: bool> Parser<'a, TRACK> {
    /// End of the maximal `(ASCII_ALPHANUMERIC | "_")*` run starting at `i`.
    pub(super) fn word_end(&self, mut i: usize) -> usize {
        while is_word(self.at(i)) {
            i += 1;
        }
        i
    }

    /// `ident`: end offset.
    pub(super) fn ident(&self, i: usize) -> Option<usize> {
        self.r(R::Ident, i, || {
            if !is_ident_start(self.at(i)) {
                return None;
            }
            let end = self.word_end(i + 1);
            let w = self.text(i, end);
            (!KEYWORDS.contains(&w)).then_some(end)
        })
    }

    pub(super) fn ident_s(&self, i: usize) -> Option<(Spanned<String>, usize)> {
        let end = self.ident(i)?;
        Some((self.owned(i, end), end))
    }

    /// Role `name`.
    pub(super) fn name(&self, i: usize) -> Option<usize> {
        self.r(R::Name, i, || {
            if !is_ident_start(self.at(i)) {
                return None;
            }
            let mut j = i + 1;
            while is_word(self.at(j)) || self.at(j) == b'-' {
                j += 1;
            }
            Some(j)
        })
    }

    pub(super) fn effect(&self, i: usize) -> Option<(Spanned<Effect>, usize)> {
        self.r(R::Effect, i, || {
            for (lit, e) in [
                ("allow", Effect::Allow),
                ("ask", Effect::Ask),
                ("deny", Effect::Deny),
            ] {
                if self.starts_word(i, lit) {
                    let end = i + lit.len();
                    return Some((Spanned::new(e, Span::new(i, end)), end));
                }
            }
            None
        })
    }

    pub(super) fn int(&self, i: usize) -> Option<(i64, usize)> {
        self.r(R::Int, i, || {
            let mut j = i;
            while self.at(j).is_ascii_digit() {
                j += 1;
            }
            if j == i {
                return None;
            }
            let n = self.text(i, j).parse::<i64>().unwrap_or_else(|_| {
                self.build_error(
                    Diagnostic::error("E0005", Span::new(i, j), "integer literal out of range")
                        .with_label("too large"),
                );
                0
            });
            Some((n, j))
        })
    }

    pub(super) fn boolean(&self, i: usize) -> Option<(bool, usize)> {
        self.r(R::Boolean, i, || {
            if self.starts_word(i, "true") {
                Some((true, i + 4))
            } else if self.starts_word(i, "false") {
                Some((false, i + 5))
            } else {
                None
            }
        })
    }

    /// `string`: a triple-quoted or plain string, decoded.
    pub(super) fn string(&self, i: usize) -> Option<(Spanned<String>, usize)> {
        self.r(R::String, i, || {
            self.r(R::TripleStr, i, || self.triple_str(i))
                .or_else(|| self.r(R::PlainStr, i, || self.plain_str(i)))
        })
    }

    pub(super) fn triple_str(&self, i: usize) -> Option<(Spanned<String>, usize)> {
        if !self.starts(i, "\"\"\"") {
            return None;
        }
        let k = self.s.get(i + 3..)?.find("\"\"\"")?;
        let end = i + 3 + k + 3;
        let raw = self.text(i + 3, i + 3 + k);
        Some((Spanned::new(dedent(raw), Span::new(i, end)), end))
    }

    pub(super) fn plain_str(&self, i: usize) -> Option<(Spanned<String>, usize)> {
        if self.at(i) != b'"' {
            return None;
        }
        let mut j = i + 1;
        let mut escaped = false;
        loop {
            match self.at(j) {
                b'"' if !self.eof(j) => break,
                b'\n' => return None,
                b'\\' => {
                    escaped = true;
                    match self.at(j + 1) {
                        b'"' | b'\\' | b'n' | b't' | b'r' | b'0' => j += 2,
                        b'u' => {
                            if self.at(j + 2) != b'{' {
                                return None;
                            }
                            let mut k = j + 3;
                            while k < j + 9 && self.at(k).is_ascii_hexdigit() {
                                k += 1;
                            }
                            if k == j + 3 || self.at(k) != b'}' {
                                return None;
                            }
                            j = k + 1;
                        }
                        _ => return None,
                    }
                }
                _ if self.eof(j) => return None,
                _ => j += 1,
            }
        }
        let body = self.text(i + 1, j);
        let text = if escaped {
            unescape(body).unwrap_or_else(|(at, msg)| {
                let at = i + 1 + at;
                self.build_error(Diagnostic::error("E0003", Span::new(at, at + 1), msg));
                String::new()
            })
        } else {
            body.to_string()
        };
        Some((Spanned::new(text, Span::new(i, j + 1)), j + 1))
    }

    /// `var_ref`: the name without `$`, spanned over `$name`.
    pub(super) fn var(&self, i: usize) -> Option<(Spanned<String>, usize)> {
        self.r(R::VarRef, i, || {
            let end = self.ident(self.expect(i, b'$')?)?;
            Some((
                Spanned::new(self.text(i + 1, end).to_string(), Span::new(i, end)),
                end,
            ))
        })
    }

    pub(super) fn list_item(&self, i: usize) -> Option<(ListItem, usize)> {
        if let Some((s, e)) = self.string(i) {
            return Some((ListItem::Str(s), e));
        }
        self.var(i).map(|(v, e)| (ListItem::Var(v), e))
    }

    /// `list_lit`.
    pub(super) fn list(&self, i: usize) -> Option<(Spanned<Vec<ListItem>>, usize)> {
        self.r(R::ListLit, i, || {
            let (items, q) =
                self.comma_list(self.skip(self.open(i, b'[')?), true, |q| self.list_item(q));
            let end = self.close(q, b']')?;
            Some((Spanned::new(items, Span::new(i, end)), end))
        })
    }

    /// `(item ~ ("," ~ item)* ~ ","?)?` at `q` (`trailing` allows the last `","`): the
    /// items and where the closing bracket must be.
    pub(super) fn comma_list<T>(
        &self,
        q: usize,
        trailing: bool,
        item: impl Fn(usize) -> Option<(T, usize)>,
    ) -> (Vec<T>, usize) {
        let mut out = Vec::new();
        let Some((first, mut e)) = item(q) else {
            return (out, q);
        };
        out.push(first);
        loop {
            let r = self.skip(e);
            let Some(r2) = self.expect(r, b',') else {
                break;
            };
            let Some((next, e2)) = item(self.skip(r2)) else {
                break;
            };
            out.push(next);
            e = e2;
        }
        let r = self.skip(e);
        match self.expect(r, b',').filter(|_| trailing) {
            Some(r2) => (out, self.skip(r2)),
            None => (out, r),
        }
    }

    pub(super) fn pattern(&self, i: usize) -> Option<(Pattern, usize)> {
        if let Some((s, e)) = self.string(i) {
            return Some((Pattern::Str(s), e));
        }
        if let Some((v, e)) = self.var(i) {
            return Some((Pattern::Var(v), e));
        }
        self.list(i).map(|(l, e)| (Pattern::List(l), e))
    }

    /// `pattern ~ ("," ~ pattern)*` at `i`: the patterns and the pair end.
    pub(super) fn pattern_list(&self, i: usize) -> Option<(Vec<Pattern>, usize)> {
        let (first, mut e) = self.pattern(i)?;
        let mut out = vec![first];
        loop {
            let r = self.skip(e);
            let next = self
                .expect(r, b',')
                .and_then(|r2| self.pattern(self.skip(r2)));
            let Some((p, e2)) = next else {
                let end = if out.len() == 1 { r } else { e };
                return Some((out, end));
            };
            out.push(p);
            e = e2;
        }
    }

    /// The `patterns` rule.
    pub(super) fn patterns(&self, i: usize) -> Option<(Vec<Pattern>, usize)> {
        self.r(R::Patterns, i, || self.pattern_list(i))
    }

    pub(super) fn obl_value(&self, i: usize) -> Option<(Spanned<Value>, usize)> {
        let (v, end) = if let Some((s, e)) = self.string(i) {
            (Value::Str(s.node), e)
        } else if let Some((n, e)) = self.int(i) {
            (Value::Int(n), e)
        } else if let Some((b, e)) = self.boolean(i) {
            (Value::Bool(b), e)
        } else if let Some((l, e)) = self.list(i) {
            (Value::List(l.node), e)
        } else {
            let e = self.ident(i)?;
            (Value::Ident(self.text(i, e).to_string()), e)
        };
        Some((Spanned::new(v, Span::new(i, end)), end))
    }

    pub(super) fn obligation(&self, i: usize) -> Option<(Entry, usize)> {
        self.r(R::Obligation, i, || {
            let (key, e) = self.ident_s(i)?;
            let q = self.expect(self.skip(e), b':')?;
            let (v, end) = self.obl_value(self.skip(q))?;
            Some(((key, v), end))
        })
    }

    /// `"{" ~ (obligation ~ ("," ~ obligation)* ~ ","?)? ~ "}"` at `i`.
    pub(super) fn obligations(&self, i: usize) -> Option<(Entries, usize)> {
        let q = self.skip(self.open(i, b'{')?);
        let (out, q) = self.comma_list(q, true, |q| self.obligation(q));
        let end = self.close(q, b'}')?;
        Some((out, end))
    }
}
