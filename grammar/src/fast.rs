//! The production parser: hand-written recursive descent over bytes, rule for rule
//! `policy.pest` (the normative grammar, kept as the oracle of the differential tests).
//!
//! It builds the AST pest's pairs would give, spans included. pest positions are
//! mirrored exactly: a non-atomic rule whose trailing optional or repeated part did not
//! match ends *after* the implicit whitespace/comment skip that preceded the attempt,
//! and `sp` then trims trailing whitespace (but not comments) from it.
//!
//! Every named rule runs through [`Parser::r`], which undoes a failed attempt (bracket
//! depth, build errors found inside it) and, in the tracking instance (`TRACK = true`,
//! run only after a failure), records the attempt the way pest does, so a syntax error
//! points where pest's would and names what was expected there (see `attempts.rs`).
//! Ordered choices try their alternatives in the grammar's order for the same reason.
//!
//! Errors found while building a value from text the grammar accepts (an integer out of
//! range, a bad `\u{…}`, a detector in a role, a condition nested too deep) do not stop
//! the parse: the first one of each top-level statement is kept and the statement is
//! dropped, as building from pest's pairs did.

use std::cell::{Cell, RefCell};

use crate::ast::*;
use crate::attempts::{Attempts, Production as R};
use crate::diagnostic::Diagnostic;
use crate::expected;
use crate::lexical::MAX_NESTING;
use crate::literal::{dedent, unescape};

/// Reserved words of the `kw` rule.
const KEYWORDS: [&str; 13] = [
    "when", "unless", "because", "with", "and", "or", "not", "script", "in", "matches", "contains",
    "true", "false",
];

/// The statements that parsed and the errors found while building the others.
#[derive(Debug, Default)]
pub(crate) struct Parsed {
    pub(crate) statements: Vec<Statement>,
    pub(crate) diagnostics: Vec<Diagnostic>,
}

/// Why a parse gave no statements.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The grammar does not match; [`syntax_error`] says where and what was expected.
    Syntax,
    /// A limit that ends parsing outright (nesting the lexical scan could not see).
    Fatal(Box<Diagnostic>),
}

/// Parses `src[start..end]` as a whole file (`file`) or as one statement (`single_stmt`).
pub(crate) fn parse(src: &str, part: Span, single: bool) -> Result<Parsed, Failure> {
    Parser::<false>::new(src, part).run(single)
}

/// The E0001 diagnostic for a part that [`parse`] reported as `Failure::Syntax`.
pub(crate) fn syntax_error(src: &str, part: Span, single: bool) -> Diagnostic {
    let p = Parser::<true>::new(src, part);
    match p.run(single) {
        Err(Failure::Fatal(d)) => *d,
        _ => expected::syntax_error(&p.attempts.borrow()),
    }
}

struct Parser<'a, const TRACK: bool> {
    s: &'a str,
    b: &'a [u8],
    start: usize,
    /// Open `(`, `[` and `{` outside strings, comments and scripts (as `lexical::scan` counts).
    depth: Cell<usize>,
    /// No build error recorded in the current top-level statement.
    clean: Cell<bool>,
    built: RefCell<Option<Diagnostic>>,
    fatal: RefCell<Option<Box<Diagnostic>>>,
    attempts: RefCell<Attempts>,
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn too_deep(span: Span) -> Diagnostic {
    Diagnostic::error(
        "E0002",
        span,
        format!("condition nests deeper than {MAX_NESTING} levels"),
    )
    .with_label("too deep")
}

type Entry = (Spanned<String>, Spanned<Value>);
type Entries = Vec<Entry>;

impl<'a, const TRACK: bool> Parser<'a, TRACK> {
    fn new(src: &'a str, part: Span) -> Self {
        let s = src.get(..part.end).unwrap_or(src);
        Parser {
            s,
            b: s.as_bytes(),
            start: part.start.min(s.len()),
            depth: Cell::new(0),
            clean: Cell::new(true),
            built: RefCell::new(None),
            fatal: RefCell::new(None),
            attempts: RefCell::new(Attempts {
                pos: part.start,
                rules: Vec::new(),
            }),
        }
    }

