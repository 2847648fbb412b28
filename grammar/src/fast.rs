//! Hand-written fast path for valid policy files (see `parse::parse`).
//!
//! A byte-level recursive-descent parser that follows `policy.pest` rule for rule and
//! reproduces the AST the pest path builds — spans included. pest positions are
//! mirrored exactly: a non-atomic rule whose trailing optional or repeated part did not
//! match ends *after* the implicit whitespace/comment skip that preceded the attempt,
//! and `span_of` then trims trailing whitespace (but not comments) from it.
//!
//! Whenever the input is not certainly valid, the parser gives up and returns `None`
//! so the caller falls back to pest, which owns every diagnostic. Giving up is always
//! safe; returning `Some` is only done when the same ordered choices pest makes were
//! taken at every step.

use crate::ast::*;
use crate::lexical::{MAX_FILE_BYTES, MAX_NESTING};
use crate::literal::{dedent, unescape};

/// Reserved words of the `kw` rule.
const KEYWORDS: [&str; 13] = [
    "when", "unless", "because", "with", "and", "or", "not", "script", "in", "matches", "contains",
    "true", "false",
];

/// Returns `None` to defer to the pest parser.
pub(crate) fn parse_fast(src: &str) -> Option<PolicyFile> {
    if src.len() > MAX_FILE_BYTES {
        return None;
    }
    let p = Parser {
        s: src,
        b: src.as_bytes(),
        depth: std::cell::Cell::new(0),
    };
    p.file()
}

struct Parser<'a> {
    s: &'a str,
    b: &'a [u8],
    /// Open `(`, `[` and `{` outside strings, comments and scripts (as `lexical::scan` counts).
    depth: std::cell::Cell<usize>,
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

type Entry = (Spanned<String>, Spanned<Value>);
type Entries = Vec<Entry>;

impl<'a> Parser<'a> {
    fn at(&self, i: usize) -> u8 {
        self.b.get(i).copied().unwrap_or(0)
    }

    fn eof(&self, i: usize) -> bool {
        i >= self.b.len()
    }

    fn starts(&self, i: usize, lit: &str) -> bool {
        self.b
            .get(i..)
            .is_some_and(|rest| rest.starts_with(lit.as_bytes()))
    }

    /// `lit` followed by something that is not `ASCII_ALPHANUMERIC | "_"`.
    fn starts_word(&self, i: usize, lit: &str) -> bool {
        self.starts(i, lit) && !is_word(self.at(i + lit.len()))
    }