    fn run(&self, single: bool) -> Result<Parsed, Failure> {
        let out = if single {
            self.r(R::SingleStmt, self.start, || self.single_stmt())
        } else {
            self.r(R::File, self.start, || self.file())
        };
        if let Some(d) = self.fatal.borrow_mut().take() {
            return Err(Failure::Fatal(d));
        }
        out.ok_or(Failure::Syntax)
    }

    /// A named rule starting at `pos`: on failure, undo what `f` did and record the attempt.
    #[inline(always)]
    fn r<T>(&self, rule: R, pos: usize, f: impl FnOnce() -> Option<T>) -> Option<T> {
        let mark = TRACK.then(|| self.attempts.borrow().start(pos));
        let out = self.group(f);
        if let (None, Some(mark)) = (&out, mark) {
            self.attempts.borrow_mut().failed(rule, pos, mark);
        }
        out
    }

    /// An optional or repeated part: on failure, undo what `f` did.
    #[inline(always)]
    fn group<T>(&self, f: impl FnOnce() -> Option<T>) -> Option<T> {
        let depth = self.depth.get();
        let clean = self.clean.get();
        let out = f();
        if out.is_none() {
            self.depth.set(depth);
            if clean && !self.clean.get() {
                self.clean.set(true);
                *self.built.borrow_mut() = None;
            }
        }
        out
    }

    /// Keeps the first build error of the current top-level statement.
    fn build_error(&self, d: Diagnostic) {
        if self.clean.get() {
            self.clean.set(false);
            *self.built.borrow_mut() = Some(d);
        }
    }

    /// Keeps `stmt`, or the build error found in it.
    fn keep(&self, out: &mut Parsed, stmt: Statement) {
        self.clean.set(true);
        match self.built.borrow_mut().take() {
            Some(d) => out.diagnostics.push(d),
            None => out.statements.push(stmt),
        }
    }

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

    /// A literal: the offset after it.
    fn lit(&self, i: usize, lit: &str) -> Option<usize> {
        self.starts(i, lit).then_some(i + lit.len())
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
        if depth > MAX_NESTING {
            let d = Diagnostic::error(
                "E0002",
                Span::new(i, i + 1),
                format!("brackets nest deeper than {MAX_NESTING} levels"),
            )
            .with_label("too deep");
            self.fatal.borrow_mut().get_or_insert(Box::new(d));
            return None;
        }
        Some(next)
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
        self.r(R::Ident, i, || {
            if !is_ident_start(self.at(i)) {
                return None;
            }
            let end = self.word_end(i + 1);
            let w = self.text(i, end);
            (!KEYWORDS.contains(&w)).then_some(end)
        })
    }

    fn ident_s(&self, i: usize) -> Option<(Spanned<String>, usize)> {
        let end = self.ident(i)?;
        Some((self.owned(i, end), end))
    }

    /// Role `name`.
    fn name(&self, i: usize) -> Option<usize> {
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

    fn effect(&self, i: usize) -> Option<(Spanned<Effect>, usize)> {
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

    fn int(&self, i: usize) -> Option<(i64, usize)> {
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

    fn boolean(&self, i: usize) -> Option<(bool, usize)> {
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
    fn string(&self, i: usize) -> Option<(Spanned<String>, usize)> {
        self.r(R::String, i, || {
            self.r(R::TripleStr, i, || self.triple_str(i))
                .or_else(|| self.r(R::PlainStr, i, || self.plain_str(i)))
        })
    }

    fn triple_str(&self, i: usize) -> Option<(Spanned<String>, usize)> {
        if !self.starts(i, "\"\"\"") {
            return None;
        }
        let k = self.s.get(i + 3..)?.find("\"\"\"")?;
        let end = i + 3 + k + 3;
        let raw = self.text(i + 3, i + 3 + k);
        Some((Spanned::new(dedent(raw), Span::new(i, end)), end))
    }

    fn plain_str(&self, i: usize) -> Option<(Spanned<String>, usize)> {
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
    fn var(&self, i: usize) -> Option<(Spanned<String>, usize)> {
        self.r(R::VarRef, i, || {
            let end = self.ident(self.expect(i, b'$')?)?;
            Some((
                Spanned::new(self.text(i + 1, end).to_string(), Span::new(i, end)),
                end,
            ))
        })
    }

    fn list_item(&self, i: usize) -> Option<(ListItem, usize)> {
        if let Some((s, e)) = self.string(i) {
            return Some((ListItem::Str(s), e));
        }
        self.var(i).map(|(v, e)| (ListItem::Var(v), e))
    }

    /// `list_lit`.
    fn list(&self, i: usize) -> Option<(Spanned<Vec<ListItem>>, usize)> {
        self.r(R::ListLit, i, || {
            let (items, q) =
                self.comma_list(self.skip(self.open(i, b'[')?), true, |q| self.list_item(q));
            let end = self.close(q, b']')?;
            Some((Spanned::new(items, Span::new(i, end)), end))
        })
    }

    /// `(item ~ ("," ~ item)* ~ ","?)?` at `q` (`trailing` allows the last `","`): the
    /// items and where the closing bracket must be.
    fn comma_list<T>(
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

    fn pattern(&self, i: usize) -> Option<(Pattern, usize)> {
        if let Some((s, e)) = self.string(i) {
            return Some((Pattern::Str(s), e));
        }
        if let Some((v, e)) = self.var(i) {
            return Some((Pattern::Var(v), e));
        }
        self.list(i).map(|(l, e)| (Pattern::List(l), e))
    }

    /// `pattern ~ ("," ~ pattern)*` at `i`: the patterns and the pair end.
    fn pattern_list(&self, i: usize) -> Option<(Vec<Pattern>, usize)> {
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
    fn patterns(&self, i: usize) -> Option<(Vec<Pattern>, usize)> {
        self.r(R::Patterns, i, || self.pattern_list(i))
    }

    // ---------- obligations ----------

    fn obl_value(&self, i: usize) -> Option<(Spanned<Value>, usize)> {
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

    fn obligation(&self, i: usize) -> Option<(Entry, usize)> {
        self.r(R::Obligation, i, || {
            let (key, e) = self.ident_s(i)?;
            let q = self.expect(self.skip(e), b':')?;
            let (v, end) = self.obl_value(self.skip(q))?;
            Some(((key, v), end))
        })
    }

    /// `"{" ~ (obligation ~ ("," ~ obligation)* ~ ","?)? ~ "}"` at `i`.
    fn obligations(&self, i: usize) -> Option<(Entries, usize)> {
        let q = self.skip(self.open(i, b'{')?);
        let (out, q) = self.comma_list(q, true, |q| self.obligation(q));
        let end = self.close(q, b'}')?;
        Some((out, end))
    }

    // ---------- file and statements ----------

    fn file(&self) -> Option<Parsed> {
        let mut out = Parsed::default();
        let mut p = self.skip(self.start);
        while let Some((stmt, e)) = self.statement(p) {
            self.keep(&mut out, stmt);
            p = self.skip(e);
        }
        self.end_of_input(p)?;
        Some(out)
    }

    fn single_stmt(&self) -> Option<Parsed> {
        let mut out = Parsed::default();
        let (stmt, e) = self.statement(self.skip(self.start))?;
        self.end_of_input(self.skip(e))?;
        self.keep(&mut out, stmt);
        Some(out)
    }

    fn end_of_input(&self, p: usize) -> Option<()> {
        self.r(R::Eoi, p, || self.eof(p).then_some(()))
    }

    fn statement(&self, p: usize) -> Option<(Statement, usize)> {
        self.r(R::LanguageDecl, p, || self.language_decl(p))
            .or_else(|| self.r(R::DefaultDecl, p, || self.default_decl(p)))
            .or_else(|| self.r(R::LetDecl, p, || self.let_decl(p)))
            .or_else(|| self.r(R::RoleBlock, p, || self.role(p)))
            .or_else(|| self.r(R::TestBlock, p, || self.test_block(p)))
            .or_else(|| self.r(R::Annotated, p, || self.annotated(p)))
    }

    fn language_decl(&self, p: usize) -> Option<(Statement, usize)> {
        let (n, e) = self.int(self.skip(self.lit(p, "language")?))?;
        let end = self.expect(self.skip(e), b';')?;
        let span = Span::new(p, end);
        let n = u32::try_from(n).unwrap_or_else(|_| {
            self.build_error(Diagnostic::error(
                "E0005",
                span,
                "language version out of range",
            ));
            0
        });
        Some((Statement::Language(Spanned::new(n, span)), end))
    }

    fn default_decl(&self, p: usize) -> Option<(Statement, usize)> {
        let (domain, e) = self.ident_s(self.skip(self.lit(p, "default")?))?;
        let q = self.expect(self.skip(e), b'=')?;
        let (effect, e) = self.effect(self.skip(q))?;
        let end = self.expect(self.skip(e), b';')?;
        let d = DefaultDecl {
            domain,
            effect,
            span: Span::new(p, end),
        };
        Some((Statement::Default(d), end))
    }

    fn let_decl(&self, p: usize) -> Option<(Statement, usize)> {
        let (name, e) = self.ident_s(self.skip(self.lit(p, "let")?))?;
        let q = self.skip(self.expect(self.skip(e), b'=')?);
        let (value, scalar, e) = if let Some((l, e)) = self.list(q) {
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
        Some((Statement::Let(l), end))
    }

    fn role(&self, p: usize) -> Option<(Statement, usize)> {
        let q = self.skip(self.lit(p, "role")?);
        let ne = self.name(q)?;
        let name = self.owned(q, ne);
        let mut q = self.skip(self.open(self.skip(ne), b'{')?);
        let mut block = RoleBlock {
            name,
            rules: Vec::new(),
            guides: Vec::new(),
            order: Vec::new(),
            span: Span::default(),
        };
        while let Some((item, e)) = self.r(R::Annotated, q, || self.annotated(q)) {
            if let Some(other) = block.push(item) {
                self.build_error(misplaced_in_role(&other));
            }
            q = self.skip(e);
        }
        let end = self.close(q, b'}')?;
        block.span = Span::new(p, end);
        Some((Statement::Role(block), end))
    }

    fn annotated(&self, mut p: usize) -> Option<(Statement, usize)> {
        let mut annotations = Vec::new();
        while let Some((a, e)) = self.annotation(p) {
            annotations.push(a);
            p = self.skip(e);
        }
        if let Some((r, end)) = self.r(R::Rule, p, || self.rule(p, &mut annotations)) {
            return Some((Statement::Rule(r), end));
        }
        if let Some((g, end)) = self.r(R::Guide, p, || self.guide(p, &mut annotations)) {
            return Some((Statement::Guide(g), end));
        }
        let (d, end) = self.r(R::Detector, p, || self.detector(p, &mut annotations))?;
        Some((Statement::Detector(d), end))
    }

    /// `"detector" ~ ident ~ patterns ~ detector_body? ~ because_clause? ~ ";"` at `p`.
    fn detector(&self, p: usize, annotations: &mut Vec<Annotation>) -> Option<(Detector, usize)> {
        let (kind, e) = self.ident_s(self.skip(self.lit(p, "detector")?))?;
        let (patterns, e) = self.patterns(self.skip(e))?;
        let mut q = self.skip(e);
        let mut fields = Vec::new();
        if let Some((entries, e)) = self.r(R::DetectorBody, q, || self.obligations(q)) {
            fields = entries;
            q = self.skip(e);
        }
        let mut because = None;
        if let Some((s, e)) = self.because_clause(q) {
            because = Some(s);
            q = self.skip(e);
        }
        let end = self.expect(q, b';')?;
        let start = annotations.first().map_or(p, |a| a.span.start);
        Some((
            Detector {
                annotations: std::mem::take(annotations),
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
        self.r(R::Annotation, p, || {
            let (name, e) = self.ident_s(self.skip(self.expect(p, b'@')?))?;
            let q = self.skip(self.open(self.skip(e), b'(')?);
            let (value, bare, e) = if let Some((s, e)) = self.string(q) {
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
        })
    }

    /// `ident ~ ("," ~ ident)*` at `i`: the operations and the pair end.
    fn ops(&self, i: usize) -> Option<(Vec<Spanned<String>>, usize)> {
        self.r(R::Ops, i, || {
            let e1 = self.ident(i)?;
            let mut ops = vec![self.owned(i, e1)];
            let mut e = e1;
            loop {
                let r = self.skip(e);
                let next = self.expect(r, b',').and_then(|r2| {
                    let r2 = self.skip(r2);
                    self.ident(r2).map(|e2| (r2, e2))
                });
                let Some((r2, e2)) = next else {
                    let end = if ops.len() == 1 { r } else { e };
                    return Some((ops, end));
                };
                ops.push(self.owned(r2, e2));
                e = e2;
            }
        })
    }

    fn rule(&self, p: usize, annotations: &mut Vec<Annotation>) -> Option<(Rule, usize)> {
        let (effect, e) = self.effect(p)?;
        let (domain, de) = self.ident_s(self.skip(e))?;
        let mut head_end = domain.span.end;
        let mut q = self.skip(de);
        let mut ops = Vec::new();
        if let Some((o, end)) = self.ops(q) {
            ops = o;
            head_end = self.sp(q, end).end;
            q = self.skip(end);
        }
        let mut patterns = Vec::new();
        if let Some((ps, end)) = self.patterns(q) {
            patterns = ps;
            head_end = self.sp(q, end).end;
            q = self.skip(end);
        }
        let mut clauses = Vec::new();
        while let Some((clause, e)) = self.clause(q) {
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
                annotations: std::mem::take(annotations),
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

    fn clause(&self, q: usize) -> Option<(Clause, usize)> {
        let when = self.r(R::WhenClause, q, || {
            let (x, e) = self.expr(self.skip(self.lit(q, "when")?), 0)?;
            Some((Clause::When(x), e))
        });
        when.or_else(|| {
            self.r(R::UnlessClause, q, || {
                let (x, e) = self.expr(self.skip(self.lit(q, "unless")?), 0)?;
                Some((Clause::Unless(x), e))
            })
        })
        .or_else(|| {
            self.r(R::WithClause, q, || {
                let (name, e) = self.ident_s(self.skip(self.lit(q, "with")?))?;
                let (entries, end) = self.obligations(self.skip(e))?;
                let o = Obligation {
                    name,
                    entries,
                    span: Span::new(q, end),
                };
                Some((Clause::With(o), end))
            })
        })
        .or_else(|| self.because_clause(q).map(|(s, e)| (Clause::Because(s), e)))
    }

    fn because_clause(&self, q: usize) -> Option<(Spanned<String>, usize)> {
        self.r(R::BecauseClause, q, || {
            self.string(self.skip(self.lit(q, "because")?))
        })
    }

    fn guide(&self, p: usize, annotations: &mut Vec<Annotation>) -> Option<(Guide, usize)> {
        let (title, e) = self.string(self.skip(self.lit(p, "guide")?))?;
        let mut q = self.skip(e);
        let mut scope = Vec::new();
        let guide_for = self.r(R::GuideFor, q, || {
            self.pattern_list(self.skip(self.lit(q, "for")?))
        });
        if let Some((ps, end)) = guide_for {
            scope = ps;
            q = self.skip(end);
        }
        q = self.skip(self.open(q, b'{')?);
        let mut body = Vec::new();
        while let Some((s, e)) = self.string(q) {
            body.push(s);
            q = self.skip(e);
        }
        let end = self.close(q, b'}')?;
        Some((
            Guide {
                annotations: std::mem::take(annotations),
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
        let (name, e) = self.string(self.skip(self.lit(p, "test")?))?;
        let mut q = self.skip(self.open(self.skip(e), b'{')?);
        let mut cases = Vec::new();
        while let Some((c, e)) = self.r(R::TestCase, q, || self.test_case(q)) {
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

    /// The optional `("{" ~ (obligation ~ …)? ~ "}")?` after a plugin or commit request.
    fn opt_fields(&self, e: usize) -> (Entries, usize) {
        let r = self.skip(e);
        self.group(|| self.obligations(r))
            .unwrap_or((Vec::new(), e))
    }

    fn request(&self, p: usize) -> Option<(TestRequest, usize)> {
        let path = self.r(R::PathReq, p, || {
            let (op, e) = self.ident_s(self.skip(self.lit(p, "path")?))?;
            let (path, e) = self.string(self.skip(e))?;
            Some((TestRequest::Path { op, path }, e))
        });
        path.or_else(|| {
            self.r(R::ExecReq, p, || {
                let q = self.skip(self.lit(p, "exec")?);
                if let Some((l, e)) = self.list(q) {
                    return Some((TestRequest::ExecArgv(l), e));
                }
                let (s, e) = self.string(q)?;
                Some((TestRequest::ExecShell(s), e))
            })
        })
        .or_else(|| {
            self.r(R::PluginReq, p, || {
                let (name, e) = self.string(self.skip(self.lit(p, "plugin")?))?;
                let (fields, e) = self.opt_fields(e);
                Some((TestRequest::Plugin { name, fields }, e))
            })
        })
        .or_else(|| {
            self.r(R::CommitReq, p, || {
                let (files, e) = self.list(self.skip(self.lit(p, "commit")?))?;
                let (fields, e) = self.opt_fields(e);
                Some((TestRequest::Commit { files, fields }, e))
            })
        })
    }

    fn test_case(&self, p: usize) -> Option<(TestCase, usize)> {
        let (request, e) = self.r(R::Request, p, || self.request(p))?;
        let mut q = self.skip(e);
        let mut role = None;
        let as_role = self.r(R::AsRole, q, || {
            let r = self.skip(self.lit(q, "as")?);
            self.string(self.skip(self.lit(r, "role")?))
        });
        if let Some((s, e)) = as_role {
            role = Some(s);
            q = self.skip(e);
        }
        let q = self.skip(self.lit(q, "=>")?);
        let ((expect, expect_rules), e) = self.r(R::Expectation, q, || self.expectation(q))?;
        let end = self.expect(self.skip(e), b';')?;
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

    /// `effect ~ ("(" ~ (rule_ref_item ~ ("," ~ rule_ref_item)*)? ~ ")")?`.
    #[allow(
        clippy::type_complexity,
        reason = "the two parts of one verdict, as the grammar rule gives them"
    )]
    fn expectation(&self, q: usize) -> Option<((Spanned<Effect>, Vec<Spanned<String>>), usize)> {
        let (expect, e) = self.effect(q)?;
        let q = self.skip(e);
        let rules = self.group(|| {
            let r = self.skip(self.open(q, b'(')?);
            let (items, r) = self.comma_list(r, false, |r| self.rule_ref_item(r));
            Some((items, self.close(r, b')')?))
        });
        match rules {
            Some((items, end)) => Some(((expect, items), end)),
            None => Some(((expect, Vec::new()), q)),
        }
    }

    fn rule_ref_item(&self, i: usize) -> Option<(Spanned<String>, usize)> {
        if let Some(s) = self.string(i) {
            return Some(s);
        }
        self.r(R::RuleRef, i, || {
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
        })
    }

    // ---------- conditions ----------

    fn or_op(&self, i: usize) -> Option<usize> {
        self.r(R::OrOp, i, || {
            (self.starts_word(i, "or") || self.starts(i, "||")).then_some(i + 2)
        })
    }

    fn and_op(&self, i: usize) -> Option<usize> {
        self.r(R::AndOp, i, || {
            if self.starts_word(i, "and") {
                Some(i + 3)
            } else {
                self.lit(i, "&&")
            }
        })
    }

    fn not_op(&self, i: usize) -> Option<usize> {
        self.r(R::NotOp, i, || {
            if self.starts_word(i, "not") {
                Some(i + 3)
            } else if self.at(i) == b'!' && self.at(i + 1) != b'=' {
                Some(i + 1)
            } else {
                None
            }
        })
    }

    fn cmp_op(&self, i: usize) -> Option<(CmpOp, usize)> {
        self.r(R::CmpOp, i, || {
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
        })
    }

    /// Parses a condition node at build depth `d` (as pest's pairs were built); beyond
    /// [`MAX_NESTING`] the node still parses but its statement fails with E0002.
    fn nested(
        &self,
        p: usize,
        too_deep_here: bool,
        f: impl FnOnce() -> Option<(Expr, usize)>,
    ) -> Option<(Expr, usize)> {
        if !too_deep_here {
            return f();
        }
        let clean = self.clean.get();
        let (x, e) = f()?;
        if clean {
            // This node is built before anything inside it: its error comes first.
            self.clean.set(true);
            self.build_error(too_deep(self.sp(p, e)));
        }
        Some((x, e))
    }

    /// `expr` at build depth `d`.
    fn expr(&self, p: usize, d: usize) -> Option<(Expr, usize)> {
        self.r(R::Expr, p, || {
            self.nested(p, d > MAX_NESTING, || {
                let (first, mut e) = self.and_expr(p, d + 1)?;
                let mut parts = vec![first];
                loop {
                    let r = self.skip(e);
                    let next = self
                        .or_op(r)
                        .and_then(|oe| self.and_expr(self.skip(oe), d + 1));
                    let Some((x, e2)) = next else {
                        if parts.len() == 1 {
                            return parts.pop().map(|x| (x, r));
                        }
                        return Some((Expr::Or(parts, self.sp(p, e)), e));
                    };
                    parts.push(x);
                    e = e2;
                }
            })
        })
    }

    fn and_expr(&self, p: usize, d: usize) -> Option<(Expr, usize)> {
        self.r(R::AndExpr, p, || {
            self.nested(p, d > MAX_NESTING, || {
                let (first, mut e) = self.unary(p, d + 1)?;
                let mut parts = vec![first];
                loop {
                    let r = self.skip(e);
                    let next = self
                        .and_op(r)
                        .and_then(|ae| self.unary(self.skip(ae), d + 1));
                    let Some((x, e2)) = next else {
                        if parts.len() == 1 {
                            return parts.pop().map(|x| (x, r));
                        }
                        return Some((Expr::And(parts, self.sp(p, e)), e));
                    };
                    parts.push(x);
                    e = e2;
                }
            })
        })
    }

    fn unary(&self, p: usize, d: usize) -> Option<(Expr, usize)> {
        self.r(R::Unary, p, || {
            let mut nots = Vec::new();
            let mut q = p;
            while let Some(ne) = self.not_op(q) {
                nots.push(q);
                q = self.skip(ne);
            }
            let deep = d > MAX_NESTING || nots.len() + d > MAX_NESTING;
            self.nested(p, deep, || {
                let (mut x, e) = self.atom(q, d + 1)?;
                // Too deep, the statement is dropped: building the chain could only
                // overflow the stack (when it is dropped) for a hostile input.
                if !deep {
                    let end = self.sp(p, e).end;
                    for start in nots.into_iter().rev() {
                        x = Expr::Not(Box::new(x), Span::new(start, end));
                    }
                }
                Some((x, e))
            })
        })
    }

    fn atom(&self, p: usize, d: usize) -> Option<(Expr, usize)> {
        let deep = d > MAX_NESTING;
        let script = self.r(R::ScriptBlock, p, || {
            self.nested(p, deep, || self.script_block(p))
        });
        script
            .or_else(|| {
                self.r(R::Paren, p, || {
                    self.nested(p, deep, || {
                        let q = self.skip(self.open(p, b'(')?);
                        let (inner, e) = self.expr(q, d + 1)?;
                        let end = self.close(self.skip(e), b')')?;
                        Some((Expr::Paren(Box::new(inner), Span::new(p, end)), end))
                    })
                })
            })
            .or_else(|| {
                self.r(R::Comparison, p, || {
                    self.nested(p, deep, || self.comparison(p))
                })
            })
    }

    /// `"script" ~ WHITESPACE* ~ "{" ~ script_body ~ "}"`.
    fn script_block(&self, p: usize) -> Option<(Expr, usize)> {
        let mut q = self.lit(p, "script")?;
        loop {
            match self.at(q) {
                b' ' | b'\t' | b'\r' | b'\n' => q += 1,
                0xEF if self.at(q + 1) == 0xBB && self.at(q + 2) == 0xBF => q += 3,
                _ => break,
            }
        }
        self.script(self.expect(q, b'{')?)
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
                        // Not a grammar limit: a body this deep is hostile.
                        let d = Diagnostic::error(
                            "E0001",
                            Span::new(i, i + 1),
                            format!(
                                "syntax error: braces in a `script` body nest deeper than \
                                 {MAX_NESTING} levels"
                            ),
                        )
                        .with_label("too deep");
                        self.fatal.borrow_mut().get_or_insert(Box::new(d));
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
        let rhs = self.group(|| {
            let (op, oe) = self.cmp_op(q)?;
            Some((op, oe, self.operand(self.skip(oe))?))
        });
        let Some((op, oe, (rhs, re))) = rhs else {
            return Some((Expr::Truthy(lhs), q));
        };
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
        if let Some((s, e)) = self.string(p) {
            return Some((Operand::Str(s), e));
        }
        if let Some((n, e)) = self.int(p) {
            return Some((Operand::Int(Spanned::new(n, Span::new(p, e))), e));
        }
        if let Some((b, e)) = self.boolean(p) {
            return Some((Operand::Bool(Spanned::new(b, Span::new(p, e))), e));
        }
        if let Some((l, e)) = self.list(p) {
            return Some((Operand::List(l), e));
        }
        if let Some((v, e)) = self.var(p) {
            return Some((Operand::Var(v), e));
        }
        // `call` is tried before `access`; the fast instance keeps the access it parsed.
        let mut plain = None;
        let call = self.r(R::Call, p, || {
            let (target, access_end) = self.access(p)?;
            let q = self.skip(access_end);
            let Some(open) = self.open(q, b'(') else {
                if !TRACK {
                    plain = Some((target, access_end));
                }
                return None;
            };
            let (args, r) = self.comma_list(self.skip(open), false, |r| self.operand(r));
            let end = self.close(r, b')')?;
            Some((
                Operand::Call {
                    target,
                    args,
                    span: Span::new(p, end),
                },
                end,
            ))
        });
        if call.is_some() {
            return call;
        }
        let (target, end) = match plain {
            Some(done) => done,
            None => self.access(p)?,
        };
        Some((Operand::Attr(target), end))
    }

    /// `access = { ident ~ ("." ~ ident)* }`: the names and the pair end.
    fn access(&self, p: usize) -> Option<(Spanned<Vec<String>>, usize)> {
        self.r(R::Access, p, || {
            let e1 = self.ident(p)?;
            let mut names = vec![self.text(p, e1).to_string()];
            let mut e = e1;
            let end = loop {
                let r = self.skip(e);
                let next = self.expect(r, b'.').and_then(|r2| {
                    let r2 = self.skip(r2);
                    self.ident(r2).map(|e2| (r2, e2))
                });
                let Some((r2, e2)) = next else {
                    break if names.len() == 1 { r } else { e };
                };
                names.push(self.text(r2, e2).to_string());
                e = e2;
            };
            Some((Spanned::new(names, self.sp(p, end)), end))
        })
    }
}

/// The error for a statement other than a rule or guide inside a `role` block.
fn misplaced_in_role(other: &Statement) -> Diagnostic {
    if let Statement::Detector(d) = other {
        return Diagnostic::error(
            "E0121",
            Span::new(d.span.start, d.kind.span.end),
            "a detector may not appear inside a role",
        )
        .with_label("inside `role`")
        .with_help(
            "detectors apply to every commit, whoever makes it: \
             declare it outside the `role` block",
        );
    }
    Diagnostic::error(
        "E0001",
        other.span(),
        "only rules and guides may appear inside a role",
    )
}