    fn text(&self, start: usize, end: usize) -> &'a str {
        self.s.get(start..end).unwrap_or("")
    }

    fn owned(&self, start: usize, end: usize) -> Spanned<String> {
        Spanned::new(self.text(start, end).to_string(), Span::new(start, end))
    }

    /// `span_of`: the pair `start..end` without trailing whitespace.
    fn sp(&self, start: usize, end: usize) -> Span {
        let len = self.s.get(start..end).map_or(0, |t| t.trim_end().len());
        Span::new(start, start + len)
    }

    /// pest's implicit `(WHITESPACE | COMMENT)*`.
    fn skip(&self, mut i: usize) -> usize {
        loop {
            match self.at(i) {
                b' ' | b'\t' | b'\r' | b'\n' => i += 1,
                0xEF if self.at(i + 1) == 0xBB && self.at(i + 2) == 0xBF => i += 3,
                b'/' if self.at(i + 1) == b'/' => {
                    i = match self
                        .b
                        .get(i..)
                        .and_then(|r| r.iter().position(|&c| c == b'\n'))
                    {
                        Some(n) => i + n,
                        None => self.b.len(),
                    };
                }
                _ => return i,
            }
        }
    }

    fn expect(&self, i: usize, c: u8) -> Option<usize> {
        (self.at(i) == c && !self.eof(i)).then_some(i + 1)
    }

    fn open(&self, i: usize, c: u8) -> Option<usize> {
        let next = self.expect(i, c)?;
        let depth = self.depth.get() + 1;
        self.depth.set(depth);
        (depth <= MAX_NESTING).then_some(next)
    }

    fn close(&self, i: usize, c: u8) -> Option<usize> {
        let next = self.expect(i, c)?;
        self.depth.set(self.depth.get().saturating_sub(1));
        Some(next)
    }

    // ---------- atoms ----------

    /// End of the maximal `(ASCII_ALPHANUMERIC | "_")*` run starting at `i`.
    fn word_end(&self, mut i: usize) -> usize {
        while is_word(self.at(i)) {
            i += 1;
        }
        i
    }

    /// `ident`: end offset.
    fn ident(&self, i: usize) -> Option<usize> {
        if !is_ident_start(self.at(i)) {
            return None;
        }
        let end = self.word_end(i + 1);
        let w = self.text(i, end);
        (!KEYWORDS.contains(&w)).then_some(end)
    }

    fn ident_s(&self, i: usize) -> Option<(Spanned<String>, usize)> {
        let end = self.ident(i)?;
        Some((self.owned(i, end), end))
    }

    /// Role `name`.
    fn name(&self, i: usize) -> Option<usize> {
        if !is_ident_start(self.at(i)) {
            return None;
        }
        let mut j = i + 1;
        while is_word(self.at(j)) || self.at(j) == b'-' {
            j += 1;
        }
        Some(j)
    }

    fn effect(&self, i: usize) -> Option<(Spanned<Effect>, usize)> {
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
    }

    fn int(&self, i: usize) -> Option<(i64, usize)> {
        let mut j = i;
        while self.at(j).is_ascii_digit() {
            j += 1;
        }
        if j == i {
            return None;
        }
        Some((self.text(i, j).parse::<i64>().ok()?, j))
    }

    fn boolean(&self, i: usize) -> Option<(bool, usize)> {
        if self.starts_word(i, "true") {
            Some((true, i + 4))
        } else if self.starts_word(i, "false") {
            Some((false, i + 5))
        } else {
            None
        }
    }

    /// `string`: a triple-quoted or plain string, decoded.
    fn string(&self, i: usize) -> Option<(Spanned<String>, usize)> {
        if self.at(i) != b'"' {
            return None;
        }
        if self.starts(i, "\"\"\"") {
            if let Some(k) = self.s.get(i + 3..).and_then(|r| r.find("\"\"\"")) {
                let end = i + 3 + k + 3;
                let raw = self.text(i + 3, i + 3 + k);
                return Some((Spanned::new(dedent(raw), Span::new(i, end)), end));
            }
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
            unescape(body).ok()?
        } else {
            body.to_string()
        };
        Some((Spanned::new(text, Span::new(i, j + 1)), j + 1))
    }

    /// `var_ref`: the name without `$`, spanned over `$name`.
    fn var(&self, i: usize) -> Option<(Spanned<String>, usize)> {
        if self.at(i) != b'$' {
            return None;
        }
        let end = self.ident(i + 1)?;
        Some((
            Spanned::new(self.text(i + 1, end).to_string(), Span::new(i, end)),
            end,
        ))
    }

    fn list_item(&self, i: usize) -> Option<(ListItem, usize)> {
        match self.at(i) {
            b'"' => self.string(i).map(|(s, e)| (ListItem::Str(s), e)),
            b'$' => self.var(i).map(|(v, e)| (ListItem::Var(v), e)),
            _ => None,
        }
    }

    /// `list_lit`.
    fn list(&self, i: usize) -> Option<(Spanned<Vec<ListItem>>, usize)> {
        let mut q = self.skip(self.open(i, b'[')?);
        let mut items = Vec::new();
        if self.at(q) != b']' {
            let (item, mut e) = self.list_item(q)?;
            items.push(item);
            loop {
                let r = self.skip(e);
                if self.at(r) == b',' {
                    let r2 = self.skip(r + 1);
                    if self.at(r2) == b']' {
                        q = r2;
                        break;
                    }
                    let (item, e2) = self.list_item(r2)?;
                    items.push(item);
                    e = e2;
                } else {
                    q = r;
                    break;
                }
            }
        }
        let end = self.close(q, b']')?;
        Some((Spanned::new(items, Span::new(i, end)), end))
    }

    fn pattern(&self, i: usize) -> Option<(Pattern, usize)> {
        match self.at(i) {
            b'"' => self.string(i).map(|(s, e)| (Pattern::Str(s), e)),
            b'$' => self.var(i).map(|(v, e)| (Pattern::Var(v), e)),
            b'[' => self.list(i).map(|(l, e)| (Pattern::List(l), e)),
            _ => None,
        }
    }

    /// `pattern ~ ("," ~ pattern)*` starting at a pattern: the patterns and the pair end.
    fn patterns(&self, i: usize) -> Option<(Vec<Pattern>, usize)> {
        let (first, mut e) = self.pattern(i)?;
        let mut out = vec![first];
        loop {
            let r = self.skip(e);
            if self.at(r) != b',' {
                let end = if out.len() == 1 { r } else { e };
                return Some((out, end));
            }
            let r2 = self.skip(r + 1);
            let (p, e2) = self.pattern(r2)?;
            out.push(p);
            e = e2;
        }
    }

    // ---------- obligations ----------

    fn obl_value(&self, i: usize) -> Option<(Spanned<Value>, usize)> {
        let c = self.at(i);
        let (v, end) = if c == b'"' {
            let (s, e) = self.string(i)?;
            (Value::Str(s.node), e)
        } else if c.is_ascii_digit() {
            let (n, e) = self.int(i)?;
            (Value::Int(n), e)
        } else if let Some((b, e)) = self.boolean(i) {
            (Value::Bool(b), e)
        } else if c == b'[' {
            let (l, e) = self.list(i)?;
            (Value::List(l.node), e)
        } else {
            let e = self.ident(i)?;
            (Value::Ident(self.text(i, e).to_string()), e)
        };
        Some((Spanned::new(v, Span::new(i, end)), end))
    }

    fn obligation(&self, i: usize) -> Option<(Entry, usize)> {
        let (key, e) = self.ident_s(i)?;
        let q = self.expect(self.skip(e), b':')?;
        let (v, end) = self.obl_value(self.skip(q))?;
        Some(((key, v), end))
    }

    /// `"{" ~ (obligation ~ ("," ~ obligation)* ~ ","?)? ~ "}"` at `i`.
    fn obligations(&self, i: usize) -> Option<(Entries, usize)> {
        let mut q = self.skip(self.open(i, b'{')?);
        let mut out = Vec::new();
        if self.at(q) != b'}' {
            let (entry, mut e) = self.obligation(q)?;
            out.push(entry);
            loop {
                let r = self.skip(e);
                if self.at(r) == b',' {
                    let r2 = self.skip(r + 1);
                    if self.at(r2) == b'}' {
                        q = r2;
                        break;
                    }
                    let (entry, e2) = self.obligation(r2)?;
                    out.push(entry);
                    e = e2;
                } else {
                    q = r;
                    break;
                }
            }
        }
        let end = self.close(q, b'}')?;
        Some((out, end))
    }

    // ---------- file and statements ----------

    fn file(&self) -> Option<PolicyFile> {
        let mut statements = Vec::new();
        let mut p = self.skip(0);
        while !self.eof(p) {
            let (stmt, e) = self.statement(p)?;
            statements.push(stmt);
            p = self.skip(e);
        }
        Some(PolicyFile { statements })
    }

    fn statement(&self, p: usize) -> Option<(Statement, usize)> {
        if self.starts(p, "language") {
            let (n, e) = self.int(self.skip(p + 8))?;
            let end = self.expect(self.skip(e), b';')?;
            let n = u32::try_from(n).ok()?;
            return Some((Statement::Language(Spanned::new(n, Span::new(p, end))), end));
        }
        if self.starts(p, "default") {
            let (domain, e) = self.ident_s(self.skip(p + 7))?;
            let q = self.expect(self.skip(e), b'=')?;
            let (effect, e) = self.effect(self.skip(q))?;
            let end = self.expect(self.skip(e), b';')?;
            let d = DefaultDecl {
                domain,
                effect,
                span: Span::new(p, end),
            };
            return Some((Statement::Default(d), end));
        }
        if self.starts(p, "let") {
            let (name, e) = self.ident_s(self.skip(p + 3))?;
            let q = self.skip(self.expect(self.skip(e), b'=')?);
            let (value, scalar, e) = if self.at(q) == b'[' {
                let (l, e) = self.list(q)?;
                (l, false, e)
            } else {
                let (s, e) = self.string(q)?;
                let span = s.span;
                (Spanned::new(vec![ListItem::Str(s)], span), true, e)
            };
            let end = self.expect(self.skip(e), b';')?;
            let l = LetDecl {
                name,
                value,
                scalar,
                span: Span::new(p, end),
            };
            return Some((Statement::Let(l), end));
        }
        if self.starts(p, "role") {
            return self.role(p);
        }
        if self.starts(p, "test") {
            return self.test_block(p);
        }
        self.annotated(p)
    }

    fn role(&self, p: usize) -> Option<(Statement, usize)> {
        let q = self.skip(p + 4);
        let ne = self.name(q)?;
        let n = self.text(q, ne);
        if n == "script" || n.ends_with("-script") {
            // `lexical::scan` would read the block as a Rhai script; let pest decide.
            return None;
        }
        let name = self.owned(q, ne);
        let mut q = self.skip(self.open(self.skip(ne), b'{')?);
        let mut block = RoleBlock {
            name,
            rules: Vec::new(),
            guides: Vec::new(),
            order: Vec::new(),
            span: Span::default(),
        };
        while self.at(q) != b'}' {
            let (item, e) = self.annotated(q)?;
            if block.push(item).is_some() {
                return None;
            }
            q = self.skip(e);
        }
        let end = self.close(q, b'}')?;
        block.span = Span::new(p, end);
        Some((Statement::Role(block), end))
    }

    fn annotated(&self, mut p: usize) -> Option<(Statement, usize)> {
        let mut annotations = Vec::new();
        while self.at(p) == b'@' {
            let (a, e) = self.annotation(p)?;
            annotations.push(a);
            p = self.skip(e);
        }
        if let Some((effect, e)) = self.effect(p) {
            let (r, end) = self.rule(effect, e, annotations)?;
            return Some((Statement::Rule(r), end));
        }
        if self.starts(p, "guide") {
            let (g, end) = self.guide(p, annotations)?;
            return Some((Statement::Guide(g), end));
        }
        if self.starts(p, "detector") {
            let (d, end) = self.detector(p, annotations)?;
            return Some((Statement::Detector(d), end));
        }
        None
    }

    /// `"detector" ~ ident ~ patterns ~ detector_body? ~ because_clause? ~ ";"` at `p`.
    fn detector(&self, p: usize, annotations: Vec<Annotation>) -> Option<(Detector, usize)> {
        let (kind, e) = self.ident_s(self.skip(p + 8))?;
        let (patterns, e) = self.patterns(self.skip(e))?;
        let mut q = self.skip(e);
        let mut fields = Vec::new();
        if self.at(q) == b'{' {
            let (entries, e) = self.obligations(q)?;
            fields = entries;
            q = self.skip(e);
        }
        let mut because = None;
        if self.starts(q, "because") {
            let (s, e) = self.string(self.skip(q + 7))?;
            because = Some(s);
            q = self.skip(e);
        }
        let end = self.expect(q, b';')?;
        let start = annotations.first().map_or(p, |a| a.span.start);
        Some((
            Detector {
                annotations,
                kind,
                patterns,
                fields,
                because,
                span: Span::new(start, end),
            },
            end,
        ))
    }

    fn annotation(&self, p: usize) -> Option<(Annotation, usize)> {
        let (name, e) = self.ident_s(self.skip(p + 1))?;
        let q = self.skip(self.open(self.skip(e), b'(')?);
        let (value, bare, e) = if self.at(q) == b'"' {
            let (s, e) = self.string(q)?;
            (s, false, e)
        } else {
            let (s, e) = self.ident_s(q)?;
            (s, true, e)
        };
        let end = self.close(self.skip(e), b')')?;
        Some((
            Annotation {
                name,
                value,
                bare,
                span: Span::new(p, end),
            },
            end,
        ))
    }

    fn rule(
        &self,
        effect: Spanned<Effect>,
        effect_end: usize,
        annotations: Vec<Annotation>,
    ) -> Option<(Rule, usize)> {
        let (domain, de) = self.ident_s(self.skip(effect_end))?;
        let mut head_end = domain.span.end;
        let mut q = self.skip(de);
        let mut ops = Vec::new();
        if let Some(e1) = self.ident(q) {
            let start = q;
            ops.push(self.owned(q, e1));
            let mut e = e1;
            let ops_end = loop {
                let r = self.skip(e);
                if self.at(r) != b',' {
                    break if ops.len() == 1 { r } else { e };
                }
                let r2 = self.skip(r + 1);
                let e2 = self.ident(r2)?;
                ops.push(self.owned(r2, e2));
                e = e2;
            };
            head_end = self.sp(start, ops_end).end;
            q = self.skip(ops_end);
        }
        let mut patterns = Vec::new();
        if matches!(self.at(q), b'"' | b'$' | b'[') {
            let start = q;
            let (ps, end) = self.patterns(q)?;
            patterns = ps;
            head_end = self.sp(start, end).end;
            q = self.skip(end);
        }
        let mut clauses = Vec::new();
        loop {
            let (clause, e) = if self.starts(q, "when") {
                let (x, e) = self.expr(self.skip(q + 4), 0)?;
                (Clause::When(x), e)
            } else if self.starts(q, "unless") {
                let (x, e) = self.expr(self.skip(q + 6), 0)?;
                (Clause::Unless(x), e)
            } else if self.starts(q, "with") {
                let (name, e) = self.ident_s(self.skip(q + 4))?;
                let (entries, end) = self.obligations(self.skip(e))?;
                let o = Obligation {
                    name,
                    entries,
                    span: Span::new(q, end),
                };
                (Clause::With(o), end)
            } else if self.starts(q, "because") {
                let (s, e) = self.string(self.skip(q + 7))?;
                (Clause::Because(s), e)
            } else {
                break;
            };
            clauses.push(clause);
            q = self.skip(e);
        }
        let end = self.expect(q, b';')?;
        let start = annotations
            .first()
            .map_or(effect.span.start, |a| a.span.start);
        let head_span = Span::new(effect.span.start, head_end);
        Some((
            Rule {
                annotations,
                effect,
                domain,
                ops,
                patterns,
                clauses,
                span: Span::new(start, end),
                head_span,
            },
            end,
        ))
    }

    fn guide(&self, p: usize, annotations: Vec<Annotation>) -> Option<(Guide, usize)> {
        let (title, e) = self.string(self.skip(p + 5))?;
        let mut q = self.skip(e);
        let mut scope = Vec::new();
        if self.starts(q, "for") {
            let (ps, end) = self.patterns(self.skip(q + 3))?;
            scope = ps;
            q = self.skip(end);
        }
        q = self.skip(self.open(q, b'{')?);
        let mut body = Vec::new();
        while self.at(q) == b'"' {
            let (s, e) = self.string(q)?;
            body.push(s);
            q = self.skip(e);
        }
        let end = self.close(q, b'}')?;
        Some((
            Guide {
                annotations,
                title,
                scope,
                body,
                span: Span::new(p, end),
            },
            end,
        ))
    }

    // ---------- tests ----------

    fn test_block(&self, p: usize) -> Option<(Statement, usize)> {
        let (name, e) = self.string(self.skip(p + 4))?;
        let mut q = self.skip(self.open(self.skip(e), b'{')?);
        let mut cases = Vec::new();
        while self.at(q) != b'}' {
            let (c, e) = self.test_case(q)?;
            cases.push(c);
            q = self.skip(e);
        }
        let end = self.close(q, b'}')?;
        let t = TestBlock {
            name,
            cases,
            span: Span::new(p, end),
        };
        Some((Statement::Test(t), end))
    }

    /// An optional obligation block after a plugin/commit request.
    fn opt_fields(&self, e: usize) -> Option<(Entries, usize)> {
        let r = self.skip(e);
        if self.at(r) == b'{' {
            self.obligations(r)
        } else {
            Some((Vec::new(), e))
        }
    }

    fn test_case(&self, p: usize) -> Option<(TestCase, usize)> {
        let (request, e) = if self.starts(p, "path") {
            let (op, e) = self.ident_s(self.skip(p + 4))?;
            let (path, e) = self.string(self.skip(e))?;
            (TestRequest::Path { op, path }, e)
        } else if self.starts(p, "exec") {
            let q = self.skip(p + 4);
            if self.at(q) == b'[' {
                let (l, e) = self.list(q)?;
                (TestRequest::ExecArgv(l), e)
            } else {
                let (s, e) = self.string(q)?;
                (TestRequest::ExecShell(s), e)
            }
        } else if self.starts(p, "plugin") {
            let (name, e) = self.string(self.skip(p + 6))?;
            let (fields, e) = self.opt_fields(e)?;
            (TestRequest::Plugin { name, fields }, e)
        } else if self.starts(p, "commit") {
            let (files, e) = self.list(self.skip(p + 6))?;
            let (fields, e) = self.opt_fields(e)?;
            (TestRequest::Commit { files, fields }, e)
        } else {
            return None;
        };
        let mut q = self.skip(e);
        let mut role = None;
        if self.starts(q, "as") {
            let r = self.skip(q + 2);
            if !self.starts(r, "role") {
                return None;
            }
            let (s, e) = self.string(self.skip(r + 4))?;
            role = Some(s);
            q = self.skip(e);
        }
        if !self.starts(q, "=>") {
            return None;
        }
        let (expect, e) = self.effect(self.skip(q + 2))?;
        let mut q = self.skip(e);
        let mut expect_rules = Vec::new();
        if self.at(q) == b'(' {
            let mut r = self.skip(self.open(q, b'(')?);
            if self.at(r) != b')' {
                loop {
                    let (item, e) = self.rule_ref_item(r)?;
                    expect_rules.push(item);
                    r = self.skip(e);
                    if self.at(r) != b',' {
                        break;
                    }
                    r = self.skip(r + 1);
                }
            }
            q = self.skip(self.close(r, b')')?);
        }
        let end = self.expect(q, b';')?;
        Some((
            TestCase {
                request,
                role,
                expect,
                expect_rules,
                span: Span::new(p, end),
            },
            end,
        ))
    }

    fn rule_ref_item(&self, i: usize) -> Option<(Spanned<String>, usize)> {
        if self.at(i) == b'"' {
            return self.string(i);
        }
        let mut j = i;
        loop {
            let c = self.at(j);
            if is_word(c)
                || matches!(c, b'-' | b'.' | b':')
                || (c == b'/' && self.at(j + 1) != b'/')
            {
                j += 1;
            } else {
                break;
            }
        }
        (j > i).then(|| (self.owned(i, j), j))
    }

    // ---------- conditions ----------

    fn or_op(&self, i: usize) -> Option<usize> {
        if self.starts_word(i, "or") || self.starts(i, "||") {
            Some(i + 2)
        } else {
            None
        }
    }

    fn and_op(&self, i: usize) -> Option<usize> {
        if self.starts_word(i, "and") {
            Some(i + 3)
        } else if self.starts(i, "&&") {
            Some(i + 2)
        } else {
            None
        }
    }

    fn not_op(&self, i: usize) -> Option<usize> {
        if self.starts_word(i, "not") {
            Some(i + 3)
        } else if self.at(i) == b'!' && self.at(i + 1) != b'=' {
            Some(i + 1)
        } else {
            None
        }
    }

    fn cmp_op(&self, i: usize) -> Option<(CmpOp, usize)> {
        let two = |op| Some((op, i + 2));
        match (self.at(i), self.at(i + 1)) {
            (b'=', b'=') => two(CmpOp::Eq),
            (b'!', b'=') => two(CmpOp::Ne),
            (b'<', b'=') => two(CmpOp::Le),
            (b'>', b'=') => two(CmpOp::Ge),
            (b'<', _) => Some((CmpOp::Lt, i + 1)),
            (b'>', _) => Some((CmpOp::Gt, i + 1)),
            _ => {
                for (lit, op) in [
                    ("in", CmpOp::In),
                    ("matches", CmpOp::Matches),
                    ("contains", CmpOp::Contains),
                ] {
                    if self.starts_word(i, lit) {
                        return Some((op, i + lit.len()));
                    }
                }
                None
            }
        }
    }

    /// `expr` at build depth `d` (as `pest_parser::build_expr` counts it).
    fn expr(&self, p: usize, d: usize) -> Option<(Expr, usize)> {
        if d > MAX_NESTING {
            return None;
        }
        let (first, mut e) = self.and_expr(p, d + 1)?;
        let mut parts = vec![first];
        loop {
            let r = self.skip(e);
            let Some(oe) = self.or_op(r) else {
                if parts.len() == 1 {
                    return parts.pop().map(|x| (x, r));
                }
                return Some((Expr::Or(parts, self.sp(p, e)), e));
            };
            let (x, e2) = self.and_expr(self.skip(oe), d + 1)?;
            parts.push(x);
            e = e2;
        }
    }

    fn and_expr(&self, p: usize, d: usize) -> Option<(Expr, usize)> {
        if d > MAX_NESTING {
            return None;
        }
        let (first, mut e) = self.unary(p, d + 1)?;
        let mut parts = vec![first];
        loop {
            let r = self.skip(e);
            let Some(ae) = self.and_op(r) else {
                if parts.len() == 1 {
                    return parts.pop().map(|x| (x, r));
                }
                return Some((Expr::And(parts, self.sp(p, e)), e));
            };
            let (x, e2) = self.unary(self.skip(ae), d + 1)?;
            parts.push(x);
            e = e2;
        }
    }

    fn unary(&self, p: usize, d: usize) -> Option<(Expr, usize)> {
        if d > MAX_NESTING {
            return None;
        }
        let mut nots = Vec::new();
        let mut q = p;
        while let Some(ne) = self.not_op(q) {
            nots.push(q);
            if nots.len() + d > MAX_NESTING {
                return None;
            }
            q = self.skip(ne);
        }
        let (mut x, e) = self.atom(q, d + 1)?;
        if !nots.is_empty() {
            let end = self.sp(p, e).end;
            for start in nots.into_iter().rev() {
                x = Expr::Not(Box::new(x), Span::new(start, end));
            }
        }
        Some((x, e))
    }

    fn atom(&self, p: usize, d: usize) -> Option<(Expr, usize)> {
        if d > MAX_NESTING {
            return None;
        }
        if self.starts(p, "script") {
            let mut q = p + 6;
            let mut bom = false;
            loop {
                match self.at(q) {
                    b' ' | b'\t' | b'\r' | b'\n' => q += 1,
                    0xEF if self.at(q + 1) == 0xBB && self.at(q + 2) == 0xBF => {
                        bom = true;
                        q += 3;
                    }
                    _ => break,
                }
            }
            if self.at(q) == b'{' {
                // `lexical::scan` only treats `script` as a script when it starts a word
                // and is followed by ASCII whitespace: elsewhere, let pest decide.
                let prev = p.checked_sub(1).map_or(b' ', |i| self.at(i));
                if bom || is_word(prev) || prev == b'@' {
                    return None;
                }
                return self.script(q + 1);
            }
        }
        if self.at(p) == b'(' {
            let q = self.skip(self.open(p, b'(')?);
            let (inner, e) = self.expr(q, d + 1)?;
            let end = self.close(self.skip(e), b')')?;
            return Some((Expr::Paren(Box::new(inner), Span::new(p, end)), end));
        }
        self.comparison(p)
    }

    /// A Rhai body starting after its `{`; the expression ends after the closing `}`.
    fn script(&self, start: usize) -> Option<(Expr, usize)> {
        let mut i = start;
        let mut level = 0usize;
        loop {
            match *self.b.get(i)? {
                b'}' => {
                    if level == 0 {
                        let body = self.owned(start, i);
                        return Some((Expr::Script(body), i + 1));
                    }
                    level -= 1;
                    i += 1;
                }
                b'{' => {
                    level += 1;
                    if level > MAX_NESTING {
                        return None;
                    }
                    i += 1;
                }
                b'"' => {
                    i += 1;
                    loop {
                        match *self.b.get(i)? {
                            b'"' => break,
                            b'\n' => return None,
                            b'\\' => {
                                self.b.get(i + 1)?;
                                i += 2;
                            }
                            _ => i += 1,
                        }
                    }
                    i += 1;
                }
                b'\'' => {
                    i += 1;
                    loop {
                        match *self.b.get(i)? {
                            b'\'' => break,
                            b'\\' => {
                                self.b.get(i + 1)?;
                                i += 2;
                            }
                            _ => i += 1,
                        }
                    }
                    i += 1;
                }
                b'`' => {
                    let n = self.b.get(i + 1..)?.iter().position(|&c| c == b'`')?;
                    i += n + 2;
                }
                b'/' if self.at(i + 1) == b'/' => {
                    i = match self
                        .b
                        .get(i..)
                        .and_then(|r| r.iter().position(|&c| c == b'\n'))
                    {
                        Some(n) => i + n,
                        None => return None,
                    };
                }
                _ => i += 1,
            }
        }
    }

    fn comparison(&self, p: usize) -> Option<(Expr, usize)> {
        let (lhs, e) = self.operand(p)?;
        let q = self.skip(e);
        let Some((op, oe)) = self.cmp_op(q) else {
            return Some((Expr::Truthy(lhs), q));
        };
        let (rhs, re) = self.operand(self.skip(oe))?;
        Some((
            Expr::Compare {
                lhs,
                op: Spanned::new(op, Span::new(q, oe)),
                rhs,
                span: self.sp(p, re),
            },
            re,
        ))
    }

    fn operand(&self, p: usize) -> Option<(Operand, usize)> {
        let c = self.at(p);
        if c == b'"' {
            let (s, e) = self.string(p)?;
            return Some((Operand::Str(s), e));
        }
        if c.is_ascii_digit() {
            let (n, e) = self.int(p)?;
            return Some((Operand::Int(Spanned::new(n, Span::new(p, e))), e));
        }
        if let Some((b, e)) = self.boolean(p) {
            return Some((Operand::Bool(Spanned::new(b, Span::new(p, e))), e));
        }
        if c == b'[' {
            let (l, e) = self.list(p)?;
            return Some((Operand::List(l), e));
        }
        if c == b'$' {
            let (v, e) = self.var(p)?;
            return Some((Operand::Var(v), e));
        }
        // access, possibly the target of a call
        let e1 = self.ident(p)?;
        let mut names = vec![self.text(p, e1).to_string()];
        let mut e = e1;
        let access_end = loop {
            let r = self.skip(e);
            if self.at(r) != b'.' {
                break if names.len() == 1 { r } else { e };
            }
            let r2 = self.skip(r + 1);
            let e2 = self.ident(r2)?;
            names.push(self.text(r2, e2).to_string());
            e = e2;
        };
        let target = Spanned::new(names, self.sp(p, access_end));
        let q = self.skip(access_end);
        if self.at(q) != b'(' {
            return Some((Operand::Attr(target), access_end));
        }
        let mut r = self.skip(self.open(q, b'(')?);
        let mut args = Vec::new();
        if self.at(r) != b')' {
            loop {
                let (a, e) = self.operand(r)?;
                args.push(a);
                r = self.skip(e);
                if self.at(r) != b',' {
                    break;
                }
                r = self.skip(r + 1);
            }
        }
        let end = self.close(r, b')')?;
        Some((
            Operand::Call {
                target,
                args,
                span: Span::new(p, end),
            },
            end,
        ))
    }
}
